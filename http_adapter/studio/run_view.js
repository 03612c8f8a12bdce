// The Run view (issue 20): thread, input form from the schema, stream modes, breakpoints,
// run / step / continue / cancel, and a chat box for graphs with a `messages` key.

import { api } from "./api.js";
import { h, fill, parseJson } from "./dom.js";
import { schemaForm } from "./form.js";
import { Chat } from "./run.js";

const MODES = ["updates", "values", "messages-tuple", "custom", "tasks", "debug"];
const DEFAULT_MODES = new Set(["updates", "messages-tuple", "custom", "tasks"]);
let chosenModes = null; // kept across view switches

export function hasMessages(app) {
  const schema = app.schemas?.input_schema || app.schemas?.state_schema;
  return !!schema?.properties?.messages;
}

export function runView(app) {
  chosenModes ||= new Set(DEFAULT_MODES);
  const threadSelect = h("select#run-thread", { onchange: () => app.setThread(threadSelect.value || null) });
  const form = schemaForm(app.schemas?.input_schema || app.schemas?.state_schema);
  form.id = "run-input";
  const config = h("textarea#run-config", { rows: 2, spellcheck: false, placeholder: '{"configurable": {...}} (optional)' });
  const modes = h("div.modes", {}, MODES.map((m) => h("label.inline", {},
    h("input", { type: "checkbox", value: m, checked: chosenModes.has(m), dataset: { mode: m },
      onchange: (e) => (e.target.checked ? chosenModes.add(m) : chosenModes.delete(m)) }), ` ${m}`)));
  const subgraphs = h("input#run-subgraphs", { type: "checkbox", checked: true });
  const bpSummary = h("span#bp-summary");
  const buttons = {
    run: h("button#run-button.primary", { onclick: () => go(false) }, "Run"),
    step: h("button#step-button", { onclick: () => go(true), title: "run one super-step, then pause" }, "Step"),
    cont: h("button#continue-button", { onclick: () => go(false, true), title: "resume the paused thread" }, "Continue"),
    cancel: h("button#cancel-button", { onclick: () => app.runner.cancel().catch(app.fail), disabled: true }, "Cancel"),
  };

  const body = (input, step) => {
    const b = {
      assistant_id: app.assistant.assistant_id,
      input,
      stream_mode: [...chosenModes],
      stream_subgraphs: subgraphs.checked,
    };
    const cfg = parseJson(config.value, "config");
    if (cfg) b.config = cfg;
    if (step) b.interrupt_before = "*";
    else {
      if (app.breakpoints.before.size) b.interrupt_before = [...app.breakpoints.before];
      if (app.breakpoints.after.size) b.interrupt_after = [...app.breakpoints.after];
    }
    return b;
  };

  // Continue (and Step on a paused thread) resume with no input; Run sends the form's input.
  async function go(step, resume = false) {
    try {
      const paused = app.thread && (await api(`/threads/${app.thread}`)).status === "interrupted";
      const input = resume || (step && paused) ? null : form.value();
      app.tasksStreamed = chosenModes.has("tasks");
      app.timeline.clear();
      await app.runner.start(app.thread, body(input, step));
    } catch (error) {
      app.fail(error);
    }
  }

  const chatBox = hasMessages(app) ? chatPanel(app, (text) => {
    app.tasksStreamed = chosenModes.has("tasks");
    app.timeline.clear();
    return app.runner.start(app.thread, body({ messages: [{ role: "user", content: text }] }, false));
  }) : null;

  const refreshThreads = async () => {
    const threads = await api("/threads/search", { method: "POST", body: { metadata: { graph_id: app.assistant.graph_id }, limit: 20 } });
    const known = threads.some((t) => t.thread_id === app.thread);
    fill(threadSelect, h("option", { value: "" }, "new thread"),
      !known && app.thread ? h("option", { value: app.thread }, app.thread) : null,
      threads.map((t) => h("option", { value: t.thread_id }, `${t.thread_id} · ${t.status}`)));
    threadSelect.value = app.thread || "";
  };
  const showBreakpoints = () => {
    const list = (set) => (set.size ? [...set].join(", ") : "none");
    fill(bpSummary, `before: ${list(app.breakpoints.before)}; after: ${list(app.breakpoints.after)}`);
  };
  const loadChat = async () => {
    if (!chatBox || !app.thread) return app.chat?.show([]);
    const state = await api(`/threads/${app.thread}/state`);
    app.chat.show(state.values?.messages || []);
  };
  app.on((what) => {
    if (what === "breakpoints") showBreakpoints();
    if (what === "run-started") setBusy(buttons, true);
    if (what === "run-ended") setBusy(buttons, false);
    if (what === "run-ended" || what === "thread") refreshThreads().catch(app.fail);
    if (what === "thread" && !app.runner.running) loadChat().catch(app.fail);
  });
  refreshThreads().catch(app.fail);
  loadChat().catch(app.fail);
  showBreakpoints();
  setBusy(buttons, app.runner.running);

  return h("div.run-view", {},
    h("div.row", {}, h("label", { for: "run-thread" }, "Thread"), threadSelect,
      h("button", { onclick: () => app.setThread(null) }, "New thread")),
    chatBox,
    h("h3", {}, "Input"), form,
    h("details", {}, h("summary", {}, "Config"), config),
    h("h3", {}, "Stream"), modes, h("label.inline", {}, subgraphs, " subgraphs"),
    h("h3", {}, "Breakpoints"), h("p.hint", {}, "Click the dots on a node: top = interrupt before, bottom = after."),
    h("div.row", {}, bpSummary, h("button", { onclick: () => { app.breakpoints.before.clear(); app.breakpoints.after.clear(); app.redraw(); showBreakpoints(); } }, "Clear")),
    h("div.row.actions", {}, buttons.run, buttons.step, buttons.cont, buttons.cancel));
}

function setBusy(buttons, busy) {
  for (const [name, b] of Object.entries(buttons)) b.disabled = name === "cancel" ? !busy : busy;
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
