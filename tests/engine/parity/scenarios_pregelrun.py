"""Parity scenarios for LangGraph's pregel run behaviour (issue 27): what `debug` checkpoint
events and a subgraph's history show, how nodes are called, how tasks end when cancelled or
timed out. Registered into `scenarios.SCENARIOS`.
"""

from __future__ import annotations

import asyncio
import functools
import operator
import time
from collections import Counter
from typing import Annotated, Any, TypedDict
from unittest import mock

from .harness import Transcript
from .scenarios import cfg, scenario


class Msgs(TypedDict):
    messages: Annotated[list[str], operator.add]


class Out(TypedDict):
    out: Any


def _say(name: str) -> Any:
    def node(state: Msgs) -> dict[str, Any]:
        return {"messages": [f"entered {name}"]}

    return node


def _nested(lib: Any) -> Any:
    """outer (o1 -> mid) / mid (m1 -> inner) / inner (i1 -> i2), a checkpointer on the outer."""
    inner = lib.StateGraph(Msgs).add_node("i1", _say("i1")).add_node("i2", _say("i2"))
    inner = inner.add_edge(lib.START, "i1").add_edge("i1", "i2").compile()
    mid = lib.StateGraph(Msgs).add_node("m1", _say("m1")).add_node("mid_inner", inner)
    mid = mid.add_edge(lib.START, "m1").add_edge("m1", "mid_inner").compile()
    outer = lib.StateGraph(Msgs).add_node("o1", _say("o1")).add_node("outer_mid", mid)
    outer = outer.add_edge(lib.START, "o1").add_edge("o1", "outer_mid")
    return outer.compile(checkpointer=lib.InMemorySaver())


def _checkpoint_events(t: Transcript, label: str, graph: Any, config: Any, **kw: Any) -> list:
    namespaces: list[tuple] = []
    for ns, event in graph.stream({"messages": []}, config, stream_mode="debug",
                                  subgraphs=True, **kw):
        if event["type"] == "checkpoint":
            namespaces += [ns] if ns not in namespaces else []
            t.add(label, (ns, event["step"], event["payload"]))
    return namespaces


@scenario
def debug_checkpoints_exit_durability(lib: Any) -> list[Any]:
    """With durability "exit" no checkpoint is saved between steps: every `debug` checkpoint
    event's `parent_config` is None (LangGraph), root and subgraphs alike."""
    t = Transcript()
    g = _nested(lib)
    _checkpoint_events(t, "exit", g, cfg("1"), durability="exit")
    t.add("history", list(g.get_state_history(cfg("1"))))
    return t.items


@scenario
def subgraph_history_checkpoint_map(lib: Any) -> list[Any]:
    """A nested subgraph's `get_state_history` (and `get_state`) configs carry the
    `checkpoint_map` of its ancestors' checkpoints, as its `debug` events do."""
    t = Transcript()
    g = _nested(lib)
    for ns in _checkpoint_events(t, "sync", g, cfg("1"), durability="sync"):
        conf = {"configurable": {"thread_id": "1", "checkpoint_ns": "|".join(ns)}}
        t.add("history", list(g.get_state_history(conf)))
        t.state("state", g, conf)
    return t.items


@scenario
def mock_node_in_async_run(lib: Any) -> list[Any]:
    """A sync callable that is not a function (a `Mock`, which answers any attribute) runs as
    a sync node under `astream`: it is called, never awaited; forks re-run it."""
    t = Transcript()
    add_one = mock.Mock(side_effect=lambda _: 1)
    b = lib.StateGraph(Annotated[int, operator.add]).add_node("add_one", add_one)
    b.add_edge(lib.START, "add_one")
    b.add_conditional_edges("add_one", lambda n: "add_one" if n < 3 else lib.END)
    g = b.compile(checkpointer=lib.InMemorySaver())

    async def run() -> None:
        async for chunk in g.astream(1, cfg("1"), stream_mode=["values", "updates"]):
            t.add("astream", chunk)
        history = [s async for s in g.aget_state_history(cfg("1"))]
        t.add("history", history)
        for back in (0, 1, 2):  # forking from an earlier checkpoint runs the node again
            forked = [c async for c in g.astream(None, history[back].config)]
            t.add(f"fork {back}", forked)

    asyncio.run(run())
    t.add("calls", add_one.call_count)
    return t.items


