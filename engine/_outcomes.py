"""What a step's pending writes say about each of its tasks (finished, failed, interrupted).

Split from `_run.py` (issue 29) so the run core keeps under its size limit.
"""

from __future__ import annotations

from typing import Any

from checkpoints.base import ERROR, INTERRUPT, RESUME

from .types import Interrupt

__all__ = ["NO_WRITES", "Outcome", "pending_by_task"]

NO_WRITES = "__no_writes__"  # the write of a task that finished without writing anything


class Outcome:
    """What a step's pending writes say about one task."""

    __slots__ = ("writes", "finished", "error", "interrupts", "raised", "resume")

    def __init__(self) -> None:
        self.writes: list[tuple[str, Any]] = []
        self.finished = False
        self.error: Any = None
        self.interrupts: tuple[Interrupt, ...] = ()  # still waiting for an answer
        self.raised: tuple[Interrupt, ...] = ()  # raised in the step, answered ones too
        self.resume: list[Any] = []


def pending_by_task(pending: list[tuple[str, str, Any]]) -> dict[str, Outcome]:
    """Group pending writes by task: a task with regular writes (or none) finished; an error
    or interrupt it had before a resume stays on record (history shows both, as LangGraph)."""
    out: dict[str, Outcome] = {}
    for task_id, channel, value in pending:
        outcome = out.get(task_id)
        if outcome is None:
            outcome = out[task_id] = Outcome()
        if channel == ERROR:
            outcome.error = value
        elif channel == INTERRUPT:
            outcome.interrupts = outcome.raised = tuple(value)
        elif channel == RESUME:
            outcome.resume = list(value) if isinstance(value, list) else [value]
        else:
            outcome.finished = True
            if channel != NO_WRITES:
                outcome.writes.append((channel, value))
    return out
