"""Pregel API details LangGraph's own tests use (issue 27), beyond the parity scenarios in
`parity/scenarios_api.py`: what the sync forms refuse, the bulk update path, a subgraph's own
`max_concurrency`, and `astream_events` given a `stream_mode`."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any, TypedDict

import pytest

from checkpoints import InMemorySaver
from engine import END, START, Send, StateGraph, StateUpdate


class Docs(TypedDict):
    docs: Annotated[list[str], operator.add]


async def _first(state: Docs) -> dict[str, Any]:
    return {"docs": ["first"]}


async def _second(state: Docs) -> dict[str, Any]:
    return {"docs": ["second"]}


async def _decide(state: Docs) -> str:
    await asyncio.sleep(0)
    return "second" if "extra" in state["docs"] else END


def _routed() -> Any:
    return (
        StateGraph(Docs).add_node("first", _first).add_node("second", _second)
        .add_edge(START, "first").add_conditional_edges("first", _decide, ["second", END])
        .compile(checkpointer=InMemorySaver(), interrupt_after=["first"])
    )


def test_sync_update_state_refuses_an_async_router() -> None:
    graph = _routed()
    config = {"configurable": {"thread_id": "1"}}
    asyncio.run(graph.ainvoke({"docs": []}, config))
    with pytest.raises(TypeError, match="_decide"):
        graph.update_state(config, {"docs": ["extra"]}, as_node="first")


@pytest.mark.anyio
async def test_abulk_update_state_awaits_an_async_router() -> None:
    graph = _routed()
    config = {"configurable": {"thread_id": "1"}}
    await graph.ainvoke({"docs": []}, config)
    await graph.abulk_update_state(config, [[StateUpdate({"docs": ["extra"]}, "first")]])
    assert (await graph.aget_state(config)).next == ("second",)
    assert await graph.ainvoke(None, config) == {"docs": ["first", "extra", "second"]}


@pytest.mark.anyio
async def test_max_concurrency_reaches_a_subgraphs_steps() -> None:
    """A subgraph run inside a node bounds its own steps by the config it was given."""
    peak = {"running": 0, "max": 0}
    full = asyncio.Event()

    async def fan(state: Any) -> list[Any]:
        peak["running"] += 1
        peak["max"] = max(peak["max"], peak["running"])
        if peak["running"] >= 2:
            full.set()
        await asyncio.wait_for(full.wait(), 20)
        await asyncio.sleep(0)
        peak["running"] -= 1
        return [state]

    inner = StateGraph(Annotated[list, operator.add])
    inner.add_node("start", lambda s: ["start"]).add_node("fan", fan)
    inner.add_edge(START, "start")
    inner.add_conditional_edges("start", lambda s: [Send("fan", i) for i in range(5)])
    outer = StateGraph(Annotated[list, operator.add]).add_node("inner", inner.compile())
    outer = outer.add_edge(START, "inner").compile()
    result = await outer.ainvoke([], {"max_concurrency": 2})
    assert sorted(x for x in result if isinstance(x, int)) == [0, 1, 2, 3, 4]
    assert peak["max"] == 2


@pytest.mark.anyio
async def test_astream_events_takes_a_stream_mode() -> None:
    graph = (
        StateGraph(Docs).add_node("first", _first).add_edge(START, "first").compile()
    )
    events = [
        e async for e in graph.astream_events(
            {"docs": []}, {"run_id": "00000000-0000-0000-0000-000000000000"},
            version="v2", stream_mode="values",
        )
    ]
    ends = [e for e in events if e["event"] == "on_chain_end" and e["name"] == graph.name]
    assert [e["data"]["output"] for e in ends] == [{"docs": ["first"]}]


@pytest.mark.anyio
async def test_a_mock_node_runs_as_a_plain_callable() -> None:
    """A `Mock` answers every attribute, `_graphrun_acall` too: that is no async form."""
    from unittest import mock

    add_one = mock.Mock(side_effect=lambda _: 1)
    builder = StateGraph(Annotated[int, operator.add]).add_node("add_one", add_one)
    builder.add_edge(START, "add_one")
    builder.add_conditional_edges("add_one", lambda total: "add_one" if total < 4 else END)
    assert await builder.compile().ainvoke(1) == 4
    assert add_one.call_count == 3
