"""Running a step's tasks: determinism under random completion order (threads and async),
failures, retries, deferred nodes, subgraph `Command.PARENT`, batch (SPEC §1; lg_facts §7, §8,
§13, §14, §17, §18).
"""

from __future__ import annotations

import asyncio
import operator
import random
import threading
import time
from contextlib import nullcontext
from typing import Annotated, Any, TypedDict

import anyio
import pytest

from checkpoints import InMemorySaver
from engine import END, START, Command, RetryPolicy, Send, StateGraph

SEEDS = [0, 1, 2, 3, 7]
ITEMS = "abcd"


class Work(TypedDict):
    out: Annotated[list, operator.add]


class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]


@pytest.fixture(params=["asyncio tasks", "anyio task group"])
def async_step(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run an async step both ways: the plain-asyncio fast path and the portable task group
    (the path other anyio back ends take), so both keep the same semantics."""
    import engine._tasks

    if request.param == "anyio task group":
        monkeypatch.setattr(engine._tasks, "_on_asyncio", lambda: False)
    return request.param


# -- deterministic writes under random completion order ----------------------------------------


def _random_graph(seed: int, finished: list[str], use_async: bool) -> Any:
    """start -> {zz, aa, mm} plus Sends to `work`, each sleeping a seeded random time."""
    rng = random.Random(seed)
    names = ["zz", "aa", "mm", *ITEMS]
    # a seeded shuffle of finish times 12 ms apart: the finish order is random, yet no two
    # tasks end so close that a loaded machine could swap them between `record` and the stream
    slots = rng.sample(range(len(names)), len(names))
    delays = {name: 0.012 * slot for name, slot in zip(names, slots, strict=True)}
    lock = threading.Lock()

    def record(name: str) -> None:
        with lock:
            finished.append(name)

    if use_async:
        def static(name: str):
            async def fn(s: Work) -> dict:
                await asyncio.sleep(delays[name])
                record(name)
                return {"out": [name]}
            return fn

        async def work(arg: dict) -> dict:
            await asyncio.sleep(delays[arg["item"]])
            record(arg["item"])
            return {"out": [arg["item"]]}
    else:
        def static(name: str):
            def fn(s: Work) -> dict:
                time.sleep(delays[name])
                record(name)
                return {"out": [name]}
            return fn

        def work(arg: dict) -> dict:
            time.sleep(delays[arg["item"]])
            record(arg["item"])
            return {"out": [arg["item"]]}

    g = StateGraph(Work)
    g.add_node("start", lambda s: None)
    g.add_node("work", work)
    for name in ("zz", "aa", "mm"):  # added out of name order on purpose
        g.add_node(name, static(name))
        g.add_edge("start", name)
    g.add_edge(START, "start")
    g.add_conditional_edges("start", lambda s: [Send("work", {"item": i}) for i in ITEMS])
    return g.compile()


EXPECTED_OUT = ["aa", "mm", "zz", "a", "b", "c", "d"]


def _update_names(chunks: list[dict]) -> list[str]:
    names = []
    for chunk in chunks:
        ((node, update),) = chunk.items()
        names.append(update["out"][0] if update else node)
    return names


@pytest.mark.parametrize("seed", SEEDS)
def test_write_order_is_deterministic_sync(seed: int) -> None:
    finished: list[str] = []
    app = _random_graph(seed, finished, use_async=False)
    chunks = list(app.stream({"out": []}, stream_mode="updates"))
    assert app.invoke({"out": []}) == {"out": EXPECTED_OUT}
    # the updates stream follows finish order; the state does not
    assert _update_names(chunks)[0] == "start"
    assert sorted(_update_names(chunks)[1:]) == sorted(EXPECTED_OUT)
    assert _update_names(chunks)[1:] == finished[:7]


@pytest.mark.anyio
@pytest.mark.parametrize("seed", SEEDS)
async def test_write_order_is_deterministic_async(seed: int, async_step: str) -> None:
    finished: list[str] = []
    app = _random_graph(seed, finished, use_async=True)
    chunks = [c async for c in app.astream({"out": []}, stream_mode="updates")]
    assert await app.ainvoke({"out": []}) == {"out": EXPECTED_OUT}
    assert sorted(_update_names(chunks)[1:]) == sorted(EXPECTED_OUT)
    assert _update_names(chunks)[1:] == finished[:7]


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_write_order_is_deterministic_sync_api_over_async_nodes(seed: int) -> None:
    app = _random_graph(seed, [], use_async=True)
    assert app.invoke({"out": []}) == {"out": EXPECTED_OUT}


@pytest.mark.parametrize("seed", SEEDS)
def test_tasks_start_order_is_deterministic(seed: int) -> None:
    app = _random_graph(seed, [], use_async=False)
    starts = [c["name"] if c["name"] != "work" else c["input"]["item"]
              for c in app.stream({"out": []}, stream_mode="tasks") if "input" in c]
    # Sends first in send order, then edge-triggered tasks by name (lg_facts §7, §20)
    assert starts == ["start", "a", "b", "c", "d", "aa", "mm", "zz"]


@pytest.mark.anyio
@pytest.mark.parametrize("seed", SEEDS[:3])
async def test_tasks_start_order_is_deterministic_async(seed: int, async_step: str) -> None:
    app = _random_graph(seed, [], use_async=True)
    starts = [c["name"] if c["name"] != "work" else c["input"]["item"]
              async for c in app.astream({"out": []}, stream_mode="tasks") if "input" in c]
    assert starts == ["start", "a", "b", "c", "d", "aa", "mm", "zz"]


def _siblings(nodes: dict[str, Any], **compile_kw: Any) -> Any:
    """A graph whose nodes all start from START: one step of parallel tasks."""
    g = StateGraph(Work)
    for name, fn in nodes.items():
        g.add_node(name, fn)
        g.add_edge(START, name)
    return g.compile(**compile_kw)


def test_tasks_of_one_step_run_concurrently_in_threads() -> None:
    barrier = threading.Barrier(3, timeout=2)

    def meet(name: str):
        def fn(s: Work) -> dict:
            barrier.wait()  # deadlocks (BrokenBarrierError) unless all three run at once
            return {"out": [name]}
        return fn

    app = _siblings({name: meet(name) for name in ("c", "b", "a")})
    assert app.invoke({"out": []}) == {"out": ["a", "b", "c"]}


def test_fast_siblings_run_in_the_calling_thread_and_slow_ones_still_overlap() -> None:
    """A sibling no pool thread has started when the first task returns runs in the calling
    thread (no hand-off); one that waits still gets a pool thread while the first one blocks."""
    threads: list[tuple[str, int]] = []

    def fast(name: str):
        def fn(s: Work) -> dict:
            threads.append((name, threading.get_ident()))
            return {"out": [name]}
        return fn

    app = _siblings({name: fast(name) for name in ("a", "b", "c")})
    here = threading.get_ident()
    all_inline = 0
    for _ in range(20):
        threads.clear()
        assert app.invoke({"out": []}) == {"out": ["a", "b", "c"]}
        all_inline += all(ident == here for _, ident in threads)
    # a pool thread can still win a race under load, so not every run; but most do
    assert all_inline >= 10

    met = threading.Event()

    def waits(s: Work) -> dict:  # runs first, in the calling thread, and blocks on its sibling
        assert met.wait(2), "the sibling never ran while this task was blocked"
        return {"out": ["a"]}

    def sets(s: Work) -> dict:
        met.set()
        return {"out": ["b"]}

    assert _siblings({"a": waits, "b": sets}).invoke({"out": []}) == {"out": ["a", "b"]}

@pytest.mark.anyio
async def test_async_tasks_of_one_step_run_concurrently(async_step: str) -> None:
    started: list[str] = []
    release = asyncio.Event()

    def node(name: str):
        async def fn(s: Work) -> dict:
            started.append(name)
            if len(started) == 3:
                release.set()
            await asyncio.wait_for(release.wait(), 2)
            return {"out": [name]}
        return fn

    app = _siblings({name: node(name) for name in ("c", "b", "a")})
    assert await app.ainvoke({"out": []}) == {"out": ["a", "b", "c"]}


def test_mixed_sync_and_async_nodes() -> None:
    async def a(s: S) -> dict:
        await asyncio.sleep(0)
        return {"x": s["x"] + 1, "log": ["a"]}

    def b(s: S) -> dict:
        return {"x": s["x"] * 10, "log": ["b"]}

    g = StateGraph(S)
    g.add_sequence([a, b])
    g.add_edge(START, "a")
    assert g.compile().invoke({"x": 1}) == {"x": 20, "log": ["a", "b"]}


# -- failures ---------------------------------------------------------------------------------


def test_user_exception_propagates_unchanged() -> None:
    error = KeyError("boom")

    def bad(s: S) -> dict:
        raise error

    g = StateGraph(S)
    g.add_node(bad)
    g.add_edge(START, "bad")
    with pytest.raises(KeyError) as info:
        g.compile().invoke({"x": 1})
    assert info.value is error


def test_failing_sync_task_waits_for_its_sync_siblings() -> None:
    finished: list[str] = []

    def slow(s: S) -> dict:
        time.sleep(0.15)
        finished.append("slow")
        return {"log": ["slow"]}

    def fastbad(s: S) -> dict:
        raise ValueError("fast")

    g = StateGraph(S)
    g.add_node(slow)
    g.add_node(fastbad)
    g.add_edge(START, "slow")
    g.add_edge(START, "fastbad")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "sync-siblings"}}
    with pytest.raises(ValueError, match="fast"):
        app.invoke({"x": 1}, cfg)
    assert finished == ["slow"]
    tasks = {t.name: t for t in app.get_state(cfg).tasks}
    assert tasks["slow"].result == {"log": ["slow"]}
    assert tasks["fastbad"].error == "ValueError('fast')"


@pytest.mark.anyio
async def test_failing_async_task_cancels_async_siblings(async_step: str) -> None:
    finished: list[str] = []

    async def slow(s: S) -> dict:
        await asyncio.sleep(0.15)
        finished.append("slow")
        return {"log": ["slow"]}

    async def fastbad(s: S) -> dict:
        raise ValueError("fast")

    g = StateGraph(S)
    g.add_node(slow)
    g.add_node(fastbad)
    g.add_edge(START, "slow")
    g.add_edge(START, "fastbad")
    with pytest.raises(ValueError, match="fast"):
        await g.compile().ainvoke({"x": 1})
    assert finished == []  # the error did not wait for `slow`
    await asyncio.sleep(0.2)
    assert finished == []  # and `slow` was cancelled


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["sibling fails", "consumer leaves"])
async def test_a_cancelled_concurrent_task_is_saved_as_cancelled(async_step: str, how: str
                                                                 ) -> None:
    """As LangGraph commits a cancelled future's CancelledError (parity: scenarios_cancel)."""
    started = anyio.Event()

    async def slow(s: Work) -> dict:
        started.set()
        await anyio.sleep(10)
        return {"out": ["slow"]}

    async def other(s: Work) -> dict:
        if how == "sibling fails":
            await started.wait()
            raise ValueError("other")
        return {"out": ["other"]}

    app = _siblings({"slow": slow, "other": other}, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "1"}}
    with anyio.move_on_after(10):
        async with anyio.create_task_group() as tg:
            async def consume() -> None:
                with pytest.raises(ValueError) if how == "sibling fails" else nullcontext():
                    await app.ainvoke({"out": []}, cfg)

            tg.start_soon(consume)
            await started.wait()
            if how == "consumer leaves":
                await anyio.sleep(0.05)  # `other` is done
                tg.cancel_scope.cancel()
    errors = {t.name: t.error for t in app.get_state(cfg).tasks}
    assert errors == {"slow": "CancelledError()",
                      "other": "ValueError('other')" if how == "sibling fails" else None}


