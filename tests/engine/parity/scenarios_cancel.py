"""Parity scenarios: cancelling `astream` of a sync graph while a node blocks.

LangGraph 1.2.22 runs each sync node in an executor thread it does not wait for on a cancel:
the cancel returns at once, the node finishes in the background, its result is dropped and the
next node never runs. graphrun runs a sync graph whole in one worker thread and abandons it the
same way (`engine/_worker.py`). Each scenario releases the blocked node only after the cancel
returned, so a cancel that waits for the node shows as `returned_at_once: False`.
"""

from __future__ import annotations

import asyncio
import contextlib
import operator
import threading
import time
from typing import Annotated, Any, TypedDict

import anyio

from .harness import Transcript
from .scenarios import cfg, scenario

HOLD = 5.0  # the blocked node's own time-out: a cancel that waits for it takes this long


class LogState(TypedDict):
    log: Annotated[list, operator.add]


class _Slow:
    """`first -> slow -> last` (with `side` beside `slow` when `parallel`); `slow` blocks until
    released and notes what ran, so the scenario sees whether `last` ran after the cancel."""

    def __init__(self, lib: Any, durability: str, parallel: bool = False,
                 nested: bool = False, fails: bool = False, mixed: bool = False) -> None:
        self.ran: list[str] = []
        self.fails = fails
        self.parallel = parallel
        self.side_ran = threading.Event()
        self.started, self.release, self.finished = (threading.Event() for _ in range(3))
        self.durability = durability
        b = lib.StateGraph(LogState)
        b.add_node("first", self._anote("first") if mixed else self._note("first"))
        if nested:  # `slow` inside a subgraph, followed there by `inner_after`
            inner = lib.StateGraph(LogState)
            inner.add_node("slow", self._slow)
            inner.add_node("inner_after", self._note("inner_after"))
            inner.add_edge(lib.START, "slow")
            inner.add_edge("slow", "inner_after")
            b.add_node("slow", inner.compile())
        else:
            b.add_node("slow", self._slow)
        b.add_node("last", self._note("last"))
        b.add_edge(lib.START, "first")
        b.add_edge("first", "slow")
        b.add_edge("slow", "last")
        if parallel:
            b.add_node("side", self._note("side"))
            b.add_edge("first", "side")
            b.add_edge("side", "last")
        self.graph = b.compile(checkpointer=lib.InMemorySaver())

    def _note(self, name: str) -> Any:
        def node(state: LogState) -> dict[str, Any]:
            self.ran.append(name)
            if name == "side":
                self.side_ran.set()
            return {"log": [name]}

        return node

    def _anote(self, name: str) -> Any:
        async def node(state: LogState) -> dict[str, Any]:
            self.ran.append(name)
            return {"log": [name]}

        return node

    def _slow(self, state: LogState) -> dict[str, Any]:
        if self.parallel:  # `side` runs in a thread of its own too: one order, both libraries
            self.side_ran.wait(HOLD)
        self.ran.append("slow-start")
        self.started.set()
        self.release.wait(HOLD)
        self.ran.append("slow-done")
        self.finished.set()
        if self.fails:
            raise ValueError("after the cancel")
        return {"log": ["slow"]}

    async def consume(self, chunks: list[Any]) -> None:
        stream = self.graph.astream({"log": []}, cfg("1"), stream_mode="updates",
                                    durability=self.durability)
        async for chunk in stream:
            chunks.append(chunk)

    async def until_started(self) -> None:
        while not self.started.is_set():
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # `side` (when there) has finished and handed its writes over

    async def after_cancel(self, t: Transcript, began: float) -> None:
        """Record whether the cancel returned at once, then let the node finish and look."""
        t.add("returned_at_once", time.monotonic() - began < 1.0)
        saved_at_cancel = self.history()
        self.release.set()
        await anyio.to_thread.run_sync(self.finished.wait, 10)
        await asyncio.sleep(0.3)  # time for a wrongly continued run to save or run `last`
        t.add("ran", self.ran)
        t.add("saved_at_cancel", saved_at_cancel)
        t.add("saved_later", self.history())
        t.state("state", self.graph, cfg("1"), subgraphs=True)

    def history(self) -> list[Any]:
        return [(h.metadata["step"], h.metadata["source"], h.values, h.next,
                 [(task.name, task.error is not None, task.result) for task in h.tasks])
                for h in self.graph.get_state_history(cfg("1"))]


def _by_task_cancel(lib: Any, durability: str, parallel: bool = False,
                    nested: bool = False, fails: bool = False, mixed: bool = False) -> list[Any]:
    t = Transcript()
    slow = _Slow(lib, durability, parallel, nested, fails, mixed)
    chunks: list[Any] = []

    async def main() -> None:
        consumer = asyncio.ensure_future(slow.consume(chunks))
        await slow.until_started()
        began = time.monotonic()
        consumer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await consumer
        await slow.after_cancel(t, began)

    asyncio.run(main())
    t.add("chunks", chunks)
    return t.items


def _by_cancel_scope(lib: Any, durability: str, parallel: bool = False) -> list[Any]:
    t = Transcript()
    slow = _Slow(lib, durability, parallel)
    chunks: list[Any] = []
    began: list[float] = []

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            async def cancel_when_started() -> None:
                await slow.until_started()
                began.append(time.monotonic())
                tg.cancel_scope.cancel()

            tg.start_soon(cancel_when_started)
            await slow.consume(chunks)
        await slow.after_cancel(t, began[0])

    asyncio.run(main())
    t.add("chunks", chunks)
    return t.items