def _ask_twice(lib: Any, calls: Counter, is_async: bool) -> tuple[Any, Any]:
    """Two `@task`s that interrupt; the second one only after a pause (still running when the
    first one's interrupt reaches their caller)."""
    def ask_a() -> None:
        calls["a"] += 1
        lib.interrupt("A")

    def ask_b() -> Any:
        calls["b"] += 1
        time.sleep(0.02)
        calls["b past its pause"] += 1
        return lib.interrupt("B")

    async def aask_a() -> None:
        ask_a()

    async def aask_b() -> Any:
        calls["b"] += 1
        await asyncio.sleep(0.02)
        calls["b past its pause"] += 1
        return lib.interrupt("B")

    if is_async:
        return lib.task(name="ask_a")(aask_a), lib.task(name="ask_b")(aask_b)
    return lib.task(ask_a), lib.task(ask_b)


def _answer_each(
    t: Transcript, lib: Any, graph: Any, first: Any, calls: Counter, is_async: bool = False
) -> None:
    """Run, then answer A, then B, recording the result and the calls made after each."""
    config = cfg("1")

    def run(value: Any) -> Any:
        if is_async:
            return asyncio.run(graph.ainvoke(value, config))
        return graph.invoke(value, config)

    t.add("first", (run(first), dict(calls)))
    for value, answer in (("A", "x"), ("B", "y")):
        found = [i for i in graph.get_state(config).interrupts if i.value == value]
        t.add(f"pending {value}", found)
        t.add(f"answer {value}", (run(lib.Command(resume={found[0].id: answer})), dict(calls)))


@scenario
def interrupted_call_lets_siblings_finish(lib: Any) -> list[Any]:
    """A `@task` call's interrupt reaching its caller (an entrypoint, sync or async, or a
    graph's node) lets the calls it started finish: their interrupts are saved, a call that
    finished with None is not run again on resume, one still interrupted is."""
    t = Transcript()
    calls: Counter = Counter()

    ask_a, ask_b = _ask_twice(lib, calls, is_async=False)

    @lib.entrypoint(checkpointer=lib.InMemorySaver())
    def flow(_: Any) -> list[Any]:
        a, b = ask_a(), ask_b()
        return [a.result(), b.result()]

    _answer_each(t, lib, flow, 1, calls)
    calls.clear()
    aask_a, aask_b = _ask_twice(lib, calls, is_async=True)

    @lib.entrypoint(checkpointer=lib.InMemorySaver())
    async def aflow(_: Any) -> list[Any]:
        a, b = aask_a(), aask_b()
        return [await a, await b]

    _answer_each(t, lib, aflow, 1, calls, is_async=True)
    calls.clear()

    def node(state: Out) -> dict[str, Any]:
        a, b = ask_a(), ask_b()
        return {"out": [a.result(), b.result()]}

    g = lib.StateGraph(Out).add_node("node", node).add_edge(lib.START, "node")
    _answer_each(t, lib, g.compile(checkpointer=lib.InMemorySaver()), {"out": None}, calls)
    return t.items


@scenario
def task_names(lib: Any) -> list[Any]:
    """A task's name: the one given, else its function's, a partial's function's, or the
    callable's class; bound methods too. Each shows as its own key in `updates`."""
    t = Transcript()

    class Greeter:
        def greet(self, value: str) -> str:
            return value + "greet"

        def __call__(self, value: str) -> str:
            return value + "|call"

    def add(suffix: str, value: str) -> str:
        return value + "|" + suffix

    tasks = [
        lib.task(Greeter().greet), lib.task(Greeter().greet, name="named_greet"),
        lib.task(functools.partial(add, "p1")), lib.task(functools.partial(add, "p2"), name="np"),
        lib.task(Greeter()), lib.task(Greeter(), name="named_call"),
    ]

    @lib.entrypoint()
    def flow(value: str) -> str:
        for each in tasks:
            value = each(value).result()
        return value

    t.stream("updates", flow, "", stream_mode="updates")
    return t.items


@scenario
def cancelled_call_future(lib: Any) -> list[Any]:
    """Cancelling an async `@task` call's future cancels the call: it saves nothing, so it
    runs (and is cancelled) again when the entrypoint resumes; the finished one does not."""
    t = Transcript()
    seen: Counter = Counter()

    @lib.task()
    async def mapper(value: int) -> str:
        seen["calls"] += 1
        try:
            await asyncio.sleep(0.01 if value == 0 else 5)
        except asyncio.CancelledError:
            seen["cancels"] += 1
            raise
        return str(value) * 2

    @lib.entrypoint(checkpointer=lib.InMemorySaver())
    async def flow(values: list[int]) -> list[str]:
        futures = [mapper(v) for v in values]
        await asyncio.sleep(0.05)  # both calls have started
        futures.pop().cancel()
        mapped = await asyncio.gather(*futures)
        return [m + lib.interrupt("question") for m in mapped]

    async def run() -> None:
        async for chunk in flow.astream([0, 1], cfg("1")):
            t.add("astream", chunk)
        t.add("counts", dict(seen))
        t.add("resume", await flow.ainvoke(lib.Command(resume="answer"), cfg("1")))
        t.add("counts", dict(seen))

    asyncio.run(run())
    return t.items


