"""Which saved interrupts still wait for an answer (issue 27).

LangGraph 1.2.22 counts the interrupts of the tasks that have not finished: a task with a
regular write finished, so the interrupts it raised before (answered) no longer count. The same
`@task` interrupted twice inside an `@entrypoint` then resumes with two plain
`Command(resume=...)`; counting every saved interrupt asked for an interrupt id the second time.
"""

from __future__ import annotations

from typing import Any

from checkpoints.base import ERROR, INTERRUPT, RESUME, SCHEDULED

__all__ = ["describe_error", "pending_interrupt_count"]

_CONTROL = frozenset((ERROR, INTERRUPT, RESUME, SCHEDULED))


def pending_interrupt_count(pending: list[tuple[str, str, Any]]) -> int:
    """Distinct ids of the interrupts raised by unfinished tasks (a `@task`'s interrupt is saved
    for the task and for the entrypoint calling it: one id)."""
    finished = {tid for tid, channel, _ in pending if channel not in _CONTROL}
    return len({
        i.id for tid, channel, value in pending
        if channel == INTERRUPT and tid not in finished for i in value
    })


def describe_error(error: BaseException) -> dict[str, str]:
    """How a task error is persisted: its class name and message (exceptions are not data)."""
    return {"error": type(error).__name__, "message": str(error)}
