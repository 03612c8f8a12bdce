"""A node whose own code raises `asyncio.CancelledError` fails the run (issue 29).

LangGraph 1.2 tells it from a real cancellation (a cancelled run, a timeout, a failed sibling)
by asking whether the running asyncio task is being cancelled; only then does the
`CancelledError` tear the step down silently. Otherwise it becomes `NodeCancelledError`, a
node failure like any other, so a run with a branch that raised it does not end as a partial
success.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from .errors import NodeCancelledError

if TYPE_CHECKING:
    from ._step import Task

__all__ = ["node_cancelled"]


def node_cancelled(task: Task, error: asyncio.CancelledError) -> NodeCancelledError:
    """The node failure `error` stands for; re-raises `error` if the task is being cancelled."""
    try:
        current = asyncio.current_task()
    except RuntimeError:  # not asyncio (trio): its own cancellation is not this exception
        current = None
    if current is None or current.cancelling() > 0:
        raise error
    return NodeCancelledError(task.name)
