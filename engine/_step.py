"""Pure super-step functions: which tasks run, and applying their writes deterministically.

No IO and no user code here. Write order does not depend on task finish order: edge-triggered
(pull) tasks apply first, sorted by node name, then Send (push) tasks in send order (SPEC §1).
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import itertools
import time
from collections.abc import Iterable
from typing import Any

from ._channels import MISSING, Channel
from ._managed import managed_values
from ._plan import TASKS, NodePlan, Plan
from ._timeout import timeout_policy
from .errors import is_invalid_resume
from .types import Interrupt, Send

__all__ = ["Task", "apply_writes", "next_version", "prepare_tasks", "task_id"]

# Channel versions: increasing, and unique across the branches of a thread (a fork must not
# reuse a version an abandoned branch stored a blob under). Seeded from the clock, so they keep
# increasing across process restarts too.
next_version = itertools.count(time.time_ns()).__next__

PULL = "__pregel_pull"
_TRIGGERED_CACHE = 4096  # distinct sets of updated channels remembered per plan (`_triggered`)
PUSH = "__pregel_push"


def task_id(checkpoint_id: str, ns: str, step: int, name: str, kind: str, index: Any) -> str:
    """Deterministic, so a resumed step finds the pending writes of the same tasks."""
    digest = hashlib.blake2b(
        f"{checkpoint_id}|{ns}|{step}|{name}|{kind}|{index}".encode(), digest_size=16
    ).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:]}"


class Task:
    """One node execution in one super-step, and what it produced."""

    __slots__ = (
        "_id", "_key", "_ns", "name", "node", "input", "path", "triggers", "parent_ns", "writes",
        "update", "resume", "error", "interrupts", "interrupted", "done", "cached", "order",
        "subgraph_calls",
    )

    def __init__(
        self, tid: str | None, node: NodePlan, value: Any, path: tuple[Any, ...],
        triggers: tuple[str, ...], parent_ns: str, order: tuple[int, Any],
        key: tuple[Any, ...] | None = None,
    ) -> None:
        self._id = tid
        self._key = key  # `task_id`'s arguments when `tid` is None: hashed on first use
        self._ns: str | None = None
        self.name = node.name
        self.node = node
        self.input = value
        self.path = path
        self.triggers = triggers
        self.parent_ns = parent_ns
        self.writes: list[tuple[str, Any]] = []
        self.update: Any = None
        self.resume: list[Any] = []
        self.error: BaseException | None = None
        self.interrupts: tuple[Interrupt, ...] = ()
        self.interrupted = False
        self.done = False
        self.cached = False
        self.order = order
        # subgraph runs started under this task: the k-th (from 0) gets namespace `ns|k` for
        # k > 0, as LangGraph counts them, so two calls of one subgraph keep apart (issue 27)
        self.subgraph_calls = 0

    def stops_siblings(self) -> bool:
        """Whether this task's failure cancels the step's other tasks: any failure but a
        rejected answer to an interrupt (issue 29), so the tasks answered in the same resume
        finish and keep their writes, and their side effects do not run twice when the
        interrupt is answered again."""
        return self.error is not None and not is_invalid_resume(self.error)

    @property
    def id(self) -> str:
        """Deterministic, computed on first use: a run without a saver, streaming nothing
        that names tasks, never needs it."""
        tid = self._id
        if tid is None:
            tid = self._id = task_id(*self._key)  # type: ignore[misc]
        return tid

    @property
    def ns(self) -> str:
        """This task's checkpoint namespace (its subgraphs run under it)."""
        ns = self._ns
        if ns is None:
            own = f"{self.name}:{self.id}"
            ns = self._ns = f"{self.parent_ns}|{own}" if self.parent_ns else own
        return ns

    def __repr__(self) -> str:
        return f"Task({self.name!r}, id={self.id!r})"


def _read(node: NodePlan, channels: dict[str, Channel]) -> Any:
    values = {}
    for key in node.reads:
        value = channels[key].value
        if value is not MISSING:
            values[key] = value
    return values


