// The chat view (issue 20): bubbles by message id, fed by `messages` (messages-tuple) chunks
// while a run streams; tokens append, whole messages replace. Issue 30 item 5: an assistant
// message holding only tool calls was an empty bubble and markdown showed raw; now each tool
// call shows its name and arguments, a tool's result its tool and (JSON laid out) content, and
// assistant text renders as markdown (markdown.js builds elements, never HTML strings).

import { h, fill, pretty } from "./dom.js";
import { renderMarkdown } from "./markdown.js";

function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === "string" ? p : p?.text ?? "")).join("");
  return "";
}

function roleOf(m) {
  const t = m.type || m.role || "";
  if (t === "human" || t === "user" || t === "HumanMessage") return "user";
  if (t === "tool" || t === "ToolMessage") return "tool";
  if (t === "system") return "system";
  return "assistant";
}

/** A whole message's tool calls: `tool_calls`, else Anthropic-style `tool_use` content parts. */
function callsOf(m) {
  if (m.tool_calls?.length) return m.tool_calls.map((c) => ({ name: c.name, args: c.args, id: c.id }));
  const parts = Array.isArray(m.content) ? m.content.filter((p) => p?.type === "tool_use") : [];
  return parts.map((p) => ({ name: p.name, args: p.input, id: p.id }));
}

/** Streamed tool-call chunks add up by index: the name and the JSON text of the arguments. */
function addChunks(calls, chunks) {
  for (const c of chunks || []) {
    const at = c.index ?? calls.length;
    const call = (calls[at] ||= { name: "", args: "", id: c.id });
    call.name += c.name || "";
    call.args += typeof c.args === "string" ? c.args : c.args ? JSON.stringify(c.args) : "";
    call.id ||= c.id;
  }
}

/** Arguments or a result as readable text: JSON laid out when it is JSON. */
function laidOut(value) {
  if (typeof value !== "string") return pretty(value ?? {});
  try {
    const parsed = JSON.parse(value);
    return typeof parsed === "object" && parsed !== null ? pretty(parsed) : value;
  } catch {
    return value;
  }
}

export class Chat {
  constructor(root) {
    this.root = root;
    this.bubbles = new Map(); // id -> {el, role, text, calls, message, frame}
    this.names = new Map(); // tool call id -> tool name, for the results
  }

  show(messages) {
    this.root.replaceChildren();
    this.bubbles.clear();
    for (const m of messages || []) this.put(m, false);
  }

  put(message, append) {
    const role = roleOf(message);
    if (role === "system") return;
    const id = message.id || `m${this.bubbles.size}`;
    let bubble = this.bubbles.get(id);
    if (!bubble) {
      const el = h("div.bubble", { dataset: { role, id } }, h("div.who", {}, role), h("div.text"));
      bubble = { el, role, text: "", calls: [], message, frame: 0 };
      this.bubbles.set(id, bubble);
      this.root.append(el);
    }
    if (append) {
      bubble.text += textOf(message.content);
      addChunks(bubble.calls, message.tool_call_chunks);
    } else {
      bubble.text = textOf(message.content);
      bubble.calls = callsOf(message);
    }
    for (const call of bubble.calls) if (call.id && call.name) this.names.set(call.id, call.name);
    bubble.message = message;
    if (!append) this.render(bubble);
    else if (!bubble.frame) { // tokens: the markdown is rendered again at most once a frame
      bubble.frame = requestAnimationFrame(() => this.render(bubble));
    }
  }

  render(bubble) {
    const { el, role, message } = bubble;
    cancelAnimationFrame(bubble.frame);
    bubble.frame = 0;
    const text = el.querySelector(".text");
    if (role === "tool") {
      const name = message.name || this.names.get(message.tool_call_id) || "";
      el.querySelector(".who").textContent = name ? `tool \u00b7 ${name}` : "tool";
      fill(text, h("pre.tool-result", {}, laidOut(bubble.text)));
    } else if (role === "assistant") fill(text, renderMarkdown(bubble.text));
    else text.textContent = bubble.text;
    el.querySelector(".tool-calls")?.remove();
    if (bubble.calls.length) el.append(h("div.tool-calls", {}, bubble.calls.map(toolCall)));
    this.root.scrollTop = this.root.scrollHeight;
  }
}

function toolCall(call) {
  return h("div.tool-call", { dataset: { callId: call.id || "" } },
    h("span.tool-label", {}, "calls "), h("code.tool-name", {}, call.name || "?"),
    h("pre.tool-args", {}, laidOut(call.args)));
}
