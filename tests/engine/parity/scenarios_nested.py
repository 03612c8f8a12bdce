"""Parity scenarios of graphs run inside another graph's node (issue 27): a nested `stream()`
yields to its caller, subgraphs keeping their own state, `messages` of nested graphs.
Registered into `scenarios.SCENARIOS`."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any, TypedDict

from .harness import Transcript
from .scenarios import scenario


class NestState(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def _leaf(lib: Any, name: str) -> Any:
    """A one-node graph writing a custom chunk, then counting."""

    def step(state: NestState) -> dict[str, Any]:
        lib.get_stream_writer()({name: state["x"]})
        return {"x": state["x"] + 1, "log": [name]}

    b = lib.StateGraph(NestState)
    b.add_node(name, step)
    b.add_edge(lib.START, name)
    return b.compile()


def _caller(lib: Any, inner: Any, seen: list[Any], kwargs: dict[str, Any]) -> Any:
    """A graph whose node iterates `inner.stream(**kwargs)` and keeps what it yields."""

    def node(state: NestState) -> dict[str, Any]:
        seen.append(list(inner.stream({"x": state["x"], "log": []}, **kwargs)))
        return {"log": ["n"]}

    b = lib.StateGraph(NestState)
    b.add_node("n", node)
    b.add_edge(lib.START, "n")
    return b.compile()


_INNER = (
    {"stream_mode": "updates"},
    {"stream_mode": ["values", "custom"]},
    {"stream_mode": "values", "subgraphs": True},
)
_OUTER = (
    {"stream_mode": "updates"},
    {"stream_mode": ["updates", "custom"], "subgraphs": True},
    {"stream_mode": ["values", "custom"]},
)


@scenario
def nested_stream_yields_to_its_caller(lib: Any) -> list[Any]:
    """`inner.stream()` iterated in a node yields the inner chunks of its own modes to the node;
    an outer stream with subgraphs=True shows them too (its own modes, the nested namespace),
    but a `custom` chunk goes to the nearest stream asking for `custom` only."""
    t = Transcript()
    seen: list[Any] = []
    inner = _leaf(lib, "a")
    for i, inner_kw in enumerate(_INNER):
        g = _caller(lib, inner, seen, inner_kw)
        for j, outer_kw in enumerate(_OUTER):
            seen.clear()
            t.stream(f"outer {i}{j}", g, {"x": 0, "log": []}, **outer_kw)
            t.add(f"inner {i}{j}", seen)
    return t.items


@scenario
def nested_stream_three_levels(lib: Any) -> list[Any]:
    """A graph streamed inside a nested stream's node: its chunks reach the middle caller only
    when that one asked for subgraphs, and the outer stream when it did."""
    t = Transcript()
    seen: list[Any] = []
    for middle_sub in (False, True):
        middle = _caller(lib, _leaf(lib, "leaf"), [], {"stream_mode": "updates"})
        g = _caller(lib, middle, seen, {"stream_mode": "updates", "subgraphs": middle_sub})
        for outer_sub in (False, True):
            seen.clear()
            t.stream(f"outer {middle_sub} {outer_sub}", g, {"x": 0, "log": []},
                     stream_mode="updates", subgraphs=outer_sub)
            t.add(f"middle {middle_sub} {outer_sub}", seen)
    return t.items


@scenario
def nested_astream_in_async_node(lib: Any) -> list[Any]:
    """`astream` of a graph inside an async node yields to that node, as `stream` does."""
    t = Transcript()
    seen: list[Any] = []
    inner = _leaf(lib, "a")

    async def node(state: NestState) -> dict[str, Any]:
        seen.append([c async for c in inner.astream(
            {"x": 5, "log": []}, stream_mode=["updates", "custom"])])
        return {"log": ["n"]}

    b = lib.StateGraph(NestState)
    b.add_node("n", node)
    b.add_edge(lib.START, "n")
    g = b.compile()

    async def main(**kw: Any) -> list[Any]:
        return [c async for c in g.astream({"x": 0, "log": []}, **kw)]

    for kw in ({"stream_mode": "updates"}, {"stream_mode": "updates", "subgraphs": True}):
        seen.clear()
        t.call(f"outer {kw}", lambda kw=kw: asyncio.run(main(**kw)))
        t.add(f"inner {kw}", seen)
    return t.items


@scenario
def nested_stream_messages(lib: Any) -> list[Any]:
    """The tokens of a chat model in a graph streamed inside a node: `stream(stream_mode=
    "messages")` there yields them to the node; the outer `messages` stream shows them with
    subgraphs=True only; a nested `stream("updates")` or `invoke` keeps LangGraph's streaming
    of the model (message ids) whatever the outer stream is."""
    from .scenarios_llm import _talker_class

    t = Transcript()
    model = _talker_class()()
    b = lib.StateGraph(lib.MessagesState)
    b.add_node("chat", lambda s: {"messages": [model.invoke(s["messages"])]})
    b.add_edge(lib.START, "chat")
    inner = b.compile()
    seen: list[Any] = []
    for how in ("messages", "updates", "invoke"):

        def node(state: Any, how: str = how) -> dict[str, Any]:
            if how == "invoke":
                seen.append(inner.invoke({"messages": [("user", "hi")]})["messages"][-1])
            else:
                seen.append(list(inner.stream({"messages": [("user", "hi")]}, stream_mode=how)))
            return {"messages": []}

        outer = lib.StateGraph(lib.MessagesState)
        outer.add_node("n", node)
        outer.add_edge(lib.START, "n")
        g = outer.compile()
        for kw in ({"stream_mode": "messages"}, {"stream_mode": "messages", "subgraphs": True},
                   {"stream_mode": "updates"}):
            seen.clear()
            t.stream(f"{how} outer {kw}", g, {"messages": []}, **kw)
            t.add(f"{how} inner {kw}", seen)
    return t.items


class LogOnly(TypedDict):
    log: Annotated[list, operator.add]


@scenario
def subgraph_keeps_own_history(lib: Any) -> list[Any]:
    """A subgraph compiled with `checkpointer=True` keeps one history per thread under its
    namespace without task ids (`('inner',)`): each call continues from the last call's state,
    as a node and as a graph invoked in a node; an interrupt in it resumes there."""
    from .scenarios import cfg

    t = Transcript()

    def count(state: LogOnly) -> dict[str, Any]:
        if "ask" in state["log"]:
            return {"log": [lib.interrupt("more?")]}
        return {"log": [f"i{len(state['log'])}"]}

    b = lib.StateGraph(LogOnly)
    b.add_node("count", count)
    b.add_edge(lib.START, "count")
    inner = b.compile(checkpointer=True)
    as_node = lib.StateGraph(LogOnly)
    as_node.add_node("inner", inner)
    as_node.add_edge(lib.START, "inner")
    g = as_node.compile(checkpointer=lib.InMemorySaver())
    t.call("first", g.invoke, {"log": ["a"]}, cfg("1"))
    t.stream("second", g, {"log": ["b"]}, cfg("1"), stream_mode="updates", subgraphs=True)
    t.call("inner history", lambda: [
        c.checkpoint["channel_values"].get("log")
        for c in g.checkpointer.list({"configurable": {"thread_id": "1", "checkpoint_ns": "inner"}})
    ][:2])
    t.stream("ask", g, {"log": ["ask"]}, cfg("1"), stream_mode="updates", subgraphs=True)
    t.state("asked", g, cfg("1"), subgraphs=True)
    t.stream("answer", g, lib.Command(resume="yes"), cfg("1"), stream_mode="updates",
             subgraphs=True)

    def call(state: LogOnly) -> dict[str, Any]:
        return {"log": inner.invoke({"log": ["x"]})["log"]}

    in_node = lib.StateGraph(LogOnly)
    in_node.add_node("call", call)
    in_node.add_edge(lib.START, "call")
    g2 = in_node.compile(checkpointer=lib.InMemorySaver())
    t.call("call first", g2.invoke, {"log": []}, cfg("2"))
    t.stream("call second", g2, {"log": []}, cfg("2"), stream_mode="values", subgraphs=True)
    return t.items


@scenario
def messages_mode_dicts_and_parent_commands(lib: Any) -> list[Any]:
    """`messages` mode streams the message objects a node returns, not plain dict messages,
    and not the messages a subgraph sends up with `Command(graph=Command.PARENT)` (whether the
    subgraph is a node or invoked in one), as LangGraph 1.2.22."""
    from langchain_core.messages import AIMessage

    t = Transcript()

    def handoff(state: Any) -> Any:
        return lib.Command(graph=lib.Command.PARENT, goto="b", update={"messages": [
            AIMessage("up", id="u1"), {"role": "ai", "content": "dict up", "id": "u2"}]})

    ib = lib.StateGraph(lib.MessagesState)
    ib.add_node("h", handoff)
    ib.add_edge(lib.START, "h")
    inner = ib.compile()
    for how in ("node", "call"):
        b = lib.StateGraph(lib.MessagesState)
        b.add_node("a", inner if how == "node" else (lambda s: inner.invoke(s)))
        b.add_node("b", lambda s: {"messages": [
            {"role": "ai", "content": "dict", "id": "d1"}, AIMessage("obj", id="o1")]})
        b.add_node("c", lambda s: lib.Command(goto=lib.END, update={"messages": [
            AIMessage("cmd", id="c1"), {"role": "ai", "content": "cmd dict", "id": "c2"}]}))
        b.add_edge(lib.START, "a")
        b.add_edge("b", "c")
        g = b.compile()
        for sub in (False, True):
            t.stream(f"{how} {sub}", g, {"messages": []}, stream_mode="messages", subgraphs=sub)
    return t.items


@scenario
def task_interrupted_twice_in_entrypoint(lib: Any) -> list[Any]:
    """The same `@task` interrupted twice in one `@entrypoint` (other arguments, the same one)
    resumes with two plain `Command(resume=...)`: an answered interrupt of a finished call no
    longer counts as pending, as LangGraph."""
    from .scenarios import cfg

    t = Transcript()

    @lib.task
    def ask(question: str) -> Any:
        return lib.interrupt(question)

    @lib.entrypoint(checkpointer=lib.InMemorySaver())
    def two_questions(x: int) -> list[Any]:
        return [ask("first").result(), ask("second").result()]

    @lib.entrypoint(checkpointer=lib.InMemorySaver())
    def same_question(x: int) -> list[Any]:
        return [ask("q").result(), ask("q").result()]

    for name, wf in (("two", two_questions), ("same", same_question)):
        t.call(f"{name} start", wf.invoke, 1, cfg("1"))
        t.call(f"{name} A", wf.invoke, lib.Command(resume="A"), cfg("1"))
        t.call(f"{name} next", lambda wf=wf: wf.get_state(cfg("1")).next)
        t.call(f"{name} B", wf.invoke, lib.Command(resume="B"), cfg("1"))
    return t.items


@scenario
def subgraph_checkpoint_replay_and_fork(lib: Any) -> list[Any]:
    """The subgraph checkpoint config `get_state(cfg, subgraphs=True)` shows: invoking the root
    with it replays from the root checkpoint its `checkpoint_map` names (the interrupt is raised
    again) or resumes there; `update_state` with it writes as the subgraph's own last node, so
    the subgraph still asks."""
    from .scenarios import cfg

    t = Transcript()

    def ask(state: LogOnly) -> dict[str, Any]:
        return {"log": [lib.interrupt("q?")]}

    ib = lib.StateGraph(LogOnly)
    ib.add_node("pre", lambda s: {"log": ["pre"]})
    ib.add_node("ask", ask)
    ib.add_edge(lib.START, "pre")
    ib.add_edge("pre", "ask")
    b = lib.StateGraph(LogOnly)
    b.add_node("sub", ib.compile())
    b.add_edge(lib.START, "sub")
    g = b.compile(checkpointer=lib.InMemorySaver())
    t.call("start", g.invoke, {"log": []}, cfg("1"))
    sub_config = g.get_state(cfg("1"), subgraphs=True).tasks[0].state.config
    t.add("sub config", sub_config)
    t.call("replay", g.invoke, None, sub_config)
    t.stream("replay stream", g, None, sub_config, stream_mode="updates", subgraphs=True)
    t.call("resume there", g.invoke, lib.Command(resume="r"), sub_config)
    t.call("state", lambda: g.get_state(cfg("1")).values)
    g.invoke({"log": []}, cfg("2"))
    sub_config = g.get_state(cfg("2"), subgraphs=True).tasks[0].state.config
    t.call("update", g.update_state, sub_config, {"log": ["u"]})
    t.state("sub state", g, cfg("2"), subgraphs=True)
    t.call("after update", g.invoke, None, cfg("2"))
    t.call("state after update", lambda: g.get_state(cfg("2")).values)
    return t.items


@scenario
def swarm_reads_schemas_and_node_data(lib: Any) -> list[Any]:
    """What langgraph-swarm reads of a graph: `builder.schemas[builder.state_schema]` (the
    state's keys) and `get_graph().nodes["tools"].data`, an agent's `ToolNode` with its tools'
    metadata (`get_handoff_destinations`); the JSON drawing is unchanged by it."""
    from langchain_core.tools import tool

    from .scenarios_llm import _talker_class
    from .scenarios_prebuilt import react

    @tool
    def transfer_to_bob() -> str:
        """Hand off to Bob."""
        return "ok"

    transfer_to_bob.metadata = {"__handoff_destination": "Bob"}

    class Swarm(lib.MessagesState):
        active_agent: str | None

    t = Transcript()
    builder = lib.StateGraph(Swarm)
    t.add("schema keys", sorted(builder.schemas[builder.state_schema]))
    agent = react(lib, _talker_class()(), [transfer_to_bob], name="Alice")
    nodes = agent.get_graph().nodes
    tool_node = nodes["tools"].data
    t.add("tool node", (isinstance(tool_node, lib.ToolNode), sorted(nodes)))
    t.add("destinations", [
        x.metadata["__handoff_destination"] for x in tool_node.tools_by_name.values()
        if x.metadata and "__handoff_destination" in x.metadata
    ])
    t.add("node ids", [(nodes[n].id, nodes[n].name) for n in ("agent", "tools")])
    drawn = agent.get_graph().to_json()
    t.add("drawn", [(n["id"], n.get("metadata")) for n in drawn["nodes"]])
    return t.items


@scenario
def nested_invoke_metadata(lib: Any) -> list[Any]:
    """A graph invoked inside a node inherits the calling task's config, as a subgraph node
    does: its nodes' metadata and its returned messages' `messages` metadata show the task's
    `checkpoint_ns`."""
    from langchain_core.messages import AIMessage
    from langchain_core.runnables import RunnableConfig

    from .scenarios import cfg

    t = Transcript()
    seen: list[Any] = []

    def reply(state: Any, config: RunnableConfig) -> dict[str, Any]:
        seen.append(dict(config["metadata"]))
        return {"messages": [AIMessage("m", id="m1")]}

    ib = lib.StateGraph(lib.MessagesState)
    ib.add_node("reply", reply)
    ib.add_edge(lib.START, "reply")
    inner = ib.compile()
    b = lib.StateGraph(lib.MessagesState)
    b.add_node("sub", inner)
    b.add_node("call", lambda s: {"messages": inner.invoke(s)["messages"][-1:]})
    b.add_edge(lib.START, "sub")
    b.add_edge("sub", "call")
    g = b.compile(checkpointer=lib.InMemorySaver())
    t.stream("messages", g, {"messages": []}, cfg("1"), stream_mode="messages", subgraphs=True)
    t.add("node metadata", seen)
    return t.items
