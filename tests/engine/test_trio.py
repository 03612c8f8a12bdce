"""The async API on trio: the engine runs on anyio, and its asyncio fast paths (plain tasks
for a step, a loop future for wake-ups, `call_soon_threadsafe` from worker threads) each keep
an anyio fallback. `test_execution.py` already runs the task-group step on asyncio (by
patching `_on_asyncio`); only a real other back end runs the `anyio.Event` wake-ups and the
token-based call from a worker thread, and trio's own cancellation of a failed step.
"""

from __future__ import annotations

import operator
import threading
from typing import Annotated, Any, TypedDict

import anyio
import pytest

from checkpoints import InMemorySaver
from engine import END, START, StateGraph, get_stream_writer

pytest.importorskip("trio")


@pytest.fixture
def anyio_backend() -> str:
    return "trio"


class S(TypedDict):
    log: Annotated[list, operator.add]


def _diamond(use_async: bool, checkpointer: Any = None) -> Any:
    """START -> (slow, fast) -> join -> END; both branches write a custom chunk first."""

    async def slow_async(s: S) -> dict:
        get_stream_writer()("slow-started")
        await anyio.sleep(0.05)
        return {"log": ["slow"]}

    async def fast_async(s: S) -> dict:
        get_stream_writer()("fast-started")
        return {"log": ["fast"]}

    def slow(s: S) -> dict:
        get_stream_writer()("slow-started")
        threading.Event().wait(0.05)
        return {"log": ["slow"]}

    def fast(s: S) -> dict:
        get_stream_writer()("fast-started")
        return {"log": ["fast"]}

    g = StateGraph(S)
    g.add_node("slow", slow_async if use_async else slow)
    g.add_node("fast", fast_async if use_async else fast)
    g.add_node("join", lambda s: {"log": ["join"]})
    g.add_edge(START, "slow")
    g.add_edge(START, "fast")
    g.add_edge(["slow", "fast"], "join")
    g.add_edge("join", END)
    return g.compile(checkpointer=checkpointer)


@pytest.mark.anyio
@pytest.mark.parametrize("use_async", [True, False])
async def test_ainvoke_runs_parallel_branches(use_async: bool) -> None:
    with anyio.fail_after(5):  # a lost wake-up hangs: fail instead
        out = await _diamond(use_async).ainvoke({"log": []})
    assert out == {"log": ["fast", "slow", "join"]}  # writes apply in node-name order


@pytest.mark.anyio
@pytest.mark.parametrize("use_async", [True, False])
async def test_astream_delivers_the_fast_branch_before_the_slow_one_ends(use_async: bool) -> None:
    with anyio.fail_after(5):
        items = [
            item
            async for item in _diamond(use_async).astream(
                {"log": []}, stream_mode=["custom", "updates"]
            )
        ]
    assert sorted(c for m, c in items if m == "custom") == ["fast-started", "slow-started"]
    updates = [next(iter(c)) for m, c in items if m == "updates"]
    assert updates == ["fast", "slow", "join"]  # each update as its task finished


@pytest.mark.anyio
async def test_custom_chunks_are_live_on_trio() -> None:
    seen = anyio.Event()
    result: list[bool] = []

    async def n(s: S) -> dict:
        get_stream_writer()("ping")
        with anyio.move_on_after(1.0):
            await seen.wait()
        result.append(seen.is_set())
        return {"log": ["n"]}

    g = StateGraph(S)
    g.add_node("n", n)
    g.add_edge(START, "n")
    with anyio.fail_after(5):
        async for item in g.compile().astream({"log": []}, stream_mode="custom"):
            if item == "ping":
                seen.set()
    assert result == [True]


@pytest.mark.anyio
async def test_breaking_out_mid_step_keeps_the_finished_branch() -> None:
    app = _diamond(True, InMemorySaver())
    config = {"configurable": {"thread_id": "trio"}}
    stream = app.astream({"log": []}, config, stream_mode="updates")
    with anyio.fail_after(5):
        async for chunk in stream:
            assert "fast" in chunk
            break
        await stream.aclose()
    state = await app.aget_state(config)
    assert state.next == ("slow",)  # cancelled; the finished branch's writes were saved
    assert {t.name: t.result for t in state.tasks} == {"slow": None, "fast": {"log": ["fast"]}}
    assert await app.ainvoke(None, config) == {"log": ["fast", "slow", "join"]}


@pytest.mark.anyio
async def test_a_failing_branch_cancels_its_sibling() -> None:
    finished: list[str] = []

    async def slow(s: S) -> dict:
        await anyio.sleep(5)
        finished.append("slow")
        return {"log": ["slow"]}

    async def bad(s: S) -> dict:
        raise ValueError("bad branch")

    g = StateGraph(S)
    g.add_node("slow", slow)
    g.add_node("bad", bad)
    g.add_edge(START, "slow")
    g.add_edge(START, "bad")
    with anyio.fail_after(2):
        with pytest.raises(ValueError, match="bad branch"):
            await g.compile().ainvoke({"log": []})
    assert finished == []


@pytest.mark.anyio
async def test_an_interrupted_call_lets_its_sibling_calls_finish() -> None:
    """issue 27: a `@task` call's interrupt reaching an async entrypoint (its calls in an anyio
    task group) lets the other call finish and save its own interrupt, as on asyncio."""
    from engine import Command, entrypoint, interrupt, task

    passed: list[str] = []

    @task
    async def ask_a() -> None:
        interrupt("A")

    @task
    async def ask_b() -> Any:
        await anyio.sleep(0.02)
        passed.append("b")
        return interrupt("B")

    @entrypoint(checkpointer=InMemorySaver())
    async def flow(_: Any) -> list[Any]:
        a, b = ask_a(), ask_b()
        return [await a, await b]

    config = {"configurable": {"thread_id": "trio"}}
    with anyio.fail_after(5):
        await flow.ainvoke(1, config)
        assert passed == ["b"]
        first = (await flow.aget_state(config)).interrupts
        assert [i.value for i in first] == ["A"]
        await flow.ainvoke(Command(resume={first[0].id: "x"}), config)
        second = (await flow.aget_state(config)).interrupts
        assert [i.value for i in second] == ["B"]
        assert await flow.ainvoke(Command(resume={second[0].id: "y"}), config) == [None, "y"]
