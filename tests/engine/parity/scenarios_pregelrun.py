"""Parity scenarios for LangGraph's pregel run behaviour (issue 27): what `debug` checkpoint
events and a subgraph's history show, how nodes are called, how tasks end when cancelled or
timed out. Registered into `scenarios.SCENARIOS`.
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any, TypedDict
from unittest import mock

from .harness import Transcript
from .scenarios import cfg, scenario


class Msgs(TypedDict):
    messages: Annotated[list[str], operator.add]


def _say(name: str) -> Any:
    def node(state: Msgs) -> dict[str, Any]:
        return {"messages": [f"entered {name}"]}

    return node


def _nested(lib: Any) -> Any:
    """outer (o1 -> mid) / mid (m1 -> inner) / inner (i1 -> i2), a checkpointer on the outer."""
    inner = lib.StateGraph(Msgs).add_node("i1", _say("i1")).add_node("i2", _say("i2"))
    inner = inner.add_edge(lib.START, "i1").add_edge("i1", "i2").compile()
    mid = lib.StateGraph(Msgs).add_node("m1", _say("m1")).add_node("mid_inner", inner)
    mid = mid.add_edge(lib.START, "m1").add_edge("m1", "mid_inner").compile()
    outer = lib.StateGraph(Msgs).add_node("o1", _say("o1")).add_node("outer_mid", mid)
    outer = outer.add_edge(lib.START, "o1").add_edge("o1", "outer_mid")
    return outer.compile(checkpointer=lib.InMemorySaver())


def _checkpoint_events(t: Transcript, label: str, graph: Any, config: Any, **kw: Any) -> list:
    namespaces: list[tuple] = []
    for ns, event in graph.stream({"messages": []}, config, stream_mode="debug",
                                  subgraphs=True, **kw):
        if event["type"] == "checkpoint":
            namespaces += [ns] if ns not in namespaces else []
            t.add(label, (ns, event["step"], event["payload"]))
    return namespaces


@scenario
def debug_checkpoints_exit_durability(lib: Any) -> list[Any]:
    """With durability "exit" no checkpoint is saved between steps: every `debug` checkpoint
    event's `parent_config` is None (LangGraph), root and subgraphs alike."""
    t = Transcript()
    g = _nested(lib)
    _checkpoint_events(t, "exit", g, cfg("1"), durability="exit")
    t.add("history", list(g.get_state_history(cfg("1"))))
    return t.items


@scenario
def subgraph_history_checkpoint_map(lib: Any) -> list[Any]:
    """A nested subgraph's `get_state_history` (and `get_state`) configs carry the
    `checkpoint_map` of its ancestors' checkpoints, as its `debug` events do."""
    t = Transcript()
    g = _nested(lib)
    for ns in _checkpoint_events(t, "sync", g, cfg("1"), durability="sync"):
        conf = {"configurable": {"thread_id": "1", "checkpoint_ns": "|".join(ns)}}
        t.add("history", list(g.get_state_history(conf)))
        t.state("state", g, conf)
    return t.items


@scenario
def mock_node_in_async_run(lib: Any) -> list[Any]:
    """A sync callable that is not a function (a `Mock`, which answers any attribute) runs as
    a sync node under `astream`: it is called, never awaited."""
    t = Transcript()
    add_one = mock.Mock(side_effect=lambda _: 1)
    b = lib.StateGraph(Annotated[int, operator.add]).add_node("add_one", add_one)
    b.add_edge(lib.START, "add_one")
    b.add_conditional_edges("add_one", lambda n: "add_one" if n < 3 else lib.END)
    g = b.compile(checkpointer=lib.InMemorySaver())

    async def run() -> None:
        async for chunk in g.astream(1, cfg("1"), stream_mode=["values", "updates"]):
            t.add("astream", chunk)

    asyncio.run(run())
    t.add("calls", add_one.call_count)
    return t.items
