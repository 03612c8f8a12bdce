"""More parity scenarios (issue 17, second pass): `@task`s called inside `StateGraph` nodes,
named task inputs in events, `messages` metadata, config metadata, join triggers, step order,
drawn graphs and LangChain events. Registered into `scenarios.SCENARIOS`.

Calls of one node run in parallel, so a scenario that streams them makes each call sleep a
different time (`LAG` apart): every call starts before any finishes, and they finish in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import operator
import threading
import time
from typing import Annotated, Any, Literal, TypedDict

from .harness import Transcript
from .scenarios import LAG, cfg, scenario
from .scenarios_func import good_and_flaky

MODES = ["updates", "values", "tasks", "checkpoints", "debug", "custom"]


class LogState(TypedDict):
    log: Annotated[list, operator.add]


async def _collect(agen: Any) -> list[Any]:
    return [item async for item in agen]


def _task_graph(lib: Any, calls: list[Any], *, is_async: bool, checkpointer: Any = None) -> Any:
    """A node fanning out to two parallel calls, then asking a question through a third."""

    @lib.task
    def square(x: int) -> int:
        time.sleep(LAG * (x + 1))  # square(0) finishes first
        calls.append(("square", x))
        lib.get_stream_writer()({"squared": x})
        return x * x

    @lib.task
    async def asquare(x: int) -> int:
        await asyncio.sleep(LAG * (x + 1))
        calls.append(("asquare", x))
        return x * x

    @lib.task
    def ask(total: int) -> Any:
        calls.append(("ask", total))
        return lib.interrupt({"total": total})

    def node(state: LogState) -> dict[str, Any]:
        futures = [square(i) for i in range(2)]
        squares = [f.result() for f in futures]
        return {"log": [*squares, ask(sum(squares)).result()]}

    async def anode(state: LogState) -> dict[str, Any]:
        squares = list(await asyncio.gather(*[asquare(i) for i in range(2)]))
        return {"log": [*squares, await ask(sum(squares))]}

    b = lib.StateGraph(LogState)
    b.add_node("work", anode if is_async else node)
    b.add_node("after", lambda state: {"log": ["after"]})
    b.add_edge(lib.START, "work")
    b.add_edge("work", "after")
    return b.compile(checkpointer=checkpointer)


@scenario
def more_task_in_node_sync(lib: Any) -> list[Any]:
    """@tasks called in a sync StateGraph node: parallel futures, every mode, an interrupt in a
    task and the resume (finished calls are not run again), state and history."""
    t = Transcript()
    calls: list[Any] = []
    g = _task_graph(lib, calls, is_async=False, checkpointer=lib.InMemorySaver())
    t.stream("leg1", g, {"log": []}, cfg("1"), stream_mode=MODES)
    t.state("state1", g, cfg("1"))
    t.add("calls1", sorted(calls))
    t.stream("leg2", g, lib.Command(resume=5), cfg("1"), stream_mode=MODES)
    t.add("calls2", sorted(calls))
    t.state("state2", g, cfg("1"))
    t.add("history", list(g.get_state_history(cfg("1"))))
    t.stream("subgraphs", g, {"log": []}, cfg("2"), stream_mode=["updates", "values"],
             subgraphs=True)
    t.call("no_checkpointer", _task_graph(lib, [], is_async=False).invoke, {"log": []})
    return t.items


@scenario
def more_task_in_node_async(lib: Any) -> list[Any]:
    """@tasks called in an async StateGraph node (gathered), interrupt and resume."""
    t = Transcript()
    calls: list[Any] = []
    g = _task_graph(lib, calls, is_async=True, checkpointer=lib.InMemorySaver())

    async def main() -> None:
        async for item in g.astream({"log": []}, cfg("1"),
                                    stream_mode=["updates", "values", "tasks"]):
            t.add("astream", item)
        t.add("state", await g.aget_state(cfg("1")))
        t.add("calls1", sorted(calls))
        async for item in g.astream(lib.Command(resume=7), cfg("1"),
                                    stream_mode=["updates", "values"]):
            t.add("resume", item)
        t.add("calls2", sorted(calls))
        t.add("ainvoke", await _task_graph(lib, [], is_async=True).ainvoke({"log": []}))

    asyncio.run(main())
    return t.items


@scenario
def more_task_in_node_failure(lib: Any) -> list[Any]:
    """A failing call fails its node; the resumed run does not re-run the finished call."""
    t = Transcript()
    good, flaky, calls, broken = good_and_flaky(lib)

    def node(state: LogState) -> dict[str, Any]:
        a, b = good(1), flaky(1)
        return {"log": [a.result(), b.result()]}

    builder = lib.StateGraph(LogState)
    builder.add_node("both", node)
    builder.add_edge(lib.START, "both")
    g = builder.compile(checkpointer=lib.InMemorySaver())
    modes = ["updates", "tasks", "values"]
    t.stream("fail", g, {"log": []}, cfg("1"), stream_mode=modes)
    t.state("failed_state", g, cfg("1"))
    broken["on"] = False
    t.stream("resume", g, None, cfg("1"), stream_mode=modes)
    t.add("calls", list(calls))
    return t.items


@scenario
def more_task_in_subgraph_node(lib: Any) -> list[Any]:
    """A call in a subgraph's node: namespaces with subgraphs=True, none without."""
    t = Transcript()

    @lib.task
    def tag(items: list) -> list:
        return [*items, "tagged"]

    def inner_node(state: LogState) -> dict[str, Any]:
        return {"log": tag(state["log"]).result()[-1:]}

    inner = lib.StateGraph(LogState)
    inner.add_node("inner_node", inner_node)
    inner.add_edge(lib.START, "inner_node")
    outer = lib.StateGraph(LogState)
    outer.add_node("sub", inner.compile())
    outer.add_edge(lib.START, "sub")
    g = outer.compile(checkpointer=lib.InMemorySaver())
    for subgraphs in (False, True):
        t.stream(f"subgraphs={subgraphs}", g, {"log": []}, cfg(f"s{subgraphs}"),
                 stream_mode=["updates", "values", "tasks"], subgraphs=subgraphs)
    return t.items


