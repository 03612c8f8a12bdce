"""LangGraph 1.1/1.2's newer streaming API (issue 29): `version="v2"` parts, `GraphOutput`,
`stream_events(version="v3")` run streams, and the `tools` mode, on both libraries."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

from pydantic import BaseModel

from .harness import Transcript
from .scenarios import S, cfg, scenario


class Model(BaseModel):
    x: int


def _asking(lib: Any, schema: Any = S) -> Any:
    """start -> ask (interrupts) -> inner subgraph (two steps)."""

    def ask(s: Any) -> dict[str, Any]:
        answer = lib.interrupt("how much?")
        return {"x": answer}

    inner = lib.StateGraph(S)
    inner.add_node("b", lambda s: {"x": s["x"] + 1, "log": ["b"]})
    inner.add_node("c", lambda s: {"x": s["x"] * 2, "log": ["c"]})
    inner.add_edge(lib.START, "b")
    inner.add_edge("b", "c")
    b = lib.StateGraph(schema)
    b.add_node("ask", ask)
    b.add_node("inner", inner.compile())
    b.add_edge(lib.START, "ask")
    b.add_edge("ask", "inner")
    return b.compile(checkpointer=lib.InMemorySaver())


@scenario
def stream_v2_parts_and_graph_output(lib: Any) -> list[Any]:
    """Every mode as v2 parts (subgraphs on and off), the interrupt apart from the state,
    `invoke(..., version="v2")` before and after the resume, pydantic states built."""
    t = Transcript()
    g = _asking(lib)
    modes = ["values", "updates", "tasks", "checkpoints", "debug"]
    t.stream("leg1", g, {"x": 1, "log": []}, cfg("1"), stream_mode=modes, version="v2")
    t.stream("leg2", g, lib.Command(resume=5), cfg("1"), stream_mode=modes, subgraphs=True,
             version="v2")
    out = g.invoke({"x": 1, "log": []}, cfg("2"), version="v2")
    t.add("invoke1", (type(out).__name__, out.value, out.interrupts))
    out = g.invoke(lib.Command(resume=7), cfg("2"), version="v2")
    t.add("invoke2", (out.value, out.interrupts))
    t.add("updates", g.invoke({"x": 1, "log": []}, cfg("3"), stream_mode="updates",
                              version="v2"))
    m = lib.StateGraph(Model)
    m.add_node("inc", lambda s: {"x": s.x + 1})
    m.add_edge(lib.START, "inc")
    for part in m.compile().stream({"x": 1}, stream_mode="values", version="v2"):
        t.add("model", (type(part["data"]).__name__, part["data"].x, part["interrupts"]))
    return t.items


def _event(e: dict[str, Any]) -> Any:
    params = e["params"]
    return (e["seq"], e["method"], params["namespace"], params["data"],
            params.get("interrupts", "-"))


@scenario
def stream_v3_run_stream(lib: Any) -> list[Any]:
    """The raw protocol events of a v3 run with a subgraph and an interrupt; its projections,
    subgraph handles, interrupts and output; the same through `astream_events`."""
    t = Transcript()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LangGraph marks v3 as beta
        g = _asking(lib)
        t.add("events", [_event(e) for e in g.stream_events({"x": 1, "log": []}, cfg("1"),
                                                             version="v3")])
        run = g.stream_events({"x": 1, "log": []}, cfg("2"), version="v3")
        t.add("leg1", (run.interrupted, run.interrupts, run.output))
        run = g.stream_events(lib.Command(resume=5), cfg("2"), version="v3")
        lifecycle = iter(run.lifecycle)
        handles = [(h.path, h.graph_name, list(h.values), h.status) for h in run.subgraphs]
        t.add("handles", handles)
        t.add("lifecycle", list(lifecycle))
        t.add("output", run.output)

        async def main() -> None:
            arun = await g.astream_events(lib.Command(resume=6), cfg("1"), version="v3")
            t.add("async_values", [v async for v in arun.values])
            t.add("async_output", await arun.output())

        asyncio.run(main())
    return t.items


@scenario
def stream_tools_mode(lib: Any) -> list[Any]:
    """A ToolNode's calls in the `tools` mode with messages: started (input), finished, errors."""
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    @tool
    def echo(text: str) -> str:
        """Echo the text."""
        return f"echo {text}"

    @tool
    def broken(text: str) -> str:
        """Always fails."""
        raise ValueError("nope")

    def caller(s: Any) -> dict[str, Any]:
        calls = [{"name": "echo", "args": {"text": "hi"}, "id": "c1"},
                 {"name": "broken", "args": {"text": "x"}, "id": "c2"}]
        return {"messages": [AIMessage(content="", tool_calls=calls)]}

    b = lib.StateGraph(lib.MessagesState)
    b.add_node("caller", caller)
    b.add_node("tools", lib.ToolNode([echo, broken], handle_tool_errors=True))
    b.add_edge(lib.START, "caller")
    b.add_edge("caller", "tools")
    t = Transcript()
    parts = b.compile().stream({"messages": []}, stream_mode=["tools", "updates"], version="v2")
    got = [p for p in parts if p["type"] == "tools"]
    t.add("tools", sorted(got, key=lambda p: (p["data"]["tool_call_id"], p["data"]["event"])))
    return t.items
