"""`events` stream mode and astream_events(version="v2"), compared with LangGraph 1.2.22."""

from __future__ import annotations

from typing import Any, TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

import engine

lg_graph = pytest.importorskip("langgraph.graph")


class S(TypedDict):
    x: int


def _chain(lib: Any) -> Any:
    g = lib.StateGraph(S)
    g.add_node("a", lambda s: {"x": s["x"] + 1})
    g.add_node("b", lambda s: {"x": s["x"] * 10})
    g.add_edge(lib.START, "a")
    g.add_edge("a", "b")
    return g.compile()


def _shape(event: dict[str, Any]) -> tuple[Any, ...]:
    meta = {k: v for k, v in event["metadata"].items() if k != "langgraph_checkpoint_ns"}
    return (event["event"], event["name"], event["tags"], event["data"],
            len(event["parent_ids"]), meta)


@pytest.mark.anyio
async def test_events_match_langgraph_astream_events() -> None:
    ours = [_shape(e) async for e in _chain(engine).astream_events({"x": 1}, version="v2")]
    theirs = [_shape(e) async for e in _chain(lg_graph).astream_events({"x": 1}, version="v2")]
    assert ours == theirs
    assert [e[0] for e in ours][:2] == ["on_chain_start", "on_chain_start"]
    assert ours[-1][:2] == ("on_chain_end", "LangGraph")


def test_events_mode_sync_has_parent_ids_leading_to_the_graph_run() -> None:
    events = list(_chain(engine).stream({"x": 1}, {"run_id": "r-1"}, stream_mode="events"))
    graph_start = events[0]
    assert graph_start["run_id"] == "r-1" and graph_start["parent_ids"] == []
    node_events = [e for e in events if e["name"] in ("a", "b")]
    assert node_events and all(e["parent_ids"] == ["r-1"] for e in node_events)
    assert set(events[0]) == {"event", "name", "run_id", "tags", "metadata", "data", "parent_ids"}


@pytest.mark.anyio
async def test_chat_model_events_nest_under_the_node() -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage("hi there", id="m")]))

    async def n(state: dict) -> dict:
        return {"messages": [await model.ainvoke(state["messages"])]}

    g = engine.StateGraph(engine.MessagesState)
    g.add_node("n", n)
    g.add_edge(engine.START, "n")
    events = [e async for e in g.compile().astream_events({"messages": []}, version="v2")]
    kinds = [e["event"] for e in events if e["event"].startswith("on_chat_model")]
    assert kinds[0] == "on_chat_model_start" and kinds[-1] == "on_chat_model_end"
    streamed = [e["data"]["chunk"].content for e in events if e["event"] == "on_chat_model_stream"]
    assert "".join(streamed) == "hi there"
    node_start = next(e for e in events if e["event"] == "on_chain_start" and e["name"] == "n")
    model_event = next(e for e in events if e["event"] == "on_chat_model_stream")
    assert model_event["parent_ids"][-1] == node_start["run_id"]


def test_failing_node_emits_chain_error() -> None:
    def boom(state: dict) -> dict:
        raise ValueError("boom")

    g = engine.StateGraph(S)
    g.add_node("boom", boom)
    g.add_edge(engine.START, "boom")
    seen: list[str] = []
    with pytest.raises(ValueError):
        for event in g.compile().stream({"x": 1}, stream_mode="events"):
            seen.append(event["event"])
    assert seen[-1] == "on_chain_error"


@pytest.mark.anyio
async def test_v1_is_deprecated_and_streams_v2_shapes() -> None:
    # issue 29: LangGraph forwards v1 runs' options too; graphrun has one event shape (v2's)
    with pytest.warns(DeprecationWarning, match="v1"):
        events = [e async for e in _chain(engine).astream_events({"x": 1}, version="v1")]
    assert events[0]["event"] == "on_chain_start"
    with pytest.raises(ValueError):
        async for _ in _chain(engine).astream_events({"x": 1}, version="v0"):
            pass
