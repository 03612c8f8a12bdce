// Pending interrupts with a form to resume each (issue 20), shown by the Run view after a run
// that stopped in `interrupt()` and by the Threads view for a waiting thread. Each interrupt
// is answered by its id (`command.resume = {id: value}`), so of two parallel interrupts one
// can be answered now and the other later; "Resume all" answers every filled-in one at once.

import { h, pretty } from "./dom.js";

/** A typed answer: JSON when it parses, else the text. */
function answer(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The box for `state` (a ThreadState) of `threadId`, or null when nothing waits. */
export function interruptBox(app, threadId, state) {
  const pending = (state?.tasks || []).flatMap((t) => (t.interrupts || []).map((i) => ({ ...i, node: t.name })));
  if (!pending.length) return null;
  const resume = async (values) => {
    try {
      app.timeline.clear();
      await app.runner.start(threadId, { assistant_id: app.assistant.assistant_id, command: { resume: values },
        stream_mode: [...app.modes], stream_subgraphs: true });
    } catch (error) {
      app.fail(error);
    }
  };
  // without an id (an old server) the one pending interrupt takes the bare value
  const keyed = (i, value) => (i.id ? { [i.id]: value } : value);
  const items = pending.map((i) => {
    const input = h("input.resume-value", { type: "text", placeholder: "answer (JSON or text)", dataset: { interruptId: i.id || "" } });
    const send = () => resume(keyed(i, answer(input.value)));
    input.addEventListener("keydown", (e) => e.key === "Enter" && send());
    return h("div.interrupt-item", { dataset: { interruptId: i.id || "", node: i.node } },
      h("div.muted", {}, i.node), h("pre.interrupt-value", {}, pretty(i.value)),
      h("div.row", {}, input, h("button.resume-button.primary", { onclick: send }, "Resume")));
  });
  const all = () => {
    const values = {};
    for (const input of items.map((el) => el.querySelector("input"))) {
      if (input.value !== "" && input.dataset.interruptId) values[input.dataset.interruptId] = answer(input.value);
    }
    if (Object.keys(values).length) resume(values);
    else app.fail(new Error("fill in at least one answer"));
  };
  const title = pending.length > 1 ? `${pending.length} interrupts wait for input` : "Waiting for input";
  return h("div#interrupt.interrupt", { dataset: { count: pending.length } }, h("h3", {}, title), items,
    pending.length > 1 && pending.every((i) => i.id)
      ? h("div.row", {}, h("button#resume-all", { onclick: all, title: "answer every filled-in interrupt in one run" }, "Resume all"))
      : null);
}
