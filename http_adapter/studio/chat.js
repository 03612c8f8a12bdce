// The chat view (issue 20): bubbles by message id, fed by `messages` (messages-tuple) chunks
// while a run streams; tokens append, whole messages replace.

import { h } from "./dom.js";

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

export class Chat {
  constructor(root) {
    this.root = root;
    this.bubbles = new Map();
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
      bubble = h("div.bubble", { dataset: { role, id } }, h("div.who", {}, role), h("div.text"));
      this.bubbles.set(id, bubble);
      this.root.append(bubble);
    }
    const text = bubble.querySelector(".text");
    text.textContent = append ? text.textContent + textOf(message.content) : textOf(message.content);
    this.root.scrollTop = this.root.scrollHeight;
  }
}
