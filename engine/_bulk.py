"""`bulk_update_state`: several super-steps of state updates, one checkpoint each (issue 17).

Each super-step's updates are applied together, as if their `as_node`s had run in one step,
with LangGraph 1.2.22's special forms: `(None, END)` clears the pending tasks, `"__input__"`
writes the values as a new run input, `"__copy__"` forks the checkpoint (and may carry
updates to apply on the copy). The checks and their messages are LangGraph's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._run import Run, snapshot_tasks
from ._state import UPDATE, _last_node, still_pending
from ._step import PULL, Task, apply_writes, task_id
from .errors import InvalidUpdateError
from .types import END, START, Command, StateUpdate

__all__ = ["apply_superstep", "check_supersteps"]

INPUT = "__input__"
COPY = "__copy__"


def check_supersteps(supersteps: Sequence[Sequence[Any]]) -> None:
    if len(supersteps) == 0:
        raise ValueError("No supersteps provided")
    if any(len(updates) == 0 for updates in supersteps):
        raise ValueError("No updates provided")


def apply_superstep(run: Run, updates: Sequence[Any]) -> None:
    """Apply one super-step of updates to a restored run and queue its checkpoint."""
    values, as_node = updates[0][:2]
    if values is None and as_node == END:
        _only_one(updates, "Cannot apply multiple updates when clearing state")
        _clear(run)
    elif as_node == INPUT:
        _only_one(updates, "Cannot apply multiple updates when updating as input")
        _as_input(run, values)
    elif as_node == COPY:
        _only_one(updates, "Cannot copy checkpoint with multiple updates")
        _copy(run)
        if isinstance(values, list) and values:
            apply_superstep(run, _grouped(values))
    else:
        _as_nodes(run, _validated(run, updates))


def _only_one(updates: Sequence[Any], message: str) -> None:
    if len(updates) > 1:
        raise InvalidUpdateError(message)


def _upcoming_ids(run: Run) -> dict[str, list[str]]:
    """The ids of the tasks the checkpoint has next, by node in order: an update as one of
    them is saved as that task's writes, as LangGraph's (its result in the history)."""
    if run.checkpoint_id is None:
        return {}
    found: dict[str, list[str]] = {}
    for task in snapshot_tasks(run, with_pending=False)[0]:
        found.setdefault(task.name, []).append(task.id)
    return found


def _next_step(run: Run) -> int:
    return (run.step if run.checkpoint_id is not None else -1) + 1


def _clear(run: Run) -> None:
    """End the pending step: finished tasks' writes apply, the others are dropped."""
    if run.checkpoint_id is not None:
        tasks, _ = snapshot_tasks(run, with_pending=True)
        run.updated = apply_writes(run.channels, run.versions, tasks, run.updated, run.dirty)
    run.step = _next_step(run)
    run.pending = []
    run._checkpoint("update")


def _as_input(run: Run, values: Any) -> None:
    if values is None:
        raise InvalidUpdateError(f"Received no input writes for {START}")
    step = run.step + 1 if run.checkpoint_id is not None else -1
    task = Task(INPUT, run.plan.nodes[START], None, (INPUT,), (), run.ns, (0, 0))
    task.writes = [(START, values)]
    # an input bumps no step: pending triggers stay (as LangGraph's input writes)
    updated = apply_writes(run.channels, run.versions, [task], [], run.dirty)
    run.updated = sorted(set(run.updated or ()) | set(updated))
    run.step = step
    run.pending = []
    run._checkpoint("input")


def _copy(run: Run) -> None:
    """A new checkpoint with the same values under the same parent (source "fork")."""
    if run.checkpoint_id is None:
        raise InvalidUpdateError("Cannot copy a non-existent checkpoint")
    run.checkpoint_config = run.parent_config or {
        "configurable": {"thread_id": run.thread_id, "checkpoint_ns": run.ns}
    }
    run._base_metadata = {}  # a copy's metadata is source, step and parents only
    run.step += 1
    run.dirty = set()  # same versions: the saver already holds every value
    run.pending = []
    run._checkpoint("fork")
    run._base_metadata = None


def _grouped(items: list[Any]) -> list[StateUpdate]:
    """Updates given with a copy, grouped by node in first-seen order (as LangGraph)."""
    groups: dict[Any, list[StateUpdate]] = {}
    for item in items:
        if not isinstance(item, Sequence):
            raise InvalidUpdateError(f"Invalid update item: {item} when copying checkpoint")
        values, as_node = item[:2]
        groups.setdefault(as_node, []).append(StateUpdate(values, as_node))
    return [update for group in groups.values() for update in group]


def _validated(run: Run, updates: Sequence[Any]) -> list[tuple[str, Any, str | None]]:
    nodes = run.plan.nodes
    if len(updates) == 1:
        values, as_node, tid = updates[0]
        if as_node is None:
            as_node = _last_node(run)
        if as_node not in nodes:
            raise InvalidUpdateError(f"Node {as_node} does not exist")
        return [(as_node, values, tid)]
    out = []
    for values, as_node, tid in updates:
        if as_node is None:
            raise InvalidUpdateError("as_node is required when applying multiple updates")
        if as_node not in nodes:
            raise InvalidUpdateError(f"Node {as_node} does not exist")
        out.append((as_node, values, tid))
    return out


def _as_nodes(run: Run, updates: list[tuple[str, Any, str | None]]) -> None:
    """Each update as a task of its node: state writes, edges and routes, applied at once."""
    from ._routing import local_state as _local_state
    from ._routing import route_writes as _route_writes
    from ._update_routes import router_result  # an async router's answer awaited (issue 27)

    plan = run.plan
    upcoming = _upcoming_ids(run)
    run.step = _next_step(run)
    run.stop = run.step + 2  # routers see the 2 steps LangGraph's update scratchpad allows
    tasks = []
    for index, (name, values, tid) in enumerate(updates):
        node = plan.nodes[name]
        tid = tid or (upcoming[name].pop(0) if upcoming.get(name) else None) or task_id(
            run.checkpoint_id or "", run.ns, run.step, name, PULL, index
        )
        task = Task(tid, node, None, (UPDATE, index), node.triggers, run.ns, (0, index))
        if isinstance(values, Command):
            task.writes = plan.command_writes(values)
        else:
            task.writes = plan.updates_of(values)
        task.writes.extend(node.edge_writes)
        for branch in node.branches:
            result = router_result(branch.router, _local_state(run, task, branch))
            task.writes.extend(_route_writes(run, branch, result))
        tasks.append(task)
        if run.checkpoint_id is not None:  # history shows them as its task's result (issue 27)
            run._put_writes(task, list(task.writes))
    before = run.updated
    run.updated = apply_writes(run.channels, run.versions, tasks, before, run.dirty)
    run.updated = still_pending(run, before, run.updated)
    # updates credit no node: a later one without `as_node` goes to the node that ran last
    run.pending = []
    run._checkpoint("update")