@scenario
def more_task_in_node_messages(lib: Any) -> list[Any]:
    """A streaming chat model called inside a task called by a node (sync and async): each
    token once, with LangGraph's metadata (the call's node, path and checkpoint_ns)."""
    from .scenarios_llm import _inputs, _talker_class

    t = Transcript()
    model = _talker_class()().with_config(tags=["tagged"])

    @lib.task
    def talk(messages: list) -> Any:
        return model.invoke(messages)

    @lib.task
    async def atalk(messages: list) -> Any:
        return await model.ainvoke(messages)

    def node(state: Any) -> dict[str, Any]:
        return {"messages": [talk(state["messages"]).result()]}

    async def anode(state: Any) -> dict[str, Any]:
        return {"messages": [await atalk(state["messages"])]}

    for label, fn in (("sync", node), ("async", anode)):
        b = lib.StateGraph(lib.MessagesState)
        b.add_node("chat", fn)
        b.add_edge(lib.START, "chat")
        g = b.compile(checkpointer=lib.InMemorySaver())
        t.call(f"{label}_astream", lambda g=g: asyncio.run(_collect(g.astream(
            _inputs(), cfg(label), stream_mode=["messages", "updates"], subgraphs=True))))
        if label == "sync":
            t.stream("sync_stream", g, _inputs(), cfg("s2"), stream_mode="messages")
    return t.items


# --- timeout= (LangGraph 1.2's TimeoutPolicy) ----------------------------------------------------


def _timeouts(lib: Any) -> tuple[Any, Any, Any]:
    """TimeoutPolicy and NodeTimeoutError (not in the shared `load_lib`), and Runtime."""
    import importlib

    if lib.name == "lg":
        types, errors = importlib.import_module("langgraph.types"), importlib.import_module(
            "langgraph.errors")
        runtime = importlib.import_module("langgraph.runtime").Runtime
    else:
        types = errors = importlib.import_module("engine")
        runtime = types.Runtime
    return types.TimeoutPolicy, errors.NodeTimeoutError, runtime


def _timeout_error(error: BaseException) -> Any:
    """A timeout error without its elapsed time (which differs from run to run)."""
    import re

    text = re.sub(r"elapsed: [0-9.]+s", "elapsed: <s>", str(error))
    fields = ("node", "kind", "timeout", "run_timeout", "idle_timeout")
    return (type(error).__name__, text, {f: getattr(error, f, None) for f in fields})


@scenario
def more_timeout_policies(lib: Any) -> list[Any]:
    """timeout= on @task, @entrypoint and add_node: sync refused, run and idle timeouts (custom
    chunks or heartbeats as progress), a caught timeout, a retried one, coercion."""
    from datetime import timedelta

    TimeoutPolicy, NodeTimeoutError, Runtime = _timeouts(lib)
    t = Transcript()
    t.call("coerce_number", TimeoutPolicy.coerce, 5)
    t.call("coerce_delta", TimeoutPolicy.coerce, TimeoutPolicy(idle_timeout=timedelta(seconds=2)))
    t.call("coerce_empty", TimeoutPolicy.coerce, TimeoutPolicy())
    t.call("coerce_negative", TimeoutPolicy.coerce, -1)
    t.call("coerce_refresh", TimeoutPolicy.coerce, TimeoutPolicy(idle_timeout=1, refresh_on="x"))
    t.call("sync_task", lambda: lib.task(timeout=1)(lambda x: x))
    t.call("sync_entrypoint", lambda: lib.entrypoint(timeout=1)(lambda x: x))
    b = lib.StateGraph(LogState)
    b.add_node("sync_node", lambda state: {}, timeout=1)
    b.add_edge(lib.START, "sync_node")
    t.call("sync_node", b.compile)

    @lib.task(timeout=0.1)
    async def slow(x: int) -> int:
        await asyncio.sleep(1)
        return x

    @lib.task(timeout=TimeoutPolicy(idle_timeout=0.25))
    async def chatty(x: int) -> int:
        writer = lib.get_stream_writer()
        for i in range(4):
            await asyncio.sleep(0.1)
            writer({"chatty": i})
        return x

    @lib.task(timeout=TimeoutPolicy(idle_timeout=0.25, refresh_on="heartbeat"))
    async def quiet(x: int, runtime: Runtime) -> int:
        writer = lib.get_stream_writer()
        for i in range(2):
            writer({"quiet": i})  # not progress with refresh_on="heartbeat"
            await asyncio.sleep(0.05)
        await asyncio.sleep(1)
        return x

    @lib.entrypoint(checkpointer=lib.InMemorySaver())
    async def flow(x: int) -> Any:
        out = [await chatty(x)]
        for fn in (slow, quiet):
            try:
                out.append(await fn(x))
            except NodeTimeoutError as error:
                out.append(_timeout_error(error))
        return out

    async def main() -> None:
        async for item in flow.astream(1, cfg("1"), stream_mode=["updates", "custom"]):
            t.add("flow", item)

    asyncio.run(main())

    attempts: list[int] = []

    async def flaky(state: LogState, runtime: Runtime) -> dict[str, Any]:
        attempts.append(len(attempts))
        for _ in range(3):
            await asyncio.sleep(0.1 if len(attempts) > 1 else 0.4)
            runtime.heartbeat()
        return {"log": [len(attempts)]}

    g = lib.StateGraph(LogState)
    g.add_node("flaky", flaky, timeout=TimeoutPolicy(idle_timeout=0.25),
               retry_policy=lib.RetryPolicy(initial_interval=0.01, jitter=False))
    g.add_node("capped", slow_node, timeout=0.1)
    g.add_edge(lib.START, "flaky")
    g.add_edge("flaky", "capped")
    graph = g.compile()

    async def run_graph() -> None:
        try:
            async for item in graph.astream({"log": []}, stream_mode="updates"):
                t.add("graph", item)
        except NodeTimeoutError as error:
            t.add("graph_error", _timeout_error(error))

    asyncio.run(run_graph())
    t.add("attempts", list(attempts))
    return t.items


