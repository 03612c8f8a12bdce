// The Threads view (issue 20): search threads, open one, its checkpoints as a timeline, a
// checkpoint's values and tasks, edit + fork (time travel), and resume a pending interrupt.

import { api } from "./api.js";
import { h, fill, parseJson, pretty } from "./dom.js";
import { mark, clearMarks } from "./graph.js";
import { interruptBox } from "./interrupt.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function threadsView(app) {
  const query = h("input#thread-search", { type: "search", placeholder: 'thread id, or metadata JSON {"k": "v"}' });
  const status = h("select#thread-status", {}, ["", "idle", "busy", "interrupted", "error"].map((s) => h("option", { value: s }, s || "any status")));
  const list = h("ul#thread-list.list");
  const detail = h("div#thread-detail");
  let open = null;

  async function search() {
    const text = query.value.trim();
    const body = { limit: 50, sort_by: "updated_at", sort_order: "desc" };
    if (status.value) body.status = status.value;
    if (text.startsWith("{")) body.metadata = parseJson(text, "metadata");
    else if (UUID.test(text)) body.ids = [text]; // a whole id: found however old the thread is
    const threads = (await api("/threads/search", { method: "POST", body }))
      .filter((t) => text.startsWith("{") || t.thread_id.includes(text));
    fill(list, threads.length ? threads.map((t) => h("li.thread", {
      dataset: { threadId: t.thread_id, status: t.status }, class: t.thread_id === open ? "thread selected" : "thread",
      onclick: () => openThread(t.thread_id, null, true).catch(app.fail),
    }, h("code", {}, t.thread_id), " ", h("span.chip", { dataset: { status: t.status } }, t.status), " ",
      h("span.muted", {}, t.metadata?.graph_id || ""), " ", h("span.muted", {}, t.updated_at.slice(0, 19).replace("T", " ")))) : h("li.muted", {}, "no threads"));
  }

  /** Show thread `id` with `checkpoint` selected (null: the latest). `push`: the user did it. */
  async function openThread(id, checkpoint = null, push = false) {
    open = id;
    app.setThread(id, push);
    app.setCheckpoint(checkpoint, false);
    for (const li of list.querySelectorAll("li.thread")) li.classList.toggle("selected", li.dataset.threadId === id);
    const [thread, history] = await Promise.all([
      api(`/threads/${id}`),
      api(`/threads/${id}/history`, { method: "POST", body: { limit: 100 } }),
    ]);
    await app.followThread(thread);
    const target = h("div#checkpoint");
    const steps = h("ol#history.timeline", {}, history.map((s, i) => h("li.ckpt", {
      dataset: { checkpointId: s.checkpoint.checkpoint_id, step: s.metadata?.step ?? "", index: i },
      onclick: (e) => select(e.currentTarget, s, target, true),
    }, h("span.step", {}, `step ${s.metadata?.step ?? "?"}`), " ", h("span.muted", {}, s.metadata?.source || ""), " ",
      h("span", {}, s.next?.length ? `next: ${s.next.join(", ")}` : "done"), forkNote(history, i))));
    fill(detail,
      h("h3", {}, "Thread ", h("code", {}, id), " ", h("span.chip", { dataset: { status: thread.status } }, thread.status)),
      interruptBox(app, thread.thread_id, history[0]),
      h("div.split", {}, h("div", {}, h("h3", {}, "Checkpoints"), steps), target));
    const index = checkpoint ? history.findIndex((s) => s.checkpoint.checkpoint_id === checkpoint) : 0;
    if (index >= 0 && history.length) select(steps.children[index], history[index], target, false);
    else if (checkpoint) { // older than the 100 listed: fetched on its own
      select(null, await api(`/threads/${id}/state/${encodeURIComponent(checkpoint)}`), target, false);
    }
  }

  function select(li, snapshot, target, push) {
    for (const el of target.previousElementSibling?.querySelectorAll("li.ckpt") || []) el.classList.toggle("selected", el === li);
    li?.scrollIntoView({ block: "nearest" });
    clearMarks(app.svg, "next", "done", "running", "error");
    for (const n of snapshot.next || []) mark(app.svg, n, "next");
    fill(target, checkpointDetail(app, open, snapshot, (checkpoint = null) => openThread(open, checkpoint, !!checkpoint)));
    if (push) app.setCheckpoint(snapshot.checkpoint.checkpoint_id);
  }

  query.addEventListener("keydown", (e) => e.key === "Enter" && search().catch(app.fail));
  status.addEventListener("change", () => search().catch(app.fail));
  app.on((what) => {
    if (what === "run-ended") {
      search().catch(app.fail);
      if (open) openThread(open).catch(app.fail);
    }
  });
  const wanted = app.checkpoint;
  search().then(() => app.thread && openThread(app.thread, wanted)).catch(app.fail);
  return h("div.threads-view", {},
    h("div.row", {}, query, status, h("button", { onclick: () => search().catch(app.fail) }, "Search")),
    list, detail);
}

