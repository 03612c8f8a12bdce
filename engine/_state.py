"""`update_state`: write values as if a node had returned them (SPEC §2)."""

from __future__ import annotations

from typing import Any

from ._run import LAST_TASKS, Run
from ._step import PULL, Task, apply_writes, task_id
from .errors import InvalidUpdateError
from .types import START, Command

__all__ = ["update_state_run"]


def _last_node(run: Run) -> str:
    """The node that ran last, by the trigger versions it has seen; ambiguity is an error."""
    last = [n for n in run.seen.get(LAST_TASKS, {}) if n in run.plan.nodes]
    if run.checkpoint_id is None or not last:
        return START
    if len(set(last)) > 1:
        raise InvalidUpdateError("Ambiguous update, specify as_node")
    return last[0]


def update_state_run(run: Run, values: Any, as_node: str | None) -> None:
    from ._tasks import _local_state, _route_writes

    plan = run.plan
    name = as_node if as_node is not None else _last_node(run)
    node = plan.nodes.get(name)
    if node is None:
        raise InvalidUpdateError(f"Node {name} does not exist")
    run.step = (run.step if run.checkpoint_id is not None else -1) + 1
    tid = task_id(run.checkpoint_id or "", run.ns, run.step, name, PULL, name)
    task = Task(tid, node, None, (PULL, name), node.triggers, run.ns, (0, name))
    if isinstance(values, Command):
        task.writes = plan.command_writes(values)
    elif node.writer is not None:  # an entrypoint: the value is its return (issue 17)
        task.writes = node.writer(values)
    else:
        task.writes = plan.updates_of(values)
    task.writes.extend(node.edge_writes)
    for branch in node.branches:
        result = branch.router.fn(_local_state(run, task, branch))
        task.writes.extend(_route_writes(run, branch, result))
    run.updated = apply_writes(run.channels, run.versions, [task], run.updated, run.dirty)
    run.seen[LAST_TASKS] = {name: run.step}
    run.pending = []
    run._checkpoint("update")