def prepare_tasks(
    plan: Plan,
    channels: dict[str, Channel],
    candidates: Iterable[str] | None,
    step: int,
    checkpoint_id: str,
    ns: str,
    stop: int = 0,
) -> list[Task]:
    """The tasks of `step`: nodes with an available trigger, then one task per pending Send.

    Every trigger channel is consumed by the step after it was written (ephemeral edges,
    barriers that reset, deferred edges), so an available trigger is a pending one: no
    per-node "versions seen" bookkeeping is needed. `candidates` are the channels updated by
    the previous step (None: consider every node, as after `update_state` on an old file).
    """
    nodes = plan.nodes
    if candidates is None:
        names: Iterable[str] = nodes
        check_sends = True
    else:
        names, check_sends = _triggered(plan, candidates)
    tasks: list[Task] = []
    inputs: dict[int, Any] = {}  # per input group: the input built for the step's first node
    for name in names:
        node = nodes[name]
        triggers = node.triggers
        if len(triggers) == 1:  # most nodes: no generator for one channel
            if not channels[triggers[0]].is_available():
                continue
        elif not any(channels[t].is_available() for t in triggers):
            continue
        if name == "__start__":
            value = channels["__start__"].value
        elif node.input_group in inputs:
            value = copy.copy(inputs[node.input_group])
        else:
            value = _read(node, channels)
            if node.managed:  # computed for this step, never stored (issue 17)
                value.update(managed_values(node.managed, step, stop))
            if node.reader is not None:
                value = node.reader(value)
            inputs[node.input_group] = value
        key = (checkpoint_id, ns, step, name, PULL, name)
        tasks.append(Task(None, node, value, (PULL, name), triggers, ns, (0, name), key))
    if check_sends:
        sends = channels[TASKS].value
        if sends is not MISSING:
            for index, send in enumerate(sends):
                node = nodes.get(send.node) if isinstance(send, Send) else None
                if node is None:
                    continue
                if send.timeout is not None:
                    node = _timed(node, send.timeout)
                key = (checkpoint_id, ns, step, send.node, PUSH, index)
                tasks.append(
                    # path as LangGraph shows it: (PUSH, index, False)
                    Task(None, node, send.arg, (PUSH, index, False), (PUSH,), ns, (1, index), key)
                )
    return tasks


def _timed(node: NodePlan, timeout: Any) -> NodePlan:
    """The node as one Send runs it: the Send's own timeout over the node's (issue 29)."""
    return dataclasses.replace(node, timeout=timeout_policy(timeout, node.is_async, node.name))


def _triggered(plan: Plan, candidates: Iterable[str]) -> tuple[tuple[str, ...], bool]:
    """The nodes `candidates` trigger (in insertion order) and whether they include pending
    Sends, remembered per plan: a loop updates the same channels step after step."""
    key = tuple(candidates)
    found = plan.triggered.get(key)
    if found is None:
        found = _find_triggered(plan, key)
        if len(plan.triggered) < _TRIGGERED_CACHE:
            plan.triggered[key] = found
    return found


def _find_triggered(plan: Plan, candidates: tuple[str, ...]) -> tuple[tuple[str, ...], bool]:
    """`_triggered` uncached: each candidate's subscribers, once each, in insertion order."""
    nodes = plan.nodes
    found: set[str] = set()
    lookup = plan.trigger_to_nodes
    for channel in candidates:
        triggered = lookup.get(channel)
        if triggered:
            found.update(triggered)
    return tuple(sorted(found, key=lambda n: nodes[n].index)), TASKS in candidates


def apply_writes(
    channels: dict[str, Channel],
    versions: dict[str, int],
    tasks: list[Task],
    previously_updated: Iterable[str] | None,
    dirty: set[str],
) -> list[str]:
    """Apply a finished step's writes; returns the channels whose value changed.

    Every channel whose version moves is added to `dirty` (what the next checkpoint stores).
    A channel left empty (a consumed trigger, a cleared edge) drops out of `versions`: the
    checkpoint then lists only channels holding a value, so its size follows the state, not
    the number of nodes.
    """
    for task in tasks:
        if task.path[0] == PULL:
            for trigger in task.node.triggers:
                channel = channels[trigger]
                if channel.consumes and channel.consume():
                    _moved(trigger, channel, versions, dirty)

    grouped: dict[str, list[Any]] = {}
    for task in sorted(tasks, key=_order) if len(tasks) > 1 else tasks:
        for channel, value in task.writes:
            bucket = grouped.get(channel)
            if bucket is None:
                grouped[channel] = [value]
            else:
                bucket.append(value)

    updated: list[str] = []
    for name, values in grouped.items():
        channel = channels.get(name)
        if channel is not None and channel.update(values):
            # `_moved` without its MISSING check: an update that changed a channel always
            # leaves it a value (every kind in `_channels`), and a step pays this per write
            versions[name] = next_version()
            dirty.add(name)
            updated.append(name)

    stale = (
        previously_updated
        if previously_updated is not None
        else [name for name, ch in channels.items() if ch.ephemeral]
    )
    for name in stale:
        if name in grouped:
            continue
        channel = channels.get(name)
        if channel is not None and channel.ephemeral and channel.clear():
            _moved(name, channel, versions, dirty)
    return updated


def _moved(name: str, channel: Channel, versions: dict[str, int], dirty: set[str]) -> None:
    if channel.checkpoint() is MISSING:
        versions.pop(name, None)
        dirty.discard(name)
    else:
        versions[name] = next_version()
        dirty.add(name)


def _order(task: Task) -> tuple[int, Any]:
    return task.order