@pytest.mark.anyio
async def test_leaving_an_async_stream_mid_step_cancels_and_awaits_the_siblings(
    async_step: str,
) -> None:
    """A consumer that stops reading while a step's tasks run: the step cancels them and
    waits for them before the stream is closed, so no task outlives its run."""
    from engine import get_stream_writer

    outcome: list[str] = []

    async def talks(s: Work) -> dict:
        get_stream_writer()("hello")
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            outcome.append("talks cancelled")
            raise
        return {"out": ["talks"]}

    async def waits(s: Work) -> dict:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            with anyio.CancelScope(shield=True):  # cleanup that itself awaits: waited for
                await anyio.sleep(0.01)
            outcome.append("waits cancelled")
            raise
        return {"out": ["waits"]}

    stream = _siblings({"talks": talks, "waits": waits}).astream(
        {"out": []}, stream_mode="custom"
    )
    started = time.monotonic()
    assert await stream.__anext__() == "hello"
    await stream.aclose()
    assert sorted(outcome) == ["talks cancelled", "waits cancelled"]
    assert time.monotonic() - started < 2


# -- RetryPolicy (lg_facts §13) -----------------------------------------------------------------


def _flaky(errors: list[BaseException], calls: list[float], policy: Any) -> Any:
    def flaky(s: S) -> dict:
        calls.append(time.monotonic())
        if errors:
            raise errors.pop(0)
        return {"log": [f"ok@{len(calls)}"]}

    g = StateGraph(S)
    g.add_node("flaky", flaky, retry_policy=policy)
    g.add_edge(START, "flaky")
    return g.compile()


