"""`max_concurrency` in a run's config: at most that many of a step's tasks run at once (issue 27).

LangGraph bounds its executor (a semaphore for async runs, a pool of that many threads for
sync ones); a step with no more tasks than the limit, or a run without one, takes none of
the paths here, so the limit costs nothing when unset. Each run (a subgraph's too) bounds
its own steps, as each LangGraph loop does with the config it was given.
"""

from __future__ import annotations

import collections
import contextvars
import queue
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from ._run import Run
    from ._step import Task

__all__ = ["async_gate", "binding_limit", "gated", "run_limited_in_threads"]


def binding_limit(run: Run, count: int) -> int | None:
    """The run's `max_concurrency` when it binds a step of `count` tasks, else None."""
    limit = run.config.get("max_concurrency")
    if not limit or count <= limit:
        return None
    if not isinstance(limit, int) or limit < 1:
        raise ValueError(f"max_concurrency must be a positive integer, got {limit!r}")
    return limit


def async_gate(run: Run, count: int) -> anyio.Semaphore | None:
    limit = binding_limit(run, count)
    return None if limit is None else anyio.Semaphore(limit)


def gated(
    gate: anyio.Semaphore, execute: Callable[[Run, Task], Awaitable[None]]
) -> Callable[[Run, Task], Awaitable[None]]:
    """`execute` waiting for a free slot of the step first (tasks start in the step's order)."""

    async def run_gated(run: Run, task: Task) -> None:
        async with gate:
            await execute(run, task)

    return run_gated


def run_limited_in_threads(
    run: Run, ordered: list[Task], live: bool, limit: int
) -> Iterator[None]:
    """A sync step's tasks taken in order by `limit` workers: pool threads, plus this thread
    when it may run tasks itself (no saver, no live stream: as the unbounded path)."""
    from ._tasks import _DONE, _pool, collect_done, execute_sync, flush_sync

    shared = run.sink.events if live else None
    events: queue.SimpleQueue[Any] = shared if shared is not None else queue.SimpleQueue()
    backlog = collections.deque(ordered)
    base = contextvars.copy_context()  # each task runs in its own copy of the caller's context
    inline = not live and run.checkpointer is None

    def worker() -> None:
        while True:
            try:
                task = backlog.popleft()
            except IndexError:
                return
            try:
                base.copy().run(execute_sync, run, task)
            finally:
                events.put(_DONE)

    remaining = len(ordered)
    pool = _pool()
    for _ in range(min(limit - 1 if inline else limit, remaining)):
        pool.submit(worker)
    while inline:
        try:
            task = backlog.popleft()
        except IndexError:
            break
        remaining -= 1
        base.copy().run(execute_sync, run, task)
        flush_sync(run)
        yield
    yield from collect_done(run, events, remaining)
