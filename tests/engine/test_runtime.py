"""Node cache, durability modes, run context/Runtime, and the sync API over async graphs."""

from __future__ import annotations

import dataclasses
import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import anyio
import pytest

from checkpoints import InMemoryCache, InMemorySaver, SqliteSaver
from engine import START, CachePolicy, Runtime, StateGraph, get_runtime, get_store


class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def _cfg(thread: str = "1") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


# -- cache --------------------------------------------------------------------------------------


def test_cache_policy_reuses_writes_for_the_same_input() -> None:
    calls: list[int] = []

    def slow(s: S) -> dict:
        calls.append(s["x"])
        return {"x": s["x"] * 2}

    g = StateGraph(S)
    g.add_node("slow", slow, cache_policy=CachePolicy())
    g.add_edge(START, "slow")
    app = g.compile(cache=InMemoryCache())
    assert list(app.stream({"x": 2})) == [{"slow": {"x": 4}}]
    assert list(app.stream({"x": 2})) == [{"slow": {"x": 4}, "__metadata__": {"cached": True}}]
    assert app.invoke({"x": 3})["x"] == 6
    assert calls == [2, 3]


def test_cache_entries_expire_after_ttl() -> None:
    now = [0.0]
    cache = InMemoryCache(clock=lambda: now[0])
    calls: list[int] = []
    g = StateGraph(S)
    g.add_node("n", lambda s: calls.append(1) or {"x": 1}, cache_policy=CachePolicy(ttl=10))
    g.add_edge(START, "n")
    app = g.compile(cache=cache)
    app.invoke({"x": 0})
    app.invoke({"x": 0})
    now[0] = 11.0
    app.invoke({"x": 0})
    assert calls == [1, 1]


def test_cache_key_func_and_no_cache_without_compile_cache() -> None:
    calls: list[int] = []
    g = StateGraph(S)
    g.add_node("n", lambda s: calls.append(1) or {"x": 1},
               cache_policy=CachePolicy(key_func=lambda s: "same"))
    g.add_edge(START, "n")
    g.compile(cache=InMemoryCache()).invoke({"x": 1})
    g.compile(cache=InMemoryCache()).invoke({"x": 2})
    cached = g.compile(cache=InMemoryCache())
    cached.invoke({"x": 1})
    cached.invoke({"x": 2})  # key_func ignores the input: a hit
    g.compile().invoke({"x": 1})
    assert len(calls) == 4


# -- durability ---------------------------------------------------------------------------------


def _chain(saver: Any) -> Any:
    g = StateGraph(S)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    return g.compile(checkpointer=saver)


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_every_durability_ends_with_the_same_saved_state(tmp_path: Path, durability: str) -> None:
    with SqliteSaver(str(tmp_path / "d.sqlite")) as saver:
        app = _chain(saver)
        assert app.invoke({"x": 1}, _cfg(), durability=durability)["log"] == ["a", "b"]
    with SqliteSaver(str(tmp_path / "d.sqlite")) as reopened:
        state = _chain(reopened).get_state(_cfg())
        assert state.values == {"x": 1, "log": ["a", "b"]}
        history = list(_chain(reopened).get_state_history(_cfg()))
        # "exit" keeps only the last checkpoint (as LangGraph 1.2.22), the others every step.
        steps = [2] if durability == "exit" else [2, 1, 0, -1]
        assert [h.metadata["step"] for h in history] == steps


def test_exit_durability_writes_nothing_until_the_run_ends() -> None:
    saver = InMemorySaver()
    seen: list[Any] = []
    g = StateGraph(S)
    g.add_node("a", lambda s: {"log": ["a"]})
    def b(s: S, config: dict) -> dict:
        seen.append(saver.get_tuple(_cfg(config["configurable"]["thread_id"])))
        return {"log": ["b"]}

    g.add_node("b", b)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    app = g.compile(checkpointer=saver)
    app.invoke({"x": 1}, _cfg(), durability="exit")
    assert seen == [None]
    assert app.get_state(_cfg()).values["log"] == ["a", "b"]
    app.invoke({"x": 1}, _cfg("2"), durability="sync")
    assert seen[1] is not None and seen[1].metadata["step"] == 1


def _abc(saver: Any) -> Any:
    """a -> b -> c; b interrupts when x == 2, c fails when x == 3."""
    from engine import interrupt

    def b(s: S) -> dict:
        return {"log": [interrupt("q") if s["x"] == 2 else "b"]}

    def c(s: S) -> dict:
        if s["x"] == 3:
            raise ValueError("boom")
        return {"log": ["c"]}

    g = StateGraph(S)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", b)
    g.add_node("c", c)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    return g.compile(checkpointer=saver)