/** "forked from step N" when a checkpoint's parent is not the one listed after it. */
function forkNote(history, i) {
  const parent = history[i].parent_checkpoint?.checkpoint_id;
  const below = history[i + 1]?.checkpoint.checkpoint_id;
  if (!parent || parent === below) return null;
  const from = history.find((s) => s.checkpoint.checkpoint_id === parent);
  return h("span.fork", { title: `parent ${parent}` }, " ", forkIcon(), ` forked from step ${from?.metadata?.step ?? "?"}`);
}

/** A fork drawn as SVG (issue 30: the U+2442 glyph is missing from common fonts: an empty box). */
function forkIcon() {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  for (const [k, v] of Object.entries({ viewBox: "0 0 12 12", width: 12, height: 12, "aria-hidden": "true", class: "fork-icon" })) svg.setAttribute(k, v);
  const path = document.createElementNS(ns, "path");
  path.setAttribute("d", "M3 1.5V6.5C3 8 4.5 8 6 8.5C7.5 8 9 8 9 6.5V1.5M6 8.5V11");
  for (const [x, y] of [[3, 1.5], [9, 1.5], [6, 11]]) {
    const dot = document.createElementNS(ns, "circle");
    for (const [k, v] of Object.entries({ cx: x, cy: y, r: 1.3 })) dot.setAttribute(k, v);
    svg.append(dot);
  }
  svg.prepend(path);
  return svg;
}

/** Values and tasks of one checkpoint; edit the values and fork from there. */
function checkpointDetail(app, thread, snapshot, reopen) {
  const values = h("textarea#state-values", { rows: 10, spellcheck: false });
  values.value = pretty(snapshot.values);
  const id = snapshot.checkpoint.checkpoint_id;
  const runFrom = async (checkpointId) => {
    app.timeline.clear();
    await app.runner.start(thread, { assistant_id: app.assistant.assistant_id, input: null, checkpoint_id: checkpointId,
      stream_mode: [...app.modes], stream_subgraphs: true });
  };
  // the edited keys only, as an update after this checkpoint: a new branch of the thread
  const save = async () => {
    const edited = parseJson(values.value, "values") || {};
    const changed = Object.fromEntries(Object.entries(edited).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(snapshot.values?.[k])));
    return (await api(`/threads/${thread}/state`, { method: "POST", body: { values: changed, checkpoint_id: id } })).checkpoint.checkpoint_id;
  };
  const fork = (run) => async () => {
    try {
      const saved = await save();
      await (run ? runFrom(saved) : reopen(saved));
    } catch (error) {
      app.fail(error);
    }
  };
  // a task of this step: what it wrote (once the step ran), its error, its interrupts
  const tasks = (snapshot.tasks || []).map((t) => h("li.task", { dataset: { task: t.name } },
    h("b", {}, t.name), t.error ? h("span.error", {}, ` error: ${t.error}`) : null,
    t.result ? h("pre.task-result", {}, pretty(t.result)) : null,
    t.interrupts?.length ? h("pre.task-interrupts", {}, pretty(t.interrupts.map((i) => i.value))) : null));
  return h("div.checkpoint", { dataset: { checkpointId: id } },
    h("h3", {}, "Checkpoint ", h("code", {}, id), ` · step ${snapshot.metadata?.step ?? "?"}`),
    h("p", {}, "next: ", h("b#ckpt-next", {}, (snapshot.next || []).join(", ") || "(end)")),
    tasks.length ? h("div", {}, h("h4", {}, "Tasks"), h("ul.tasks", {}, tasks)) : null,
    h("h4", {}, "Values"), values,
    h("div.row.actions", {},
      h("button#fork-button.primary", { onclick: fork(true), title: "save these values as a new checkpoint after this one, then run from it" }, "Fork & run"),
      h("button#fork-save", { onclick: fork(false), title: "save these values as a new checkpoint after this one; run or step from the Run view" }, "Fork"),
      h("button#replay-button", { onclick: () => runFrom(id).catch(app.fail) }, "Replay from here"),
      h("button", { onclick: () => reopen().catch(app.fail) }, "Reload")));
}
