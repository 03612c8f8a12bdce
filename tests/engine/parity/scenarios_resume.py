"""Resuming one of several parallel interrupts (issue 17, "Also").

While the other interrupt is still pending, what `invoke` returns and what every stream mode
shows must include the resumed task's writes, as LangGraph 1.2.22 returns
`{"log": ["p1=two"], "__interrupt__": [...]}`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from .harness import Transcript
from .scenarios import LAG, S, _parallel_interrupts, cfg, scenario

MODES = ["values", "updates", "debug", "tasks", "checkpoints"]


def _first_interrupt(lib: Any, g: Any, thread: str) -> Any:
    return g.invoke({"x": 1}, cfg(thread))["__interrupt__"][0]


@scenario
def resume_one_of_two_output(lib: Any) -> list[Any]:
    """invoke / ainvoke / stream / astream of a resume that answers one of two interrupts."""
    t = Transcript()
    g = _parallel_interrupts(lib)
    first = _first_interrupt(lib, g, "invoke")
    t.call("invoke", g.invoke, lib.Command(resume={first.id: "two"}), cfg("invoke"))
    t.state("invoke_state", g, cfg("invoke"))
    rest = {i.id: "three" for i in g.get_state(cfg("invoke")).interrupts}
    t.call("invoke_rest", g.invoke, lib.Command(resume=rest), cfg("invoke"))

    first = _first_interrupt(lib, g, "ainvoke")
    t.call("ainvoke", lambda: asyncio.run(
        g.ainvoke(lib.Command(resume={first.id: "two"}), cfg("ainvoke"))))
    first = _first_interrupt(lib, g, "updates")
    t.call("invoke_updates", g.invoke, lib.Command(resume={first.id: "two"}), cfg("updates"),
           stream_mode="updates")
    for mode in ("values", "updates"):  # the others are in the multi-mode leg
        first = _first_interrupt(lib, g, mode)
        t.stream(f"stream_{mode}", g, lib.Command(resume={first.id: "two"}), cfg(mode),
                 stream_mode=mode)
    first = _first_interrupt(lib, g, "multi")
    t.stream("stream_multi", g, lib.Command(resume={first.id: "two"}), cfg("multi"),
             stream_mode=MODES)

    async def astream(thread: str) -> list[Any]:
        first = _first_interrupt(lib, g, thread)
        cmd = lib.Command(resume={first.id: "two"})
        return [c async for c in g.astream(cmd, cfg(thread), stream_mode=["values", "updates"])]

    t.call("astream", lambda: asyncio.run(astream("astream")))
    return t.items


@scenario
def sibling_finishes_beside_interrupt(lib: Any) -> list[Any]:
    """One node finishes while its sibling interrupts: the output carries the finished write.

    Node names sort in the order they are added: LangGraph runs a step's tasks in name order.
    """
    t = Transcript()

    def done(s: S) -> dict[str, Any]:
        return {"log": ["done"]}

    def ask(s: S) -> dict[str, Any]:
        time.sleep(LAG)
        return {"log": [f"ask={lib.interrupt('q')}"]}

    b = lib.StateGraph(S)
    b.add_node("a_done", done)
    b.add_node("b_ask", ask)
    b.add_edge(lib.START, "a_done")
    b.add_edge(lib.START, "b_ask")
    g = b.compile(checkpointer=lib.InMemorySaver())
    t.call("invoke", g.invoke, {"x": 1}, cfg("1"))
    t.stream("stream", g, {"x": 1}, cfg("2"), stream_mode=MODES)
    t.call("resume", g.invoke, lib.Command(resume="yes"), cfg("1"))
    return t.items


@scenario
def resume_rest_replays_finished(lib: Any) -> list[Any]:
    """The second resume: the task resumed first is replayed from its pending writes (start
    events and a cached update, no result), the resumed checkpoint shows its result."""
    t = Transcript()
    g = _parallel_interrupts(lib)
    first = _first_interrupt(lib, g, "1")
    t.call("resume_one", g.invoke, lib.Command(resume={first.id: "two"}), cfg("1"))
    rest = {i.id: "three" for i in g.get_state(cfg("1")).interrupts}
    t.stream("resume_rest", g, lib.Command(resume=rest), cfg("1"), stream_mode=MODES)
    t.state("done", g, cfg("1"))

    async def events(thread: str) -> list[Any]:  # a replayed task has no node events
        first = _first_interrupt(lib, g, thread)
        g.invoke(lib.Command(resume={first.id: "two"}), cfg(thread))
        rest = {i.id: "three" for i in g.get_state(cfg(thread)).interrupts}
        stream = g.astream_events(lib.Command(resume=rest), cfg(thread), version="v2")
        return [(e["event"], e["name"]) async for e in stream]

    t.call("resume_rest_events", lambda: asyncio.run(events("2")))
    return t.items


@scenario
def failed_sibling_in_resumed_checkpoint(lib: Any) -> list[Any]:
    """A step with a finished and a failed task, run again: the checkpoint event shows the
    result of one and the error of the other; the finished one is replayed."""
    t = Transcript()
    calls = {"n": 0}

    def ok(s: S) -> dict[str, Any]:
        return {"log": ["ok"]}

    def bad(s: S) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ValueError("boom")
        return {"log": ["fixed"]}

    b = lib.StateGraph(S)
    b.add_node("a_ok", ok)
    b.add_node("b_bad", bad)
    b.add_edge(lib.START, "a_ok")
    b.add_edge(lib.START, "b_bad")
    g = b.compile(checkpointer=lib.InMemorySaver())
    t.stream("first", g, {"x": 1}, cfg("1"), stream_mode=["updates"])
    t.stream("again", g, None, cfg("1"), stream_mode=MODES)
    return t.items