def _fast(**kw: Any) -> RetryPolicy:
    return RetryPolicy(initial_interval=0.001, jitter=False, **kw)


def test_retry_succeeds_on_third_attempt() -> None:
    calls: list[float] = []
    app = _flaky([ConnectionError("1"), ConnectionError("2")], calls, _fast())
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["ok@3"]}
    assert len(calls) == 3


def test_retry_gives_up_after_max_attempts_with_the_last_error() -> None:
    calls: list[float] = []
    last = ConnectionError("3")
    app = _flaky([ConnectionError("1"), ConnectionError("2"), last], calls, _fast())
    with pytest.raises(ConnectionError) as info:
        app.invoke({"x": 0})
    assert info.value is last
    assert len(calls) == 3


@pytest.mark.parametrize("attempts", [1, 2, 5])
def test_max_attempts_counts_every_call(attempts: int) -> None:
    calls: list[float] = []
    app = _flaky([ConnectionError(str(i)) for i in range(10)], calls, _fast(max_attempts=attempts))
    with pytest.raises(ConnectionError):
        app.invoke({"x": 0})
    assert len(calls) == attempts


def test_no_retry_policy_means_one_call() -> None:
    calls: list[float] = []
    app = _flaky([ConnectionError("1")], calls, None)
    with pytest.raises(ConnectionError):
        app.invoke({"x": 0})
    assert len(calls) == 1


