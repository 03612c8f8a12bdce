"""Parity scenarios for issue 29's API details: `with_config` merging under a call's config,
a Send's own timeout, a non-saver refused at compile. Registered into `scenarios.SCENARIOS`."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
from typing_extensions import TypedDict

from .harness import Transcript
from .scenarios import scenario


class Seen(TypedDict, total=False):
    x: int
    seen: list


def _recording(lib: Any) -> Any:
    def node(state: Seen, config) -> dict[str, Any]:  # noqa: ANN001 - LangGraph warns on `Any`
        conf, meta = config["configurable"], config["metadata"]
        return {"seen": [
            [t for t in config.get("tags", []) if t in ("bound", "call")],
            {k: meta.get(k) for k in ("user", "trace")},
            {k: conf.get(k) for k in ("agent", "thread_id")},
        ]}

    g = lib.StateGraph(Seen)
    g.add_node("node", node)
    g.add_edge(lib.START, "node")
    return g.compile()


@scenario
def with_config_merging(lib: Any) -> list[Any]:
    t = Transcript()
    bound = _recording(lib).with_config(
        {"tags": ["bound"], "metadata": {"user": "u"}, "configurable": {"agent": "root"}})
    t.call("bare", bound.invoke, {"x": 1})
    t.call("merged", bound.invoke, {"x": 1}, {"tags": ["call"], "metadata": {"trace": "t"},
                                              "configurable": {"thread_id": "T"}})
    limited = bound.with_config(recursion_limit=11)
    t.add("config", limited.with_config(tags=["more"]).config)
    t.add("limit_over", limited.with_config({"recursion_limit": 1}, recursion_limit=12).config)
    t.call("batch", bound.batch, [{"x": 1}, {"x": 2}], {"tags": ["call"]})
    return t.items


@scenario
def send_timeout(lib: Any) -> list[Any]:
    t = Transcript()

    async def stuck(state: Seen) -> dict[str, Any]:
        await anyio.Event().wait()
        return {}

    g = lib.StateGraph(Seen)
    g.add_node("stuck", stuck, timeout=3600)
    g.add_conditional_edges(lib.START, lambda s: [lib.Send("stuck", s, timeout=0.05)])
    try:
        asyncio.run(g.compile().ainvoke({"x": 1}))
    except Exception as error:  # noqa: BLE001 - the error is the transcript
        t.add("error", [type(error).__name__, error.node, error.kind, error.run_timeout])
    sends = [lib.Send("n", 1), lib.Send("n", 1, timeout=2)]
    t.add("sends", [sends[0] == lib.Send("n", 1), sends[0] == sends[1],
                    sends[0].timeout, sends[1].timeout.run_timeout])
    return t.items


@scenario
def compile_refuses_non_saver(lib: Any) -> list[Any]:
    t = Transcript()
    g = lib.StateGraph(Seen)
    g.add_node("node", lambda s: {})
    g.add_edge(lib.START, "node")
    try:
        g.compile(checkpointer=object())
    except TypeError as error:
        t.add("error", str(error).split(". Received")[0])
    t.add("accepted", [g.compile(checkpointer=c) is not None for c in (None, True, False)])
    return t.items