def _history(app: Any, thread: str) -> list[tuple[int, tuple[str, ...], bool]]:
    return [
        (h.metadata["step"], h.next, h.parent_config is not None)
        for h in app.get_state_history(_cfg(thread))
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("use_async", [False, True])
async def test_exit_durability_saves_the_last_checkpoint_of_each_invocation(
    use_async: bool,
) -> None:
    """Histories checked side by side with LangGraph 1.2.22: one checkpoint per invocation,
    its parent the one the invocation started from; an interrupted or failed run keeps its
    last checkpoint with the pending interrupt or error, and resumes from it."""
    from engine import Command

    app = _abc(InMemorySaver())

    async def run(value: Any, thread: str) -> Any:
        if use_async:
            return await app.ainvoke(value, _cfg(thread), durability="exit")
        return app.invoke(value, _cfg(thread), durability="exit")

    assert (await run({"x": 1}, "ok"))["log"] == ["a", "b", "c"]
    assert _history(app, "ok") == [(3, (), False)]
    await run({"x": 1}, "ok")
    assert _history(app, "ok") == [(8, (), True), (3, (), False)]

    await run({"x": 2}, "asks")
    assert _history(app, "asks") == [(1, ("b",), False)]
    [entry] = app.get_state_history(_cfg("asks"))
    assert [i.value for i in entry.interrupts] == ["q"]
    assert (await run(Command(resume="ans"), "asks"))["log"] == ["a", "ans", "c"]
    assert _history(app, "asks") == [(3, (), True), (1, ("b",), False)]

    with pytest.raises(ValueError):
        await run({"x": 3}, "fails")
    assert _history(app, "fails") == [(2, ("c",), False)]
    state = app.get_state(_cfg("fails"))
    assert state.values == {"x": 3, "log": ["a", "b"]}
    assert [t.error for t in state.tasks] == ["ValueError('boom')"]


def test_exit_durability_saves_a_subgraph_only_when_it_stops_early() -> None:
    """As LangGraph: a subgraph that finished saves nothing; one that was interrupted saves
    its last checkpoint, which the resume continues from."""
    from engine import Command, interrupt

    def sub_graph(ask: bool) -> Any:
        sub = StateGraph(S)
        sub.add_node("s1", lambda s: {"log": ["s1"]})
        sub.add_node("s2", lambda s: {"log": [interrupt("q") if ask else "s2"]})
        sub.add_edge(START, "s1")
        sub.add_edge("s1", "s2")
        g = StateGraph(S)
        g.add_node("sub", sub.compile())
        g.add_edge(START, "sub")
        return g

    saver = InMemorySaver()
    sub_graph(False).compile(checkpointer=saver).invoke({"x": 1}, _cfg("done"), durability="exit")
    assert [ns for ns, saved in saver.storage["done"].items() if saved] == [""]

    app = sub_graph(True).compile(checkpointer=saver)
    app.invoke({"x": 1}, _cfg("asks"), durability="exit")
    namespaces = sorted(ns for ns, saved in saver.storage["asks"].items() if saved)
    assert namespaces[0] == "" and [ns.split(":")[0] for ns in namespaces[1:]] == ["sub"]
    assert app.invoke(Command(resume="ans"), _cfg("asks"), durability="exit")["log"] == [
        "s1", "ans",
    ]


def test_bad_durability_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="durability"):
        _chain(InMemorySaver()).invoke({"x": 1}, _cfg(), durability="sometimes")


# -- context, runtime, store ---------------------------------------------------------------------


@dataclasses.dataclass
class Ctx:
    user: str


def test_context_reaches_nodes_through_runtime() -> None:
    def n(s: S, runtime: Runtime[Ctx]) -> dict:
        assert get_runtime().context is runtime.context
        return {"log": [runtime.context.user]}

    g = StateGraph(S, context_schema=Ctx)
    g.add_node("n", n)
    g.add_edge(START, "n")
    assert g.compile().invoke({"x": 0}, context=Ctx(user="ada"))["log"] == ["ada"]


def test_store_reaches_nodes_by_parameter_and_get_store() -> None:
    from checkpoints.store import InMemoryStore

    store = InMemoryStore()

    def n(s: S, store: Any) -> dict:
        store.put(("users",), "u1", {"name": "ada"})
        return {"log": [get_store().get(("users",), "u1").value["name"]]}

    g = StateGraph(S)
    g.add_node("n", n)
    g.add_edge(START, "n")
    assert g.compile(store=store).invoke({"x": 0})["log"] == ["ada"]
    assert store.get(("users",), "u1").value == {"name": "ada"}


# -- sync API over async nodes ---------------------------------------------------------------------


def test_sync_invoke_and_stream_run_async_nodes() -> None:
    async def a(s: S) -> dict:
        await anyio.sleep(0)
        return {"log": ["a"]}

    g = StateGraph(S)
    g.add_node("a", a)
    g.add_edge(START, "a")
    app = g.compile(checkpointer=InMemorySaver())
    assert app.invoke({"x": 1}, _cfg())["log"] == ["a"]
    assert list(app.stream({"x": 1}, _cfg("s"), stream_mode="updates")) == [{"a": {"log": ["a"]}}]


@pytest.mark.anyio
async def test_async_invoke_runs_sync_nodes_off_the_event_loop() -> None:
    import threading

    loop_thread = threading.get_ident()
    threads: list[int] = []
    g = StateGraph(S)
    g.add_node("a", lambda s: threads.append(threading.get_ident()) or {"log": ["a"]})
    g.add_edge(START, "a")
    assert (await g.compile().ainvoke({"x": 1}))["log"] == ["a"]
    assert threads and threads[0] != loop_thread
