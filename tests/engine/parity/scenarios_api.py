"""Parity scenarios for pregel API LangGraph's own tests use (issue 27): `max_concurrency`,
clearing node and task caches, a task's result when it writes one key twice, async routers
under `aupdate_state`, dict nodes, and a graph input that is a pydantic model defined in a
function. Registered into `scenarios.SCENARIOS`.

Concurrency is measured without timing: each task waits (with a generous deadline that only
guards against a hang) until as many tasks run as the limit allows, so the peak is exactly
the limit when it holds, and every task when it does not.
"""

from __future__ import annotations

import asyncio
import importlib
import operator
import threading
from typing import Annotated, Any, TypedDict

import pydantic

from .harness import Transcript
from .scenarios import cfg, scenario

_DEADLINE = 20.0  # seconds; only reached if the scenario is broken


def _cache_names(lib: Any) -> tuple[Any, Any]:
    """(InMemoryCache, CachePolicy) of the library under test."""
    if lib.name == "lg":
        cache = importlib.import_module("langgraph.cache.memory")
        return cache.InMemoryCache, importlib.import_module("langgraph.types").CachePolicy
    engine = importlib.import_module("engine")
    return importlib.import_module("checkpoints.cache").InMemoryCache, engine.CachePolicy


class _AsyncPeak:
    """An async node recording how many of its calls run at once; each call waits until
    `wanted` run together (or every call has started)."""

    def __init__(self, wanted: int) -> None:
        self.wanted, self.running, self.peak = wanted, 0, 0
        self.full = asyncio.Event()
        self.__name__ = "fan"

    async def __call__(self, state: Any) -> list[Any]:
        self.running += 1
        self.peak = max(self.peak, self.running)
        if self.running >= self.wanted:
            self.full.set()
        await asyncio.wait_for(self.full.wait(), _DEADLINE)
        await asyncio.sleep(0)
        self.running -= 1
        return [state]


class _SyncPeak:
    """`_AsyncPeak` for sync nodes, which run in threads."""

    def __init__(self, wanted: int) -> None:
        self.wanted, self.running, self.peak = wanted, 0, 0
        self.lock = threading.Lock()
        self.full = threading.Event()
        self.__name__ = "fan"

    def __call__(self, state: Any) -> list[Any]:
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
            if self.running >= self.wanted:
                self.full.set()
        assert self.full.wait(_DEADLINE), "the tasks never ran together"
        with self.lock:
            self.running -= 1
        return [state]


def _fan_graph(lib: Any, node: Any, count: int, checkpointer: Any = None) -> Any:
    builder = lib.StateGraph(Annotated[list, operator.add])
    builder.add_node("start", lambda state: ["start"])
    builder.add_node(node)
    builder.add_edge(lib.START, "start")
    builder.add_conditional_edges("start", lambda s: [lib.Send("fan", i) for i in range(count)])
    return builder.compile(checkpointer=checkpointer)


@scenario
def api_max_concurrency_async(lib: Any) -> list[Any]:
    """8 sends: all at once by default; 3 at a time with `max_concurrency=3`, also on a
    resumed checkpointed run."""
    t = Transcript()
    unbounded = _AsyncPeak(8)
    t.call("default", asyncio.run, _fan_graph(lib, unbounded, 8).ainvoke(["in"]))
    t.add("default_peak", unbounded.peak)
    bounded = _AsyncPeak(3)
    config = {"max_concurrency": 3}
    t.call("bounded", asyncio.run, _fan_graph(lib, bounded, 8).ainvoke(["in"], config))
    t.add("bounded_peak", bounded.peak)
    resumed = _AsyncPeak(3)
    graph = _fan_graph(lib, resumed, 8, lib.InMemorySaver())

    async def run() -> Any:
        thread = cfg("1", max_concurrency=3)
        await graph.ainvoke(["in"], thread, interrupt_before=["fan"])
        return await graph.ainvoke(None, thread)

    t.call("resumed", asyncio.run, run())
    t.add("resumed_peak", resumed.peak)
    return t.items


@scenario
def api_max_concurrency_sync(lib: Any) -> list[Any]:
    """Sync nodes in threads: 2 at a time with `max_concurrency=2`, streamed or invoked, with
    or without a checkpointer."""
    t = Transcript()
    for label, saver, stream in (("invoke", None, False), ("stream", lib.InMemorySaver(), True)):
        node = _SyncPeak(2)
        graph = _fan_graph(lib, node, 6, saver)
        config = cfg(label, max_concurrency=2)
        if stream:
            t.call(label, lambda: list(graph.stream(["in"], config, stream_mode="updates")))
        else:
            t.call(label, graph.invoke, ["in"], config)
        t.add(f"{label}_peak", node.peak)
    return t.items


class Doc(TypedDict):
    query: str
    docs: Annotated[list[str], operator.add]


