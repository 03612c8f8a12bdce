// A pending interrupt's value and a form to resume it (issue 20), shown by the Run view after
// a run that stopped in `interrupt()` and by the Threads view for a waiting thread.

import { h, pretty } from "./dom.js";

/** The box for `state` (a ThreadState) of `threadId`, or null when nothing waits. */
export function interruptBox(app, threadId, state) {
  const pending = (state?.tasks || []).flatMap((t) => t.interrupts || []);
  if (!pending.length) return null;
  const value = h("input#resume-value", { type: "text", placeholder: "resume value (JSON or text)" });
  const resume = async () => {
    let v = value.value;
    try { v = JSON.parse(v); } catch { /* plain text */ }
    try {
      app.timeline.clear();
      await app.runner.start(threadId, { assistant_id: app.assistant.assistant_id, command: { resume: v },
        stream_mode: [...app.modes], stream_subgraphs: true });
    } catch (error) {
      app.fail(error);
    }
  };
  value.addEventListener("keydown", (e) => e.key === "Enter" && resume());
  return h("div#interrupt.interrupt", {}, h("h3", {}, "Waiting for input"),
    pending.map((i) => h("pre.interrupt-value", {}, pretty(i.value))),
    h("div.row", {}, value, h("button#resume-button.primary", { onclick: resume }, "Resume")));
}
