// The Run view (issue 20): thread, input form from the schema, stream modes, breakpoints,
// run / step / continue / cancel, and a chat box for graphs with a `messages` key.

import { api } from "./api.js";
import { h, fill, parseJson, pretty } from "./dom.js";
import { outcome } from "./run.js";
import { schemaForm } from "./form.js";
import { interruptBox } from "./interrupt.js";
import { Chat } from "./chat.js";

// issue 30 item 6: the API's mode names are jargon; each box says what it shows, in plain words,
// and its tooltip names the mode and what it streams
const MODES = {
  updates: ["node outputs", "what each node returned, as it finishes"],
  values: ["whole state", "the full state after every step"],
  "messages-tuple": ["chat tokens", "LLM messages token by token, as the model writes them (the chat)"],
  custom: ["custom events", "what nodes send with get_stream_writer(): progress, logs"],
  tasks: ["running nodes", "each node's start and end: lights the running nodes on the graph"],
  debug: ["steps & timings", "step numbers and each node's duration in the timeline"],
};

function inputSchema(app) {
  return app.schemas?.input_schema || app.schemas?.state_schema;
}

export function runView(app) {
  const form = Object.assign(schemaForm(inputSchema(app)), { id: "run-input" });
  const config = h("textarea#run-config", { rows: 2, spellcheck: false, placeholder: '{"configurable": {...}} (optional)' });
  const subgraphs = h("input#run-subgraphs", { type: "checkbox", checked: true });
  const body = (input, step) => runBody(app, { input, step, config, subgraphs: subgraphs.checked });
  const start = (b) => {
    app.tasksStreamed = app.modes.has("tasks") || app.modes.has("debug");
    app.timeline.clear();
    return app.runner.start(app.thread, b);
  };
  // Continue (and Step on a paused thread) resume with no input; Run sends the form's input.
  const go = async (step, resume = false) => {
    try {
      const paused = app.thread && (await api(`/threads/${app.thread}`)).status === "interrupted";
      await start(body(resume || (step && paused) ? null : form.value(), step));
    } catch (error) {
      app.fail(error);
    }
  };
  const buttons = actionButtons(app, go);
  const chat = inputSchema(app)?.properties?.messages
    ? chatPanel(app, (text) => start(body({ messages: [{ role: "user", content: text }] }, false)))
    : null;
  const threads = threadPicker(app);
  const breakpoints = breakpointRow(app);
  const waiting = h("div#run-interrupt");
  const showWaiting = async () => {
    const state = app.thread && !app.runner.running ? await api(`/threads/${app.thread}/state`) : null;
    fill(waiting, interruptBox(app, app.thread, state));
  };
  const output = outputPanel(app);
  app.on((what) => {
    if (what === "run-started" || what === "run-ended" || what === "thread") output.show(what);
    if (what === "run-started" || what === "run-ended") setBusy(buttons, what === "run-started");
    if (what === "run-ended" || what === "thread") threads.refresh().catch(app.fail);
    if (what === "run-started" || what === "run-ended" || what === "thread") showWaiting().catch(app.fail);
    if (what === "thread" && chat && !app.runner.running) loadChat(app).catch(app.fail);
    if (what === "breakpoints") breakpoints.refresh();
  });
  threads.refresh().catch(app.fail);
  showWaiting().catch(app.fail);
  if (chat) loadChat(app).catch(app.fail);
  setBusy(buttons, app.runner.running);
  return h("div.run-view", {},
    threads.row, waiting, chat,
    h("h3", {}, "Input"), form,
    h("details", {}, h("summary", {}, "Config"), config),
    h("h3", {}, "Stream"), modeChoices(app),
    h("label.inline", { title: "also stream the events of nodes inside subgraphs" }, subgraphs, " subgraphs"),
    h("h3", {}, "Breakpoints"), h("p.hint", {}, "Click the dots on a node: top = interrupt before, bottom = after."),
    breakpoints.row,
    h("div.row.actions", {}, Object.values(buttons)), output.panel);
}

/** The body of POST /threads/{id}/runs/stream for this assistant and the page's choices. */
function runBody(app, { input, step, config, subgraphs }) {
  const body = { assistant_id: app.assistant.assistant_id, input, stream_mode: [...app.modes], stream_subgraphs: subgraphs };
  const cfg = parseJson(config.value, "config");
  if (cfg) body.config = cfg;
  if (step) body.interrupt_before = "*"; // pause before whatever runs next: one super-step
  else {
    if (app.breakpoints.before.size) body.interrupt_before = [...app.breakpoints.before];
    if (app.breakpoints.after.size) body.interrupt_after = [...app.breakpoints.after];
  }
  return body;
}

