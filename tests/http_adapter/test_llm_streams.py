"""LLM tokens over the agent server's streams, and resuming one of two interrupts (issue 17).

A LangChain chat model bound with `.with_config(tags=...)` and called with the node's config
streamed every token twice (async) under graphrun; a chat UI renders the doubled text. Each
stream a UI reads (`messages-tuple`, legacy `messages`, `events`, several modes at once,
stateless runs) must carry each token exactly once, in order.
"""

from __future__ import annotations

import itertools
import operator
import time
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import httpx
import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig

from engine import START, MessagesState, StateGraph, interrupt

from .conftest import Served
from .graphs import GRAPHS
from .test_streaming import events, new_thread, stream

# Issue 19 §11: every test here runs on SQLite and on PostgreSQL + Redis (conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgres")

REPLY = "hello there friend"
TOKENS = ["hello", " ", "there", " ", "friend"]  # how GenericFakeChatModel splits REPLY
INPUT = {"messages": [{"role": "user", "content": "hi"}]}


def _bound_model() -> Any:
    model = GenericFakeChatModel(messages=itertools.cycle([AIMessage(REPLY)]))
    return model.with_config(tags=["tagged"])  # a RunnableBinding: the shape that doubled


def _talk_graph(is_async: bool) -> Any:
    model = _bound_model()

    def talk(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"], config)]}

    async def atalk(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"], config)]}

    b = StateGraph(MessagesState)
    b.add_node("talk", atalk if is_async else talk)
    b.add_edge(START, "talk")
    return b.compile()


class S(TypedDict, total=False):
    x: int
    log: Annotated[list, operator.add]


def _p1(state: S) -> dict[str, Any]:
    return {"log": [f"p1={interrupt('q1')}"]}


def _p2(state: S) -> dict[str, Any]:
    time.sleep(0.05)  # p2 interrupts after p1: the first interrupt is always p1's
    return {"log": [f"p2={interrupt('q2')}"]}


def _parallel_graph() -> Any:
    b = StateGraph(S)
    b.add_node("p1", _p1)
    b.add_node("p2", _p2)
    b.add_edge(START, "p1")
    b.add_edge(START, "p2")
    return b.compile()


def _nested_graph() -> Any:
    b = StateGraph(MessagesState)
    b.add_node("sub", _talk_graph(True))
    b.add_edge(START, "sub")
    return b.compile()


@pytest.fixture
def http(serve_app: Any) -> Iterator[httpx.Client]:
    graphs = {**GRAPHS, "talk_sync": _talk_graph(False), "talk_async": _talk_graph(True),
              "parallel": _parallel_graph(), "nested": _nested_graph()}
    served: Served = serve_app(graphs=graphs)
    with httpx.Client(base_url=served.url, timeout=20) as client:
        yield client


def _run(http: httpx.Client, graph: str, modes: Any, stateless: bool = False) -> list[Any]:
    path = "/runs/stream" if stateless else f"/threads/{new_thread(http)}/runs/stream"
    response, raw = stream(http, path, {"assistant_id": graph, "input": INPUT,
                                        "stream_mode": modes})
    assert response.status_code == 200, raw
    return events(raw)[1:]  # after `metadata`


def _tuple_tokens(got: list[Any]) -> list[str]:
    return [e["data"][0]["content"] for e in got if e["event"] == "messages"]


def _chat_events(got: list[Any], kind: str) -> list[Any]:
    return [e["data"] for e in got if e["event"] == "events" and e["data"]["event"] == kind]


GRAPH_IDS = ["talk_sync", "talk_async"]


@pytest.mark.parametrize("graph", GRAPH_IDS)
@pytest.mark.parametrize("stateless", [False, True], ids=["thread", "stateless"])
def test_messages_tuple_streams_each_token_once(http: httpx.Client, graph: str,
                                                stateless: bool) -> None:
    got = _run(http, graph, "messages-tuple", stateless)
    assert _tuple_tokens(got) == TOKENS
    metas = [e["data"][1] for e in got]
    assert all(m["graph_node"] == m["langgraph_node"] == "talk" for m in metas)
    assert all(m["tags"] == ["tagged"] for m in metas)  # LangChain's seq:step tags left out
    assert all(m["ls_provider"] == "genericfakechatmodel" for m in metas)


@pytest.mark.parametrize("graph", GRAPH_IDS)
def test_legacy_messages_partials_accumulate_once(http: httpx.Client, graph: str) -> None:
    got = _run(http, graph, "messages")
    kinds = [e["event"] for e in got]
    assert kinds == ["messages/metadata"] + ["messages/partial"] * len(TOKENS)
    partials = [e["data"][0]["content"] for e in got[1:]]
    assert partials == list(itertools.accumulate(TOKENS))
    [(message_id, entry)] = got[0]["data"].items()
    assert entry["metadata"]["graph_node"] == "talk" and message_id.startswith("lc_run--")


@pytest.mark.parametrize("graph", GRAPH_IDS)
def test_events_report_each_chat_model_event_once(http: httpx.Client, graph: str) -> None:
    got = _run(http, graph, "events")
    assert len(_chat_events(got, "on_chat_model_start")) == 1
    streamed = _chat_events(got, "on_chat_model_stream")
    assert [e["data"]["chunk"]["content"] for e in streamed] == TOKENS
    [end] = _chat_events(got, "on_chat_model_end")
    assert end["data"]["output"]["content"] == REPLY
    assert all("graph_node" not in e["metadata"] for e in streamed)  # events: LangGraph's keys
    assert streamed[0]["tags"] == ["seq:step:1", "tagged"]


@pytest.mark.parametrize("graph", GRAPH_IDS)
@pytest.mark.parametrize("stateless", [False, True], ids=["thread", "stateless"])
def test_multi_mode_streams_each_token_once(http: httpx.Client, graph: str,
                                            stateless: bool) -> None:
    got = _run(http, graph, ["messages-tuple", "updates", "events", "values"], stateless)
    assert _tuple_tokens(got) == TOKENS
    streamed = _chat_events(got, "on_chat_model_stream")
    assert [e["data"]["chunk"]["content"] for e in streamed] == TOKENS
    [update] = [e["data"] for e in got if e["event"] == "updates"]
    assert update["talk"]["messages"][0]["content"] == REPLY


def test_subgraph_tokens_once_with_stream_subgraphs(http: httpx.Client) -> None:
    response, raw = stream(http, f"/threads/{new_thread(http)}/runs/stream", {
        "assistant_id": "nested", "input": INPUT, "stream_mode": "messages-tuple",
        "stream_subgraphs": True})
    got = events(raw)[1:]
    assert {e["event"].partition("|")[0] for e in got} == {"messages"}
    assert all(e["event"].startswith("messages|sub:") for e in got)
    assert _tuple_tokens([{**e, "event": "messages"} for e in got]) == TOKENS
    assert {e["data"][1]["graph_node"] for e in got} == {"talk"}

    flat = _run(http, "nested", "messages-tuple")  # without: the subgraph's reply, whole
    assert [(e["event"], e["data"][0]["content"]) for e in flat] == [("messages", REPLY)]
    assert flat[0]["data"][1]["graph_node"] == "sub"


@pytest.mark.parametrize("graph", GRAPH_IDS)
def test_stored_reply_is_whole(http: httpx.Client, graph: str) -> None:
    thread_id = new_thread(http)
    body = http.post(f"/threads/{thread_id}/runs/wait",
                     json={"assistant_id": graph, "input": INPUT}).json()
    assert [m["content"] for m in body["messages"]] == ["hi", REPLY]


# -- resuming one of two parallel interrupts ---------------------------------------------------


def _paused(http: httpx.Client) -> tuple[str, list[Any]]:
    """A thread paused on both interrupts, and them (as the thread's state lists them)."""
    thread_id = new_thread(http)
    body = http.post(f"/threads/{thread_id}/runs/wait",
                     json={"assistant_id": "parallel", "input": {"x": 1}}).json()
    pending = http.get(f"/threads/{thread_id}/state").json()["interrupts"]
    assert [i["value"] for i in pending] == ["q1", "q2"]
    pending = [{**i, "response_schema": None} for i in pending]
    assert body == {"x": 1, "log": [], "__interrupt__": pending}  # both, as `invoke`
    return thread_id, pending


def test_wait_resuming_one_interrupt_returns_its_write(http: httpx.Client) -> None:
    thread_id, (first, second) = _paused(http)
    body = http.post(f"/threads/{thread_id}/runs/wait", json={
        "assistant_id": "parallel", "command": {"resume": {first["id"]: "two"}}}).json()
    assert body == {"x": 1, "log": ["p1=two"], "__interrupt__": [second]}
    body = http.post(f"/threads/{thread_id}/runs/wait", json={
        "assistant_id": "parallel", "command": {"resume": {second["id"]: "three"}}}).json()
    assert body == {"x": 1, "log": ["p1=two", "p2=three"]}


def test_stream_resuming_one_interrupt_shows_its_write(http: httpx.Client) -> None:
    thread_id, (first, second) = _paused(http)
    response, raw = stream(http, f"/threads/{thread_id}/runs/stream", {
        "assistant_id": "parallel", "command": {"resume": {first["id"]: "two"}},
        "stream_mode": ["updates", "values"]})
    got = [(e["event"], e["data"]) for e in events(raw)[1:]]
    assert got == [
        ("values", {"x": 1, "log": []}),
        ("updates", {"p1": {"log": ["p1=two"]}}),
        ("updates", {"__interrupt__": [second]}),
        ("values", {"x": 1, "log": [], "__interrupt__": [second]}),
        ("values", {"x": 1, "log": ["p1=two"]}),
    ]