@scenario
def cancel_sync_node_task_async(lib: Any) -> list[Any]:
    """A cancelled task: at once; `slow`'s result dropped, no trace of it, `last` never runs."""
    return _by_task_cancel(lib, "async")


@scenario
def cancel_sync_node_task_sync(lib: Any) -> list[Any]:
    return _by_task_cancel(lib, "sync")


@scenario
def cancel_sync_node_task_exit(lib: Any) -> list[Any]:
    """"exit" durability: the cancel saves the last finished step's checkpoint."""
    return _by_task_cancel(lib, "exit")


@scenario
def cancel_sync_node_task_parallel(lib: Any) -> list[Any]:
    """A concurrent step: `side`'s writes stay saved; `slow` is saved as cancelled at once."""
    return _by_task_cancel(lib, "async", parallel=True)


@scenario
def cancel_sync_node_task_parallel_exit(lib: Any) -> list[Any]:
    """A concurrent step, "exit" durability: what the exit save keeps of the step."""
    return _by_task_cancel(lib, "exit", parallel=True)


@scenario
def cancel_sync_node_task_mixed_parallel_sync(lib: Any) -> list[Any]:
    return _by_task_cancel(lib, "sync", parallel=True, mixed=True)


@scenario
def cancel_sync_node_task_nested(lib: Any) -> list[Any]:
    """`slow` inside a subgraph: the subgraph stops too (`inner_after` never runs)."""
    return _by_task_cancel(lib, "sync", nested=True)


@scenario
def cancel_sync_node_task_fails(lib: Any) -> list[Any]:
    """`slow` raises once it returns after the cancel: its error is not saved either."""
    return _by_task_cancel(lib, "sync", fails=True)


@scenario
def cancel_sync_node_task_mixed(lib: Any) -> list[Any]:
    """A sync node in a graph with an async node (each sync node gets its own thread hop)."""
    return _by_task_cancel(lib, "sync", mixed=True)


@scenario
def cancel_sync_node_task_mixed_parallel(lib: Any) -> list[Any]:
    """A concurrent step of a graph with an async node: `slow` is saved as cancelled at once."""
    return _by_task_cancel(lib, "async", parallel=True, mixed=True)


@scenario
def cancel_sync_node_scope_async(lib: Any) -> list[Any]:
    """An anyio cancel scope around the stream (as the agent server cancels a run)."""
    return _by_cancel_scope(lib, "async")


@scenario
def cancel_sync_node_scope_sync(lib: Any) -> list[Any]:
    return _by_cancel_scope(lib, "sync")


# Not a scenario: under an anyio cancel scope LangGraph loses the saves it makes at the cancel
# (the cancelled task's error write, the "exit" checkpoint): the scope cancels them too.
# graphrun makes them as on a task cancel (docs/differences.md).


# --- a concurrent step of async nodes, ended early ------------------------------------------------


def _async_step_ended(lib: Any, durability: str, how: str) -> list[Any]:
    """`first -> {slow, other}`, all async; `slow` waits until cancelled while the step ends
    early: the consumer cancels it (`how="cancel"`), or `other` fails. What each task of the
    step has saved: LangGraph commits a cancelled future's `CancelledError` as its error."""
    t = Transcript()
    started = asyncio.Event()

    async def first(state: LogState) -> dict[str, Any]:
        return {"log": ["first"]}

    async def slow(state: LogState) -> dict[str, Any]:
        started.set()
        await asyncio.sleep(HOLD)
        return {"log": ["slow"]}

    async def other(state: LogState) -> dict[str, Any]:
        if how == "fail":
            await started.wait()
            raise ValueError("other failed")
        return {"log": ["other"]}

    b = lib.StateGraph(LogState)
    for node in (first, slow, other):
        b.add_node(node.__name__, node)
    b.add_edge(lib.START, "first")
    b.add_edge("first", "slow")
    b.add_edge("first", "other")
    graph = b.compile(checkpointer=lib.InMemorySaver())

    async def main() -> None:
        async def consume() -> None:
            async for _ in graph.astream({"log": []}, cfg("1"), durability=durability):
                pass

        consumer = asyncio.ensure_future(consume())
        if how == "cancel":
            await started.wait()
            await asyncio.sleep(0.05)  # `other` has finished and handed its writes over
            consumer.cancel()
        try:
            await consumer
        except (asyncio.CancelledError, ValueError) as error:
            t.add("ended_by", type(error).__name__)
        await asyncio.sleep(0.1)

    asyncio.run(main())
    t.add("tasks", [(task.name, task.error, task.result)
                    for task in graph.get_state(cfg("1")).tasks])
    return t.items


def _register_async_step_cases() -> None:
    """cancel_async_step_{async,sync,exit}, failed_async_step_cancels_sibling_{async,exit};
    under "exit", LangGraph's exit save comes first and the cancelled task is not saved."""
    cases = [("cancel_async_step", "cancel", d) for d in ("async", "sync", "exit")]
    cases += [("failed_async_step_cancels_sibling", "fail", d) for d in ("async", "exit")]
    for prefix, how, durability in cases:
        def run(lib: Any, durability: str = durability, how: str = how) -> list[Any]:
            return _async_step_ended(lib, durability, how)

        run.__name__ = f"{prefix}_{durability}"
        scenario(run)


_register_async_step_cases()