class Custom(Exception):
    pass


@pytest.mark.parametrize(
    "error, retried",
    [
        (ConnectionError("c"), True),
        (ConnectionResetError("c"), True),
        (Custom("c"), True),
        (AttributeError("c"), True),
        (AssertionError("c"), True),
        (ValueError("c"), False),
        (TypeError("c"), False),
        (KeyError("c"), False),
        (IndexError("c"), False),
        (ZeroDivisionError("c"), False),
        (RuntimeError("c"), False),
        (NotImplementedError("c"), False),
        (OSError("c"), False),
        (TimeoutError("c"), False),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else str(v),
)
def test_default_retry_on(error: Exception, retried: bool) -> None:
    calls: list[float] = []
    app = _flaky([error], calls, _fast())
    if retried:
        assert app.invoke({"x": 0}) == {"x": 0, "log": ["ok@2"]}
        assert len(calls) == 2
    else:
        with pytest.raises(type(error)):
            app.invoke({"x": 0})
        assert len(calls) == 1


def test_default_retry_on_http_status() -> None:
    httpx = pytest.importorskip("httpx")

    def status_error(code: int) -> Exception:
        request = httpx.Request("GET", "http://test")
        response = httpx.Response(code, request=request)
        return httpx.HTTPStatusError(f"status {code}", request=request, response=response)

    calls: list[float] = []
    assert _flaky([status_error(503)], calls, _fast()).invoke({"x": 0})["log"] == ["ok@2"]
    calls.clear()
    with pytest.raises(httpx.HTTPStatusError):
        _flaky([status_error(404)], calls, _fast()).invoke({"x": 0})
    assert len(calls) == 1
    calls.clear()
    assert _flaky([httpx.ConnectError("down")], calls, _fast()).invoke({"x": 0})["log"] == ["ok@2"]


@pytest.mark.parametrize(
    "retry_on",
    [ValueError, (KeyError, ValueError), lambda e: isinstance(e, ValueError)],
    ids=["class", "tuple", "callable"],
)
def test_retry_on_forms(retry_on: Any) -> None:
    calls: list[float] = []
    app = _flaky([ValueError("v")], calls, _fast(retry_on=retry_on))
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["ok@2"]}
    calls.clear()
    app = _flaky([TypeError("t")], calls, _fast(retry_on=retry_on))
    with pytest.raises(TypeError):
        app.invoke({"x": 0})
    assert len(calls) == 1


