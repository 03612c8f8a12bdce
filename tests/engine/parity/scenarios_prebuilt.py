"""Parity scenarios for issue 17: managed values, Overwrite, bulk_update_state, prebuilt agents.

Registered into the same `SCENARIOS` as `scenarios.py`. Tool agents use `FakeToolModel`, a
scripted chat model (no network). Messages are recorded with their type, content, name, id,
tool call id, status and tool calls (`detail`), since the shared normalizer keeps only type,
content and id. LangGraph 1.2.22 marks `create_react_agent` deprecated; the warning is
silenced around its call (graphrun's is not deprecated, so it does not warn).
"""

import asyncio
import operator
import threading
import time
import warnings
from typing import Annotated, Any, NotRequired, TypedDict

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from pydantic import BaseModel

from ..fake_chat import FakeToolModel, ai
from .harness import Transcript
from .scenarios import cfg, scenario

LAG = 0.1


def detail(obj: Any) -> Any:
    """Messages as comparable tuples with every field a tool agent depends on."""
    if isinstance(obj, BaseMessage):
        return (
            "msg", obj.type, obj.content, obj.name, obj.id,
            getattr(obj, "tool_call_id", None), getattr(obj, "status", None),
            [(c["name"], c["args"], c["id"]) for c in getattr(obj, "tool_calls", [])],
        )
    if isinstance(obj, dict):
        return {k: detail(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [detail(v) for v in obj]
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return tuple(detail(v) for v in obj)
    return obj


def record(t: Transcript, label: str, fn: Any, *args: Any, **kw: Any) -> Any:
    try:
        result = fn(*args, **kw)
    except Exception as e:  # noqa: BLE001 - the error is part of the transcript
        t.add(label, e)
        return None
    t.add(label, detail(result))
    return result


def stream(t: Transcript, label: str, graph: Any, inp: Any, config: Any = None, **kw: Any) -> None:
    try:
        for item in graph.stream(inp, config, **kw):
            t.add(label, detail(item))
    except Exception as e:  # noqa: BLE001
        t.add(label, e)


def messages_meta(item: Any) -> Any:
    """A `messages` mode item: the message in detail and its whole metadata."""
    message, meta = item
    return (detail(message), dict(sorted(meta.items())))


def react(lib: Any, *args: Any, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return lib.create_react_agent(*args, **kw)


# --- managed values ----------------------------------------------------------------------------


@scenario
def managed_steps_loop(lib: Any) -> list[Any]:
    """RemainingSteps / IsLastStep per step, in nodes and routers, never in values or state."""
    t = Transcript()

    class MS(TypedDict):
        log: Annotated[list, operator.add]
        remaining_steps: lib.RemainingSteps
        is_last_step: lib.IsLastStep

    def a(s: MS) -> dict[str, Any]:
        return {"log": [["a", s["remaining_steps"], s["is_last_step"]]]}

    def route(s: MS) -> str:
        return lib.END if s["is_last_step"] else "a"

    b = lib.StateGraph(MS)
    b.add_node("a", a)
    b.add_edge(lib.START, "a")
    b.add_conditional_edges("a", route)
    g = b.compile(checkpointer=lib.InMemorySaver())
    stream(t, "stream", g, {"log": []}, cfg("m1", recursion_limit=5),
           stream_mode=["values", "updates"])
    t.state("state", g, cfg("m1"))
    t.add("history", [h.values for h in g.get_state_history(cfg("m1"))])
    record(t, "invoke_limit_3", g.invoke, {"log": [], "remaining_steps": 99},
           {"recursion_limit": 3})
    record(t, "write_managed", lambda: _write_managed(lib, MS))
    return t.items


def _write_managed(lib: Any, schema: Any) -> Any:
    b = lib.StateGraph(schema)
    b.add_node("w", lambda s: {"remaining_steps": 100, "log": ["w"]})
    b.add_edge(lib.START, "w")
    return b.compile().invoke({"log": []}, stream_mode=["updates", "values"])


@scenario
def managed_subgraph_and_resume(lib: Any) -> list[Any]:
    """A subgraph counts its own steps; a resumed run counts from the resumed step; Send
    inputs carry no managed values."""
    t = Transcript()

    class MS(TypedDict):
        log: Annotated[list, operator.add]
        remaining_steps: NotRequired[lib.RemainingSteps]

    def a(s: MS) -> dict[str, Any]:
        return {"log": [["a", s["remaining_steps"]]]}

    sub = lib.StateGraph(MS)
    sub.add_node("a", a)
    sub.add_edge(lib.START, "a")
    sub.add_conditional_edges("a", lambda s: lib.END if s["remaining_steps"] < 5 else "a")
    sub = sub.compile()

    def c(s: MS) -> dict[str, Any]:
        answer = lib.interrupt("q")
        return {"log": [["c", s["remaining_steps"], answer]]}

    def d(s: Any) -> dict[str, Any]:
        return {"log": [["d", sorted(s)]]}

    b = lib.StateGraph(MS)
    b.add_node("sub", sub)
    b.add_node("c", c)
    b.add_node("d", d)
    b.add_edge(lib.START, "sub")
    b.add_edge("sub", "c")
    b.add_conditional_edges("c", lambda s: [lib.Send("d", {"log": ["x"]})], ["d"])
    g = b.compile(checkpointer=lib.InMemorySaver())
    stream(t, "run", g, {"log": []}, cfg("s1", recursion_limit=8), stream_mode="updates",
           subgraphs=True)
    stream(t, "resume", g, lib.Command(resume="r"), cfg("s1", recursion_limit=8),
           stream_mode="updates")
    t.add("final", g.get_state(cfg("s1")).values)
    return t.items


@scenario
def managed_schema_errors(lib: Any) -> list[Any]:
    """Managed keys are refused in input/output schemas; a node's own input schema may use
    them."""
    t = Transcript()

    class MS(TypedDict):
        log: Annotated[list, operator.add]

    class In(TypedDict):
        log: list
        remaining_steps: lib.RemainingSteps

    record(t, "input_schema", lib.StateGraph, MS, input_schema=In)
    record(t, "output_schema", lib.StateGraph, MS, output_schema=In)

    def node(s: In) -> dict[str, Any]:
        return {"log": [s["remaining_steps"]]}

    b = lib.StateGraph(MS)
    b.add_node("n", node)
    b.add_edge(lib.START, "n")
    record(t, "node_schema", b.compile().invoke, {"log": []}, {"recursion_limit": 7})
    return t.items


# --- Overwrite ---------------------------------------------------------------------------------


@scenario
def overwrite_reducer(lib: Any) -> list[Any]:
    """Overwrite bypasses a reducer (also in its JSON forms); two in one step is an error."""
    t = Transcript()

    class OS(TypedDict):
        log: Annotated[list, operator.add]
        n: int

    nodes = {
        "a": lambda s: {"log": ["a"]},
        "b": lambda s: {"log": lib.Overwrite(["b"])},
        "c": lambda s: {"log": lib.Overwrite(["c"])},
        "d": lambda s: {"log": {"value": ["d"], "type": "__overwrite__"}},
        "e": lambda s: {"log": {"__overwrite__": ["e"]}},
    }

    def build(edges: list[tuple[str, str]]) -> Any:
        b = lib.StateGraph(OS)
        for name in {n for e in edges for n in e if n != lib.START}:
            b.add_node(name, nodes[name])
        for src, dst in edges:
            b.add_edge(src, dst)
        return b.compile(checkpointer=lib.InMemorySaver())

    g = build([(lib.START, "a"), ("a", "b"), ("b", "d"), ("d", "e")])
    stream(t, "chain", g, {"log": ["start"]}, cfg("o1"), stream_mode=["updates", "values"])
    record(t, "update_state", g.update_state, cfg("o1"), {"log": lib.Overwrite(["u"])}, "e")
    t.add("after_update", g.get_state(cfg("o1")).values)
    g = build([(lib.START, "a"), (lib.START, "b")])
    record(t, "parallel_one", g.invoke, {"log": ["start"]}, cfg("o2"))
    g = build([(lib.START, "b"), (lib.START, "c")])
    record(t, "parallel_two", g.invoke, {"log": ["start"]}, cfg("o3"))
    return t.items


# --- bulk_update_state -------------------------------------------------------------------------


def _bulk_graph(lib: Any) -> Any:
    class BS(TypedDict):
        log: Annotated[list, operator.add]
        n: int

    b = lib.StateGraph(BS)
    b.add_node("a", lambda s: {"log": ["a"]})
    b.add_node("b", lambda s: {"log": ["b"]})
    b.add_edge(lib.START, "a")
    b.add_edge("a", "b")
    return b.compile(checkpointer=lib.InMemorySaver(), interrupt_before=["b"])


def _snap(g: Any, config: Any) -> Any:
    s = g.get_state(config)
    return (s.values, s.next, s.metadata["source"], s.metadata["step"], [x.name for x in s.tasks])


@scenario
def bulk_update_state(lib: Any) -> list[Any]:
    """Super-steps of updates: several nodes at once, input, clear, copy, and every error."""
    t = Transcript()
    g = _bulk_graph(lib)
    U = lib.StateUpdate

    def bulk(label: str, config: Any, steps: Any) -> Any:
        result = record(t, label, g.bulk_update_state, config, steps)
        if result is not None:
            t.add(label + "_state", _snap(g, result))
        return result

    c1 = cfg("b1")
    bulk("no_steps", c1, [])
    bulk("no_updates", c1, [[]])
    bulk("as_input", c1, [[U({"log": ["i"], "n": 1}, "__input__")]])
    stream(t, "run", g, None, c1, stream_mode="updates")
    bulk("two_steps", c1, [[U({"log": ["x"]}, "a"), U({"log": ["y"]}, "b")], [U({"n": 5}, "a")]])
    bulk("inferred", c1, [[U({"log": ["z"]})]])
    bulk("missing_as_node", c1, [[U({"log": ["x"]}, "a"), U({"log": ["y"]})]])
    bulk("unknown_node", c1, [[U({"log": ["x"]}, "zz")]])
    bulk("two_plain_writes", c1, [[U({"n": 1}, "a"), U({"n": 2}, "b")]])
    bulk("clear_twice", c1, [[U(None, lib.END), U(None, lib.END)]])
    bulk("input_twice", c1, [[U({"n": 1}, "__input__"), U(None, "__input__")]])
    bulk("input_none", c1, [[U(None, "__input__")]])
    bulk("copy_twice", c1, [[U(None, "__copy__"), U(None, "__copy__")]])
    bulk("copy_nothing", cfg("b9"), [[U(None, "__copy__")]])
    bulk("pair", c1, [[({"n": 3}, "a")]])
    c2 = cfg("b2")
    stream(t, "run2", g, {"log": ["s"]}, c2, stream_mode="updates")
    bulk("clear", c2, [[U(None, lib.END)]])
    stream(t, "after_clear", g, None, c2, stream_mode="updates")
    c3 = cfg("b3")
    stream(t, "run3", g, {"log": ["s"]}, c3, stream_mode="updates")
    bulk("copy", c3, [[U(None, "__copy__")]])
    bulk("copy_with_updates", c3, [[U([({"log": ["cv"]}, "a")], "__copy__")]])
    stream(t, "after_copy", g, None, c3, stream_mode="updates")
    t.add("history", [
        (h.metadata["source"], h.metadata["step"], h.values, h.next)
        for h in g.get_state_history(c3)
    ])
    c4 = cfg("b4")
    bulk("fresh_thread", c4, [[U({"log": ["f"]}, "a")]])
    stream(t, "after_fresh", g, None, c4, stream_mode="updates")
    record(t, "update_state_end", g.update_state, c3, None, lib.END)
    t.add("after_end", _snap(g, c3))
    return t.items


@scenario
def abulk_update_state(lib: Any) -> list[Any]:
    """The async form: same checkpoints and errors."""
    t = Transcript()
    g = _bulk_graph(lib)
    U = lib.StateUpdate

    async def main() -> None:
        for label, steps in [
            ("none", []),
            ("step", [[U({"log": ["x"]}, "a")], [U({"n": 2}, "b"), U({"log": ["y"]}, "a")]]),
        ]:
            try:
                result = await g.abulk_update_state(cfg("ab"), steps)
                t.add(label, _snap(g, result))
            except Exception as e:  # noqa: BLE001
                t.add(label, e)
        async for item in g.astream(None, cfg("ab"), stream_mode="updates"):
            t.add("astream", item)

    asyncio.run(main())
    return t.items


# --- tools -------------------------------------------------------------------------------------


# `slow_add` finishes after the `add` of the same parallel step (it waits for it), so parallel
# results arrive in one order on a loaded machine too. Scenarios pairing them clear the event.
ADDED = threading.Event()


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    ADDED.set()
    return a + b


@tool
def slow_add(a: int, b: int) -> int:
    """Add two integers, slowly."""
    ADDED.wait(5)
    ADDED.clear()
    time.sleep(LAG / 10)
    return a + b


@tool
def boom(x: str) -> str:
    """Always fails."""
    raise ValueError("bad " + x)


def tools_for(lib: Any) -> list[Any]:
    """Tools whose annotations name the library's own injection markers."""

    @tool
    def look(
        q: str,
        state: Annotated[dict, lib.InjectedState],
        messages: Annotated[list, lib.InjectedState("messages")],
    ) -> str:
        """Read the state."""
        return f"{q} {len(state['messages'])} {len(messages)} {sorted(state)}"

    @tool
    def rt(q: str, runtime: lib.ToolRuntime) -> str:
        """Read the tool runtime."""
        return f"{q} {runtime.tool_call_id} {sorted(runtime.state)} {runtime.context}"

    @tool
    def remember(key: str, store: Annotated[Any, lib.InjectedStore()]) -> str:
        """Write the store."""
        time.sleep(LAG)  # finishes after its siblings: a fixed order of parallel results
        store.put(("notes",), key, {"v": key.upper()})
        return f"saved {key}"

    @tool
    def set_name(name: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Set the name with a Command."""
        return lib.Command(update={
            "messages": [ToolMessage(f"set {name}", tool_call_id=tool_call_id)], "name": name,
        })

    return [look, rt, remember, set_name]


def tool_graph(lib: Any, node: Any, store: Any = None) -> Any:
    class St(TypedDict):
        messages: Annotated[list, lib.add_messages]
        name: str

    b = lib.StateGraph(St)
    b.add_node("tools", node)
    b.add_edge(lib.START, "tools")
    return b.compile(store=store)


@scenario
def tool_node_calls(lib: Any) -> list[Any]:
    """ToolNode in a graph: parallel calls in call order, injection, Commands, list input."""
    t = Transcript()
    store = lib.InMemoryStore()
    node = lib.ToolNode([add, slow_add, *tools_for(lib)])
    g = tool_graph(lib, node, store)
    human = HumanMessage("hi", id="h1")
    calls = ai(
        "", ("slow_add", {"a": 1, "b": 2}, "c1"), ("add", {"a": 3, "b": 4}, "c2"),
        ("look", {"q": "z"}, "c3"), ("rt", {"q": "r"}, "c4"), ("remember", {"key": "k"}, "c5"),
        id="a1",
    )
    ADDED.clear()
    stream(t, "parallel", g, {"messages": [human, calls]}, stream_mode=["updates", "values"])
    t.add("stored", store.get(("notes",), "k").value)
    command = ai("", ("set_name", {"name": "N"}, "c1"), ("add", {"a": 1, "b": 2}, "c2"), id="a2")
    stream(t, "command", g, {"messages": [command]}, stream_mode=["updates", "values"])
    forged = ai("", ("look", {"q": "z", "state": {"forged": 1}}, "c1"), id="a3")
    stream(t, "forged", g, {"messages": [human, forged]}, stream_mode="updates")
    t.add("names", sorted(node.tools_by_name))
    return t.items


@scenario
def tool_node_errors(lib: Any) -> list[Any]:
    """Errors: bad arguments and unknown tools answer the model; by default any other tool
    error propagates; handle_tool_errors variants; inputs without messages."""
    t = Transcript()
    bad = ai("", ("add", {"a": "x"}, "c1"), id="a1")
    unknown = ai("", ("nope", {}, "c1"), id="a2")
    fails = ai("", ("boom", {"x": "q"}, "c1"), id="a3")

    def value_error(e: ValueError) -> str:
        return "handled " + str(e)

    def key_error(e: KeyError) -> str:
        return "handled " + str(e)

    def union(e: KeyError | ValueError) -> str:
        return "union " + str(e)

    cases = [
        ("default", lib.ToolNode([add, boom])),
        ("true", lib.ToolNode([add, boom], handle_tool_errors=True)),
        ("false", lib.ToolNode([add, boom], handle_tool_errors=False)),
        ("text", lib.ToolNode([add, boom], handle_tool_errors="oops")),
        ("type", lib.ToolNode([add, boom], handle_tool_errors=ValueError)),
        ("other_type", lib.ToolNode([add, boom], handle_tool_errors=KeyError)),
        ("tuple", lib.ToolNode([add, boom], handle_tool_errors=(KeyError, ValueError))),
        ("function", lib.ToolNode([add, boom], handle_tool_errors=value_error)),
        ("other_function", lib.ToolNode([add, boom], handle_tool_errors=key_error)),
        ("union", lib.ToolNode([add, boom], handle_tool_errors=union)),
    ]
    for label, node in cases:
        g = tool_graph(lib, node)
        for kind, message in (("bad", bad), ("unknown", unknown), ("fails", fails)):
            stream(t, f"{label}_{kind}", g, {"messages": [message]}, stream_mode="updates")
    g = tool_graph(lib, lib.ToolNode([add]))
    stream(t, "no_ai", g, {"messages": [HumanMessage("x", id="h")]}, stream_mode="updates")
    stream(t, "no_messages", g, {"name": "x"}, stream_mode="updates")
    stream(t, "store_missing", tool_graph(lib, lib.ToolNode(tools_for(lib))),
           {"messages": [ai("", ("remember", {"key": "k"}, "c1"), id="a9")]},
           stream_mode="updates")

    @tool
    def bare(x: str) -> Any:
        """Return a Command without the ToolMessage answering the call."""
        return lib.Command(update={"name": x})

    for label, flag in (("bare_default", None), ("bare_true", True)):
        node = lib.ToolNode([bare]) if flag is None else lib.ToolNode([bare], handle_tool_errors=flag)
        stream(t, label, tool_graph(lib, node),
               {"messages": [ai("", ("bare", {"x": "n"}, "c1"), id="a8")]}, stream_mode="updates")
    t.add("condition", [
        lib.tools_condition({"messages": [fails]}),
        lib.tools_condition([fails]),
        lib.tools_condition({"messages": [HumanMessage("x", id="h")]}),
    ])
    record(t, "condition_empty", lib.tools_condition, {"messages": []})
    return t.items


@scenario
def tool_node_send(lib: Any) -> list[Any]:
    """Send-based calls: one task per call with ToolCallWithContext, or a list of calls."""
    t = Transcript()
    node = lib.ToolNode([add, *tools_for(lib)])

    class St(TypedDict):
        messages: Annotated[list, lib.add_messages]
        name: str

    def model(s: St) -> dict[str, Any]:
        return {"messages": [ai("", ("add", {"a": 1, "b": 2}, "c1"),
                                ("look", {"q": "w"}, "c2"), id="a1")]}

    def fan_out(s: St) -> list[Any]:
        calls = s["messages"][-1].tool_calls
        return [
            lib.Send("tools", {"__type": "tool_call_with_context", "tool_call": c, "state": s})
            for c in calls
        ]

    b = lib.StateGraph(St)
    b.add_node("model", model)
    b.add_node("tools", node)
    b.add_edge(lib.START, "model")
    b.add_conditional_edges("model", fan_out, ["tools"])
    g = b.compile(checkpointer=lib.InMemorySaver())
    stream(t, "with_context", g, {"messages": [HumanMessage("hi", id="h1")]}, cfg("ts1"),
           stream_mode="values")
    t.add("state", detail(g.get_state(cfg("ts1")).values))

    def fan_list(s: St) -> list[Any]:
        return [lib.Send("tools", [c]) for c in s["messages"][-1].tool_calls]

    b = lib.StateGraph(St)
    b.add_node("model", model)
    b.add_node("tools", node)
    b.add_edge(lib.START, "model")
    b.add_conditional_edges("model", fan_list, ["tools"])
    g = b.compile()
    record(t, "tool_call_list", g.invoke, {"messages": [HumanMessage("hi", id="h1")], "name": "n"})
    return t.items


@scenario
def tool_node_wrappers(lib: Any) -> list[Any]:
    """wrap_tool_call / awrap_tool_call: fix arguments and retry, answer without running the
    tool, replace the state tools see, and a failing wrapper."""
    t = Transcript()
    tools = [add, boom, *tools_for(lib)]

    def wrapper(request: Any, execute: Any) -> Any:
        call = request.tool_call
        if call["name"] == "nope":
            return ToolMessage("no such tool, answered by the wrapper", tool_call_id=call["id"])
        if call["name"] == "look":
            request = request.override(state={"messages": [HumanMessage("swapped", id="s")]})
        result = execute(request)
        if getattr(result, "status", None) == "error" and call["name"] == "add":
            fixed = {**call, "args": {"a": 1, "b": 1}}
            return execute(request.override(tool_call=fixed))
        if call["name"] == "boom":
            raise RuntimeError("wrapper gave up")
        return result

    message = ai("", ("add", {"a": "x"}, "c1"), ("nope", {}, "c2"), ("look", {"q": "z"}, "c3"),
                 ("rt", {"q": "r"}, "c4"), id="w1")
    for label, kw in (("wrapped", {}), ("wrapped_handled", {"handle_tool_errors": True})):
        g = tool_graph(lib, lib.ToolNode(tools, wrap_tool_call=wrapper, **kw))
        stream(t, label, g, {"messages": [HumanMessage("hi", id="h"), message]},
               stream_mode="updates")
        stream(t, label + "_raises", g,
               {"messages": [ai("", ("boom", {"x": "q"}, "c1"), id="w2")]}, stream_mode="updates")

    async def awrapper(request: Any, execute: Any) -> Any:
        result = await execute(request)
        result.content = f"async wrapped {result.content}"
        return result

    g = tool_graph(lib, lib.ToolNode(tools, awrap_tool_call=awrapper))
    sync_g = tool_graph(lib, lib.ToolNode(tools, wrap_tool_call=wrapper))

    async def main() -> None:
        for label, graph in (("awrapped", g), ("sync_wrapper_async_run", sync_g)):
            async for item in graph.astream({"messages": [message]}, stream_mode="updates"):
                t.add(label, detail(item))

    asyncio.run(main())
    return t.items


# --- create_react_agent ------------------------------------------------------------------------


def weather_model(*extra: AIMessage) -> FakeToolModel:
    ADDED.clear()
    return FakeToolModel(script=[
        ai("", ("slow_add", {"a": 1, "b": 2}, "c1"), ("add", {"a": 3, "b": 4}, "c2"), id="r1"),
        *extra,
        AIMessage("The sums are 3 and 7.", id="r2"),
    ])


@scenario
def react_agent_streams(lib: Any) -> list[Any]:
    """The agent loop: parallel tool calls, updates / values / messages, state and graph."""
    t = Transcript()
    agent = react(lib, weather_model(), [add, slow_add], checkpointer=lib.InMemorySaver())
    t.add("nodes", sorted(agent.get_graph().nodes))
    inp = {"messages": [HumanMessage("add please", id="h1")]}
    stream(t, "updates", agent, inp, cfg("r1"), stream_mode="updates")
    t.add("state", detail(g_state(agent, cfg("r1"))))
    agent = react(lib, weather_model(), [add, slow_add])
    stream(t, "values", agent, inp, stream_mode="values")
    items = [messages_meta(i) for i in agent.stream(inp, stream_mode="messages")]
    t.add("messages", items)
    record(t, "invoke", agent.invoke, inp)
    return t.items


def g_state(g: Any, config: Any) -> Any:
    s = g.get_state(config)
    return (s.values, s.next, s.metadata["step"])


@scenario
def react_agent_interrupts(lib: Any) -> list[Any]:
    """interrupt_before / interrupt_after the tools node, resumed with None."""
    t = Transcript()
    inp = {"messages": [HumanMessage("add please", id="h1")]}
    for label, kw in (("before", {"interrupt_before": ["tools"]}),
                      ("after", {"interrupt_after": ["tools"]}),
                      ("agent_after", {"interrupt_after": ["agent"]})):
        agent = react(lib, weather_model(), [add, slow_add], checkpointer=lib.InMemorySaver(), **kw)
        config = cfg(label)
        stream(t, label, agent, inp, config, stream_mode="updates")
        t.add(label + "_state", detail(g_state(agent, config)))
        stream(t, label + "_resume", agent, None, config, stream_mode="updates")
        t.add(label + "_final", detail(g_state(agent, config)))
    # human in the loop: edit the pending tool call, then continue
    agent = react(lib, weather_model(), [add, slow_add], checkpointer=lib.InMemorySaver(),
                  interrupt_before=["tools"])
    config = cfg("edit")
    stream(t, "edit", agent, inp, config, stream_mode="updates")
    edited = ai("", ("add", {"a": 10, "b": 20}, "c1"), id="r1")
    record(t, "edit_update", lambda: sorted(agent.update_state(config, {"messages": [edited]})))
    t.add("edit_state", detail(g_state(agent, config)))
    stream(t, "edit_resume", agent, None, config, stream_mode=["updates", "values"])
    return t.items


@scenario
def react_agent_remaining_steps(lib: Any) -> list[Any]:
    """The agent stops with "need more steps" when the recursion limit leaves no tool round."""
    t = Transcript()
    looping = FakeToolModel(script=[ai("", ("add", {"a": 1, "b": 1}, "c1"), id="loop")])
    inp = {"messages": [HumanMessage("go", id="h1")]}
    for limit in (2, 3, 4, 6):
        agent = react(lib, looping.model_copy(update={"index": 0}), [add])
        stream(t, f"limit_{limit}", agent, inp, {"recursion_limit": limit}, stream_mode="updates")

    @tool(return_direct=True)
    def final(x: str) -> str:
        """Answer directly."""
        return "final " + x

    direct = FakeToolModel(script=[ai("", ("final", {"x": "y"}, "c1"), id="d1")])
    agent = react(lib, direct, [final])
    stream(t, "return_direct", agent, inp, stream_mode="updates")
    stream(t, "return_direct_limit", react(lib, direct.model_copy(update={"index": 0}), [final]),
           inp, {"recursion_limit": 1}, stream_mode="updates")
    return t.items


class Sum(BaseModel):
    total: int


@scenario
def react_agent_options(lib: Any) -> list[Any]:
    """prompt, name, response_format, custom state_schema, store injection, errors."""
    t = Transcript()
    inp = {"messages": [HumanMessage("add please", id="h1")]}
    model = weather_model()
    agent = react(lib, model, [add, slow_add], prompt="Be brief.", name="adder")
    record(t, "prompt_name", agent.invoke, inp)
    t.add("model_saw", [detail(m) for m in model.seen[0]])
    structured = weather_model(ai("", ("Sum", {"total": 10}, "s1"), id="s1"))
    agent = react(lib, structured, [add, slow_add], response_format=Sum)
    t.add("structured_nodes", sorted(agent.get_graph().nodes))
    stream(t, "structured", agent, inp, stream_mode="updates")
    structured = FakeToolModel(script=[AIMessage("done", id="x1"),
                                       ai("", ("Sum", {"total": 1}, "s2"), id="s2")])
    agent = react(lib, structured, [], response_format=("Answer in JSON.", Sum))
    t.add("no_tools_nodes", sorted(agent.get_graph().nodes))
    stream(t, "structured_no_tools", agent, inp, stream_mode="updates")
    t.add("structured_prompt", [detail(m) for m in structured.seen[1]])

    class Custom(TypedDict):
        messages: Annotated[list, lib.add_messages]
        remaining_steps: lib.RemainingSteps
        user: str

    store = lib.InMemoryStore()
    store_model = FakeToolModel(script=[
        ai("", ("remember", {"key": "k"}, "c1"), ("rt", {"q": "q"}, "c2"), id="m1"),
        AIMessage("ok", id="m2"),
    ])
    agent = react(lib, store_model, tools_for(lib), state_schema=Custom, store=store)
    stream(t, "custom_state", agent, {**inp, "user": "u"}, stream_mode="updates")
    t.add("stored", store.get(("notes",), "k").value)

    class Missing(TypedDict):
        messages: Annotated[list, lib.add_messages]

    record(t, "missing_keys", react, lib, weather_model(), [add], state_schema=Missing)
    record(t, "bad_version", react, lib, weather_model(), [add], version="v3")
    record(t, "bad_kwarg", react, lib, weather_model(), [add], colour="red")
    bad_history = {"messages": [ai("", ("add", {"a": 1, "b": 1}, "c9"), id="bad")]}
    record(t, "bad_history", react(lib, weather_model(), [add]).invoke, bad_history)
    record(t, "tool_error", react(lib, FakeToolModel(script=[
        ai("", ("boom", {"x": "z"}, "c1"), id="b1")]), [boom]).invoke, inp)
    return t.items


@scenario
def react_agent_hooks(lib: Any) -> list[Any]:
    """pre_model_hook (the model sees `llm_input_messages`) and post_model_hook routing."""
    t = Transcript()
    inp = {"messages": [HumanMessage("add please", id="h1")]}

    def pre(state: Any) -> dict[str, Any]:
        return {"llm_input_messages": state["messages"][-1:]}

    def post(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(f"checked {len(state['messages'])}", id="p%d" % len(
            state["messages"]))]} if not state["messages"][-1].tool_calls else {}

    model = weather_model()
    agent = react(lib, model, [add, slow_add], pre_model_hook=pre, post_model_hook=post)
    t.add("nodes", sorted(agent.get_graph().nodes))
    stream(t, "hooks", agent, inp, stream_mode="updates")
    t.add("model_saw", [[detail(m) for m in call] for call in model.seen])
    model = FakeToolModel(script=[AIMessage("plain", id="x1")])
    agent = react(lib, model, [], pre_model_hook=pre, post_model_hook=post)
    stream(t, "no_tools", agent, inp, stream_mode="updates")
    return t.items


@scenario
def react_agent_async(lib: Any) -> list[Any]:
    """astream / ainvoke with an async tool (awaited on the loop)."""
    t = Transcript()

    @tool
    async def aadd(a: int, b: int) -> int:
        """Add asynchronously."""
        await asyncio.sleep(0)
        return a + b

    model = FakeToolModel(script=[
        ai("", ("aadd", {"a": 1, "b": 2}, "c1"), ("aadd", {"a": 2, "b": 2}, "c2"), id="q1"),
        AIMessage("4 and 3", id="q2"),
    ])
    agent = react(lib, model, [aadd], checkpointer=lib.InMemorySaver())
    inp = {"messages": [HumanMessage("go", id="h1")]}

    async def main() -> None:
        async for item in agent.astream(inp, cfg("as1"), stream_mode="updates"):
            key = next(iter(item))
            t.add("astream", detail(item) if key != "tools" else key)
        state = await agent.aget_state(cfg("as1"))
        t.add("state", detail(state.values))
        model.index = 0
        t.add("ainvoke", detail(await agent.ainvoke(inp, cfg("as3"))))

    asyncio.run(main())
    record(t, "sync_invoke", agent.invoke, inp, cfg("as2"))
    return t.items
