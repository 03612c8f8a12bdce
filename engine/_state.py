"""`update_state`: write values as if a node had returned them (SPEC §2)."""

from __future__ import annotations

from typing import Any

from ._run import Run
from ._step import PULL, Task, apply_writes, task_id
from .errors import InvalidUpdateError
from .types import START, Command

__all__ = ["update_state_run"]


def _last_node(run: Run) -> str:
    """The node that ran last, by the trigger versions it has seen; ambiguity is an error."""
    if run.checkpoint_id is None:
        return START
    latest: list[tuple[int, str]] = []
    for name, seen in run.seen.items():
        if name in run.plan.nodes and seen:
            latest.append((max(seen.values()), name))
    if not latest:
        return START
    latest.sort(reverse=True)
    if len(latest) > 1 and latest[0][0] == latest[1][0]:
        raise InvalidUpdateError("Ambiguous update, specify as_node")
    return latest[0][1]


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
    elif name == START:
        task.writes = plan.updates_of(values)
    else:
        task.writes = plan.updates_of(values)
    task.writes.extend(node.edge_writes)
    for branch in node.branches:
        result = branch.router.fn(_local_state(run, task, branch))
        task.writes.extend(_route_writes(run, branch, result))
    run.updated = apply_writes(plan, run.channels, run.versions, run.seen, [task], run.updated)
    run.pending = []
    run._checkpoint("update")