async def slow_node(state: LogState) -> dict[str, Any]:
    await asyncio.sleep(1)
    return {"log": ["never"]}


# --- events: a called task's input by name ------------------------------------------------------


def _task_events(events: list[dict[str, Any]], names: tuple[str, ...]) -> list[Any]:
    return [(e["event"], e["name"], e["data"]) for e in events if e["name"] in names]


@scenario
def more_task_events_named_input(lib: Any) -> list[Any]:
    """astream_events shows a called task's arguments by name, defaults filled in, `*args` as
    a tuple and `**kwargs` spread (in an entrypoint and in a graph's node)."""
    t = Transcript()

    @lib.task
    def add(a: int, b: int = 2, *rest: int, k: int = 1, **extra: Any) -> int:
        return a + b + sum(rest) + k

    @lib.task
    def scaled(x: int, *, writer: Any = None, store: Any = None) -> int:
        return x * 10

    @lib.entrypoint()
    def flow(x: int) -> list[int]:
        return [add(x, 3).result(), add(x, k=5).result(), add(1, 2, 3, 4, k=2, z=1).result(),
                scaled(x).result()]

    def node(state: LogState) -> dict[str, Any]:
        return {"log": [add(7).result()]}

    b = lib.StateGraph(LogState)
    b.add_node("node", node)
    b.add_edge(lib.START, "node")
    graph = b.compile()
    names = ("add", "scaled")
    t.call("entrypoint", lambda: _task_events(asyncio.run(_collect(
        flow.astream_events(1, version="v2"))), names))
    t.call("graph", lambda: _task_events(asyncio.run(_collect(
        graph.astream_events({"log": []}, version="v2"))), names))
    return t.items


# --- messages metadata with LangChain's fake chat models -----------------------------------------


def _fake_models() -> dict[str, Any]:
    from langchain_core.language_models.fake_chat_models import (
        FakeListChatModel,
        FakeMessagesListChatModel,
        GenericFakeChatModel,
        ParrotFakeChatModel,
    )
    from langchain_core.messages import AIMessage

    return {
        "generic": lambda: GenericFakeChatModel(
            messages=iter([AIMessage(content="hello big world", id="m1")])),
        "fakelist": lambda: FakeListChatModel(responses=["hi there"]),
        "msglist": lambda: FakeMessagesListChatModel(responses=[AIMessage(content="yo", id="m2")]),
        "parrot": lambda: ParrotFakeChatModel(),  # answers with its input message (same id)
    }


@scenario
def more_messages_fake_models(lib: Any) -> list[Any]:
    """Every fake chat model LangChain ships, in sync and async nodes and in a task: the whole
    `messages` metadata (ls_* keys included) and the chat model events; an answer echoing an
    input message is not streamed; a message a task returns streams once, as the task's."""
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.runnables import RunnableConfig

    t = Transcript()
    inp = {"messages": [HumanMessage(content="hi", id="h1")]}
    for name, make in _fake_models().items():
        def node(state: Any, config: RunnableConfig, make: Any = make) -> dict[str, Any]:
            return {"messages": [make().invoke(state["messages"], config)]}

        async def anode(state: Any, make: Any = make) -> dict[str, Any]:
            return {"messages": [await make().ainvoke(state["messages"])]}

        for label, fn in (("sync", node), ("async", anode)):
            b = lib.StateGraph(lib.MessagesState)
            b.add_node("n", fn)
            b.add_edge(lib.START, "n")
            g = b.compile()
            if label == "sync":
                t.stream(f"{name}_stream", g, inp, {"metadata": {"user": 1}}, stream_mode="messages")
            t.call(f"{name}_{label}_astream", lambda g=g: asyncio.run(_collect(
                g.astream(inp, stream_mode="messages"))))
            t.call(f"{name}_{label}_events", lambda g=g: [
                (e["event"], e["name"], e["metadata"]) for e in asyncio.run(_collect(
                    g.astream_events(inp, version="v2"))) if "chat_model" in e["event"]])

    @lib.task
    def answer(text: str) -> Any:
        return AIMessage(content=f"re {text}", id="t1")

    @lib.entrypoint()
    def flow(text: str) -> dict[str, Any]:
        return {"messages": [answer(text).result()]}

    t.stream("task_returns_message", flow, "hey", stream_mode="messages")
    return t.items


