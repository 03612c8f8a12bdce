// The run timeline (issue 20): one row per streamed event worth reading (a step begins, a
// node's update, custom events, interrupts, errors), added in batches once per animation frame
// so a long stream never blocks paint. A row can be annotated after it was added (its step and
// duration arrive in the task's result, just after the update).

import { h, pretty } from "./dom.js";

const MAX_ROWS = 5000; // the timeline keeps the newest rows; older ones are dropped
const BATCH = 100; // rows a frame: the 1,000-event test paints every 33-67 ms (117-183 with 250)

/** "0.4 ms", "12 ms", "1.52 s". */
export function duration(ms) {
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  return `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
}

/** A custom event's payload on one line, cut at 120 characters (its detail holds it whole). */
export function preview(detail) {
  const text = typeof detail === "string" ? detail : JSON.stringify(detail) ?? String(detail);
  return text.length > 120 ? `${text.slice(0, 119)}\u2026` : text;
}

export class Timeline {
  constructor(root) {
    this.root = root;
    this.pending = [];
    this.frame = 0;
    this.count = 0;
  }

  clear() {
    this.root.replaceChildren();
    this.pending = [];
    this.count = 0;
  }

  /** Queue a row; returns its entry, for `annotate`. */
  add(kind, title, detail) {
    const entry = { kind, title, detail, note: null, data: null, el: null };
    this.pending.push(entry);
    this.frame ||= requestAnimationFrame(() => this.flush());
    return entry;
  }

  /** Put a short note on a row (e.g. "step 2 · 12 ms") and data-* attributes, now or when drawn. */
  annotate(entry, note, data) {
    entry.note = note;
    entry.data = data;
    if (entry.el) this.decorate(entry);
  }

  /** Resolves once every row added so far is on the page. */
  drained() {
    return new Promise((resolve) => {
      const check = () => (this.pending.length ? requestAnimationFrame(check) : resolve());
      check();
    });
  }

  /** Add what arrived, at most BATCH rows a frame. */
  flush() {
    this.frame = 0;
    const batch = document.createDocumentFragment();
    for (const entry of this.pending.splice(0, BATCH)) batch.append(this.row(entry));
    this.root.append(batch);
    while (this.root.childElementCount > MAX_ROWS) this.root.firstElementChild.remove();
    this.root.scrollTop = this.root.scrollHeight;
    if (this.pending.length) this.frame = requestAnimationFrame(() => this.flush());
  }

  row(entry) {
    const { kind, title, detail } = entry;
    this.count += 1;
    const head = h("span.head", {}, h("span.kind", {}, kind), " ", h("span.title", {}, title), h("span.note"),
      kind === "custom" ? h("span.preview", {}, preview(detail)) : null); // issue 30: was a blank row
    const attrs = { dataset: { kind, node: title, seq: this.count } };
    if (detail === undefined) entry.el = h(`li.ev${kind === "step" ? ".step" : ""}`, attrs, head);
    else {
      // the detail is rendered when opened: a long stream costs one summary row per event
      const details = h("details", {}, h("summary", {}, head));
      details.addEventListener("toggle", () => {
        if (details.open && !details.querySelector("pre")) details.append(h("pre", {}, typeof detail === "string" ? detail : pretty(detail)));
      });
      entry.el = h("li.ev", attrs, details);
    }
    if (entry.note !== null) this.decorate(entry);
    return entry.el;
  }

  decorate(entry) {
    entry.el.querySelector(".note").textContent = entry.note;
    Object.assign(entry.el.dataset, entry.data || {});
  }
}
