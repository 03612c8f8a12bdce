// Running a graph and watching it (issue 20): one stream per run over POST
// /threads/{id}/runs/stream; running nodes lit on the drawing, a timeline of steps, the chat
// view fed by `messages` (messages-tuple) chunks, cancel through the cancel endpoint.

import { api, streamRun } from "./api.js";
import { clearMarks, mark } from "./graph.js";
import { h, pretty } from "./dom.js";

const MAX_ROWS = 5000; // the timeline keeps the newest rows; older ones are dropped
const BATCH = 250; // timeline rows added per animation frame

/** The node path of a namespaced event (`mode|outer:<task>|inner:<task>`) for the drawing. */
function nodePath(ns, name) {
  return [...ns.map((part) => part.split(":")[0]), name].filter(Boolean).join(":");
}

function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === "string" ? p : p?.text ?? "")).join("");
  return "";
}

/** The chat view: bubbles by message id; tokens append, whole messages replace. */
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

function roleOf(m) {
  const t = m.type || m.role || "";
  if (t === "human" || t === "user" || t === "HumanMessage") return "user";
  if (t === "tool" || t === "ToolMessage") return "tool";
  if (t === "system") return "system";
  return "assistant";
}

/** Timeline rows, added in batches once per animation frame so long streams stay smooth. */
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

  add(kind, title, detail) {
    this.pending.push([kind, title, detail]);
    this.frame ||= requestAnimationFrame(() => this.flush());
  }

  /** Resolves once every row added so far is on the page. */
  drained() {
    return new Promise((resolve) => {
      const check = () => (this.pending.length ? requestAnimationFrame(check) : resolve());
      check();
    });
  }

  /** Add what arrived, at most BATCH rows a frame, so a burst of events never blocks paint. */
  flush() {
    this.frame = 0;
    const batch = document.createDocumentFragment();
    for (const [kind, title, detail] of this.pending.splice(0, BATCH)) batch.append(this.row(kind, title, detail));
    this.root.append(batch);
    while (this.root.childElementCount > MAX_ROWS) this.root.firstElementChild.remove();
    this.root.scrollTop = this.root.scrollHeight;
    if (this.pending.length) this.frame = requestAnimationFrame(() => this.flush());
  }

  row(kind, title, detail) {
    this.count += 1;
    const head = h("span.head", {}, h("span.kind", {}, kind), " ", h("span.title", {}, title));
    const attrs = { dataset: { kind, node: title, seq: this.count } };
    if (detail === undefined) return h("li.ev", attrs, head);
    // the detail is rendered when opened: a long stream costs one summary row per event
    const details = h("details", {}, h("summary", {}, head));
    details.addEventListener("toggle", () => {
      if (details.open && !details.querySelector("pre")) details.append(h("pre", {}, typeof detail === "string" ? detail : pretty(detail)));
    });
    return h("li.ev", attrs, details);
  }
}

/** One run at a time: start, watch, cancel. `ctx` is the app (drawing, chat, timeline). */
export class Runner {
  constructor(ctx) {
    this.ctx = ctx;
    this.current = null;
  }

  get running() {
    return this.current !== null;
  }

  /** Start a run on `threadId` (a new thread when null); resolves when the stream ends. */
  async start(threadId, body) {
    if (this.current) throw new Error("a run is already in progress");
    const ctx = this.ctx;
    const thread = threadId || (await api("/threads", { method: "POST", body: { metadata: {} } })).thread_id;
    const run = { thread, id: null, abort: new AbortController(), status: "running", values: null };
    this.current = run;
    ctx.runStarted(run);
    clearMarks(ctx.svg, "running", "done", "error", "next");
    ctx.timeline.add("run", `started on thread ${thread}`);
    try {
      await streamRun(`/threads/${thread}/runs/stream`, body, (name, data) => this.event(run, name, data), run.abort.signal);
    } catch (error) {
      if (error.name !== "AbortError") {
        run.status = "error";
        ctx.timeline.add("error", error.message);
      }
    } finally {
      this.current = null;
      clearMarks(ctx.svg, "running");
      await this.finish(run);
    }
    return run;
  }

  event(run, name, data) {
    const [mode, ...ns] = name.split("|");
    const ctx = this.ctx;
    if (mode === "metadata") run.id = data.run_id;
    else if (mode === "tasks") this.task(ns, data);
    else if (mode === "updates") this.update(ns, data);
    else if (mode === "values") {
      if (!ns.length) run.values = data;
      ctx.timeline.add("values", nodePath(ns, ""), data);
    }
    else if (mode === "messages") ctx.chat?.put(data[0], /chunk/i.test(data[0]?.type || ""));
    else if (mode === "messages/partial" || mode === "messages/complete") for (const m of data) ctx.chat?.put(m, false);
    else if (mode === "custom") ctx.timeline.add("custom", nodePath(ns, ""), data);
    else if (mode === "error") {
      run.status = "error";
      ctx.timeline.add("error", `${data.error}: ${data.message}`, data);
    } else if (mode !== "messages/metadata") ctx.timeline.add(mode, nodePath(ns, ""), data);
  }

  task(ns, data) {
    const node = nodePath(ns, data.name);
    const svg = this.ctx.svg;
    if ("triggers" in data) {
      mark(svg, node, "running");
      return;
    }
    mark(svg, node, "running", false);
    mark(svg, node, data.error ? "error" : "done");
    if (data.error) this.ctx.timeline.add("error", `${node}: ${data.error}`, data.error);
  }

  update(ns, data) {
    for (const [node, value] of Object.entries(data || {})) {
      if (node === "__interrupt__") {
        const shown = value.length ? value.map((i) => i.value) : "paused at a breakpoint";
        this.ctx.timeline.add("interrupt", nodePath(ns, ""), shown);
      } else {
        this.ctx.timeline.add("update", nodePath(ns, node), value);
        if (!this.ctx.tasksStreamed) mark(this.ctx.svg, nodePath(ns, node), "done");
      }
    }
  }

  async finish(run) {
    const ctx = this.ctx;
    try {
      const [record, state] = await Promise.all([
        run.id ? api(`/threads/${run.thread}/runs/${run.id}`).catch(() => null) : null,
        api(`/threads/${run.thread}/state`),
      ]);
      run.status = record?.status || run.status;
      for (const next of state.next || []) mark(ctx.svg, next, "next");
      run.state = state;
    } catch (error) {
      ctx.timeline.add("error", error.message);
    }
    ctx.timeline.add("end", `run ${run.status}`);
    await ctx.timeline.drained();
    ctx.runEnded(run);
  }

  /** Ask the server to cancel the run; the stream then ends by itself. */
  async cancel() {
    const run = this.current;
    if (!run) return;
    if (!run.id) {
      run.abort.abort();
      return;
    }
    run.status = "interrupted";
    await api(`/threads/${run.thread}/runs/${run.id}/cancel?wait=0&action=interrupt`, { method: "POST" });
  }
}