def test_first_matching_policy_of_a_list_is_used() -> None:
    calls: list[float] = []
    policies = [_fast(retry_on=KeyError, max_attempts=2), _fast(retry_on=ValueError, max_attempts=4)]
    app = _flaky([ValueError(str(i)) for i in range(10)], calls, policies)
    with pytest.raises(ValueError):
        app.invoke({"x": 0})
    assert len(calls) == 4


def test_backoff_intervals_without_jitter() -> None:
    calls: list[float] = []
    policy = RetryPolicy(initial_interval=0.02, backoff_factor=2.0, jitter=False, max_attempts=3,
                         retry_on=ConnectionError)
    app = _flaky([ConnectionError("1"), ConnectionError("2")], calls, policy)
    app.invoke({"x": 0})
    gaps = [b - a for a, b in zip(calls, calls[1:])]
    assert 0.02 <= gaps[0] < 0.04 + 0.05
    assert 0.04 <= gaps[1] < 0.08 + 0.05


def test_backoff_is_capped_by_max_interval() -> None:
    calls: list[float] = []
    policy = RetryPolicy(initial_interval=0.01, backoff_factor=10.0, max_interval=0.03,
                         jitter=False, max_attempts=4, retry_on=ConnectionError)
    app = _flaky([ConnectionError(str(i)) for i in range(3)], calls, policy)
    app.invoke({"x": 0})
    gaps = [b - a for a, b in zip(calls, calls[1:])]
    assert 0.01 <= gaps[0] < 0.06
    assert 0.03 <= gaps[1] < 0.08  # 0.1 capped to 0.03
    assert 0.03 <= gaps[2] < 0.08  # 1.0 capped to 0.03


@pytest.mark.anyio
async def test_retry_async() -> None:
    calls: list[int] = []

    async def flaky(s: S) -> dict:
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError("again")
        return {"log": ["ok"]}

    g = StateGraph(S)
    g.add_node("flaky", flaky, retry_policy=_fast())
    g.add_edge(START, "flaky")
    assert await g.compile().ainvoke({"x": 0}) == {"x": 0, "log": ["ok"]}
    assert len(calls) == 3


def test_retried_task_streams_one_update() -> None:
    calls: list[float] = []
    app = _flaky([ConnectionError("1")], calls, _fast())
    assert list(app.stream({"x": 0}, stream_mode="updates")) == [{"flaky": {"log": ["ok@2"]}}]


# -- defer (lg_facts §17) ----------------------------------------------------------------------


def _fan(defer: bool) -> Any:
    g = StateGraph(S)
    for name in ("a", "b1", "b2", "c"):
        g.add_node(name, lambda s, _n=name: {"log": [_n]})
    g.add_node("join", lambda s: {"log": ["join"]}, defer=defer)
    g.add_edge(START, "a")
    g.add_edge("a", "b1")
    g.add_edge("b1", "b2")
    g.add_edge("a", "c")
    g.add_edge("b2", "join")
    g.add_edge("c", "join")
    return g.compile(checkpointer=InMemorySaver())


def _by_step(names: list[str], sizes: list[int]) -> list[list[str]]:
    out, i = [], 0
    for size in sizes:
        out.append(sorted(names[i:i + size]))
        i += size
    assert i == len(names)
    return out


def test_without_defer_the_join_runs_twice() -> None:
    app = _fan(defer=False)
    cfg = {"configurable": {"thread_id": "nodefer"}}
    names = [next(iter(c)) for c in app.stream({"x": 0}, cfg)]
    # b1 and c share a step: the updates stream follows their finish order
    assert _by_step(names, [1, 2, 2, 1]) == [["a"], ["b1", "c"], ["b2", "join"], ["join"]]
    assert app.get_state(cfg).values["log"] == ["a", "b1", "c", "b2", "join", "join"]


def test_deferred_node_runs_once_when_nothing_else_is_left() -> None:
    app = _fan(defer=True)
    cfg = {"configurable": {"thread_id": "defer"}}
    names = [next(iter(c)) for c in app.stream({"x": 0}, cfg)]
    assert _by_step(names, [1, 2, 1, 1]) == [["a"], ["b1", "c"], ["b2"], ["join"]]
    assert app.get_state(cfg).values["log"] == ["a", "b1", "c", "b2", "join"]
    history = [(s.metadata["step"], s.next) for s in app.get_state_history(cfg)]
    assert history[::-1][2:5] == [(1, ("b1", "c")), (2, ("b2",)), (3, ("join",))]


