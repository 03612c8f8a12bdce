// The studio's entry point (issue 20): picks an assistant, draws its graph, and hosts the
// Run, Threads and Assistant views. Everything it shows comes from the documented API.

import { ApiError, api, credentials, onKeyNeeded, setCredentials } from "./api.js";
import { h, fill, notify } from "./dom.js";
import { collapse, draw, light, mark } from "./graph.js";
import { Runner, outcome } from "./run.js";
import { Timeline } from "./timeline.js";
import { Viewport } from "./viewport.js";
import { runView } from "./run_view.js";
import { threadsView } from "./threads_view.js";
import { assistantView } from "./assistant_view.js";
import { assistantKey, findAssistant, takeHash, writeHash } from "./nav.js";

const app = {
  assistants: [],
  assistant: null,
  full: { nodes: [], edges: [] },
  subgraphs: [],
  expanded: new Set(),
  breakpoints: { before: new Set(), after: new Set() },
  schemas: null,
  thread: null, // the thread the next run uses (null: a new one)
  checkpoint: null, // the checkpoint selected in the Threads view (null: the latest)
  view: "run",
  svg: document.getElementById("graph"),
  timeline: new Timeline(document.getElementById("timeline")),
  chat: null,
  tasksStreamed: true,
  // the stream modes every run asks for (the Run view's checkboxes); `debug` brings the steps
  // and timestamps the timeline shows
  modes: new Set(["updates", "messages-tuple", "custom", "tasks", "debug"]),
  layoutMs: 0,
  listeners: new Set(),
};
window.studio = app; // for the browser tests and the curious: read-only use

app.viewport = new Viewport(app.svg);
app.viewport.onChange = (k) => { document.getElementById("zoom-level").textContent = `${Math.round(k * 100)}%`; };

app.runner = new Runner(app);
app.on = (fn) => app.listeners.add(fn);
app.emit = (what) => app.listeners.forEach((fn) => fn(what));
app.runStarted = (run) => {
  document.body.dataset.running = "1";
  notify(`Run on thread ${run.thread}: running\u2026`); // not the last run's end (issue 30)
  app.emit("run-started");
};
app.runEnded = (run) => {
  delete document.body.dataset.running;
  document.body.dataset.lastRun = run.status;
  document.body.dataset.runs = String(Number(document.body.dataset.runs || 0) + 1);
  app.lastRun = run; // the Run view's output panel shows it (issue 30)
  app.setThread(run.thread);
  if (run.state?.values?.messages && app.chat) app.chat.show(run.state.values.messages);
  app.emit("run-ended");
  notify(`Run ${run.id ?? ""} ${outcome(run)}`, run.status === "error" ? "error" : "info");
};
/** Use `thread` (null: a new one); `push` when the user chose it (a history entry). */
app.setThread = (thread, push = false) => {
  if (thread !== app.thread) app.checkpoint = null;
  app.thread = thread;
  app.emit("thread");
  app.remember(push);
};
/** The Threads view selected a checkpoint (null: the latest). */
app.setCheckpoint = (checkpoint, push = true) => {
  app.checkpoint = checkpoint;
  app.remember(push);
};
/** Write what the page shows into the address (nav.js). */
app.remember = (push) => {
  if (!app.assistant) return;
  const threads = app.view === "threads";
  writeHash({ assistant: assistantKey(app.assistant), view: app.view, thread: app.thread,
    checkpoint: threads ? app.checkpoint : null }, push);
};
const MARKS = ["done", "next", "error"]; // "running" follows the runner's tasks

/** Draw the graph again; `fresh`: another graph, fitted anew whatever the view was. */
app.redraw = (fresh = false) => {
  const kept = [...app.svg.querySelectorAll(".node")].map((el) => [el.dataset.node, MARKS.filter((c) => el.classList.contains(c))]);
  const graph = collapse(app.full, app.subgraphs, app.expanded);
  app.layoutMs = draw(app.svg, graph, app.breakpoints, {
    onToggleSubgraph: (id) => {
      app.expanded.has(id) ? app.expanded.delete(id) : app.expanded.add(id);
      app.redraw();
    },
    onBreakpoint: (id, when) => {
      const set = app.breakpoints[when];
      set.has(id) ? set.delete(id) : set.add(id);
      app.redraw();
      app.emit("breakpoints");
    },
  });
  for (const [node, marks] of kept) for (const m of marks) mark(app.svg, node, m); // a redraw keeps them
  light(app.svg, app.runner.activePaths());
  app.viewport.drawn(fresh); // issue 30: no "layout 2.1 ms" readout in the legend any more
};

let asking = null; // one dialog for all the calls refused at once

function askKey(detail) {
  asking ||= showKeyDialog(detail).finally(() => { asking = null; });
  return asking;
}

async function showKeyDialog(detail) {
  const dialog = document.getElementById("key-dialog");
  document.getElementById("key-detail").textContent = typeof detail === "string" ? detail : "This server needs a key.";
  const input = document.getElementById("key-input");
  const scheme = document.getElementById("key-scheme");
  input.value = "";
  scheme.value = credentials().scheme;
  dialog.showModal();
  const ok = await new Promise((resolve) => dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true }));
  if (ok && input.value) setCredentials(input.value, scheme.value);
  return ok && !!input.value;
}

