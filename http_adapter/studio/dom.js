// Tiny DOM helpers: no framework, so the studio needs no build step (issue 20).

/** Create an element: h("div.cls#id", {attr: v, onclick: fn}, child, ...). */
export function h(tag, attrs = {}, ...children) {
  const [name, ...rest] = tag.split(/(?=[.#])/);
  const el = document.createElement(name || "div");
  for (const part of rest) {
    if (part[0] === ".") el.classList.add(part.slice(1));
    else el.id = part.slice(1);
  }
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key in el && key !== "list" && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

/** Replace an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** Compact, readable JSON for display (long values are left to CSS to wrap). */
export function pretty(value) {
  return JSON.stringify(value, null, 2) ?? "null";
}

/** Parse JSON typed by a user; throws an Error with a readable message. */
export function parseJson(text, what = "JSON") {
  try {
    return text.trim() === "" ? null : JSON.parse(text);
  } catch (error) {
    throw new Error(`${what}: ${error.message}`);
  }
}

/** Show a transient message in the status bar (errors in red). */
export function notify(message, kind = "info") {
  const bar = document.getElementById("status");
  if (!bar) return;
  bar.textContent = message;
  bar.dataset.kind = kind;
}
