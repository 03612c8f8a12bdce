// A small markdown renderer for chat messages (issue 30 item 5: markdown showed raw). It
// builds DOM nodes, never HTML strings: every piece of a message becomes a text node or one of
// a fixed set of elements, so HTML in a message shows as text and cannot run. The subset:
// paragraphs, line breaks, # headings, - / * / 1. lists, > quotes, ``` code blocks, `code`,
// **bold**, *italic* / _italic_, ~~strike~~ and [links](http(s) or mailto only).

import { h } from "./dom.js";

const FENCE = /^\s*```/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*\d+[.)]\s+(.*)$/;
const QUOTE = /^\s*>\s?(.*)$/;
const SAFE_URL = /^(https?:\/\/|mailto:)/i;

/** `text` as a DocumentFragment of block elements. */
export function renderMarkdown(text) {
  const out = document.createDocumentFragment();
  const lines = String(text ?? "").replace(/\r\n?/g, "\n").split("\n");
  for (let i = 0; i < lines.length;) i = block(lines, i, out);
  return out;
}

/** Render the block starting at line `i` into `out`; the index of the line after it. */
function block(lines, i, out) {
  const line = lines[i];
  if (!line.trim()) return i + 1;
  if (FENCE.test(line)) return fence(lines, i, out);
  const heading = HEADING.exec(line);
  if (heading) {
    out.append(h(`h${Math.min(6, heading[1].length + 2)}.md-h`, {}, inline(heading[2])));
    return i + 1;
  }
  for (const [pattern, tag] of [[BULLET, "ul"], [NUMBERED, "ol"]]) {
    if (pattern.test(line)) return list(lines, i, pattern, tag, out);
  }
  if (QUOTE.test(line)) {
    const quoted = [];
    for (; i < lines.length && QUOTE.test(lines[i]); i++) quoted.push(QUOTE.exec(lines[i])[1]);
    out.append(h("blockquote", {}, renderMarkdown(quoted.join("\n"))));
    return i;
  }
  const para = [];
  for (; i < lines.length && lines[i].trim() && !startsBlock(lines[i]); i++) para.push(lines[i]);
  const p = h("p");
  para.forEach((l, k) => p.append(...(k ? [h("br")] : []), inline(l)));
  out.append(p);
  return i;
}

function startsBlock(line) {
  return FENCE.test(line) || HEADING.test(line) || BULLET.test(line) || NUMBERED.test(line) || QUOTE.test(line);
}

function fence(lines, i, out) {
  const code = [];
  let k = i + 1;
  for (; k < lines.length && !FENCE.test(lines[k]); k++) code.push(lines[k]);
  out.append(h("pre.md-code", {}, h("code", {}, code.join("\n")))); // an unclosed fence runs to the end
  return k + 1;
}

function list(lines, i, pattern, tag, out) {
  const el = h(tag);
  for (; i < lines.length && pattern.test(lines[i]); i++) el.append(h("li", {}, inline(pattern.exec(lines[i])[1])));
  out.append(el);
  return i;
}

// code first (nothing inside it is markdown), then links, bold, strike, italic
const INLINE = /`([^`]+)`|\[([^\]]+)\]\(([^)\s]+)\)|\*\*(.+?)\*\*|__(.+?)__|~~(.+?)~~|\*([^*\s][^*]*?)\*|\b_([^_\s][^_]*?)_\b/;

/** One line's inline markup as a fragment of text nodes and elements. */
export function inline(text) {
  const out = document.createDocumentFragment();
  let rest = text;
  for (let match = INLINE.exec(rest); match; match = INLINE.exec(rest)) {
    if (match.index) out.append(rest.slice(0, match.index));
    out.append(span(match));
    rest = rest.slice(match.index + match[0].length);
  }
  if (rest) out.append(rest);
  return out;
}

function span([whole, code, label, url, bold, bold2, strike, em, em2]) {
  if (code !== undefined) return h("code", {}, code);
  if (label !== undefined) {
    if (!SAFE_URL.test(url)) return whole; // javascript: and friends stay text
    return h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, inline(label));
  }
  if (bold !== undefined || bold2 !== undefined) return h("strong", {}, inline(bold ?? bold2));
  if (strike !== undefined) return h("del", {}, inline(strike));
  return h("em", {}, inline(em ?? em2));
}