async function loadAssistants() {
  app.assistants = await api("/assistants/search", { method: "POST", body: { limit: 100, sort_by: "created_at", sort_order: "asc" } });
  renderMenu();
  await followHash();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Show what the address's hash names (on load, and on back/forward or an edited link). */
async function followHash() {
  if (!app.assistants.length) return; // still loading: loadAssistants reads the hash when done
  const want = takeHash();
  let pick = findAssistant(app.assistants, want.assistant);
  if (!pick && UUID.test(want.assistant || "")) pick = await api(`/assistants/${want.assistant}`).catch(() => null);
  pick ||= app.assistant || app.assistants[0];
  if (!pick) return;
  if (pick.assistant_id !== app.assistant?.assistant_id) await loadAssistant(pick);
  app.thread = want.thread;
  app.checkpoint = want.checkpoint;
  showView(want.view || "run");
  app.remember(false);
}

/** The header's menu: assistants grouped by graph, with their version. */
function renderMenu() {
  const select = document.getElementById("assistant");
  const byGraph = new Map();
  for (const a of app.assistants) (byGraph.get(a.graph_id) || byGraph.set(a.graph_id, []).get(a.graph_id)).push(a);
  fill(select, [...byGraph].map(([graph, list]) =>
    h("optgroup", { label: graph }, list.map((a) => h("option", { value: a.assistant_id }, `${a.name} (v${a.version})`)))));
  if (app.assistant) select.value = app.assistant.assistant_id;
  return select;
}
app.renderMenu = renderMenu;

/** The menu or the Assistant view picked `id`: a history entry. */
async function selectAssistant(id) {
  const assistant = app.assistants.find((a) => a.assistant_id === id) || (await api(`/assistants/${id}`));
  await loadAssistant(assistant);
  showView(app.view);
  app.remember(true);
}

/** Draw `assistant`'s graph and load its schemas; breakpoints, folds and thread start afresh. */
async function loadAssistant(assistant) {
  const id = assistant.assistant_id;
  app.assistant = assistant;
  document.getElementById("assistant").value = id;
  app.expanded.clear();
  app.breakpoints.before.clear();
  app.breakpoints.after.clear();
  app.thread = null;
  app.checkpoint = null;
  const [full, subgraphs, schemas] = await Promise.all([
    api(`/assistants/${id}/graph?xray=true`),
    api(`/assistants/${id}/subgraphs?recurse=true`),
    api(`/assistants/${id}/schemas`),
  ]);
  app.full = full;
  app.subgraphs = Object.keys(subgraphs || {}).map((ns) => ns.split("|").join(":"));
  app.schemas = schemas;
  app.redraw(true);
  app.emit("assistant");
}

/** Issue 30 item 3: a thread of another graph is drawn, replayed and forked with its own
 * graph's assistant (the one its runs used, else that graph's first), never the header's. */
app.followThread = async (thread) => {
  const graph = thread.metadata?.graph_id;
  if (!graph || graph === app.assistant?.graph_id) return;
  const used = thread.metadata?.assistant_id;
  const pick = app.assistants.find((a) => a.assistant_id === used) || app.assistants.find((a) => a.graph_id === graph)
    || (await api("/assistants/search", { method: "POST", body: { graph_id: graph, limit: 1 } }))[0];
  if (!pick) return;
  const [id, checkpoint] = [app.thread, app.checkpoint];
  await loadAssistant(pick);
  [app.thread, app.checkpoint] = [id, checkpoint];
  app.remember(false);
};

function showView(name) {
  app.view = name;
  for (const tab of document.querySelectorAll("nav button")) tab.classList.toggle("active", tab.dataset.view === name);
  const panel = document.getElementById("view");
  const build = { run: runView, threads: threadsView, assistant: assistantView }[name];
  app.listeners.clear();
  app.chat = null;
  fill(panel, build(app));
}
app.showView = showView;

function wire() {
  onKeyNeeded(askKey);
  document.getElementById("assistant").addEventListener("change", (e) => selectAssistant(e.target.value).catch(fail));
  for (const tab of document.querySelectorAll("nav button")) tab.addEventListener("click", () => {
    showView(tab.dataset.view);
    app.remember(true);
  });
  window.addEventListener("hashchange", () => followHash().catch(fail));
  const zoom = { "zoom-in": () => app.viewport.zoomIn(), "zoom-out": () => app.viewport.zoomOut(),
    "zoom-reset": () => app.viewport.actualSize(), "zoom-fit": () => app.viewport.fit() };
  for (const [id, act] of Object.entries(zoom)) document.getElementById(id).addEventListener("click", act);
  document.getElementById("key-button").addEventListener("click", () => askKey("Set the key this page sends.").then((ok) => ok && loadAssistants()).catch(fail));
  window.addEventListener("unhandledrejection", (e) => { e.preventDefault(); fail(e.reason); });
}

function fail(error) {
  if (error instanceof ApiError && error.denied) {
    notify(`Not allowed: the server's auth refused this (${error.message}). Use the Key button to act as someone else.`, "denied");
  } else notify(error instanceof ApiError ? `${error.status}: ${error.message}` : String(error?.message || error), "error");
}
app.fail = fail;

async function main() {
  wire();
  try {
    await loadAssistants();
  } catch (error) {
    fail(error);
  }
  document.body.dataset.ready = "1";
  app.readyAt = performance.now();
}

main();
