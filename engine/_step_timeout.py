"""A graph's `step_timeout` (LangGraph's attribute, issue 27): seconds one super-step may take.
Like LangGraph's, the clock is read whenever the step's driver waits for its tasks, so time
a stream consumer spends between chunks counts; once it is past, the run raises
`TimeoutError`: an async run's tasks still running are cancelled; a sync run's threads
cannot be stopped, so it raises once they end (their writes saved), as LangGraph's.
"""

from __future__ import annotations

import queue
import time
from typing import Any

import anyio

__all__ = ["get_before", "step_deadline", "timed", "wait_before"]


def timed(run: Any) -> bool:
    """Whether the run's graph has a `step_timeout`: a lone task then runs as a step of
    several, whose driver keeps the clock."""
    return getattr(run.graph, "step_timeout", None) is not None


def step_deadline(run: Any) -> float | None:
    """When the step starting now must end, or None (no `step_timeout` on the run's graph)."""
    timeout = getattr(run.graph, "step_timeout", None)
    return None if timeout is None else time.monotonic() + timeout


async def wait_before(wakeup: Any, deadline: float | None) -> None:
    """`wakeup.wait()`, or `TimeoutError` once `deadline` passes first (a wake-up already
    due counts as on time)."""
    if deadline is None:
        await wakeup.wait()
        return
    with anyio.move_on_after(max(0.0, deadline - time.monotonic())) as scope:
        await wakeup.wait()
    if scope.cancelled_caught:
        raise TimeoutError()


def get_before(events: queue.SimpleQueue[Any], deadline: float) -> Any:
    """`events.get()` for a sync step, or `TimeoutError` once `deadline` passes first."""
    try:
        return events.get(timeout=max(0.0, deadline - time.monotonic()))
    except queue.Empty:
        raise TimeoutError("Timed out") from None  # LangGraph's words (its async one is bare)
