"""What a router sees and what its answer writes (the branch side of a task's output), shared
by the drivers (`_tasks`), `update_state` (`_state`) and bulk updates (`_bulk`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._channels import MISSING
from ._managed import managed_values
from ._plan import TASKS, BranchPlan, branch_channel, logger
from .types import END, START, Send

if TYPE_CHECKING:
    from ._run import Run
    from ._step import Task

__all__ = ["local_state", "route_writes"]


def local_state(run: Run, task: Task, branch: BranchPlan, output: Any = None) -> Any:
    """The state a router sees: the current state with only this task's writes applied; an
    unannotated router of a dict state also sees the keys the node returned beyond the state
    (LangGraph's pass-through, issue 27)."""
    plan = run.plan
    keys = plan.state_key_set
    grouped: dict[str, list[Any]] = {}
    for key, value in task.writes:
        if key in keys:
            bucket = grouped.get(key)
            if bucket is None:
                grouped[key] = [value]
            else:
                bucket.append(value)
    channels = run.channels
    values = {}
    for key in branch.reads or plan.state_keys:
        channel = channels[key]
        bucket = grouped.get(key)
        value = channel.value if bucket is None else channel.preview(bucket)
        if value is not MISSING:
            values[key] = value
    if branch.managed:  # a router sees its task's step (issue 17)
        values.update(managed_values(branch.managed, run.step, run.stop))
    state = branch.reader(values) if branch.reader is not None else values
    if type(output) is dict and type(state) is dict and branch.reads is None:
        return {**output, **state}
    return state


def route_writes(run: Run, branch: BranchPlan, result: Any) -> list[tuple[str, Any]]:
    known = run.plan.route_writes
    if type(result) is str and branch.path_map is None:  # most routers: one node by name
        write = known.get(result)
        if write is not None:
            return [write]
    writes: list[tuple[str, Any]] = []
    for dest in branch.destinations(result):
        if type(dest) is str and dest in known:  # a node's name: its write, made once
            writes.append(known[dest])
        elif isinstance(dest, Send):
            writes.append((TASKS, dest))
        elif dest != END:
            if dest not in run.plan.nodes or dest == START:
                logger.warning("Branch `%s` routed to unknown node `%s`, ignoring it.", branch.name, dest)
                continue
            writes.append((branch_channel(dest), None))
    return writes
