"""A LangGraph graph behind the surface the server speaks to (issue 28): every form a `graphs`
entry may take (a compiled graph, a `StateGraph`, each factory form) opens as one, and what it
hands back is graphrun's types (the encoders and routes know only those)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph
from langgraph.types import interrupt
from langgraph_sdk.runtime import ServerRuntime
from typing_extensions import TypedDict

import engine
from checkpoints import InMemorySaver
from http_adapter._graph_spec import is_factory, open_graph
from http_adapter.agent_server.langgraph_graph import LangGraphGraph, engine_of
from http_adapter.server_runtime import ReadRuntime


class State(TypedDict, total=False):
    question: str
    answer: Any


def ask(state: State) -> dict[str, Any]:
    return {"answer": interrupt({"asked": state["question"]})}


BUILDER = StateGraph(State).add_node(ask).add_edge(START, "ask")
COMPILED = BUILDER.compile(name="Asker")


def plain() -> Any:
    return COMPILED


def with_config(config: RunnableConfig) -> Any:
    assert "configurable" in config
    return BUILDER


def with_runtime(runtime: ServerRuntime) -> Any:
    assert runtime.access_context == "assistants.read"
    return COMPILED


async def made_async(config: RunnableConfig, runtime: ServerRuntime) -> Any:
    return COMPILED


@contextlib.contextmanager
def managed(config: RunnableConfig) -> Iterator[Any]:
    yield COMPILED


@contextlib.asynccontextmanager
async def managed_async() -> AsyncIterator[Any]:
    yield BUILDER


@pytest.mark.parametrize("spec", [COMPILED, BUILDER, plain, with_config, with_runtime,
                                  made_async, managed, managed_async],
                         ids=lambda s: getattr(s, "__name__", type(s).__name__))
def test_every_form_opens_as_a_langgraph_graph(spec: Any) -> None:
    async def main() -> Any:
        async with open_graph(spec, {"configurable": {}},
                              ReadRuntime(access_context="assistants.read")) as graph:
            return graph

    assert is_factory(spec) == callable(spec)  # LangGraph's graphs are not factories
    graph = asyncio.run(main())
    assert isinstance(graph, LangGraphGraph) and engine_of(graph) == "langgraph"
    graphrun_graph = engine.StateGraph(State).add_node("ask", ask).add_edge(engine.START, "ask")
    assert engine_of(graphrun_graph.compile()) == "graphrun"


def test_what_comes_back_is_graphrun_s_types() -> None:
    """Interrupts in stream chunks and snapshots, snapshot tasks, a resume `Command` going in:
    the server's own types both ways."""
    graph = LangGraphGraph(COMPILED).copy(checkpointer=InMemorySaver(), store=None)
    config = {"configurable": {"thread_id": "t"}}

    async def main() -> tuple[list[Any], Any, list[Any]]:
        chunks = [c async for c in graph.astream({"question": "why?"}, config,
                                                 stream_mode=["updates", "values"])]
        snapshot = await graph.aget_state(config)
        resumed = [c async for c in graph.astream(engine.Command(resume="because"), config,
                                                  stream_mode="values")]
        return chunks, snapshot, resumed

    chunks, snapshot, resumed = asyncio.run(main())
    asked = chunks[-1][1]["__interrupt__"][0]
    assert isinstance(asked, engine.Interrupt) and asked.value == {"asked": "why?"}
    assert isinstance(snapshot, engine.StateSnapshot) and snapshot.next == ("ask",)
    assert isinstance(snapshot.tasks[0], engine.PregelTask)
    assert snapshot.tasks[0].interrupts[0] == asked
    assert resumed[-1] == {"question": "why?", "answer": "because"}
    assert graph.name == "Asker" and graph.builder.state_schema is State


def test_start_up_lists_each_graph_with_its_engine() -> None:
    from http_adapter.agent_server.settings import Settings
    from http_adapter.cli import _graph_lines

    ours = engine.StateGraph(State).add_node("ask", ask).add_edge(engine.START, "ask").compile()
    lines = _graph_lines(Settings(graphs={"lg": COMPILED, "ours": ours, "made": plain,
                                          "builder": BUILDER}))
    assert lines[0] == ("  Graphs:  lg, builder (LangGraph runtime); ours (graphrun engine); "
                        "made (factory)")
    assert "ported to graphrun's engine (`--engine graphrun`, docs/porting.md) runs were " \
           "10-67x faster" in lines[1]
    assert _graph_lines(Settings(graphs={"ours": ours})) == ["  Graphs:  ours (graphrun engine)"]
