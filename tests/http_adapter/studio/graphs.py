"""Extra graphs the browser tests serve beside the examples (copied into the test project).

`burst` streams 1,000 custom events (the page must not freeze), `slow` runs long enough to be
cancelled, `wide` has 50 nodes (the layout), `nested` has a subgraph (expanding it), `fail` raises.
"""

from __future__ import annotations

import asyncio
import json
import operator
import time
from typing import Annotated, Any, TypedDict

from engine import END, START, MessagesState, StateGraph, get_stream_writer, interrupt


class State(TypedDict, total=False):
    n: int
    log: Annotated[list[str], operator.add]


def burst(state: State) -> dict[str, Any]:
    write = get_stream_writer()
    for i in range(state.get("n") or 1000):
        write({"i": i})
    return {"log": ["burst"]}


def slow(state: State) -> dict[str, Any]:
    write = get_stream_writer()
    for i in range(200):
        write({"tick": i})
        time.sleep(0.05)
    return {"log": ["slow"]}


def explode(state: State) -> dict[str, Any]:
    raise ValueError("boom from the studio test")


def _single(name: str, fn: Any) -> Any:
    builder = StateGraph(State)
    builder.add_node(name, fn)
    builder.add_edge(START, name)
    return builder.compile()


burst_graph = _single("burst", burst)
slow_graph = _single("slow", slow)
fail_graph = _single("explode", explode)


def _wide() -> Any:
    """50 nodes: a fan-out of 6 lanes, each a chain, joined, with a loop and some skips."""
    builder = StateGraph(State)
    step = lambda name: (lambda s: {"log": [name]})  # noqa: E731
    lanes = [[f"l{lane}_{k}" for k in range(8)] for lane in range(6)]
    for name in ["fan", "join", *(n for lane in lanes for n in lane)]:
        builder.add_node(name, step(name))
    builder.add_edge(START, "fan")
    for lane in lanes:
        builder.add_edge("fan", lane[0])
        for a, b in zip(lane, lane[1:]):
            builder.add_edge(a, b)
        builder.add_edge(lane[-1], "join")
    builder.add_conditional_edges("l0_3", lambda s: "l1_5", ["l1_5", "l0_4"])
    builder.add_conditional_edges("join", lambda s: END, ["fan", END])
    return builder.compile()


wide_graph = _wide()


def _nested() -> Any:
    inner = StateGraph(State)
    inner.add_node("plan", lambda s: {"log": ["plan"]})
    inner.add_node("act", lambda s: {"log": ["act"]})
    inner.add_edge(START, "plan")
    inner.add_edge("plan", "act")
    inner.add_edge("act", END)
    outer = StateGraph(State)
    outer.add_node("prepare", lambda s: {"log": ["prepare"]})
    outer.add_node("worker", inner.compile())
    outer.add_node("finish", lambda s: {"log": ["finish"]})
    outer.add_edge(START, "prepare")
    outer.add_edge("prepare", "worker")
    outer.add_edge("worker", "finish")
    outer.add_edge("finish", END)
    return outer.compile()


nested_graph = _nested()


def _clustered() -> Any:
    """A subgraph that fans out inside, beside an outer branch of the same depth."""
    step = lambda name: (lambda s: {"log": [name]})  # noqa: E731
    inner = StateGraph(State)
    for name in ("plan", "act", "check", "merge"):
        inner.add_node(name, step(name))
    inner.add_edge(START, "plan")
    for a, b in (("plan", "act"), ("plan", "check"), ("act", "merge"), ("check", "merge")):
        inner.add_edge(a, b)
    inner.add_edge("merge", END)
    outer = StateGraph(State)
    for name in ("prepare", "side1", "side2", "side3", "finish"):
        outer.add_node(name, step(name))
    outer.add_node("worker", inner.compile())
    outer.add_edge(START, "prepare")
    for a, b in (("prepare", "worker"), ("prepare", "side1"), ("side1", "side2"), ("side2", "side3"),
                 ("worker", "finish"), ("side3", "finish")):
        outer.add_edge(a, b)
    outer.add_edge("finish", END)
    return outer.compile()


clustered_graph = _clustered()


def _ask(topic: str) -> Any:
    def ask(state: State) -> dict[str, Any]:
        answer = interrupt({"question": f"What about {topic}?"})
        return {"log": [f"{topic}={answer}"]}

    return ask


def _two_questions() -> Any:
    """Two nodes of one super-step each wait in `interrupt()`: two pending interrupts."""
    builder = StateGraph(State)
    builder.add_node("ask_colour", _ask("colour"))
    builder.add_node("ask_size", _ask("size"))
    builder.add_node("done", lambda s: {"log": ["done"]})
    builder.add_edge(START, "ask_colour")
    builder.add_edge(START, "ask_size")
    builder.add_edge(["ask_colour", "ask_size"], "done")
    builder.add_edge("done", END)
    return builder.compile()