class Hello(TypedDict):
    hello: str


def _fast_and_slow(lib: Any, slow: Any, fast: Any, timeout: float) -> Any:
    b = lib.StateGraph(Hello).add_node("slow", slow).add_node("fast", fast)
    b.add_conditional_edges(lib.START, lambda _: ["slow", "fast"])
    g = b.compile(checkpointer=lib.InMemorySaver())
    g.step_timeout = timeout
    return g


@scenario
def step_timeout_async(lib: Any) -> list[Any]:
    """`step_timeout` on an async run: the clock runs while the consumer holds a chunk; past
    it the step's unfinished task is cancelled (saved as such) and `TimeoutError` raised."""
    t = Transcript()
    seen: list[str] = []

    async def slow(state: Hello) -> dict[str, Any]:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            seen.append("slow cancelled")
            raise
        return {"hello": "slow"}

    async def fast(state: Hello) -> dict[str, Any]:
        return {"hello": "fast"}

    g = _fast_and_slow(lib, slow, fast, 0.3)

    async def run() -> None:
        try:
            async for chunk in g.astream({"hello": "world"}, cfg("1"), stream_mode="updates"):
                t.add("chunk", chunk)
                await asyncio.sleep(0.4)  # past the step's deadline
        except Exception as e:  # noqa: BLE001 - the error is part of the transcript
            t.add("error", e)
        t.add("seen", seen)
        t.add("state", await g.aget_state(cfg("1")))

    asyncio.run(run())
    return t.items


@scenario
def step_timeout_sync(lib: Any) -> list[Any]:
    """`step_timeout` on a sync run: a node's thread cannot be stopped, so `TimeoutError` comes
    once it ends, its writes saved; the step is not applied."""
    t = Transcript()

    def slow(state: Hello) -> dict[str, Any]:
        time.sleep(0.5)
        return {"hello": "slow"}

    g = _fast_and_slow(lib, slow, lambda state: {"hello": "fast"}, 0.2)
    t.stream("stream", g, {"hello": "world"}, cfg("1"), stream_mode="updates")
    t.state("state", g, cfg("1"))
    return t.items


@scenario
def astream_events_filters(lib: Any) -> list[Any]:
    """`astream_events(version="v2")` with LangChain's include/exclude filters."""
    t = Transcript()
    g = lib.StateGraph(Hello).add_node("a", lambda s: {"hello": "a"})
    g = g.add_node("b", lambda s: {"hello": "b"}).add_edge(lib.START, "a").add_edge("a", "b")
    g = g.compile()
    filters = [
        {"include_names": ["LangGraph"]}, {"include_names": ["a"], "include_types": ["chain"]},
        {"include_types": ["chain"], "exclude_names": ["b", "LangGraph"]},
        {"include_tags": ["mine"]}, {"exclude_tags": ["mine"]}, {"include_names": None},
    ]

    async def run() -> None:
        for given in filters:
            events = g.astream_events({"hello": ""}, {"tags": ["mine"]}, version="v2", **given)
            t.add(repr(given), [(e["event"], e["name"]) async for e in events])

    asyncio.run(run())
    return t.items


@scenario
def astream_events_next_cancelled(lib: Any) -> list[Any]:
    """Cancelling the task awaiting the next filtered event cancels the run: its node is
    cancelled, then the exit checkpoint is saved in full before the cancellation ends."""
    t = Transcript()
    logs: list[str] = []
    started = asyncio.Event()

    class SlowPut(lib.InMemorySaver):  # type: ignore[misc, name-defined]
        async def aput(self, *args: Any) -> Any:
            logs.append("aput start")
            try:
                await asyncio.sleep(0.05)
                return await super().aput(*args)
            finally:
                logs.append("aput end")

    async def slow(state: Hello) -> None:
        logs.append("node start")
        started.set()
        try:
            await asyncio.sleep(5)
        finally:
            logs.append("node end")

    g = lib.StateGraph(Hello).add_node("slow", slow).add_edge(lib.START, "slow")
    g = g.compile(checkpointer=SlowPut())

    async def run() -> None:
        events = g.astream_events({"hello": ""}, cfg("1"), version="v2",
                                  include_names=["LangGraph"], durability="exit")
        t.add("first", (await events.__anext__())["event"])
        waiting = asyncio.create_task(events.__anext__())
        await started.wait()
        waiting.cancel()
        t.add("at cancel", list(logs))
        try:
            await waiting
        except asyncio.CancelledError:
            t.add("cancelled", list(logs))
        t.add("saved", (await g.aget_state(cfg("1"))).values)

    asyncio.run(run())
    return t.items
