"""Runs from the studio in a real browser (issue 20): streamed steps, lit nodes, the chat
view, breakpoints and stepping, cancel, and a 1,000-event stream that must not freeze it."""

from __future__ import annotations

import importlib.util
from typing import Any

import httpx

from ..test_cli import EXAMPLE
from .conftest import screenshot
from .helpers import current_thread, open_studio, run_and_wait, thread_state, timeline

# Records every node that gained the class `running`, in order (a node may light and go dark
# within one batch of mutations: each record's new value is the next record's old value).
WATCH_LIT = """() => {
  window.__lit = [];
  new MutationObserver((changes) => {
    changes.forEach((c, i) => {
      const later = changes.slice(i + 1).find((d) => d.target === c.target);
      const now = later ? later.oldValue : c.target.getAttribute("class");
      const has = (v) => (v || "").split(" ").includes("running");
      if (has(now) && !has(c.oldValue)) window.__lit.push(c.target.dataset.node);
    });
  }).observe(document.getElementById("graph"), {attributes: true, attributeFilter: ["class"], attributeOldValue: true, subtree: true});
}"""


def test_a_run_streams_its_steps_in_order_and_lights_its_nodes(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "agent")
    page.fill("#f-topic", "otters")
    page.evaluate(WATCH_LIT)
    assert run_and_wait(page, "#run-button") == "success"
    steps = ["research", "write", "review", "write", "review"]
    assert timeline(page, "update") == steps
    assert page.evaluate("window.__lit") == steps  # each node lit while it ran, in order
    assert page.eval_on_selector_all("#graph .node.running", "els => els.length") == 0
    done = page.eval_on_selector_all("#graph .node.done", "els => els.map(e => e.dataset.node)")
    assert sorted(done) == ["research", "review", "write"]
    page.click('#timeline li[data-kind="update"][data-node="research"] summary')
    update = page.text_content('#timeline li[data-kind="update"][data-node="research"] pre')
    assert "otters: three facts" in update
    assert thread_state(studio_url, current_thread(page))["values"]["draft"] == "Draft 2 on otters, from 4 notes"
    page.click('#timeline li[data-kind="update"][data-node="write"] summary')
    page.wait_for_selector('#timeline li[data-kind="update"][data-node="write"] pre')
    screenshot(page, "run")


def test_an_error_shows_its_message_and_marks_its_node(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "fail")
    assert run_and_wait(page, "#run-button") == "error"
    errors = page.eval_on_selector_all('#timeline li[data-kind="error"]', "els => els.map(e => e.dataset.node)")
    assert any("ValueError" in e and "boom from the studio test" in e for e in errors), errors
    assert page.eval_on_selector_all("#graph .node.error", "els => els.map(e => e.dataset.node)") == ["explode"]


def test_subgraph_nodes_light_up_inside_an_expanded_subgraph(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "nested")
    page.click('#graph [data-expand="worker"]')
    page.evaluate(WATCH_LIT)
    assert run_and_wait(page, "#run-button") == "success"
    assert page.evaluate("window.__lit") == ["prepare", "worker:plan", "worker:act", "finish"]
    assert timeline(page, "update") == ["prepare", "worker:plan", "worker:act", "worker", "finish"]