@pytest.mark.anyio
async def test_deferred_node_async() -> None:
    app = _fan(defer=True)
    cfg = {"configurable": {"thread_id": "defer-async"}}
    names = [next(iter(c)) async for c in app.astream({"x": 0}, cfg)]
    assert _by_step(names, [1, 2, 1, 1]) == [["a"], ["b1", "c"], ["b2"], ["join"]]


# -- Command.PARENT from a subgraph (lg_facts §8) ----------------------------------------------


class P(TypedDict):
    count: int
    log: Annotated[list, operator.add]


def _parent_command_graph(static_edge: bool, use_async: bool = False) -> Any:
    if use_async:
        async def jump(s: P) -> Command:
            return Command(graph=Command.PARENT, goto="target",
                           update={"log": ["from-child"], "count": 99})
    else:
        def jump(s: P) -> Command:
            return Command(graph=Command.PARENT, goto="target",
                           update={"log": ["from-child"], "count": 99})

    child = StateGraph(P)
    child.add_node("jump", jump)
    child.add_edge(START, "jump")

    parent = StateGraph(P)
    parent.add_node("child", child.compile())
    parent.add_node("after", lambda s: {"log": ["after"]})
    parent.add_node("target", lambda s: {"log": ["target"]})
    parent.add_edge(START, "child")
    if static_edge:
        parent.add_edge("child", "after")
    return parent.compile()


def test_command_parent_with_the_static_edge_still_firing() -> None:
    app = _parent_command_graph(static_edge=True)
    assert app.invoke({"count": 0}) == {"count": 99, "log": ["from-child", "after", "target"]}
    chunks = list(app.stream({"count": 0}, stream_mode="updates", subgraphs=True))
    assert chunks[0] == ((), {"child": {"log": ["from-child"], "count": 99}})
    assert sorted(map(str, chunks[1:])) == sorted(
        map(str, [((), {"after": {"log": ["after"]}}), ((), {"target": {"log": ["target"]}})])
    )


def test_command_parent_without_a_static_edge() -> None:
    app = _parent_command_graph(static_edge=False)
    assert app.invoke({"count": 0}) == {"count": 99, "log": ["from-child", "target"]}


@pytest.mark.anyio
async def test_command_parent_async() -> None:
    app = _parent_command_graph(static_edge=True, use_async=True)
    assert await app.ainvoke({"count": 0}) == {
        "count": 99, "log": ["from-child", "after", "target"],
    }


def test_subgraph_shared_reducer_key_duplicates() -> None:
    grand = StateGraph(S)
    grand.add_node("g1", lambda s: {"log": ["g1"]})
    grand.add_edge(START, "g1")
    child = StateGraph(S)
    child.add_node("c1", lambda s: {"log": ["c1"]})
    child.add_node("grand", grand.compile())
    child.add_edge(START, "c1")
    child.add_edge("c1", "grand")
    parent = StateGraph(S)
    parent.add_node("p1", lambda s: {"log": ["p1"]})
    parent.add_node("child", child.compile())
    parent.add_edge(START, "p1")
    parent.add_edge("p1", "child")
    assert parent.compile().invoke({"x": 1}) == {
        "x": 1, "log": ["p1", "p1", "c1", "p1", "c1", "g1"],
    }


def test_compiled_graph_invoked_inside_a_node_is_a_subgraph() -> None:
    inner = StateGraph(S)
    inner.add_node("inner", lambda s: {"x": s["x"] + 100})
    inner.add_edge(START, "inner")
    inner_app = inner.compile()

    def caller(s: S) -> dict:
        return {"x": inner_app.invoke({"x": s["x"]})["x"]}

    g = StateGraph(S)
    g.add_node(caller)
    g.add_edge(START, "caller")
    app = g.compile()
    assert list(app.stream({"x": 1}, stream_mode="updates")) == [{"caller": {"x": 101}}]
    items = list(app.stream({"x": 1}, stream_mode="updates", subgraphs=True))
    assert len(items) == 2
    (ns, chunk) = items[0]
    assert len(ns) == 1 and ns[0].startswith("caller:")
    assert chunk == {"inner": {"x": 101}}
    assert items[1] == ((), {"caller": {"x": 101}})


