"""`version="v2"` streaming and invoke (issue 29): dict parts, interrupts apart, built states."""

from __future__ import annotations

import operator
import warnings
from typing import Annotated, Any, TypedDict

import pytest
from pydantic import BaseModel

from checkpoints import InMemorySaver
from engine import END, START, StateGraph, interrupt
from engine.types import GraphOutput


class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]


class Model(BaseModel):
    x: int
    log: Annotated[list, operator.add]


def _graph(schema: Any = S, asks: bool = False) -> Any:
    def a(s: Any) -> dict:
        x = s["x"] if isinstance(s, dict) else s.x
        if asks:
            x += interrupt("how much?")
        return {"x": x + 1, "log": ["a"]}

    b = StateGraph(schema)
    b.add_node("a", a)
    b.add_edge(START, "a")
    b.add_edge("a", END)
    return b.compile(checkpointer=InMemorySaver() if asks else None)


def test_parts_carry_type_namespace_and_data_whatever_the_modes() -> None:
    parts = list(_graph().stream({"x": 1, "log": []}, stream_mode=["values", "updates"],
                                 version="v2"))
    assert [p["type"] for p in parts] == ["values", "updates", "values"]
    assert all(p["ns"] == () for p in parts)
    assert parts[1]["data"] == {"a": {"x": 2, "log": ["a"]}}
    assert parts[2] == {"type": "values", "ns": (), "data": {"x": 2, "log": ["a"]},
                        "interrupts": ()}


def test_interrupts_travel_beside_the_state_not_inside_it() -> None:
    graph = _graph(asks=True)
    config = {"configurable": {"thread_id": "t"}}
    parts = list(graph.stream({"x": 1, "log": []}, config, stream_mode="values", version="v2"))
    last = parts[-1]
    assert last["data"] == {"x": 1, "log": []}
    assert [i.value for i in last["interrupts"]] == ["how much?"]


def test_states_are_built_into_a_pydantic_schema() -> None:
    parts = list(_graph(Model).stream({"x": 1, "log": []}, stream_mode="values", version="v2"))
    assert all(isinstance(p["data"], Model) for p in parts)
    assert parts[-1]["data"].x == 2


def test_invoke_returns_graph_output_with_its_interrupts() -> None:
    graph = _graph(asks=True)
    out = graph.invoke({"x": 1, "log": []}, {"configurable": {"thread_id": "t"}}, version="v2")
    assert isinstance(out, GraphOutput)
    assert out.value == {"x": 1, "log": []}
    assert [i.value for i in out.interrupts] == ["how much?"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert out["__interrupt__"] == out.interrupts  # v1's dict access, deprecated
    assert caught and issubclass(caught[0].category, DeprecationWarning)


def test_invoke_v2_with_another_mode_returns_the_parts() -> None:
    parts = _graph().invoke({"x": 1, "log": []}, stream_mode="updates", version="v2")
    assert parts == [{"type": "updates", "ns": (), "data": {"a": {"x": 2, "log": ["a"]}}}]


@pytest.mark.anyio
async def test_async_invoke_and_stream_speak_v2_too() -> None:
    graph = _graph(Model)
    out = await graph.ainvoke({"x": 1, "log": []}, version="v2")
    assert isinstance(out.value, Model) and out.interrupts == ()
    parts = [p async for p in graph.astream({"x": 1, "log": []}, version="v2")]
    assert [p["type"] for p in parts] == ["updates"]


def test_an_unknown_version_is_refused() -> None:
    with pytest.raises(ValueError, match="v3"):
        list(_graph().stream({"x": 1, "log": []}, version="v3"))
