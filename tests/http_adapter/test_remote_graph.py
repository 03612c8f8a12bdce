"""`engine.remote.RemoteGraph` against a real graphrun server (issue 29), side by side with
LangGraph 1.2.22's `RemoteGraph` on the same server: the same calls give the same results.

The served graph is `agent` of tests/http_adapter/graphs.py (a -> b (asks when `ask`) -> c
(fails when `fail`) -> sub (a subgraph)). Assistant path endpoints take UUIDs only (as
langgraph-api 0.16.7), so both clients name the graph's default assistant by its id.
"""

from __future__ import annotations

import asyncio
import operator
import uuid
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.pregel.remote import RemoteException as LGRemoteException
from langgraph.pregel.remote import RemoteGraph as LGRemoteGraph
from langgraph_sdk import get_sync_client

from engine.remote import RemoteException, RemoteGraph
from http_adapter.agent_server import create_app
from http_adapter.agent_server.settings import Settings

from . import graphs as test_graphs
from .conftest import Served


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server for the module (each test uses threads of its own): seconds saved."""
    data_dir = tmp_path_factory.mktemp("remote") / ".graphrun"
    settings = Settings(
        graphs=test_graphs.GRAPHS, data_dir=data_dir, heartbeat=1.0, drain_grace=0.0
    )
    served = Served(create_app(settings), settings)
    yield served
    served.stop()


class State(TypedDict, total=False):
    x: int
    log: Annotated[list, operator.add]
    ask: bool
    answer: str


@pytest.fixture(scope="module")
def pair(server: Served) -> tuple[RemoteGraph, LGRemoteGraph]:
    """Both clients on the `agent` graph's default assistant, each from the server's URL
    (made once: building the SDK's HTTP clients is most of a short test's time)."""
    assistant = get_sync_client(url=server.url).assistants.search(graph_id="agent")[0]
    aid = assistant["assistant_id"]
    return RemoteGraph(aid, url=server.url), LGRemoteGraph(aid, url=server.url)


@pytest.fixture(scope="module")
def sdk(pair: tuple[RemoteGraph, LGRemoteGraph]) -> dict[str, Any]:
    """The SDK clients the node tests' RemoteGraphs share."""
    return {"client": pair[0].client, "sync_client": pair[0].sync_client}


def _thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": str(uuid.uuid4())}}


def _bare_ns(item: Any) -> Any:
    """A `(ns, ...)` chunk with task ids left out of its namespace (they differ per run)."""
    return (tuple(part.split(":")[0] for part in item[0]), *item[1:])


def test_invoke_and_stream_match_langgraphs_client(pair: tuple[RemoteGraph, LGRemoteGraph]) -> None:
    ours, theirs = pair
    for graph in (ours, theirs):
        assert graph.invoke({"x": 1})["log"] == ["a", "b", "c", "a", "b", "c", "sub1", "sub2"]
    assert ours.invoke({"x": 1}) == theirs.invoke({"x": 1})
    mine, ref = ours.invoke({"x": 1}, version="v2"), theirs.invoke({"x": 1}, version="v2")
    assert (mine.value, mine.interrupts) == (ref.value, ref.interrupts)
    for mode in ("updates", "values"):
        assert list(ours.stream({"x": 1}, stream_mode=mode)) == list(
            theirs.stream({"x": 1}, stream_mode=mode))
    both = {"stream_mode": ["updates", "values"]}
    assert [(p.event, p.data) for p in ours.stream({"x": 1}, **both)] == [
        (p.event, p.data) for p in theirs.stream({"x": 1}, **both)]
    nested = [_bare_ns(c) for c in ours.stream({"x": 1}, subgraphs=True, **both)]
    assert nested == [_bare_ns(c) for c in theirs.stream({"x": 1}, subgraphs=True, **both)]
    assert (("sub",), "updates", {"sub1": {"log": ["sub1"]}}) in nested
    parts = list(ours.stream({"x": 1}, stream_mode="values", version="v2"))
    assert parts[-1]["type"] == "values" and parts[-1]["data"]["x"] == 2


def test_thread_state_history_and_update(pair: tuple[RemoteGraph, LGRemoteGraph]) -> None:
    ours, theirs = pair
    seen = []
    for graph in (ours, theirs):
        config = _thread()
        paused = graph.invoke({"x": 1, "ask": True}, config)
        state = graph.get_state(config)
        history = list(graph.get_state_history(config))
        updated = graph.update_state(config, {"x": 10})
        seen.append((
            paused["__interrupt__"][0]["value"], state.values, state.next,
            [t.name for t in state.tasks], [i.value for i in state.interrupts],
            [h.next for h in history], sorted(updated["configurable"]),
            graph.get_state(config).values["x"], state.parent_config == history[1].config,
        ))
    assert seen[0] == seen[1]
    assert seen[0][:3] == ({"question": "continue?"}, {"x": 2, "log": ["a"], "ask": True}, ("b",))
    assert seen[0][7] == 10


def test_get_graph_draws_the_served_graph(pair: tuple[RemoteGraph, LGRemoteGraph]) -> None:
    ours, theirs = pair
    mine, ref = ours.get_graph(), theirs.get_graph()
    assert list(mine.nodes) == list(ref.nodes) == ["__start__", "a", "b", "c", "sub", "__end__"]
    assert [(e.source, e.target, e.conditional) for e in mine.edges] == [
        (e.source, e.target, e.conditional) for e in ref.edges]
    assert mine.draw_mermaid() == ref.draw_mermaid()