# -- batch / abatch (lg_facts §18) -------------------------------------------------------------


def _doubler() -> Any:
    def double(s: S) -> dict:
        if s["x"] < 0:
            raise ValueError(f"neg {s['x']}")
        return {"x": s["x"] * 2}

    g = StateGraph(S)
    g.add_node(double)
    g.add_edge(START, "double")
    return g.compile()


def test_batch() -> None:
    assert _doubler().batch([{"x": 1}, {"x": 2}]) == [{"x": 2, "log": []}, {"x": 4, "log": []}]


def test_batch_raises_the_failing_items_error() -> None:
    with pytest.raises(ValueError, match="neg -1"):
        _doubler().batch([{"x": 1}, {"x": -1}])


def test_batch_return_exceptions() -> None:
    out = _doubler().batch([{"x": 1}, {"x": -1}], return_exceptions=True)
    assert out[0] == {"x": 2, "log": []}
    assert isinstance(out[1], ValueError) and str(out[1]) == "neg -1"


def test_batch_with_one_config_per_input() -> None:
    app = _doubler()
    app_cp = StateGraph(S)
    app_cp.add_node("double", lambda s: {"x": s["x"] * 2})
    app_cp.add_edge(START, "double")
    saver_app = app_cp.compile(checkpointer=InMemorySaver())
    cfgs = [{"configurable": {"thread_id": "b1"}}, {"configurable": {"thread_id": "b2"}}]
    assert saver_app.batch([{"x": 1}, {"x": 5}], cfgs) == [{"x": 2, "log": []}, {"x": 10, "log": []}]
    assert saver_app.get_state(cfgs[1]).values == {"x": 10, "log": []}
    assert app.batch([]) == []


@pytest.mark.anyio
async def test_abatch() -> None:
    app = _doubler()
    assert await app.abatch([{"x": 1}, {"x": 2}]) == [{"x": 2, "log": []}, {"x": 4, "log": []}]
    with pytest.raises(ValueError, match="neg -3"):
        await app.abatch([{"x": -3}])
    out = await app.abatch([{"x": 3}, {"x": -1}], return_exceptions=True)
    assert out[0] == {"x": 6, "log": []}
    assert isinstance(out[1], ValueError) and str(out[1]) == "neg -1"


def test_batch_items_carry_interrupts() -> None:
    from engine import interrupt

    g = StateGraph(S)
    g.add_node("ask", lambda s: {"x": interrupt("q")})
    g.add_edge(START, "ask")
    app = g.compile(checkpointer=InMemorySaver())
    out = app.batch([{"x": 1}, {"x": 2}], [{"configurable": {"thread_id": f"bi{i}"}} for i in range(2)])
    assert [o["x"] for o in out] == [1, 2]
    assert [[i.value for i in o["__interrupt__"]] for o in out] == [["q"], ["q"]]


# -- invoke output ----------------------------------------------------------------------------