two_questions_graph = _two_questions()


def _pause(name: str, seconds: float) -> Any:
    # async: two parallel *sync* inner tasks with `custom` streamed end the stream early
    # (an engine bug, reported from issue 20's studio work)
    async def pause(state: State) -> dict[str, Any]:
        await asyncio.sleep(seconds)
        return {"log": [name]}

    return pause


def _parallel_inside() -> Any:
    """A subgraph whose inner step runs a short and a long task side by side, then another
    step: the folded subgraph node must stay lit until the last inner task ends."""
    inner = StateGraph(State)
    inner.add_node("quick", _pause("quick", 0.05))
    inner.add_node("long", _pause("long", 0.6))
    inner.add_node("tail", _pause("tail", 0.3))
    inner.add_edge(START, "quick")
    inner.add_edge(START, "long")
    inner.add_edge(["quick", "long"], "tail")
    inner.add_edge("tail", END)
    outer = StateGraph(State)
    outer.add_node("before", _pause("before", 0.1))
    outer.add_node("team", inner.compile())
    outer.add_node("after", _pause("after", 0.1))
    outer.add_edge(START, "before")
    outer.add_edge("before", "team")
    outer.add_edge("team", "after")
    outer.add_edge("after", END)
    return outer.compile()


parallel_inside_graph = _parallel_inside()


# Issue 30 item 5: a tool-calling turn. The model's first reply is only tool calls (no text),
# the tool answers with JSON, the final reply is markdown, with HTML that must stay text.
WEATHER_ANSWER = ("**Sunny** in `Paris`, say the [tools](https://example.invalid/weather):\n\n"
                  "- high 21\n- low 12\n\n<img src=x onerror=\"window.__pwned=1\">")


def _role(message: Any) -> str:
    return message.get("type", "") if isinstance(message, dict) else getattr(message, "type", "")


def tool_agent(state: MessagesState) -> dict[str, Any]:
    turn = len(state["messages"])
    if _role(state["messages"][-1]) == "tool":
        return {"messages": [{"type": "ai", "content": WEATHER_ANSWER, "id": f"answer-{turn}"}]}
    call = {"name": "get_weather", "args": {"city": "Paris", "unit": "C"}, "id": f"call-{turn}",
            "type": "tool_call"}
    return {"messages": [{"type": "ai", "content": "", "id": f"ask-{turn}", "tool_calls": [call]}]}


def weather_tool(state: MessagesState) -> dict[str, Any]:
    calls = _calls(state["messages"][-1])
    return {"messages": [{"type": "tool", "name": "get_weather", "tool_call_id": calls[0]["id"],
                          "content": json.dumps({"sky": "sunny", "high": 21, "low": 12}),
                          "id": f"result-{calls[0]['id']}"}]}


def _tools() -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("agent", tool_agent)
    builder.add_node("tools", weather_tool)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", lambda s: "tools" if _calls(s["messages"][-1]) else END,
                                  ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile()


def _calls(message: Any) -> list[Any]:
    return (message.get("tool_calls") if isinstance(message, dict) else getattr(message, "tool_calls", None)) or []


tools_graph = _tools()


def _big() -> Any:
    """Issue 30 item 6: 19 nodes, 17 layers deep (taller than a 1440x900 window), with a loop
    from two of three side-by-side checks back up to two of three searches."""
    builder = StateGraph(State)
    step = lambda name: (lambda s: {"log": [name]})  # noqa: E731
    chain = ["intake", "classify", "rank", "summarize", "outline", "draft", "verdict", "legal",
             "format", "translate", "publish", "notify", "archive"]
    searches = ["search_web", "search_docs", "search_db"]
    checks = ["check_facts", "check_style", "check_length"]
    for name in [*chain, *searches, *checks]:
        builder.add_node(name, step(name))
    builder.add_edge(START, "intake")
    builder.add_edge("intake", "classify")
    for a, b in [*(("classify", s) for s in searches), *((s, "rank") for s in searches),
                 ("rank", "summarize"), ("summarize", "outline"), ("outline", "draft"),
                 *(("draft", c) for c in checks), ("check_length", "verdict"),
                 *zip(chain[6:], chain[7:])]:
        builder.add_edge(a, b)
    builder.add_conditional_edges("check_style", lambda s: "verdict", ["search_web", "verdict"])
    builder.add_conditional_edges("check_facts", lambda s: "verdict", ["search_db", "verdict"])
    builder.add_edge("archive", END)
    return builder.compile()


big_graph = _big()
