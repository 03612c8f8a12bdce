// Running a graph and watching it (issue 20): one stream per run over POST
// /threads/{id}/runs/stream; running nodes lit on the drawing, a timeline of steps, the chat
// view fed by `messages` (messages-tuple) chunks, cancel through the cancel endpoint.
//
// Tasks come from the `tasks` and `debug` modes (either or both; a task is counted once by its
// id). `debug` events carry the step and a timestamp, so the timeline shows "step N" rows and
// each node's duration. A drawn node stays lit while any task it stands for runs: a folded
// subgraph's node while its own task or any inner task is still running.

import { api, streamRun } from "./api.js";
import { clearMarks, light, mark } from "./graph.js";
import { duration } from "./timeline.js";

/** The node path of a namespaced event (`mode|outer:<task>|inner:<task>`) for the drawing. */
function nodePath(ns, name) {
  return [...ns.map((part) => part.split(":")[0]), name].filter(Boolean).join(":");
}

/** A task's error as text: the server sends `{error, message}` (the exception's type and
 * message), a thread's state a string; an object must never read "[object Object]" (issue 30). */
export function errorText(error) {
  if (error && typeof error === "object") {
    const text = [error.error, error.message].filter(Boolean).join(": ");
    return text || JSON.stringify(error);
  }
  return String(error);
}

/** What the page says of an ended run (issue 30 item 5): the API calls a run that stopped at
 * an interrupt or a breakpoint "success" and a cancelled one "interrupted", as LangGraph does;
 * a person reads "paused" and "cancelled". */
export function outcome(run) {
  if (run.cancelled && run.status !== "success" && run.status !== "error") return "cancelled";
  const next = run.state?.next || [];
  if (run.status !== "success" || !next.length) return run.status;
  if ((run.state.tasks || []).some((t) => t.interrupts?.length)) return "paused: the thread waits for input";
  return `paused before ${next.join(", ")}: Continue goes on`;
}

/** ms since the epoch of a debug event's ISO timestamp, keeping its microseconds. */
function stamp(iso) {
  const fraction = /\.(\d+)/.exec(iso);
  return Date.parse(iso.replace(/\.\d+/, "")) + (fraction ? Number(`0.${fraction[1]}`) * 1000 : 0);
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

  /** The node paths of the tasks running now (the drawing lights the nodes holding them). */
  activePaths() {
    return this.current ? [...this.current.active.values()] : [];
  }

  /** Start a run on `threadId` (a new thread when null); resolves when the stream ends. */
  async start(threadId, body) {
    if (this.current) throw new Error("a run is already in progress");
    const ctx = this.ctx;
    const thread = threadId || (await api("/threads", { method: "POST", body: { metadata: {} } })).thread_id;
    const run = { thread, id: null, abort: new AbortController(), status: "running", values: null,
      tasks: new Map(), active: new Map(), updates: new Map(), step: null };
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
      light(ctx.svg, []);
      await this.finish(run);
    }
    return run;
  }

  event(run, name, data) {
    const [mode, ...ns] = name.split("|");
    const ctx = this.ctx;
    if (mode === "metadata") run.id = data.run_id;
    else if (mode === "tasks") {
      if ("triggers" in data) this.taskStarted(run, ns, data);
      else this.taskEnded(run, ns, data);
    } else if (mode === "debug") this.debug(run, ns, data);
    else if (mode === "updates") this.update(run, ns, data);
    else if (mode === "values") {
      if (!ns.length) run.values = data;
      ctx.timeline.add("values", nodePath(ns, ""), data);
    }
    else if (mode === "messages") ctx.chat?.put(data[0], /chunk/i.test(data[0]?.type || ""));
    else if (mode === "messages/partial" || mode === "messages/complete") for (const m of data) ctx.chat?.put(m, false);
    else if (mode === "custom") ctx.timeline.add("custom", nodePath(ns, ""), data);
    else if (mode === "error") {
      run.status = "error";
      ctx.timeline.add("error", errorText(data), data);
    } else if (mode !== "messages/metadata") ctx.timeline.add(mode, nodePath(ns, ""), data);
  }

  /** `debug` task events: the same tasks as `tasks` mode, with their step and timestamp. */
  debug(run, ns, data) {
    if (data.type === "task") this.taskStarted(run, ns, data.payload, data.step, stamp(data.timestamp));
    else if (data.type === "task_result") this.taskEnded(run, ns, data.payload, stamp(data.timestamp));
  }

  track(run, ns, payload) {
    const task = { path: nodePath(ns, payload.name), ended: false, row: null, step: null, at: null };
    run.tasks.set(payload.id, task);
    return task;
  }

  taskStarted(run, ns, payload, step, at) {
    let task = run.tasks.get(payload.id);
    if (!task) {
      task = this.track(run, ns, payload);
      run.active.set(payload.id, task.path);
      light(this.ctx.svg, run.active.values());
    }
    if (step === undefined || task.step !== null) return;
    task.step = step;
    task.at = at;
    if (!ns.length && run.step !== step) {
      run.step = step;
      this.ctx.timeline.add("step", `step ${step}`);
    }
  }

  taskEnded(run, ns, payload, at) {
    const task = run.tasks.get(payload.id) || this.track(run, ns, payload);
    if (!task.ended) {
      task.ended = true;
      run.active.delete(payload.id);
      light(this.ctx.svg, run.active.values());
      mark(this.ctx.svg, task.path, payload.error ? "error" : "done");
      // the node's update came just before this result: that row is this task's
      const key = task.path;
      task.row = run.updates.get(key) || null;
      run.updates.delete(key);
      if (payload.error) task.row = this.ctx.timeline.add("error", `${task.path}: ${errorText(payload.error)}`, payload.error);
    }
    if (at !== undefined && task.at !== null && task.row) {
      const ms = at - task.at;
      const where = ns.length ? `${nodePath(ns, "")} step` : "step";
      this.ctx.timeline.annotate(task.row, `${where} ${task.step} \u00b7 ${duration(ms)}`, { step: task.step, ms: ms.toFixed(3) });
    }
  }

  update(run, ns, data) {
    for (const [node, value] of Object.entries(data || {})) {
      if (node === "__interrupt__") {
        const shown = value.length ? value.map((i) => i.value) : "paused at a breakpoint";
        this.ctx.timeline.add("interrupt", nodePath(ns, ""), shown);
      } else if (node !== "__metadata__") {
        const path = nodePath(ns, node);
        run.updates.set(path, this.ctx.timeline.add("update", path, value));
        if (!this.ctx.tasksStreamed) mark(this.ctx.svg, path, "done");
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
    ctx.timeline.add("end", `run ${outcome(run).split(":")[0]}`);
    await ctx.timeline.drained();
    ctx.runEnded(run);
  }

  /** Ask the server to cancel the run; the stream then ends by itself. */
  async cancel() {
    const run = this.current;
    if (!run) return;
    run.cancelled = true;
    if (!run.id) {
      run.abort.abort();
      return;
    }
    run.status = "interrupted";
    await api(`/threads/${run.thread}/runs/${run.id}/cancel?wait=0&action=interrupt`, { method: "POST" });
  }
}