def test_invoke_returns_the_final_state() -> None:
    g = StateGraph(S)
    g.add_node("a", lambda s: {"x": s["x"] + 1, "log": ["a"]})
    g.add_node("b", lambda s: {"x": s["x"] * 10, "log": ["b"]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", END)
    assert g.compile().invoke({"x": 1}) == {"x": 20, "log": ["a", "b"]}


def test_invoke_with_stream_mode_updates_returns_the_chunks() -> None:
    g = StateGraph(S)
    g.add_node("a", lambda s: {"x": 2})
    g.add_edge(START, "a")
    app = g.compile()
    assert app.invoke({"x": 1}, stream_mode="updates") == [{"a": {"x": 2}}]
    assert app.invoke({"x": 1}, stream_mode="values") == {"x": 2, "log": []}


# -- a step announces all its tasks before any finishes (observed on LangGraph 1.2.22) ----------


def _four_parallel(use_async: bool) -> Any:
    g = StateGraph(Work)
    for name in "dcba":
        if use_async:
            async def fn(s: Work, _n: str = name) -> dict:
                return {"out": [_n]}
        else:
            def fn(s: Work, _n: str = name) -> dict:
                return {"out": [_n]}
        g.add_node(name, fn)
        g.add_edge(START, name)
    return g.compile()


def test_all_task_starts_come_before_any_result() -> None:
    app = _four_parallel(use_async=False)
    for _ in range(5):
        items = list(app.stream({"out": []}, stream_mode="tasks"))
        assert [c["name"] for c in items[:4]] == ["a", "b", "c", "d"]
        assert all("input" in c for c in items[:4])
        assert all("result" in c for c in items[4:])


@pytest.mark.anyio
async def test_all_task_starts_come_before_any_result_async() -> None:
    app = _four_parallel(use_async=True)
    for _ in range(5):
        items = [c async for c in app.astream({"out": []}, stream_mode="tasks")]
        assert [c["name"] for c in items[:4]] == ["a", "b", "c", "d"]
        assert all("input" in c for c in items[:4])
        assert all("result" in c for c in items[4:])


class Item(TypedDict):
    item: str
    out: Annotated[list, operator.add]


class ItemOut(TypedDict):
    out: Annotated[list, operator.add]


def test_parallel_sends_to_a_subgraph_node() -> None:
    barrier = threading.Barrier(2, timeout=2)

    def s1(s: Item) -> dict:
        barrier.wait()  # both subgraph runs must be in flight at once
        return {"out": [f"s1:{s['item']}"]}

    sub = StateGraph(Item, output_schema=ItemOut)
    sub.add_node("s1", s1)
    sub.add_edge(START, "s1")
    g = StateGraph(Work)
    g.add_node("sub", sub.compile())
    g.add_conditional_edges(START, lambda s: [Send("sub", {"item": i}) for i in "ab"])
    app = g.compile()
    items = list(app.stream({"out": []}, stream_mode="updates", subgraphs=True))
    sub_ns = {ns for ns, _ in items if ns}
    assert len(sub_ns) == 2 and all(ns[0].startswith("sub:") for ns in sub_ns)
    assert sorted(str(c) for ns, c in items if ns == ()) == [
        "{'sub': {'out': ['s1:a']}}", "{'sub': {'out': ['s1:b']}}",
    ]
    assert app.invoke({"out": []}) == {"out": ["s1:a", "s1:b"]}


def test_subgraph_with_its_own_schema() -> None:
    class C(TypedDict):
        x: int
        private: str

    child = StateGraph(C)
    child.add_node("c1", lambda s: {"private": "p", "x": s["x"] + 1})
    child.add_node("c2", lambda s: {"x": s["x"] * 2, "private": s["private"] + "q"})
    child.add_edge(START, "c1")
    child.add_edge("c1", "c2")
    g = StateGraph(S)
    g.add_node("child", child.compile())
    g.add_edge(START, "child")
    app = g.compile()
    assert list(app.stream({"x": 1}, stream_mode="updates")) == [{"child": {"x": 4}}]
    assert app.invoke({"x": 1}) == {"x": 4, "log": []}


def test_interrupt_in_a_graph_invoked_inside_a_node() -> None:
    from engine import interrupt

    inner = StateGraph(S)
    inner.add_node("i1", lambda s: {"log": [interrupt("inner?")]})
    inner.add_edge(START, "i1")
    inner_app = inner.compile()

    def caller(s: S) -> dict:
        return {"log": inner_app.invoke({"x": s["x"], "log": []})["log"]}

    g = StateGraph(S)
    g.add_node(caller)
    g.add_edge(START, "caller")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "inner"}}
    out = app.invoke({"x": 1}, cfg)
    assert [i.value for i in out["__interrupt__"]] == ["inner?"]
    assert app.invoke(Command(resume="ans"), cfg) == {"x": 1, "log": ["ans"]}


@pytest.mark.anyio
async def test_cancelled_async_run_keeps_its_finished_steps() -> None:
    import anyio

    async def fast(s: S) -> dict:
        return {"log": ["fast"]}

    async def slow(s: S) -> dict:
        await anyio.Event().wait()  # until cancelled
        return {"log": ["slow"]}

    g = StateGraph(S)
    g.add_node(fast)
    g.add_node(slow)
    g.add_edge(START, "fast")
    g.add_edge("fast", "slow")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "cancel"}}
    with anyio.move_on_after(0.2) as scope:
        await app.ainvoke({"x": 1}, cfg)
    assert scope.cancelled_caught
    state = await app.aget_state(cfg)
    assert state.values == {"x": 1, "log": ["fast"]}
    assert state.next == ("slow",)
