"""Graph factories as the reference classifies them (issue 31): which parameter gets the config
and which the `ServerRuntime`, by annotation, and what a factory may return."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Annotated, Any

import pytest

from engine import START, StateGraph
from http_adapter._graph_spec import NotAGraph, open_graph
from http_adapter.server_runtime import ExecutionRuntime, ReadRuntime

if TYPE_CHECKING:  # resolved by name, as the reference resolves it
    from langgraph_sdk.runtime import ServerRuntime

RUNTIME = ExecutionRuntime(access_context="threads.create_run", context={"model": "m"})
CONFIG = {"configurable": {"model": "c"}}


def _graph(tag: str) -> StateGraph:
    builder = StateGraph(dict)
    builder.add_node(tag, lambda state: {})
    builder.add_edge(START, tag)
    return builder


def _open(spec: Any, runtime: Any = RUNTIME) -> list[str]:
    async def go() -> list[str]:
        async with open_graph(spec, CONFIG, runtime) as graph:
            return [n for n in graph.get_graph().nodes if not n.startswith("__")]
    return asyncio.run(go())


def test_parameters_are_told_apart_by_annotation() -> None:
    def runtime_first(runtime: ServerRuntime, config: dict[str, Any]) -> Any:
        context = runtime.execution_runtime.context
        return _graph(f"{context['model']}_{config['configurable']['model']}")

    def annotated(rt: Annotated[ServerRuntime, "x"]) -> Any:
        return _graph(rt.access_context.replace(".", "_"))

    def only_config(whatever: Any) -> Any:
        return _graph(whatever["configurable"]["model"])

    assert _open(runtime_first) == ["m_c"]
    assert _open(annotated, ReadRuntime(access_context="assistants.read")) == ["assistants_read"]
    assert _open(only_config) == ["c"]


def test_context_manager_factories_are_left_after_use() -> None:
    left: list[str] = []

    @contextlib.contextmanager
    def sync_cm() -> Any:
        yield _graph("sync")
        left.append("sync")

    assert _open(sync_cm) == ["sync"] and left == ["sync"]


def test_factories_the_reference_refuses() -> None:
    def two_configs(a: Any, b: Any) -> Any:
        return _graph("x")

    def three(a: Any, b: Any, c: Any) -> Any:
        return _graph("x")

    with pytest.raises(TypeError, match="ServerRuntime and/or RunnableConfig"):
        _open(two_configs)
    with pytest.raises(TypeError, match="must take 0, 1, or 2 arguments"):
        _open(three)
    with pytest.raises(NotAGraph, match="the factory returned"):
        _open(lambda: (lambda: None))