# --- config metadata ----------------------------------------------------------------------------


class XState(TypedDict):
    x: int


@scenario
def more_config_metadata(lib: Any) -> list[Any]:
    """A node's config (metadata and configurable) with and without a checkpointer, in a
    subgraph too: LangGraph copies thread_id, assistant_id, graph_id... into the metadata."""
    from langchain_core.messages import HumanMessage
    from langchain_core.runnables import RunnableConfig

    from .scenarios_llm import _talker_class

    t = Transcript()
    seen: list[Any] = []

    def node(state: XState, config: RunnableConfig) -> dict[str, Any]:
        conf = {k: v for k, v in config["configurable"].items() if not k.startswith("__")}
        if not state["x"]:  # without a saver graphrun keeps one checkpoint id for the run
            conf.pop("checkpoint_map")
        seen.append((dict(config["metadata"]), conf))
        return {"x": state["x"] + 1}

    inner = lib.StateGraph(XState)
    inner.add_node("inner", node)
    inner.add_edge(lib.START, "inner")
    b = lib.StateGraph(XState)
    b.add_node("sub", inner.compile())
    b.add_node("outer", node)
    b.add_edge(lib.START, "sub")
    b.add_edge("sub", "outer")
    ids = {"thread_id": "t1", "assistant_id": "a1", "graph_id": "g1", "user": "u"}
    for label, saver in (("none", None), ("saver", lib.InMemorySaver())):
        g = b.compile(checkpointer=saver)
        start = 0 if saver is None else 1
        g.invoke({"x": start}, {"configurable": dict(ids), "metadata": {"m": 1}})
        g.invoke({"x": start}, {"configurable": {"thread_id": "t2"}, "metadata": {"thread_id": "own"}})
        if saver is None:
            g.invoke({"x": start}, {"configurable": {"user": "u"}})
        t.add(label, list(seen))
        seen.clear()

    model = _talker_class()()

    def talk(state: Any, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"], config)]}

    m = lib.StateGraph(lib.MessagesState)
    m.add_node("talk", talk)
    m.add_edge(lib.START, "talk")
    graph = m.compile()
    inp = {"messages": [HumanMessage(content="hi", id="h1")]}
    t.stream("messages", graph, inp, {"configurable": {"thread_id": "t3"}}, stream_mode="messages")
    t.call("events", lambda: [(e["event"], e["name"], e["metadata"]) for e in asyncio.run(
        _collect(graph.astream_events(inp, {"configurable": {"thread_id": "t3"}}, version="v2")))])
    return t.items


# --- a join node's triggers ---------------------------------------------------------------------


@scenario
def more_join_triggers(lib: Any) -> list[Any]:
    """A node behind `add_edge([a, b], c)` lists all its trigger channels, sorted, whichever
    fired (tasks mode, `langgraph_triggers`), alone or with a plain edge too."""
    from langchain_core.runnables import RunnableConfig

    t = Transcript()

    def logger(name: str, lag: float) -> Any:
        def node(state: LogState, config: RunnableConfig) -> dict[str, Any]:
            time.sleep(lag)
            return {"log": [[name, list(config["metadata"]["langgraph_triggers"])]]}

        return node

    b = lib.StateGraph(LogState)
    for index, name in enumerate("abzcd"):
        b.add_node(name, logger(name, LAG * (index % 3)))
    b.add_edge(lib.START, "a")
    b.add_edge(lib.START, "b")
    b.add_edge(lib.START, "z")
    b.add_edge(["a", "b"], "c")
    b.add_edge("z", "c")
    b.add_edge(["a", "z"], "d")
    g = b.compile(checkpointer=lib.InMemorySaver())
    t.stream("stream", g, {"log": []}, cfg("1"), stream_mode=["tasks", "updates"])
    t.state("state", g, cfg("1"))
    return t.items


# --- the order of a step's tasks ----------------------------------------------------------------


@scenario
def more_step_order(lib: Any) -> list[Any]:
    """Nodes added out of name order (and Sends): a step's tasks start, finish and show in
    checkpoint payloads in name order (Sends first); a snapshot's `next` keeps insertion order."""
    t = Transcript()

    def make(name: str, is_async: bool) -> Any:
        def node(state: LogState) -> dict[str, Any]:
            return {"log": [name]}

        async def anode(state: LogState) -> dict[str, Any]:
            return {"log": [name]}

        return anode if is_async else node

    def build(is_async: bool, checkpointer: Any = None, **kw: Any) -> Any:
        b = lib.StateGraph(LogState)
        for name in ("zeta", "alpha", "mid", "beta", "worker"):
            b.add_node(name, make(name, is_async))
        for name in ("mid", "zeta", "alpha"):
            b.add_edge(lib.START, name)
        b.add_conditional_edges(lib.START, lambda s: [lib.Send("worker", {"log": [i]})
                                                      for i in range(2)])
        b.add_edge("zeta", "beta")
        return b.compile(checkpointer=checkpointer, **kw)

    modes = ["tasks", "updates", "values", "debug", "checkpoints"]
    # sync nodes of one step run in threads: they finish in any order; they start in order
    for mode, chunk in build(False).stream({"log": []}, stream_mode=["tasks", "values"]):
        if mode == "values" or "input" in chunk:
            t.add("sync", (mode, chunk))
    graph = build(True, lib.InMemorySaver())
    t.call("async", lambda: asyncio.run(_collect(graph.astream({"log": []}, cfg("1"),
                                                                stream_mode=modes))))
    paused = build(False, lib.InMemorySaver(), interrupt_before=["zeta", "alpha", "mid"])
    t.call("paused", paused.invoke, {"log": []}, cfg("2"))
    t.state("paused_state", paused, cfg("2"))
    return t.items


# --- a Command on a thread without checkpoints (issue 18) --------------------------------------


class CountState(TypedDict):
    x: int
    log: Annotated[list, operator.add]


@scenario
def more_fresh_thread_command(lib: Any) -> list[Any]:
    """`Command(update, goto)` on a new thread starts it: the update is applied (twice through a
    reducer: before the input checkpoint and by START), the goto runs with START's edge."""
    t = Transcript()
    b = lib.StateGraph(CountState)
    for name in "abc":
        b.add_node(name, lambda s, name=name: {"log": [name], "x": s["x"] + 1})
    b.add_edge(lib.START, "a")
    b.add_edge("a", "b")
    b.add_edge("b", "c")
    g = b.compile(checkpointer=lib.InMemorySaver())
    command = lib.Command(update={"x": 9, "log": ["z"]}, goto="c")
    t.stream("stream", g, command, cfg("1"), stream_mode=["values", "checkpoints"])
    t.state("state", g, cfg("1"))
    t.call("history", lambda: [(h.metadata, h.values, h.next)
                               for h in g.get_state_history(cfg("1"))])
    return t.items


# --- routers in events (issue 18) ----------------------------------------------------------------


@scenario
def more_router_events(lib: Any) -> list[Any]:
    """astream_events v2 shows each conditional-edge router as a chain run inside its node, after
    the node's edge writes (`seq:step:N`), with the node's metadata, its local state and route."""
    def route(state: CountState) -> str:
        return "left" if state["x"] % 2 else "right"

    b = lib.StateGraph(CountState)
    for name in ("start", "left", "right"):
        b.add_node(name, lambda s, name=name: {"log": [name]})
    b.add_edge(lib.START, "start")
    b.add_edge("start", "left")
    b.add_conditional_edges("start", route, ["left", "right"])
    b.add_conditional_edges("start", lambda s: lib.END)
    graph = b.compile()
    t = Transcript()
    t.call("events", lambda: [
        (e["event"], e["name"], e["tags"], e["metadata"], e["data"], e["run_id"], e["parent_ids"])
        for e in asyncio.run(_collect(graph.astream_events({"x": 1, "log": []}, version="v2")))
    ])
    return t.items


# --- a cancelled run of sync nodes (issue 18) ------------------------------------------------------


@scenario
def more_cancel_sync_step(lib: Any) -> list[Any]:
    """astream of sync nodes cancelled while one task of a step runs: finished steps and the
    step's finished sibling stay saved; the task still running saves a cancellation, not its
    writes, and the step is not applied."""
    fast_done, release = threading.Event(), threading.Event()

    def a(state: LogState) -> dict[str, Any]:
        return {"log": ["a"]}

    def fast(state: LogState) -> dict[str, Any]:
        fast_done.set()
        return {"log": ["fast"]}

    def slow(state: LogState) -> dict[str, Any]:
        release.wait(10)
        return {"log": ["slow"]}

    b = lib.StateGraph(LogState)
    for name, fn in (("a", a), ("fast", fast), ("slow", slow)):
        b.add_node(name, fn)
    b.add_edge(lib.START, "a")
    b.add_edge("a", "fast")
    b.add_edge("a", "slow")
    b.add_edge("slow", "a")
    graph = b.compile(checkpointer=lib.InMemorySaver())

    async def cancelled() -> None:
        consumer = asyncio.ensure_future(_collect(graph.astream({"log": []}, cfg("1"))))
        while not fast_done.is_set():
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # fast's writes are handed over
        consumer.cancel()
        threading.Timer(0.3, release.set).start()  # slow finishes after the cancel
        with contextlib.suppress(asyncio.CancelledError):
            await consumer
        await asyncio.sleep(0.1)

    asyncio.run(cancelled())
    state = graph.get_state(cfg("1"))
    return [state.values, state.next, state.metadata["step"],
            [(t.name, t.result, t.error is not None) for t in state.tasks]]


# --- get_graph() ----------------------------------------------------------------------------------


def _drawn(graph: Any, xray: Any) -> Any:
    """`get_graph(xray=...).to_json()`, each node's data naming its runnable's class path as
    LangGraph's does (issue 27)."""
    return graph.get_graph(xray=xray).to_json()


def _shapes(lib: Any) -> Any:
    def f(state: LogState) -> dict[str, Any]:
        return {}

    def route(state: LogState) -> Literal["b", "__end__"]:
        return "b"

    def command(state: LogState) -> lib.Command[Literal["b", "c"]]:
        return lib.Command(goto="b")

    def new(*names: str, **kw: Any) -> Any:
        b = lib.StateGraph(LogState)
        for name in names:
            b.add_node(name, f, **kw.get(name, {}))
        return b

    b = new("a", "b")
    b.add_edge(lib.START, "a")
    b.add_edge("a", "b")
    yield "dead_end", b.compile()
    b = new("a", "b", "c", a={"metadata": {"k": 1}})
    b.add_edge(lib.START, "a")
    b.add_conditional_edges("a", lambda s: "b", {"x": "b", "y": lib.END})
    b.add_edge("b", "c")
    yield "path_map", b.compile(interrupt_before=["b"], interrupt_after=["b", "c"])
    b = new("a", "b")
    b.add_edge(lib.START, "a")
    b.add_conditional_edges("a", lambda s: "b")
    yield "unknown_ends", b.compile()
    b = new("a", "b")
    b.add_edge(lib.START, "a")
    b.add_conditional_edges("a", route)
    yield "literal_ends", b.compile()
    b = new("a", "b", "c")
    b.add_edge(lib.START, "a")
    b.add_edge(lib.START, "b")
    b.add_edge(["a", "b"], "c")
    yield "join", b.compile()
    b = lib.StateGraph(LogState)
    b.add_node("a", command)
    b.add_node("b", f)
    b.add_node("c", f, defer=True)
    b.add_edge(lib.START, "a")
    b.add_edge("b", lib.END)
    yield "command_and_defer", b.compile()
    b = new("a", "w")
    b.add_conditional_edges(lib.START, lambda s: [lib.Send("w", s)])
    b.add_edge(lib.START, "a")
    b.add_edge("w", "a")
    yield "send", b.compile()
    b = new("a", "b")
    b.add_edge(lib.START, "a")
    b.add_edge("a", "b")
    b.add_conditional_edges("b", lambda s: "a", ["a", lib.END])
    yield "cycle", b.compile()
    inner = new("i1", "i2")
    inner.add_edge(lib.START, "i1")
    inner.add_conditional_edges("i1", lambda s: "i2", {"go": "i2", "stop": lib.END})
    deep = new("d1")
    deep.add_node("nested", inner.compile())
    deep.add_edge(lib.START, "d1")
    deep.add_edge("d1", "nested")
    b = new("z")
    b.add_node("sub", deep.compile())
    b.add_edge(lib.START, "sub")
    b.add_edge("sub", "z")
    yield "subgraphs", b.compile()

    @lib.entrypoint()
    def flow(x: int) -> int:
        return x

    yield "entrypoint", flow


@scenario
def more_get_graph(lib: Any) -> list[Any]:
    """get_graph().to_json() for several shapes, with xray False, 1, 2 and True."""
    t = Transcript()
    for name, graph in _shapes(lib):
        for xray in (False, 1, 2, True):
            t.call(f"{name}_xray={xray}", _drawn, graph, xray)
    return t.items


# --- a subgraph's parallel sync nodes under live stream modes ---------------------------------


def _team_graph(lib: Any, checkpointer: Any = None) -> Any:
    """`team` is a subgraph whose two sync nodes run in parallel, one 6x slower."""

    def quick(state: LogState) -> dict[str, Any]:
        time.sleep(LAG / 2)
        lib.get_stream_writer()({"done": "quick"})
        return {"log": ["quick"]}

    def long(state: LogState) -> dict[str, Any]:
        time.sleep(LAG * 3)
        lib.get_stream_writer()({"done": "long"})
        return {"log": ["long"]}

    inner = lib.StateGraph(LogState)
    inner.add_node("quick", quick)
    inner.add_node("long", long)
    inner.add_edge(lib.START, "quick")
    inner.add_edge(lib.START, "long")
    outer = lib.StateGraph(LogState)
    outer.add_node("team", inner.compile())
    outer.add_edge(lib.START, "team")
    return outer.compile(checkpointer=checkpointer)


def _unordered(items: list[Any]) -> list[Any]:
    """A stream's items whatever order parallel tasks finished in (one namespace id per run,
    so sorting the raw items is the same on both libraries)."""
    return sorted(items, key=repr)


@scenario
def more_subgraph_parallel_sync_live(lib: Any) -> list[Any]:
    """A subgraph's parallel sync nodes streamed with `custom`/`messages`: the whole run
    streams (graphrun's stream ended when the first inner task finished), and is saved."""
    t = Transcript()
    for saver in (False, True):
        for subgraphs in (False, True):
            g = _team_graph(lib, lib.InMemorySaver() if saver else None)
            label = f"saver={saver},subgraphs={subgraphs}"
            t.add(f"stream {label}", _unordered(list(g.stream(
                {"log": []}, cfg("s"), stream_mode=["updates", "custom"], subgraphs=subgraphs))))
            t.add(f"astream {label}", _unordered(asyncio.run(_collect(g.astream(
                {"log": []}, cfg("a"), stream_mode=["updates", "messages"], subgraphs=subgraphs)))))
            if saver:
                t.add(f"state {label}", g.get_state(cfg("s")).values)
    t.add("invoke", _team_graph(lib).invoke({"log": []}))
    return t.items


# --- engine differences found by the checkpoint fuzzer (issues 16, 17) ------------------------


def _saved(saver: Any, config: Any) -> list[Any]:
    """Each checkpoint's source, step and pending writes (task ids left out)."""
    return [
        (t.metadata["source"], t.metadata["step"],
         sorted((w[1], repr(w[2])) for w in t.pending_writes))
        for t in saver.list(config)
    ]


def _tasks(graph: Any, config: Any) -> list[Any]:
    return [[(task.name, task.result) for task in h.tasks] for h in graph.get_state_history(config)]


@scenario
def more_update_state_pending_writes(lib: Any) -> list[Any]:
    """`update_state` saves its writes as pending writes of the checkpoint it updates when that
    is the thread's latest (under the next task's id when the node is next), not otherwise."""
    t = Transcript()
    b = lib.StateGraph(LogState)
    for name in "ab":
        b.add_node(name, lambda s, name=name: {"log": [name]})
    b.add_edge(lib.START, "a")
    b.add_edge("a", "b")
    saver = lib.InMemorySaver()
    g = b.compile(checkpointer=saver, interrupt_before=["b"])
    t.call("run", g.invoke, {"log": []}, cfg("1"))
    t.call("as_next", lambda: bool(g.update_state(cfg("1"), {"log": ["u"]}, as_node="b")))
    t.call("as_other", lambda: bool(g.update_state(cfg("1"), {"log": ["v"]}, as_node="a")))
    old = list(g.get_state_history(cfg("1")))[-1].config
    t.call("older", lambda: bool(g.update_state(old, {"log": ["w"]}, as_node="a")))
    t.call("saved", _saved, saver, cfg("1"))
    t.call("tasks", _tasks, g, cfg("1"))
    return t.items


def _checkpoints(saver: Any, config: Any) -> list[Any]:
    """Each checkpoint's source, step, log and pending writes to `log` (bookkeeping left out)."""
    return [
        (t.metadata["source"], t.metadata["step"], t.checkpoint["channel_values"].get("log"),
         sorted(repr(w[2]) for w in t.pending_writes if w[1] == "log"))
        for t in saver.list(config)
    ]


@scenario
def more_time_travel_forks(lib: Any) -> list[Any]:
    """From an explicit checkpoint id, a replay or `Command(goto)` writes a "fork" checkpoint
    first (also from the latest one, unless an update made it); a resume does not."""
    t = Transcript()

    def ask(s: Any) -> Any:
        return {"log": [lib.interrupt("q")]}

    b = lib.StateGraph(LogState)
    for name in "abc":
        b.add_node(name, lambda s, name=name: {"log": [name]})
    b.add_node("q", ask)
    b.add_edge(lib.START, "a")
    b.add_edge("a", "q")
    b.add_edge("q", "b")
    saver = lib.InMemorySaver()
    g = b.compile(checkpointer=saver)
    runs = {
        "goto_latest": lambda h: g.invoke(lib.Command(goto="c"), h[0].config),
        "goto_older": lambda h: g.invoke(lib.Command(goto="c"), h[1].config),
        "replay_latest": lambda h: g.invoke(None, h[0].config),
        "resume_latest": lambda h: g.invoke(lib.Command(resume="r"), h[0].config),
        "goto_update": lambda h: g.invoke(
            lib.Command(goto="c"), g.update_state(h[0].config, {"log": ["u"]}, as_node="a")
        ),
    }
    for thread, run in runs.items():
        g.invoke({"log": []}, cfg(thread))
        t.call(thread, lambda: run(list(g.get_state_history(cfg(thread))))["log"])
        t.call(f"{thread}_saved", _checkpoints, saver, cfg(thread))
    return t.items


@scenario
def more_invoke_without_values(lib: Any) -> list[Any]:
    """`invoke` returns None when no `values` chunk came: empty input stopped by a static
    interrupt, or nodes that write nothing; the values once a step or a resume gave some."""
    t = Transcript()
    for before in (["a"], ["b"], []):
        b = lib.StateGraph(CountState)
        b.add_node("a", lambda s: {})
        b.add_node("b", lambda s: {"log": ["b"]})
        b.add_edge(lib.START, "a")
        b.add_edge("a", "b")
        g = b.compile(checkpointer=lib.InMemorySaver(), interrupt_before=before)
        t.call(f"{before}_empty", g.invoke, {}, cfg("1"))
        t.call(f"{before}_again", g.invoke, {}, cfg("1"))
        t.call(f"{before}_resume", g.invoke, None, cfg("1"))
        t.call(f"{before}_input", g.invoke, {"x": 1}, cfg("2"))
    return t.items


@scenario
def more_update_credits_last_node(lib: Any) -> list[Any]:
    """`update_state` without `as_node` credits the node that ran last, never an update: on a
    checkpoint an update made, the node before the update (here START, then `b`)."""
    t = Transcript()
    b = lib.StateGraph(LogState)
    for name in "ab":
        b.add_node(name, lambda s, name=name: {"log": [name]})
    b.add_edge(lib.START, "a")
    b.add_edge("a", "b")
    saver = lib.InMemorySaver()
    g = b.compile(checkpointer=saver)
    g.invoke({"log": []}, cfg("1"))
    first = list(g.get_state_history(cfg("1")))[-2].config  # before `a` ran
    t.call("as_a", lambda: bool(g.update_state(first, {"log": ["u"]}, as_node="a")))
    t.call("then", lambda: bool(g.update_state(cfg("1"), {"log": ["v"]})))
    t.state("state", g, cfg("1"))
    g.invoke({"log": []}, cfg("2"))
    t.call("as_a_at_end", lambda: bool(g.update_state(cfg("2"), {"log": ["u"]}, as_node="a")))
    t.call("then_at_end", lambda: bool(g.update_state(cfg("2"), {"log": ["v"]})))
    t.state("state_at_end", g, cfg("2"))
    g.invoke({"log": []}, cfg("3"))
    t.call("bulk_as_a", lambda: bool(
        g.bulk_update_state(cfg("3"), [[lib.StateUpdate({"log": ["u"]}, "a")]])
    ))
    t.call("then_after_bulk", lambda: bool(g.update_state(cfg("3"), {"log": ["v"]})))
    t.state("state_after_bulk", g, cfg("3"))
    return t.items


@scenario
def more_static_interrupt_on_send_target(lib: Any) -> list[Any]:
    """`interrupt_before` / `interrupt_after` on a node run by `Send`: the run stops there, and
    goes on with `invoke(None)`."""
    t = Transcript()
    for before, after in ((["w"], []), ([], ["w"])):
        b = lib.StateGraph(LogState)
        b.add_node("r", lambda s: {"log": ["r"]})
        b.add_node("w", lambda s: {"log": [f"w{s['i']}"]})
        b.add_edge(lib.START, "r")
        b.add_conditional_edges("r", lambda s: [lib.Send("w", {"i": i}) for i in range(2)])
        g = b.compile(
            checkpointer=lib.InMemorySaver(), interrupt_before=before, interrupt_after=after
        )
        label = f"{before}{after}"
        t.call(f"{label}_first", g.invoke, {"log": []}, cfg("1"))
        t.call(f"{label}_next", lambda: g.get_state(cfg("1")).next)
        t.call(f"{label}_then", g.invoke, None, cfg("1"))
        t.call(f"{label}_end", lambda: g.get_state(cfg("1")).next)
    return t.items


@scenario
def more_replay_answered_interrupt(lib: Any) -> list[Any]:
    """Replaying a checkpoint whose interrupt was answered asks again (the answer is not
    reused); a resume from that checkpoint's id takes the new answer."""
    t = Transcript()

    def ask(s: Any) -> Any:
        return {"log": [lib.interrupt("q")]}

    b = lib.StateGraph(LogState)
    b.add_node("a", lambda s: {"log": ["a"]})
    b.add_node("q", ask)
    b.add_edge(lib.START, "a")
    b.add_edge("a", "q")
    g = b.compile(checkpointer=lib.InMemorySaver())
    g.invoke({"log": []}, cfg("1"))
    g.invoke(lib.Command(resume="r"), cfg("1"))
    asked = list(g.get_state_history(cfg("1")))[1].config
    t.call("replay", lambda: sorted(g.invoke(None, asked)))
    t.call("values", lambda: g.get_state(cfg("1")).values)
    t.call("answer", lambda: g.invoke(lib.Command(resume="s"), cfg("1")))
    return t.items


# --- top-level config keys (issue 27) -------------------------------------------------------------


@scenario
def top_level_config_keys(lib: Any) -> list[Any]:
    """`invoke(x, {"thread_id": "t", "user": "u"})`: LangGraph moves the top-level ids into
    `configurable` (the thread's checkpoints and the node's config and metadata show them);
    None values are dropped; the default recursion limit is not 25."""
    from langchain_core.runnables import RunnableConfig

    t = Transcript()
    seen: list[Any] = []

    def node(state: XState, config: RunnableConfig) -> Any:
        conf = {k: v for k, v in config["configurable"].items()
                if not k.startswith("__") and k not in ("checkpoint_map", "checkpoint_ns")}
        seen.append((conf, config["metadata"].get("user"), config["metadata"].get("thread_id")))
        if state["x"] < 40:
            return lib.Command(update={"x": state["x"] + 1}, goto="node")
        return {"x": state["x"] + 1}

    b = lib.StateGraph(XState)
    b.add_node("node", node)
    b.add_edge(lib.START, "node")
    g = b.compile(checkpointer=lib.InMemorySaver())
    t.call("invoke", g.invoke, {"x": 0}, {"thread_id": "t", "user": "u", "skip": None,
                                          "tags": ["x"]})
    t.add("seen", seen[:2])
    t.state("state", g, {"configurable": {"thread_id": "t"}})
    t.call("history", lambda: [(h.metadata.get("user"), h.metadata["step"]) for h in
                               g.get_state_history({"configurable": {"thread_id": "t"}})][:3])
    return t.items


# --- one subgraph called twice in a node (issue 27) ----------------------------------------------


@scenario
def subgraph_called_twice_in_a_node(lib: Any) -> list[Any]:
    """Each call of the same compiled subgraph inside one node returns its own result: the
    k-th call (k > 0) runs under the namespace `node:<task id>|k`, streamed as such; an
    interrupt in the second call resumes there."""
    t = Transcript()

    def inc(state: XState) -> dict[str, Any]:
        if state["x"] > 100:
            return {"x": state["x"] + lib.interrupt("more?")}
        return {"x": state["x"] + 1}

    inner_builder = lib.StateGraph(XState)
    inner_builder.add_node("inc", inc)
    inner_builder.add_edge(lib.START, "inc")
    inner = inner_builder.compile()

    def twice(state: XState) -> dict[str, Any]:
        first = inner.invoke({"x": 10})
        second = inner.invoke({"x": 20 + state["x"]})
        return {"x": first["x"] + second["x"]}

    outer_builder = lib.StateGraph(XState)
    outer_builder.add_node("twice", twice)
    outer_builder.add_edge(lib.START, "twice")
    for label, saver in (("none", None), ("saver", lib.InMemorySaver())):
        g = outer_builder.compile(checkpointer=saver)
        t.call(f"{label} invoke", g.invoke, {"x": 0}, cfg(f"{label}1"))
        t.stream(f"{label} stream", g, {"x": 0}, cfg(f"{label}2"), stream_mode="values",
                 subgraphs=True)
    g = outer_builder.compile(checkpointer=lib.InMemorySaver())
    t.stream("interrupted", g, {"x": 90}, cfg("i"), stream_mode="updates", subgraphs=True)
    t.stream("resumed", g, lib.Command(resume=5), cfg("i"), stream_mode="updates",
             subgraphs=True)
    t.state("state", g, cfg("i"))
    return t.items
