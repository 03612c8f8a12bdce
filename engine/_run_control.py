"""What a run tells its nodes' `Runtime`, and the run's drain switch (issue 29).

Kept out of the run core: a run pays for none of this unless a node asks for its runtime
(`execution_info`, `server_info`, a `RunControl` made on demand) or the caller passed
`control=` (one attribute test per step).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ._runtime import ExecutionInfo, RunControl, ServerInfo, server_info
from .errors import GraphDrained
from .types import START

if TYPE_CHECKING:
    from ._run import Run
    from ._step import Task

__all__ = ["control_for", "drained", "execution_info", "note_retry", "run_control",
           "run_server_info"]

_NO_SERVER: Any = object()


def control_for(given: RunControl | None, parent: Run | None) -> RunControl | None:
    """A run's control: the one it was given, else its parent run's (a subgraph drains with
    the graph that called it)."""
    if given is not None:
        return given
    return getattr(parent, "control", None) if parent is not None else None


def run_control(run: Run) -> RunControl:
    """The run's control, made on first use (LangGraph hands every node one) and shared from
    the root down, so a drain asked for by any node stops the whole run."""
    control = getattr(run, "control", None)
    if control is None:
        root = run.root
        control = getattr(root, "control", None)
        if control is None:
            control = root.control = RunControl()
        run.control = control
    return control


def drained(run: Run, tasks: list[Task]) -> bool:
    """Called before a step runs when the run has a control: a drain asked for stops here,
    after the breakpoint check and before any node of the step starts (LangGraph's order).

    Raises `GraphDrained`; the run's status tells the final flush to save where it stands.
    The input step is not a node's: it still runs."""
    reason = run.control.drain_reason  # type: ignore[attr-defined]
    if reason is None or (len(tasks) == 1 and tasks[0].name == START):
        return False
    run.status = "drained"
    raise GraphDrained(reason)


def run_server_info(run: Run) -> ServerInfo | None:
    """Built once per run from what the Agent Server put in `configurable`."""
    cached = getattr(run, "server_info", _NO_SERVER)
    if cached is _NO_SERVER:
        cached = run.server_info = server_info(run.config.get("configurable") or {})
    return cached


def note_retry(run: Run, task: Task, attempt: int) -> None:
    """`task`'s attempt `attempt + 1` (from 1) failed and it runs again: the next attempt's
    number, with the first attempt's start kept (`execution_info`)."""
    attempts = _attempts(run)
    first = attempts[task][1] if task in attempts else time.time()
    attempts[task] = (attempt + 2, first)


def _attempts(run: Run) -> dict[Task, tuple[int, float]]:
    attempts = getattr(run, "attempts", None)
    if attempts is None:
        attempts = run.attempts = {}
    return attempts


def execution_info(task: Task, run: Run) -> ExecutionInfo:
    """Which checkpoint, namespace, task and attempt a node runs as."""
    attempts = getattr(run, "attempts", None)
    attempt, first = attempts.get(task, (1, None)) if attempts else (1, None)
    if first is None:
        first = time.time()
        if task.node.retry:  # a retry reports this same first start
            _attempts(run)[task] = (1, first)
    run_id = run.config.get("run_id")
    return ExecutionInfo(
        checkpoint_id=run.checkpoint_id or "",
        checkpoint_ns=task.ns,
        task_id=task.id,
        thread_id=run.thread_id,
        run_id=str(run_id) if run_id else None,
        node_attempt=attempt,
        node_first_attempt_time=first,
    )