@scenario
def api_clear_cache(lib: Any) -> list[Any]:
    """A cached node runs again after `clear_cache()` / `aclear_cache(nodes)`; a cached
    `@task` after `task.clear_cache(cache)`; a graph without a cache cannot clear one."""
    t = Transcript()
    InMemoryCache, CachePolicy = _cache_names(lib)
    calls: list[str] = []

    def search(state: Doc) -> dict[str, Any]:
        calls.append(state["query"])
        return {"docs": [f"doc for {state['query']}"]}

    builder = lib.StateGraph(Doc).add_node("search", search, cache_policy=CachePolicy())
    builder.add_edge(lib.START, "search")
    graph = builder.compile(cache=InMemoryCache())
    for label in ("first", "cached"):
        t.call(label, graph.invoke, {"query": "q", "docs": []})
    t.call("clear", graph.clear_cache)
    t.call("after_clear", graph.invoke, {"query": "q", "docs": []})
    t.call("aclear", asyncio.run, graph.aclear_cache(["search"]))
    t.call("after_aclear", graph.invoke, {"query": "q", "docs": []})
    t.add("calls", list(calls))
    t.call("no_cache", builder.compile().clear_cache)

    cache = InMemoryCache()

    @lib.task(cache_policy=CachePolicy())
    def double(x: int) -> int:
        calls.append(f"double {x}")
        return 2 * x

    @lib.entrypoint(cache=cache)
    def main(x: int) -> int:
        return double(x).result()

    calls.clear()
    for label in ("task_first", "task_cached"):
        t.call(label, main.invoke, 3)
    t.call("task_clear", double.clear_cache, cache)
    t.call("task_after_clear", main.invoke, 3)
    t.call("task_aclear", asyncio.run, double.aclear_cache(cache))
    t.call("task_after_aclear", main.invoke, 3)
    t.add("task_calls", list(calls))
    return t.items


class Joined(TypedDict):
    foo: Annotated[str, lambda a, b: ", ".join(x for x in (a, b) if x)]


@scenario
def api_one_key_written_twice(lib: Any) -> list[Any]:
    """A node's Command writing one key twice: `tasks`/`debug` results and the snapshots'
    task results show `{"$writes": [...]}`."""
    t = Transcript()

    def one(_: Joined) -> Any:
        return lib.Command(update=[("foo", "one.0"), ("foo", "one.1")])

    def two(_: Joined) -> dict[str, Any]:
        return {"foo": "two"}

    graph = (
        lib.StateGraph(Joined).add_node("one", one).add_node("two", two)
        .add_edge(lib.START, "one").add_edge("one", "two")
        .compile(checkpointer=lib.InMemorySaver())
    )
    t.stream("stream", graph, {"foo": "in"}, cfg("1"), stream_mode=["updates", "tasks"])
    t.add("history", [
        [(task.name, task.result) for task in snap.tasks]
        for snap in graph.get_state_history(cfg("1"))
    ])
    t.stream("debug", graph, {"foo": "in"}, cfg("2"), stream_mode="debug")
    return t.items


class Docs(TypedDict):
    docs: Annotated[list[str], operator.add]


@scenario
def api_async_router_update(lib: Any) -> list[Any]:
    """`aupdate_state(..., as_node=...)` routes through the node's async router."""
    t = Transcript()

    async def first(state: Docs) -> dict[str, Any]:
        return {"docs": ["first"]}

    async def second(state: Docs) -> dict[str, Any]:
        return {"docs": ["second"]}

    async def decide(state: Docs) -> str:
        await asyncio.sleep(0)
        return "second" if len(state["docs"]) > 1 else "__end__"

    graph = (
        lib.StateGraph(Docs).add_node("first", first).add_node("second", second)
        .add_edge(lib.START, "first")
        .add_conditional_edges("first", decide, {"second": "second", "__end__": lib.END})
        .compile(checkpointer=lib.InMemorySaver(), interrupt_after=["first"])
    )

    async def run() -> Any:
        await graph.ainvoke({"docs": []}, cfg("1"))
        await graph.aupdate_state(cfg("1"), {"docs": ["extra"]}, as_node="first")
        after = await graph.aget_state(cfg("1"))
        return after.values, after.next, await graph.ainvoke(None, cfg("1"))

    t.call("run", asyncio.run, run())
    return t.items


class Pair(TypedDict):
    a: int
    b: int


@scenario
def api_dict_node(lib: Any) -> list[Any]:
    """A node given as a dict: each entry runs on the state; the node returns their results."""
    t = Transcript()

    async def later(state: Pair) -> int:
        return state["a"] * 10

    graph = (
        lib.StateGraph(Pair).add_node("n", {"a": lambda s: s["a"] + 1, "b": later})
        .add_edge(lib.START, "n").compile()
    )
    t.call("ainvoke", asyncio.run, graph.ainvoke({"a": 1, "b": 0}))
    sync = (
        lib.StateGraph(Pair).add_node("n", {"a": lambda s: s["a"] + 1, "b": lambda s: 7})
        .add_edge(lib.START, "n").compile()
    )
    t.stream("stream", sync, {"a": 1, "b": 0}, stream_mode="updates")
    return t.items


@scenario
def api_local_pydantic_input(lib: Any) -> list[Any]:
    """A graph input that is a pydantic model defined in a function is checkpointed (it reads
    back as its fields) and the run resumes from it."""
    t = Transcript()

    class Query(pydantic.BaseModel):
        query: str

    class State(pydantic.BaseModel):
        query: str
        answer: str | None = None

    def ask(state: State) -> dict[str, Any]:
        return {"answer": f"answer to {state.query}"}

    graph = (
        lib.StateGraph(State, input_schema=Query).add_node("ask", ask)
        .add_edge(lib.START, "ask").compile(checkpointer=lib.InMemorySaver(),
                                            interrupt_before=["ask"])
    )
    t.call("first", graph.invoke, Query(query="why"), cfg("1"))
    t.call("resumed", graph.invoke, None, cfg("1"))
    t.add("history", [snap.values for snap in graph.get_state_history(cfg("1"))])
    return t.items