def test_remote_error_raises_remote_exception(pair: tuple[RemoteGraph, LGRemoteGraph]) -> None:
    ours, theirs = pair
    with pytest.raises(RemoteException) as mine:
        ours.invoke({"fail": True})
    with pytest.raises(LGRemoteException) as ref:
        theirs.invoke({"fail": True})
    assert mine.value.args == ref.value.args
    assert "boom from c" in str(mine.value)


def _parent(sdk: dict[str, Any], graph_id: str = "agent", state: Any = State) -> Any:
    """A local graph whose one node is the served graph, with a checkpointer."""
    from checkpoints.memory import InMemorySaver
    from engine import START, StateGraph

    builder = StateGraph(state)
    builder.add_node("remote", RemoteGraph(graph_id, **sdk))
    builder.add_edge(START, "remote")
    return builder.compile(checkpointer=InMemorySaver())


def _lg_parent(sdk: dict[str, Any], graph_id: str = "agent", state: Any = State) -> Any:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, StateGraph

    builder = StateGraph(state)
    builder.add_node("remote", LGRemoteGraph(graph_id, **sdk))
    builder.add_edge(START, "remote")
    return builder.compile(checkpointer=InMemorySaver())


def test_node_interrupt_surfaces_and_resume_reaches_the_remote_thread(sdk: dict[str, Any]) -> None:
    """The remote run's interrupt pauses the local graph at the node, as LangGraph's does;
    `Command(resume=...)` on the local thread answers the remote one (LangGraph 1.2.22 sends
    the input again and the remote thread asks again: its issue #4879)."""
    from engine import Command

    parent, config = _parent(sdk), _thread()
    paused = parent.invoke({"x": 1, "ask": True}, config)
    ref = _lg_parent(sdk).invoke({"x": 1, "ask": True}, _thread())
    assert [i.value for i in paused["__interrupt__"]] == [i.value for i in ref["__interrupt__"]]
    assert [i.value for i in paused["__interrupt__"]] == [{"question": "continue?"}]
    state = parent.get_state(config)
    assert state.next == ("remote",) and state.interrupts[0].value == {"question": "continue?"}
    done = parent.invoke(Command(resume="yes"), config)
    assert done["answer"] == "yes" and "b:yes" in done["log"] and "__interrupt__" not in done
    remote = RemoteGraph("agent", **sdk)
    assert remote.get_state(config).values["answer"] == "yes"  # the same thread id, remotely


def test_node_streams_into_the_enclosing_stream(sdk: dict[str, Any]) -> None:
    parent, ref = _parent(sdk), _lg_parent(sdk)
    mine = [_bare_ns(c) for c in parent.stream({"x": 1}, _thread(), subgraphs=True)]
    theirs = [_bare_ns(c) for c in ref.stream({"x": 1}, _thread(), subgraphs=True)]
    assert mine == theirs
    assert (("remote", "sub"), {"sub1": {"log": ["sub1"]}}) in mine
    flat = list(parent.stream({"x": 1}, _thread()))
    assert flat == list(ref.stream({"x": 1}, _thread())) and list(flat[0]) == ["remote"]


def test_node_streams_remote_tokens_into_the_enclosing_stream(sdk: dict[str, Any]) -> None:
    from langgraph.graph import MessagesState as LGMessagesState

    from engine import MessagesState

    def tokens(graph: Any) -> list[Any]:
        asked = {"messages": [{"role": "user", "content": "hi"}]}
        chunks = graph.stream(asked, _thread(), stream_mode="messages", subgraphs=True)
        return [(_bare_ns(c)[0], type(c[1]).__name__, c[1][0]["content"]) for c in chunks]

    mine = tokens(_parent(sdk, "chat", MessagesState))
    assert mine == tokens(_lg_parent(sdk, "chat", LGMessagesState))
    assert [t[2] for t in mine] == ["hello", " there", " friend"]
    ours, theirs = RemoteGraph("chat", **sdk), LGRemoteGraph("chat", **sdk)
    asked = {"messages": [{"role": "user", "content": "hi"}]}
    direct = [(m["content"], type(pair).__name__)
              for pair in ours.stream(asked, stream_mode="messages") for m in pair[:1]]
    assert direct == [(m["content"], type(pair).__name__)
                      for pair in theirs.stream(asked, stream_mode="messages") for m in pair[:1]]


def test_async_calls_match_the_sync_ones(pair: tuple[RemoteGraph, LGRemoteGraph]) -> None:
    ours, _ = pair
    config = _thread()

    async def main() -> tuple[Any, ...]:
        result = await ours.ainvoke({"x": 1, "ask": True}, config)
        chunks = [c async for c in ours.astream({"x": 1}, stream_mode="updates")]
        state = await ours.aget_state(config)
        history = [h async for h in ours.aget_state_history(config)]
        updated = await ours.aupdate_state(config, {"x": 7})
        drawn = await ours.aget_graph()
        return result, chunks, state, history, updated, drawn

    result, chunks, state, history, updated, drawn = asyncio.run(main())
    assert result["__interrupt__"][0]["value"] == {"question": "continue?"}
    assert chunks == list(ours.stream({"x": 1}, stream_mode="updates"))
    assert state.next == ("b",) and [h.next for h in history][0] == ("b",)
    assert ours.get_state(updated).values["x"] == 7
    assert list(drawn.nodes) == list(ours.get_graph().nodes)
