"""`update_state`: write values as if a node had returned them (SPEC §2)."""

from __future__ import annotations

from typing import Any
from uuid import UUID, uuid5

from ._run import LAST_TASKS, Run
from ._step import PULL, PUSH, Task, apply_writes, task_id
from .errors import InvalidUpdateError
from .types import START, Command

__all__ = ["UPDATE", "still_pending", "update_state_run"]

UPDATE = "__interrupt__"  # the path of an update's task, as LangGraph's (not a pulled node)


def _last_node(run: Run) -> str:
    """The node that ran last, by the trigger versions it has seen; ambiguity is an error."""
    last = [n for n in run.seen.get(LAST_TASKS, {}) if n in run.plan.nodes]
    if run.checkpoint_id is None or not last:  # an entrypoint has no START node: its own
        return START if START in run.plan.nodes else next(iter(run.plan.nodes))
    if len(set(last)) > 1:
        raise InvalidUpdateError("Ambiguous update, specify as_node")
    return last[0]


def _update_task_id(run: Run, name: str) -> str:
    """The id of `name`'s next task if it has one (its result then shows the update), else
    one derived from the checkpoint (as LangGraph 1.2.22, issue 17)."""
    if run.checkpoint_id is None:
        return task_id("", run.ns, 0, name, PULL, name)
    for task in run._prepare(run.updated, run.step + 1):
        if task.name == name:
            return task.id
    return str(uuid5(UUID(run.checkpoint_id), "__interrupt__"))


def update_state_run(run: Run, values: Any, as_node: str | None, keep_writes: bool = False) -> None:
    """`keep_writes`: also save the update's writes as pending writes of the checkpoint it
    updates, as LangGraph does when that checkpoint is the thread's latest (issue 17)."""
    from ._routing import local_state as _local_state
    from ._routing import route_writes as _route_writes
    from ._update_routes import router_result  # an async router's answer awaited (issue 27)

    plan = run.plan
    name = as_node if as_node is not None else _last_node(run)
    node = plan.nodes.get(name)
    if node is None:
        raise InvalidUpdateError(f"Node {name} does not exist")
    tid = _update_task_id(run, name)
    run.step = (run.step if run.checkpoint_id is not None else -1) + 1
    # an update's task consumes no trigger: a join or deferred target next stays next (issue 27)
    task = Task(tid, node, None, (UPDATE, 0), node.triggers, run.ns, (0, name))
    if isinstance(values, Command):
        task.writes = plan.command_writes(values)
    elif node.writer is not None:  # an entrypoint: the value is its return (issue 17)
        task.writes = node.writer(values)
    else:
        task.writes = plan.updates_of(values)
    task.writes.extend(node.edge_writes)
    for branch in node.branches:
        result = router_result(branch.router, _local_state(run, task, branch))
        task.writes.extend(_route_writes(run, branch, result))
    before = run.updated
    run.updated = apply_writes(run.channels, run.versions, [task], before, run.dirty)
    run.updated = still_pending(run, before, run.updated)
    # an update credits no node: the next update without `as_node` goes to the node that ran
    # last, as LangGraph's versions_seen rule (issue 17)
    run.pending = []
    if keep_writes and run.checkpoint_id is not None:
        run._put_writes(tid, [w for w in task.writes if w[0] != PUSH])
    run._checkpoint("update")


def still_pending(run: Run, before: list[str] | None, updated: list[str]) -> list[str] | None:
    """The channels the next step looks at after an update: those it changed, and the
    triggers of the step it replaced still waiting (a complete join barrier the update did
    not consume), so their nodes stay next (as LangGraph's; issue 27)."""
    if before is None:
        return None  # every node is looked at
    kept = [
        name for name in before
        if name not in updated and not run.channels[name].ephemeral
        and run.channels[name].is_available()
    ]
    return updated + kept if kept else updated
