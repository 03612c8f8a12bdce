"""Graphs the HTTP tests serve (the same shapes the LangGraph server was observed with)."""

from __future__ import annotations

import operator
import threading
import time
from typing import Annotated, Any, TypedDict

from engine import START, MessagesState, StateGraph, emit_message, get_stream_writer, interrupt


class State(TypedDict, total=False):
    x: int
    log: Annotated[list, operator.add]
    ask: bool
    fail: bool
    sleep: float
    answer: str


def a(state: State) -> dict[str, Any]:
    get_stream_writer()({"progress": "a"})
    if state.get("sleep"):
        time.sleep(state["sleep"])
    return {"x": state.get("x", 0) + 1, "log": ["a"]}


def b(state: State) -> dict[str, Any]:
    if state.get("ask"):
        answer = interrupt({"question": "continue?"})
        return {"log": [f"b:{answer}"], "answer": answer}
    return {"log": ["b"]}


def c(state: State) -> dict[str, Any]:
    if state.get("fail"):
        raise ValueError("boom from c")
    return {"log": ["c"]}


class Inner(TypedDict, total=False):
    x: int
    log: Annotated[list, operator.add]


_sub = StateGraph(Inner)
_sub.add_node("sub1", lambda s: {"log": ["sub1"]})
_sub.add_node("sub2", lambda s: {"log": ["sub2"]})
_sub.add_edge(START, "sub1")
_sub.add_edge("sub1", "sub2")

_agent = StateGraph(State)
_agent.add_node("a", a)
_agent.add_node("b", b)
_agent.add_node("c", c)
_agent.add_node("sub", _sub.compile())
_agent.add_edge(START, "a")
_agent.add_edge("a", "b")
_agent.add_edge("b", "c")
_agent.add_edge("c", "sub")
agent = _agent.compile()


def call(state: MessagesState) -> dict[str, Any]:
    reply = "hello there friend"
    for index, token in enumerate(reply.split(" ")):
        emit_message({"type": "AIMessageChunk", "content": token if index == 0 else f" {token}",
                      "id": "reply-1"})
    return {"messages": [{"type": "ai", "content": reply, "id": "reply-1"}]}


_chat = StateGraph(MessagesState)
_chat.add_node("call", call)
_chat.add_edge(START, "call")
chat = _chat.compile()

GRAPHS = {"agent": agent, "chat": chat}


# -- streaming tests: a whole message returned by a node (no tokens) -> `messages/complete` ----


def reply(state: MessagesState) -> dict[str, Any]:
    from langchain_core.messages import AIMessage  # a dict message is not streamed (issue 27)

    return {"messages": [AIMessage("direct reply", id="ai-fixed-1")]}


_echo = StateGraph(MessagesState)
_echo.add_node("reply", reply)
_echo.add_edge(START, "reply")
echo = _echo.compile()  # served by tests that pass graphs={**GRAPHS, "echo": echo}


# -- cron tests: every run leaves one store item, so even deleted stateless runs are counted ---


async def record_hit(state: State, *, store: Any) -> dict[str, Any]:
    import uuid  # appended section: the module's imports stay as they were

    await store.aput(("hits",), str(uuid.uuid4()), {"x": state.get("x", 0)})
    return {"log": ["hit"]}


_hits = StateGraph(State)
_hits.add_node("record_hit", record_hit)
_hits.add_edge(START, "record_hit")
hits = _hits.compile()  # served by tests that pass graphs={**GRAPHS, "hits": hits}


# -- A2A / MCP tests: a messages graph that answers deterministically --------------------------


async def shout(state: MessagesState) -> dict[str, Any]:
    """Replies with the last human message uppercased and the turn number (`HI (#2)`).

    `slow ...` sleeps (cancel tests), `fail ...` raises, `ask ...` interrupts for input and
    replies with the answer.
    """
    import anyio  # appended section: the module's imports stay as they were

    def field(message: Any, name: str) -> Any:
        return message.get(name) if isinstance(message, dict) else getattr(message, name, None)

    humans = [m for m in state["messages"] if field(m, "type") in ("human", "user")]
    text = str(field(humans[-1], "content"))
    if text.startswith("slow"):
        await anyio.sleep(30)
    if text.startswith("fail"):
        raise ValueError(f"shout failed on {text!r}")
    if text.startswith("ask"):
        text = f"{text} -> {interrupt('what next?')}"
    return {"messages": [{"type": "ai", "content": f"{text.upper()} (#{len(humans)})"}]}


_shout = StateGraph(MessagesState)
_shout.add_node("shout", shout)
_shout.add_edge(START, "shout")
shout_graph = _shout.compile()  # served by tests that pass graphs={**GRAPHS, "shout": ...}


# -- streaming tests: a subgraph running two sync nodes in parallel (issue 17) ------------------


def _team_node(name: str, delay: float) -> Any:
    def run(state: Inner) -> dict[str, Any]:
        time.sleep(delay)
        get_stream_writer()({"done": name})
        return {"log": [name]}

    return run


_team_inner = StateGraph(Inner)
_team_inner.add_node("quick", _team_node("quick", 0.02))
_team_inner.add_node("long", _team_node("long", 0.2))
_team_inner.add_edge(START, "quick")
_team_inner.add_edge(START, "long")
_team = StateGraph(State)
_team.add_node("team", _team_inner.compile())
_team.add_node("after", lambda s: {"log": ["after"]})
_team.add_edge(START, "team")
_team.add_edge("team", "after")
team = _team.compile()  # served by tests that pass graphs={**GRAPHS, "team": team}


# -- issue 19 §11: a graph whose output holds a NUL character (PostgreSQL's jsonb refuses it) ---

_nul = StateGraph(State)
_nul.add_node("nul", lambda state: {"answer": "a\x00b"})
_nul.add_edge(START, "nul")
nul_output = _nul.compile()  # served by tests that pass graphs={**GRAPHS, "nul": nul_output}


class Gate:
    """Holds `gated`'s `slow` node until `opened` is set (a test sets it after cancelling)."""

    opened = threading.Event()
    entered = threading.Event()
    left = threading.Event()
    ran: list[str] = []


def _gated_slow(state: State) -> dict[str, Any]:
    Gate.ran.append("slow")
    Gate.entered.set()
    Gate.opened.wait(30)
    Gate.left.set()
    return {"log": ["slow"]}


def _gated_after(state: State) -> dict[str, Any]:
    Gate.ran.append("after")
    return {"log": ["after"]}


_gated = StateGraph(State)
_gated.add_node("first", lambda s: {"log": ["first"]})
_gated.add_node("slow", _gated_slow)
_gated.add_node("after", _gated_after)
_gated.add_edge(START, "first")
_gated.add_edge("first", "slow")
_gated.add_edge("slow", "after")
gated = _gated.compile()  # sync nodes only; served by tests that pass graphs={..., "gated": gated}
