"""Extra graphs the browser tests serve beside the examples (copied into the test project).

`burst` streams 1,000 custom events (the page must not freeze), `slow` runs long enough to be
cancelled, `wide` has 50 nodes (the layout), `nested` has a subgraph (expanding it), `fail` raises.
"""

from __future__ import annotations

import operator
import time
from typing import Annotated, Any, TypedDict

from engine import END, START, StateGraph, get_stream_writer


class State(TypedDict, total=False):
    n: int
    log: Annotated[list[str], operator.add]


def burst(state: State) -> dict[str, Any]:
    write = get_stream_writer()
    for i in range(state.get("n") or 1000):
        write({"i": i})
    return {"log": ["burst"]}


def slow(state: State) -> dict[str, Any]:
    write = get_stream_writer()
    for i in range(200):
        write({"tick": i})
        time.sleep(0.05)
    return {"log": ["slow"]}


def explode(state: State) -> dict[str, Any]:
    raise ValueError("boom from the studio test")


def _single(name: str, fn: Any) -> Any:
    builder = StateGraph(State)
    builder.add_node(name, fn)
    builder.add_edge(START, name)
    return builder.compile()


burst_graph = _single("burst", burst)
slow_graph = _single("slow", slow)
fail_graph = _single("explode", explode)


def _wide() -> Any:
    """50 nodes: a fan-out of 6 lanes, each a chain, joined, with a loop and some skips."""
    builder = StateGraph(State)
    step = lambda name: (lambda s: {"log": [name]})  # noqa: E731
    lanes = [[f"l{lane}_{k}" for k in range(8)] for lane in range(6)]
    for name in ["fan", "join", *(n for lane in lanes for n in lane)]:
        builder.add_node(name, step(name))
    builder.add_edge(START, "fan")
    for lane in lanes:
        builder.add_edge("fan", lane[0])
        for a, b in zip(lane, lane[1:]):
            builder.add_edge(a, b)
        builder.add_edge(lane[-1], "join")
    builder.add_conditional_edges("l0_3", lambda s: "l1_5", ["l1_5", "l0_4"])
    builder.add_conditional_edges("join", lambda s: END, ["fan", END])
    return builder.compile()


wide_graph = _wide()


def _nested() -> Any:
    inner = StateGraph(State)
    inner.add_node("plan", lambda s: {"log": ["plan"]})
    inner.add_node("act", lambda s: {"log": ["act"]})
    inner.add_edge(START, "plan")
    inner.add_edge("plan", "act")
    inner.add_edge("act", END)
    outer = StateGraph(State)
    outer.add_node("prepare", lambda s: {"log": ["prepare"]})
    outer.add_node("worker", inner.compile())
    outer.add_node("finish", lambda s: {"log": ["finish"]})
    outer.add_edge(START, "prepare")
    outer.add_edge("prepare", "worker")
    outer.add_edge("worker", "finish")
    outer.add_edge("finish", END)
    return outer.compile()


nested_graph = _nested()


def _clustered() -> Any:
    """A subgraph that fans out inside, beside an outer branch of the same depth."""
    step = lambda name: (lambda s: {"log": [name]})  # noqa: E731
    inner = StateGraph(State)
    for name in ("plan", "act", "check", "merge"):
        inner.add_node(name, step(name))
    inner.add_edge(START, "plan")
    for a, b in (("plan", "act"), ("plan", "check"), ("act", "merge"), ("check", "merge")):
        inner.add_edge(a, b)
    inner.add_edge("merge", END)
    outer = StateGraph(State)
    for name in ("prepare", "side1", "side2", "side3", "finish"):
        outer.add_node(name, step(name))
    outer.add_node("worker", inner.compile())
    outer.add_edge(START, "prepare")
    for a, b in (("prepare", "worker"), ("prepare", "side1"), ("side1", "side2"), ("side2", "side3"),
                 ("worker", "finish"), ("side3", "finish")):
        outer.add_edge(a, b)
    outer.add_edge("finish", END)
    return outer.compile()


clustered_graph = _clustered()