function modeChoices(app) {
  return h("div#run-modes.modes", {},
    h("p.hint", {}, "What the run streams back to this page; hover a choice for details."),
    Object.entries(MODES).map(([m, [name, what]]) => h("label.inline", { title: `${m} mode: ${what}` },
      h("input", { type: "checkbox", value: m, checked: app.modes.has(m), dataset: { mode: m },
        onchange: (e) => (e.target.checked ? app.modes.add(m) : app.modes.delete(m)) }), " ", h("span.mode-name", {}, name))));
}

/** Issue 30 item 5: the run's final values, shown when it ends (there was no output panel). */
function outputPanel(app) {
  const status = h("span.output-status");
  const values = h("pre");
  const panel = h("div#run-output.output", { hidden: true }, h("h3", {}, "Output \u00b7 ", status), values);
  const show = (what) => {
    const run = app.lastRun;
    if (what === "run-started") {
      panel.hidden = false;
      panel.dataset.status = "running";
      fill(status, "running\u2026");
      fill(values);
    } else if (run && run.thread === app.thread && !app.runner.running) {
      panel.hidden = false;
      panel.dataset.status = run.status;
      fill(status, outcome(run));
      fill(values, pretty(run.state?.values ?? run.values ?? null));
    } else if (!app.runner.running) panel.hidden = true;
  };
  show();
  return { panel, show };
}

function actionButtons(app, go) {
  return {
    run: h("button#run-button.primary", { onclick: () => go(false) }, "Run"),
    step: h("button#step-button", { onclick: () => go(true), title: "run one super-step, then pause" }, "Step"),
    cont: h("button#continue-button", { onclick: () => go(false, true), title: "resume the paused thread" }, "Continue"),
    cancel: h("button#cancel-button", { onclick: () => app.runner.cancel().catch(app.fail), disabled: true }, "Cancel"),
  };
}

function setBusy(buttons, busy) {
  for (const [name, b] of Object.entries(buttons)) b.disabled = name === "cancel" ? !busy : busy;
}

/** New thread or one of this graph's recent threads. */
function threadPicker(app) {
  const select = h("select#run-thread", { onchange: () => app.setThread(select.value || null, true) });
  const refresh = async () => {
    const threads = await api("/threads/search", { method: "POST", body: { metadata: { graph_id: app.assistant.graph_id }, limit: 20 } });
    const known = threads.some((t) => t.thread_id === app.thread);
    fill(select, h("option", { value: "" }, "new thread"),
      !known && app.thread ? h("option", { value: app.thread }, app.thread) : null,
      threads.map((t) => h("option", { value: t.thread_id }, `${t.thread_id} · ${t.status}`)));
    select.value = app.thread || "";
  };
  const row = h("div.row", {}, h("label", { for: "run-thread" }, "Thread"), select,
    h("button", { onclick: () => app.setThread(null, true) }, "New thread"));
  return { row, refresh };
}

function breakpointRow(app) {
  const summary = h("span#bp-summary");
  const refresh = () => {
    const list = (set) => (set.size ? [...set].join(", ") : "none");
    fill(summary, `before: ${list(app.breakpoints.before)}; after: ${list(app.breakpoints.after)}`);
  };
  const clear = () => {
    app.breakpoints.before.clear();
    app.breakpoints.after.clear();
    app.redraw();
    refresh();
  };
  refresh();
  return { row: h("div.row", {}, summary, h("button", { onclick: clear }, "Clear")), refresh };
}

async function loadChat(app) {
  if (!app.chat) return;
  if (!app.thread) return app.chat.show([]);
  const state = await api(`/threads/${app.thread}/state`);
  app.chat.show(state.values?.messages || []);
}

function chatPanel(app, send) {
  const log = h("div#chat.chat");
  app.chat = new Chat(log);
  const input = h("textarea#chat-input", { rows: 2, placeholder: "Message" });
  const submit = async () => {
    const text = input.value.trim();
    if (!text || app.runner.running) return;
    input.value = "";
    app.chat.put({ type: "human", content: text, id: `local-${Date.now()}` }, false);
    try {
      await send(text);
    } catch (error) {
      app.fail(error);
    }
  };
  input.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); submit(); } });
  return h("div.chat-panel", {}, h("h3", {}, "Chat"), log, h("div.row", {}, input, h("button#chat-send.primary", { onclick: submit }, "Send")));
}
