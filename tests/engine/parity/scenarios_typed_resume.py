"""Parity scenarios for issue 29: `interrupt(value, response_schema=...)`, also inside a
`ToolNode`, and prebuilt nodes called directly (`ToolNode.invoke`).

The schema surfaces on the `Interrupt` as JSON Schema, the answer reaches the node as the
schema's type, and a bad answer fails the run (never a tool error message) while the interrupt
stays pending, so it can be answered again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import operator
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, ToolCall
from langchain_core.tools import tool
from pydantic import BaseModel

from .harness import Transcript
from .scenarios import cfg, scenario
from .scenarios_prebuilt import record


class Decision(BaseModel):
    approved: bool


@dataclasses.dataclass
class DecisionData:
    approved: bool


class Answer(TypedDict, total=False):
    answer: Any


def _asking(lib: Any, schema: Any) -> Any:
    def node(state: Answer) -> Answer:
        return {"answer": repr(lib.interrupt("approve?", response_schema=schema))}

    b = lib.StateGraph(Answer)
    b.add_node("node", node)
    b.add_edge(lib.START, "node")
    return b.compile(checkpointer=lib.InMemorySaver())


@scenario
def typed_interrupt_schemas(lib: Any) -> list[Any]:
    """Each schema form: what the interrupt shows, and what the node receives on resume."""
    t = Transcript()
    schemas = {"none": None, "dict": {"type": "object"}, "pydantic": Decision,
               "dataclass": DecisionData, "typeddict": dict[str, bool]}
    for name, schema in schemas.items():
        g = _asking(lib, schema)
        t.call(f"{name}_first", g.invoke, {"answer": None}, cfg(name))
        t.call(f"{name}_pending", lambda: [
            (i.value, i.response_schema) for i in g.get_state(cfg(name)).interrupts])
        t.call(f"{name}_resume", g.invoke, lib.Command(resume={"approved": True}), cfg(name))
    return t.items


@scenario
def typed_interrupt_bad_answer(lib: Any) -> list[Any]:
    """A bad answer raises ValidationError; the interrupt stays pending; a good one resumes."""
    t = Transcript()
    g = _asking(lib, Decision)
    [pending] = g.invoke({"answer": None}, cfg("1"))["__interrupt__"]
    t.call("bad", g.invoke, lib.Command(resume={pending.id: {"approved": "maybe"}}), cfg("1"))
    t.call("pending", lambda: [i.id == pending.id for i in g.get_state(cfg("1")).interrupts])
    t.call("good", g.invoke, lib.Command(resume={pending.id: {"approved": False}}), cfg("1"))
    return t.items


def _tool_graph(lib: Any, handle: Any, is_async: bool) -> Any:
    if is_async:
        @tool
        async def ask_human() -> str:
            """Ask a human."""
            return f"approved={lib.interrupt('Approve?', response_schema=Decision).approved}"
    else:
        @tool
        def ask_human() -> str:
            """Ask a human."""
            return f"approved={lib.interrupt('Approve?', response_schema=Decision).approved}"

    b = lib.StateGraph(lib.MessagesState)
    b.add_node("tools", lib.ToolNode([ask_human], handle_tool_errors=handle))
    b.add_edge(lib.START, "tools")
    return b.compile(checkpointer=lib.InMemorySaver())


@scenario
def typed_interrupt_in_tool_node(lib: Any) -> list[Any]:
    """Even with every tool error handled, a bad answer fails the run, sync and async."""
    t = Transcript()
    call = {"messages": [AIMessage("", tool_calls=[ToolCall(name="ask_human", args={},
                                                             id="c1")])]}
    for is_async in (False, True):
        g = _tool_graph(lib, True, is_async)
        run = (lambda i, c: asyncio.run(g.ainvoke(i, c))) if is_async else g.invoke
        thread = cfg(f"async={is_async}")
        [pending] = run(call, thread)["__interrupt__"]
        t.add("pending", pending.response_schema)
        t.call("bad", run, lib.Command(resume={pending.id: {"approved": "x"}}), thread)
        t.call("still", lambda: len(g.get_state(thread).interrupts))
        record(t, "good", run, lib.Command(resume={pending.id: {"approved": True}}), thread)
    return t.items


@scenario
def tool_node_invoked_directly(lib: Any) -> list[Any]:
    """`ToolNode(...).invoke` / `ainvoke` outside a graph, errors handled as in a graph.

    LangGraph requires the runtime in the config (graphrun falls back to an empty one)."""
    t = Transcript()
    if lib.name == "lg":
        from langgraph.runtime import Runtime
    else:
        from engine import Runtime
    config = {"configurable": {"__pregel_runtime": Runtime()}}

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    node = lib.ToolNode([add], handle_tool_errors=True)
    calls = [ToolCall(name="add", args={"a": 1, "b": 2}, id="1"),
             ToolCall(name="add", args={"a": "x"}, id="2"),
             ToolCall(name="nope", args={}, id="3")]
    message = AIMessage("", tool_calls=calls)
    record(t, "dict", node.invoke, {"messages": [message]}, config)
    record(t, "list", node.invoke, [message], config)
    record(t, "async", lambda: asyncio.run(node.ainvoke({"messages": [message]}, config)))
    return t.items


@scenario
def typed_interrupt_bad_answer_spares_siblings(lib: Any) -> list[Any]:
    """A bad answer to one of two parallel interrupts does not cut off the other answered
    task: it finishes once, keeps its write, and does not run again on the next resume."""
    t = Transcript()
    sent: list[str] = []

    class Log(TypedDict, total=False):
        log: Annotated[list[str], operator.add]

    async def send(state: Log) -> Log:
        lib.interrupt("send?", response_schema=Decision)
        sent.append("email")
        for _ in range(3):  # awaits after its side effect: a cancel would land here
            await asyncio.sleep(0)
        return {"log": ["sent"]}

    async def check(state: Log) -> Log:
        lib.interrupt("check?", response_schema=Decision)
        return {"log": ["checked"]}

    b = lib.StateGraph(Log)
    b.add_node("send", send)
    b.add_node("check", check)
    b.add_edge(lib.START, "send")
    b.add_edge(lib.START, "check")
    g = b.compile(checkpointer=lib.InMemorySaver())

    async def go() -> None:
        await g.ainvoke({"log": []}, cfg("1"))
        ids = {i.value: i.id for i in (await g.aget_state(cfg("1"))).interrupts}
        bad = {ids["send?"]: {"approved": True}, ids["check?"]: {"approved": "maybe"}}
        try:
            await g.ainvoke(lib.Command(resume=bad), cfg("1"))
        except Exception as error:  # noqa: BLE001 - part of the transcript
            t.add("bad", type(error).__name__)
        t.add("pending", [i.value for i in (await g.aget_state(cfg("1"))).interrupts])
        good = lib.Command(resume={ids["check?"]: {"approved": True}})
        t.add("good", sorted((await g.ainvoke(good, cfg("1")))["log"]))

    asyncio.run(go())
    t.add("sent", sent)
    return t.items


class Pick(BaseModel):
    a: int


@scenario
def validation_node_in_graph(lib: Any) -> list[Any]:
    """`ValidationNode` in a graph: valid calls come back as JSON, invalid ones as errors
    marked `is_error`; called directly with a list it answers with a list."""
    import warnings

    t = Transcript()
    calls = [ToolCall(name="Pick", args={"a": 1}, id="1"),
             ToolCall(name="Pick", args={"a": "x"}, id="2")]

    def model(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage("", id="ai", tool_calls=calls)]}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LangGraph marks it deprecated
        node = lib.ValidationNode([Pick])
    b = lib.StateGraph(lib.MessagesState)
    b.add_node("model", model)
    b.add_node("validation", node)
    b.add_edge(lib.START, "model")
    b.add_edge("model", "validation")
    g = b.compile()

    def errors(messages: list[Any]) -> list[Any]:
        return [(m.content.split("\n")[0][:40], m.additional_kwargs) for m in messages]

    t.add("graph", errors(g.invoke({"messages": []})["messages"][1:]))
    t.add("direct", errors(node.invoke([AIMessage("", tool_calls=calls)])))
    return t.items


@scenario
def react_prompt_injection(lib: Any) -> list[Any]:
    """A prompt function asking for `config` and `store` gets them; one returning a prompt
    runnable (`SystemMessage + messages`) has it run on the state. Sync and async."""
    import warnings

    from langchain_core.messages import SystemMessage

    from ..fake_chat import FakeToolModel, ai

    t = Transcript()
    store = lib.InMemoryStore()
    store.put(("memories", "1"), "name", {"data": "Alice"})

    # unannotated, as LangGraph only injects parameters typed as it expects (or untyped)
    def with_store(state, config, *, store):  # type: ignore[no-untyped-def]
        user = config["configurable"]["user_id"]
        return [SystemMessage(store.get(("memories", user), "name").value["data"]),
                *state["messages"]]

    async def awith_store(state, config, *, store):  # type: ignore[no-untyped-def]
        return with_store(state, config, store=store)

    def template(state, config):  # type: ignore[no-untyped-def]
        return SystemMessage("foo") + state["messages"]

    for name, prompt in (("store", with_store), ("astore", awith_store),
                         ("template", template)):
        model = FakeToolModel(script=[ai("done", id="a1"), ai("done", id="a2")])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # LangGraph marks create_react_agent deprecated
            agent = lib.create_react_agent(model, [], prompt=prompt, store=store)
        config = {"configurable": {"user_id": "1"}}
        inp = {"messages": [("user", "hi")]}
        if name != "astore":
            agent.invoke(inp, config)
        asyncio.run(agent.ainvoke(inp, config))
        t.add(name, [[(m.type, m.content) for m in seen] for seen in model.seen])
    return t.items


@scenario
def tool_node_command_shapes(lib: Any) -> list[Any]:
    """A `BaseTool` subclass returning a Command, and a tool returning [Command, ToolMessage]:
    called directly (the output mixes plain updates and Commands, as LangGraph's) and in a
    graph (both updates applied)."""
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import BaseTool

    class Extra(TypedDict, total=False):
        messages: Annotated[list[Any], operator.add]
        foo: str

    class Handoff(BaseTool):
        name: str = "handoff"
        description: str = "Hands off."

        def _run(self, **kwargs: Any) -> Any:
            return lib.Command(update={"messages": [ToolMessage("moved", tool_call_id="1")]})

        async def _arun(self, **kwargs: Any) -> Any:
            return self._run()

    @tool
    def both() -> Any:
        """Sets foo and answers."""
        return [lib.Command(update={"foo": "bar"}), ToolMessage("done", tool_call_id="2")]

    t = Transcript()
    node = lib.ToolNode([Handoff(), both])
    calls = [ToolCall(name="handoff", args={}, id="1"), ToolCall(name="both", args={}, id="2")]
    message = AIMessage("", id="ai", tool_calls=calls)
    if lib.name == "lg":
        from langgraph.runtime import Runtime
    else:
        from engine import Runtime
    config = {"configurable": {"__pregel_runtime": Runtime()}}
    record(t, "direct", node.invoke, {"messages": [message]}, config)
    record(t, "adirect", lambda: asyncio.run(node.ainvoke({"messages": [message]}, config)))
    b = lib.StateGraph(Extra)
    b.add_node("tools", node)
    b.add_edge(lib.START, "tools")
    record(t, "graph", b.compile().invoke, {"messages": [message]})
    return t.items


@scenario
def compiled_node_invoked_directly(lib: Any) -> list[Any]:
    """`graph.nodes[name].invoke(...)`: a prebuilt agent's tool node, and a plain function
    node, run alone (sync and async)."""
    import warnings

    from ..fake_chat import FakeToolModel, ai

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    t = Transcript()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LangGraph marks create_react_agent deprecated
        agent = lib.create_react_agent(FakeToolModel(script=[ai("x", id="1")]), [add])
    if lib.name == "lg":
        from langgraph.runtime import Runtime
    else:
        from engine import Runtime
    config = {"configurable": {"__pregel_runtime": Runtime()}}
    call = ToolCall(name="add", args={"a": 1, "b": 2}, id="c")
    inp = {"messages": [AIMessage("", tool_calls=[call])]}
    record(t, "tools", agent.nodes["tools"].invoke, inp, config)
    record(t, "atools", lambda: asyncio.run(agent.nodes["tools"].ainvoke(inp, config)))

    def double(state: Answer) -> Answer:
        return {"answer": state["answer"] * 2}

    b = lib.StateGraph(Answer)
    b.add_node("double", double)
    b.add_edge(lib.START, "double")
    g = b.compile()
    record(t, "function", g.nodes["double"].invoke, {"answer": 2})
    record(t, "afunction", lambda: asyncio.run(g.nodes["double"].ainvoke({"answer": 3})))
    return t.items