def _chat_model() -> Any:
    spec = importlib.util.spec_from_file_location("example_chat", EXAMPLE / "chat.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FakeChatModel()


WATCH_CHAT = """() => {
  window.__seen = [];
  new MutationObserver(() => {
    const last = [...document.querySelectorAll('#chat .bubble[data-role="assistant"] .text')].pop();
    if (last && window.__seen[window.__seen.length - 1] !== last.textContent) window.__seen.push(last.textContent);
  }).observe(document.getElementById("chat"), {childList: true, subtree: true, characterData: true});
}"""


def test_a_chat_turn_renders_exactly_the_model_text(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "chat")
    page.evaluate(WATCH_CHAT)
    model = _chat_model()
    first = model.reply([{"role": "user", "content": "hello studio"}])
    page.fill("#chat-input", "hello studio")
    assert run_and_wait(page, "#chat-send") == "success"
    seen = page.evaluate("window.__seen")
    assert seen[-1] == first
    # the reply grew on the page as tokens arrived (~20 ms apart; a loaded machine may deliver
    # a few in one read), and every text shown was a prefix of it: no token doubled or lost
    assert len(seen) >= 3
    assert all(first.startswith(text) for text in seen), seen
    print(f"chat: {len(first.split())} tokens, {len(seen)} distinct texts shown")
    bubbles = page.eval_on_selector_all(
        "#chat .bubble", "els => els.map(e => [e.dataset.role, e.querySelector('.text').textContent])")
    assert bubbles == [["user", "hello studio"], ["assistant", first]]
    # a second turn on the same thread keeps the history and streams the new reply
    page.evaluate("window.__seen = []")
    page.fill("#chat-input", "and again")
    assert run_and_wait(page, "#chat-send") == "success"
    history = [{"role": "user", "content": "hello studio"}, {"role": "assistant", "content": first},
               {"role": "user", "content": "and again"}]
    second = model.reply(history)
    assert page.evaluate("window.__seen")[-1] == second
    texts = page.eval_on_selector_all("#chat .bubble .text", "els => els.map(e => e.textContent)")
    assert texts == ["hello studio", first, "and again", second]
    screenshot(page, "chat")


def test_a_breakpoint_stops_the_run_where_set(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "agent")
    page.click('#graph .bp[data-bp="before"][data-node="review"]')
    assert "before: review" in page.text_content("#bp-summary")
    page.fill("#f-topic", "bees")
    run_and_wait(page, "#run-button")
    assert timeline(page, "update") == ["research", "write"]
    assert len(timeline(page, "interrupt")) == 1
    thread = current_thread(page)
    assert thread_state(studio_url, thread)["next"] == ["review"]
    assert page.eval_on_selector_all("#graph .node.next", "els => els.map(e => e.dataset.node)") == ["review"]
    page.click('#graph .bp[data-bp="after"][data-node="write"]')  # a redraw keeps the marks
    assert page.eval_on_selector_all("#graph .node.next", "els => els.map(e => e.dataset.node)") == ["review"]
    page.click('#graph .bp[data-bp="after"][data-node="write"]')
    screenshot(page, "breakpoint", readme=False)
    # Continue: review runs, loops back to write, and stops before review again
    run_and_wait(page, "#continue-button")
    assert timeline(page, "update") == ["review", "write"]
    assert thread_state(studio_url, thread)["next"] == ["review"]


def test_step_runs_one_super_step_at_a_time(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "agent")
    page.fill("#f-topic", "ants")
    run_and_wait(page, "#step-button")  # the input is taken; nothing has run yet
    thread = current_thread(page)
    assert timeline(page, "update") == [] and thread_state(studio_url, thread)["next"] == ["research"]
    for node, after in (("research", "write"), ("write", "review"), ("review", "write")):
        run_and_wait(page, "#step-button")
        assert timeline(page, "update") == [node]
        assert thread_state(studio_url, thread)["next"] == [after]


def test_cancel_stops_a_running_run(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "slow")
    page.click("#run-button")
    page.wait_for_selector('#timeline li[data-kind="custom"]')
    page.wait_for_selector("#cancel-button:enabled")
    page.click("#cancel-button")
    page.wait_for_function("Number(document.body.dataset.runs || 0) > 0", timeout=10_000)
    thread = current_thread(page)
    runs = httpx.get(f"{studio_url}/threads/{thread}/runs").json()
    assert [r["status"] for r in runs] == ["interrupted"]
    assert len(timeline(page, "custom")) < 200  # stopped long before its 200 ticks (10 s)


MEASURE_FRAMES = """() => {
  window.__gaps = [];
  window.__long = [];
  window.__stopFrames = false;
  const round = (window.__round = (window.__round || 0) + 1); // an earlier round's loop stops
  let last = performance.now();
  const tick = (now) => {
    if (window.__round !== round) return;
    window.__gaps.push(now - last); last = now;
    if (!window.__stopFrames) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  window.__observer?.disconnect();
  window.__observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__long.push(e.duration); });
  window.__observer.observe({type: "longtask", buffered: false});
}"""


def burst_gap(page: Any) -> float:
    """Run the `burst` graph once; the longest gap between painted frames meanwhile (ms)."""
    page.evaluate(MEASURE_FRAMES)
    started = page.evaluate("performance.now()")
    assert run_and_wait(page, "#run-button") == "success"
    elapsed = page.evaluate("performance.now()") - started
    page.evaluate("window.__stopFrames = true")
    assert len(timeline(page, "custom")) == 1000
    gaps = page.evaluate("window.__gaps")
    longest_task = max(page.evaluate("window.__long") or [0])
    print(f"1,000 events: run shown in {elapsed:.0f} ms, {len(gaps)} frames, "
          f"longest frame gap {max(gaps):.0f} ms, longest task {longest_task:.0f} ms")
    return float(max(gaps))


def test_a_1000_event_stream_does_not_freeze_the_page(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "burst")
    # the best of up to three runs: a busy machine (the suite's other xdist worker) only adds
    # to a gap (33-67 ms on an idle 2-core machine); a page that freezes does it every time
    gaps = [burst_gap(page)]
    while gaps[-1] >= 250 and len(gaps) < 3:
        gaps.append(burst_gap(page))
    assert min(gaps) < 250  # the page kept painting: never a quarter-second freeze
    # and it still answers the user right after
    last = page.locator('#timeline li[data-kind="custom"]').last
    last.locator("summary").click()
    assert '"i": 999' in last.locator("pre").text_content()


# Every time a node gains or loses the class `running`: [node, "on" | "off", ms].
WATCH_RUNNING = """() => {
  window.__running = [];
  window.__runningWatch?.disconnect();
  const has = (v) => (v || "").split(" ").includes("running");
  window.__runningWatch = new MutationObserver((changes) => {
    const now = performance.now();
    changes.forEach((c, i) => {
      const later = changes.slice(i + 1).find((d) => d.target === c.target);
      const value = later ? later.oldValue : c.target.getAttribute("class");
      if (has(value) !== has(c.oldValue)) window.__running.push([c.target.dataset.node, has(value) ? "on" : "off", now]);
    });
  });
  window.__runningWatch.observe(document.getElementById("graph"), {attributes: true, attributeFilter: ["class"], attributeOldValue: true, subtree: true});
}"""


def test_a_folded_subgraph_stays_lit_while_any_inner_task_runs(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "team")  # `team` folded: quick (50 ms) beside long (600 ms), then tail (300 ms)
    page.evaluate(WATCH_RUNNING)
    assert run_and_wait(page, "#run-button") == "success"
    changes = page.evaluate("window.__running")
    assert [(n, s) for n, s, _ in changes] == [
        ("before", "on"), ("before", "off"), ("team", "on"), ("team", "off"), ("after", "on"), ("after", "off")]
    lit = changes[3][2] - changes[2][2]
    assert lit >= 850, lit  # quick ending (at ~50 ms) did not turn it off: long and tail ran on
    # expanded, each inner node is lit for its own task only
    page.click('#graph [data-expand="team"]')
    page.evaluate(WATCH_RUNNING)
    assert run_and_wait(page, "#run-button") == "success"
    on = [n for n, s, _ in page.evaluate("window.__running") if s == "on"]
    assert on[0] == "before" and sorted(on[1:3]) == ["team:long", "team:quick"] and on[3:] == ["team:tail", "after"]


def rows(page: Any) -> list[tuple[str, str, str | None, str | None]]:
    return page.eval_on_selector_all(
        '#timeline li[data-kind="step"], #timeline li[data-kind="update"]',
        "els => els.map(e => [e.dataset.kind, e.dataset.node, e.dataset.step ?? null, e.dataset.ms ?? null])")


def test_the_timeline_shows_steps_and_how_long_each_node_took(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "team")
    assert run_and_wait(page, "#run-button") == "success"
    got = rows(page)
    assert [(k, n, s) for k, n, s, _ in got] == [
        ("step", "step 1", None), ("update", "before", "1"),
        ("step", "step 2", None), ("update", "team:quick", "1"), ("update", "team:long", "1"),
        ("update", "team:tail", "2"), ("update", "team", "2"),
        ("step", "step 3", None), ("update", "after", "3")]
    took = {n: float(ms) for k, n, _, ms in got if k == "update"}
    slept = {"before": 100, "team:quick": 50, "team:long": 600, "team:tail": 300, "team": 900, "after": 100}
    for node, ms in slept.items():  # a task's time is its node's sleep plus a little overhead
        assert 0.95 * ms <= took[node] < ms + 400, (node, took[node])
    notes = page.eval_on_selector_all('#timeline li[data-kind="update"] .note', "els => els.map(e => e.textContent)")
    assert notes[0].startswith("step 1 \u00b7 1") and notes[0].endswith(" ms")
    assert notes[2].startswith("team step 1 \u00b7 6")  # the inner graph's own step
    # without `debug` there are no step rows or times, and the run still works
    page.uncheck('input[data-mode="debug"]')
    assert run_and_wait(page, "#run-button") == "success"
    assert [k for k, *_ in rows(page)] == ["update"] * 6
    page.check('input[data-mode="debug"]')


def test_the_input_form_has_a_raw_json_toggle(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "agent")
    page.fill("#f-topic", "herons")
    page.check('#run-input [data-role="raw-toggle"]')  # the fields' input, as JSON
    raw = '#run-input [data-role="raw-input"]'
    assert '"topic": "herons"' in page.input_value(raw) and page.is_hidden("#f-topic")
    page.fill(raw, '{"topic": "egrets"}')
    page.uncheck('#run-input [data-role="raw-toggle"]')  # back to fields, filled from the JSON
    assert page.input_value("#f-topic") == "egrets"
    page.check('#run-input [data-role="raw-toggle"]')
    page.fill(raw, '{"topic": "storks", "notes": ["given"]}')  # raw JSON can say what fields cannot
    assert run_and_wait(page, "#run-button") == "success"
    values = thread_state(studio_url, current_thread(page))["values"]
    assert values["topic"] == "storks" and values["notes"][0] == "given"
