"""The run core: input, super-steps, checkpoints, interrupts and resume, without any IO.

`Run` is driven by the sync and async drivers in `_tasks.py`. It never calls the saver itself:
what must be persisted is queued in `outbox` and the driver flushes it with the sync or async
saver methods, so the step logic exists once (STYLE 7).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from checkpoints.base import (
    ERROR,
    INTERRUPT,
    RESUME,
    Checkpoint,
    CheckpointTuple,
    new_checkpoint_id,
    now_iso,
)

from ._channels import MISSING, Channel
from ._config import DEFAULT_RECURSION_LIMIT
from ._context import NOTHING
from ._defer import finish_deferred
from ._events import Events
from ._metadata import (
    NOT_METADATA, caller_metadata, event_config, root_metadata, task_event_metadata, task_state,
)
from ._outcomes import NO_WRITES, Outcome, pending_by_task
from ._pending import describe_error as _describe  # how a task error is saved
from ._plan import Plan
from ._step import Task, apply_writes, next_version, prepare_tasks
from ._stream import (LC_MODES, Sink, checkpoint_task, error_repr, task_payload, task_result,
                      task_result_payload)
from .errors import EmptyInputError, GraphInterrupt, GraphRecursionError
from .types import START, Command, Interrupt, PregelTask, StateSnapshot

if TYPE_CHECKING:
    from ._pregel import CompiledStateGraph
    from ._worker import Halt

__all__ = ["NO_WRITES", "NULL_TASK_ID", "Run", "make_snapshot", "pending_values", "snapshot_tasks"]

NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"
INTERRUPT_SEEN = "__interrupt__"
LAST_TASKS = "__last__"  # in versions_seen: the nodes of the last step (for update_state)
_RESERVED_CONF = frozenset(("checkpoint_id", "checkpoint_ns", "checkpoint_map"))
_TASK_END_MODES = frozenset(("updates", "tasks", "debug"))  # what `_emit_task_end` streams


def _is_interrupt_id(key: Any) -> bool:
    return isinstance(key, str) and len(key) == 32 and all(c in "0123456789abcdef" for c in key)


class Run:
    """One invocation of a graph (or of a subgraph inside a parent task)."""

    sent_up: frozenset[str] | set[str] = frozenset()  # tasks a `Command.PARENT` finished
    parents_given: tuple[tuple[str, str], ...] = ()  # a subgraph's update_state (issue 27)
    control: Any = None  # a `RunControl` to drain on; `trace`: its LangChain run (issue 29)
    trace: Any = None
    travel_map: dict[str, str] = {}  # a root's: subgraph checkpoints to start from (_nested)
    replay_before: str | None = None  # a root sent back in time: its subgraphs' bound (_nested)
    travelled = False  # a subgraph started from the checkpoint its root's travel named

    def __init__(
        self,
        graph: CompiledStateGraph,
        config: dict[str, Any],
        *,
        sink: Sink,
        parent: Run | None = None,
        parent_task: Task | None = None,
        checkpointer: Any = None,
        store: Any = None,
        context: Any = None,
        interrupt_before: tuple[str, ...] = (),
        interrupt_after: tuple[str, ...] = (),
        durability: str = "async",
    ) -> None:
        self.graph = graph
        self.plan: Plan = graph.plan
        self.config = config
        self.sink = sink
        self.parent = parent
        self.parent_task = parent_task
        # set when the consumer of a sync root run in a worker thread stops (issue 18): a task
        # still running then is discarded, and nothing more is saved (`_worker.Halt`)
        self.stop_event: Halt | None = None
        self.root: Run = parent.root if parent is not None else self
        self.checkpointer = checkpointer
        self.cache = graph.cache if graph.cache is not None or parent is None else parent.cache
        self.store = store
        self.context = context
        self.interrupt_before = interrupt_before
        self.interrupt_after = interrupt_after
        self.durability = durability
        conf = config.get("configurable", {})
        self.thread_id = conf.get("thread_id")
        # what node configs, `messages` and `events` carry (`_metadata.caller_metadata`)
        self.meta = caller_metadata(config)
        self.ns = parent_task.ns if parent_task is not None else conf.get("checkpoint_ns", "")
        self.ns_tuple: tuple[str, ...] = tuple(self.ns.split("|")) if self.ns else ()
        self.emits = parent is None or sink.subgraphs
        limit = config.get("recursion_limit", DEFAULT_RECURSION_LIMIT)
        if not isinstance(limit, int) or limit < 1:
            raise ValueError("recursion_limit must be at least 1")
        self.recursion_limit = limit
        self.channels: dict[str, Channel] = {}
        self.versions: dict[str, int] = {}
        self.seen: dict[str, dict[str, int]] = {}
        self.step = -1
        self.stop = 0
        self.updated: list[str] | None = None
        self.checkpoint_id: str | None = None
        self.checkpoint_config: dict[str, Any] | None = None
        # The current checkpoint was made by this run (not read from the saver): the tasks
        # prepared on it have ids no earlier run used, so their subgraphs start from nothing.
        self.owns_checkpoint = False
        self.fresh_namespace = False  # a subgraph with nothing saved yet (set by its caller)
        self.parent_config: dict[str, Any] | None = None
        self.saved_metadata: dict[str, Any] = {}
        self.dirty: set[str] = set()  # channels whose version moved since the last checkpoint
        self.pending: list[tuple[str, str, Any]] = []
        self.outbox: list[tuple[str, tuple[Any, ...]]] = []
        self.saver_ops: dict[str, Any] | None = None  # resolved saver methods (_tasks.flush_sync)
        self._base_metadata: dict[str, Any] | None = None
        self._task_event_metadata: dict[str, Any] | None = None
        self.tasks: list[Task] = []
        self.interrupts: list[Interrupt] = []
        self.valued = False  # a `values` chunk came (or would have): else invoke gives None
        self.status = "pending"
        self.resume_map: dict[str, Any] = {}
        self.null_resume: Any = NOTHING
        self.resuming = False
        self.step_open = False  # the current step's tasks ran (some maybe) but are not applied
        self.seen_messages: set[Any] = set()  # ids already streamed in `messages` mode (root)
        modes = sink.modes
        self.want_messages = self.emits and "messages" in modes
        self.lc_callbacks = not modes.isdisjoint(LC_MODES) and _langchain_loaded()
        self.events: Events | None = Events(self) if "events" in modes else None
        self.checkpoint_events = self.emits and self._wants_checkpoint_events()
        # A finished task's update (`_update_of`) only streams: a run streaming none of the
        # modes that show it does not build it (as `invoke` runs).
        self.task_end = self.emits and (
            self.want_messages or not modes.isdisjoint(_TASK_END_MODES)
        )
        self.needs_update = self.events is not None or self.task_end
        self.streams_custom = self.emits and "custom" in modes
        self.task_start = self.emits and ("tasks" in modes or "debug" in modes)

    # -- helpers tasks reach through TaskScope ---------------------------------------------------

    def custom_writer(self, task: Task) -> Callable[[Any], None]:
        if not self.streams_custom:
            return _noop
        sink = self.sink
        ns = self.ns_tuple
        if sink.writer_for is not None:
            return sink.writer_for(ns, "custom")
        push = sink.push
        return lambda chunk: push((ns, "custom", chunk))

    def take_resume(self, iid: str) -> Any:
        root = self.root
        if iid in root.resume_map:
            return root.resume_map.pop(iid)
        if root.null_resume is not NOTHING:
            value, root.null_resume = root.null_resume, NOTHING
            return value
        return NOTHING

    def task_config(self, task: Task) -> dict[str, Any]:
        """The config a node (and LangChain code inside it) sees: LangGraph's keys and shape."""
        config = self.config
        conf = dict(config.get("configurable") or {})
        # where each enclosing graph stands (LangGraph's keys; the run's own id stays None)
        conf["checkpoint_map"] = {**(conf.get("checkpoint_map") or {}), self.ns: self.checkpoint_id}
        conf["checkpoint_id"] = None
        conf["checkpoint_ns"] = task.ns
        metadata = dict(self.meta)
        metadata.update(self.task_metadata(task))
        out = {**config, "configurable": conf, "metadata": metadata}
        # the run's own id and name name the graph's run only, not the runs a node starts
        # (LangChain's patch_config drops them; issue 18: a model's events have their own id)
        out.pop("run_id", None)
        out.pop("run_name", None)
        if self.lc_callbacks:
            from ._messages import langchain_callbacks

            callbacks = langchain_callbacks(self, task)
            out["callbacks"] = callbacks if callbacks is not None else []
        return out

    def task_metadata(self, task: Task) -> dict[str, Any]:
        return {
            "langgraph_step": self.step,
            "langgraph_node": task.name,
            "langgraph_triggers": task.triggers,
            "langgraph_path": task.path,
            "langgraph_checkpoint_ns": task.ns,
            **task.node.metadata,
        }

    def push_message(
        self, task: Task, message: Any, metadata: dict[str, Any], replace: bool = False
    ) -> None:
        """Stream one message (chunk) of `task` in `messages` mode, remembering its id."""
        if not self.want_messages:
            return
        from ._messages import message_id

        if replace:
            meta = metadata
        else:
            meta = dict(self.meta)
            meta["ls_integration"] = "langgraph"
            meta.update(self.task_metadata(task))
            meta["graph_node"] = task.name  # the seed's name for langgraph_node (SPEC §1)
            meta.update(metadata)
        mid = message_id(message)
        if mid is not None:
            self.root.seen_messages.add(mid)
        self.sink.push((self.ns_tuple, "messages", (message, meta)))

    def _emit_returned_messages(self, task: Task) -> None:
        from ._messages import emit_returned

        emit_returned(self, task)

    # -- start ----------------------------------------------------------------------------------

    def restore(self, saved: CheckpointTuple | None) -> None:
        channels = self.plan.new_channels()
        if saved is None:
            self.channels = channels
            self.step = -2
            return
        cp = saved.checkpoint
        for name, value in cp["channel_values"].items():
            channel = channels.get(name)
            if channel is not None:
                channel.restore(value)
        self.channels = channels
        self.versions = dict(cp["channel_versions"])
        self.seen = {
            k: dict(v) for k, v in cp["versions_seen"].items() if k in (INTERRUPT_SEEN, LAST_TASKS)
        }
        self.updated = list(cp["updated_channels"]) if cp.get("updated_channels") else None
        self.checkpoint_id = cp["id"]
        self.checkpoint_config = saved.config
        self.owns_checkpoint = False
        self.parent_config = saved.parent_config
        self.saved_metadata = dict(saved.metadata or {})
        self.step = self.saved_metadata.get("step", -2)
        self.pending = list(saved.pending_writes or [])

    def begin(self, value: Any) -> None:
        """Apply the run's input: fresh input, None (continue) or a Command (resume/update)."""
        self.step += 1
        self.stop = self.step + self.recursion_limit + 1
        if self.events is not None:
            self.events.graph_start(value)
        if isinstance(value, Command):
            self._begin_command(value)
        elif value is None:
            if self.checkpoint_id is None:
                raise EmptyInputError("Received no input for __start__")
            self._mark_resuming()
        else:
            self._begin_input(value)

    def _begin_input(self, value: Any) -> None:
        self.pending = []
        self.channels[START].update([value])
        self.versions[START] = next_version()
        self.dirty.add(START)
        self.updated = [START]
        self._checkpoint("input")
        self.step += 1

    def _mark_resuming(self) -> list[tuple[str, Any]]:
        """Resume on the checkpoint; returns the updates earlier resumes kept on it, now
        applied (they stay pending until the step ends, as LangGraph's; issue 27)."""
        self.resuming = True
        self.seen[INTERRUPT_SEEN] = dict(self.versions)
        kept = []
        for task_id, channel, value in self.pending:
            if task_id == NULL_TASK_ID:
                if channel == RESUME:
                    self.null_resume = value
                else:
                    kept.append((channel, value))
        self._apply_null(kept)
        self.emit_values()  # before the resumed checkpoint's event, as LangGraph
        if self.emits and self._wants_checkpoint_events() and self.checkpoint_config:
            self._emit_checkpoint(
                self.checkpoint_config, self.parent_config, self.saved_metadata, self.step - 1
            )
        return kept

    def emit_values(self) -> None:
        """The current state as a `values` chunk (a resumed or forked run starts with it)."""
        values = self.values()
        self.valued = self.valued or bool(values)
        if values and self.emits and "values" in self.sink.modes:
            self.sink.push((self.ns_tuple, "values", values))

    def _pending_interrupts(self) -> int:
        from ._pending import pending_interrupt_count

        return pending_interrupt_count(self.pending)

    def _begin_command(self, command: Command) -> None:
        if self.checkpoint_id is None:
            self._begin_fresh_command(command)
            return
        kept = self._mark_resuming()
        resume = command.resume
        if resume is not None:
            if isinstance(resume, dict) and resume and all(_is_interrupt_id(k) for k in resume):
                self.resume_map = dict(resume)
            else:
                if self._pending_interrupts() > 1:
                    raise RuntimeError(
                        "When there are multiple pending interrupts, you must specify the "
                        "interrupt id when resuming."
                    )
                self.null_resume = resume
                self._put_writes(NULL_TASK_ID, [(RESUME, resume)])
        writes = self.plan.command_writes(Command(update=command.update, goto=command.goto))
        if writes and resume is not None:  # saved with the earlier ones (savers index them)
            self._put_writes(NULL_TASK_ID, [*kept, *writes])
        self._apply_null(writes)

    def _apply_null(self, writes: list[tuple[str, Any]]) -> None:
        if writes:
            null = Task(NULL_TASK_ID, self.plan.nodes[START], None, ("__input__",), (), "", (2, 0))
            null.writes = writes
            updated = apply_writes(self.channels, self.versions, [null], [], self.dirty)
            self.updated = sorted(set(self.updated or ()) | set(updated))
            self.seen[INTERRUPT_SEEN] = dict(self.versions)  # resumed past them (LangGraph)

    def _begin_fresh_command(self, command: Command) -> None:
        """A Command on a thread without checkpoints starts it, as LangGraph does (issue 18).

        Its update is applied first, then the Command is the START node's input: START applies
        the update again (a reducer sees it twice, as in LangGraph) and its goto runs alongside
        START's own edges.
        """
        writes = self.plan.command_writes(Command(update=command.update))
        if writes:
            null = Task(NULL_TASK_ID, self.plan.nodes[START], None, ("__input__",), (), "", (2, 0))
            null.writes = writes
            apply_writes(self.channels, self.versions, [null], [], self.dirty)
        self._begin_input(command)

    # -- steps ----------------------------------------------------------------------------------

    def next_tasks(self) -> list[Task] | None:
        """The tasks of the current step, or None when the run is over (status says why)."""
        if self.step > self.stop:
            raise GraphRecursionError(
                f"Recursion limit of {self.recursion_limit} reached without hitting a stop "
                "condition. You can increase the limit by setting the `recursion_limit` config "
                "key."
            )
        tasks = prepare_tasks(  # `_prepare`, inlined: once per step
            self.plan, self.channels, self.updated, self.step, self.checkpoint_id or "", self.ns,
            self.stop,
        )
        if not tasks:
            finished = [name for name, ch in self.channels.items() if ch.finish()]
            if finished:
                for name in finished:
                    self.versions[name] = next_version()
                self.dirty.update(finished)
                tasks = self._prepare(finished)
        if not tasks:
            self.status = "done"
            return None
        if self.interrupt_before and self._should_interrupt(self.interrupt_before, tasks):
            self.status = "interrupt_before"
            self._static_interrupt()
            return None
        self.tasks = tasks
        self.step_open = True
        if self.pending:
            self._match_pending(tasks)
        return tasks

    def _prepare(self, candidates: list[str] | None, step: int | None = None) -> list[Task]:
        return prepare_tasks(
            self.plan, self.channels, candidates, self.step if step is None else step,
            self.checkpoint_id or "", self.ns, self.stop,
        )

    def _should_interrupt(self, names: tuple[str, ...], tasks: list[Task]) -> bool:
        seen = self.seen.get(INTERRUPT_SEEN, {})
        changed = any(v > seen.get(ch, 0) for ch, v in self.versions.items())
        # Send (push) tasks count too, as LangGraph's `should_interrupt` (issue 17: a
        # ReAct agent's tools run as one Send per call)
        return changed and any(
            t.name != START and ("*" in names or t.name in names) for t in tasks
        )

    def _static_interrupt(self) -> None:
        if self.parent is None and "updates" in self.sink.modes:  # a subgraph's: its parent's
            self.sink.push((self.ns_tuple, "updates", {"__interrupt__": ()}))
        if self.parent is not None:
            raise GraphInterrupt(())

    def _match_pending(self, tasks: list[Task]) -> None:
        """On resume, reuse the writes of tasks that already finished in this step."""
        if not self.pending:
            return
        by_task = pending_by_task(self.pending)
        for task in tasks:
            outcome = by_task.get(task.id)
            if outcome is None:
                continue
            if outcome.resume:
                task.resume = list(outcome.resume)
            if outcome.finished:
                task.writes = outcome.writes
                task.done = True
                task.cached = True
                task.update = self._update_of(task)

    def task_finished(self, task: Task) -> None:
        """Record a finished task: persist its writes and stream its update."""
        task.done = True
        if self.needs_update:
            task.update = self._update_of(task)
        self._put_writes(task, task.writes or [(NO_WRITES, None)])
        if self.events is not None and task.name != START:
            self.events.node_end(task)
        if self.task_end:
            if self.want_messages and task.name != START:
                self._emit_returned_messages(task)
            self._emit_task_end(task)

    def task_interrupted(self, task: Task, interrupts: tuple[Interrupt, ...]) -> None:
        task.interrupts = interrupts
        task.interrupted = True
        writes: list[tuple[str, Any]] = [(INTERRUPT, list(interrupts))]
        if task.resume:
            writes.append((RESUME, list(task.resume)))
        self._put_writes(task, writes)
        if not self.emits:
            return
        modes = self.sink.modes
        # LangGraph's order: the interrupt in updates and values, then the task's result
        if "updates" in modes and (interrupts or self.parent is None):  # () static: root only
            self.sink.push((self.ns_tuple, "updates", {"__interrupt__": interrupts}))
        if interrupts and "values" in modes:
            self.sink.push((self.ns_tuple, "values", self.interrupted_values(interrupts)))
        if "tasks" in modes or "debug" in modes:
            self._emit_task_result(task)

    def interrupted_values(self, interrupts: Any) -> Any:
        """The `values` chunk of an interrupted run: the state plus `__interrupt__`."""
        return {**self.values(), "__interrupt__": interrupts}

    def task_cancelled(self, task: Task) -> None:
        """A concurrent task still running when its run was cancelled: saved as cancelled, as
        LangGraph saves a cancelled task's `CancelledError` (issue 18); nothing streams."""
        import asyncio

        self._put_writes(task, [(ERROR, _describe(asyncio.CancelledError()))])

    def task_failed(self, task: Task, error: BaseException) -> None:
        task.error = error
        if self.events is not None:
            self.events.node_error(task, error)
        self._put_writes(task, [(ERROR, _describe(error))])
        if self.emits and ("tasks" in self.sink.modes or "debug" in self.sink.modes):
            self._emit_task_result(task)

    def _cache_key(self, task: Task) -> tuple[tuple[str, ...], str]:
        key = task.node.cache.key_func(task.input)
        if isinstance(key, (bytes, bytearray)):
            key = hashlib.blake2b(key, digest_size=16).hexdigest()
        return (("__node_cache__", task.name), str(key))

    def cached_writes(self, task: Task) -> bool:
        """Reuse the writes a cached node produced for the same input (its `CachePolicy`)."""
        if self.cache is None or task.node.cache is None:
            return False
        key = self._cache_key(task)
        hit = self.cache.get([key]).get(key)
        if hit is None:
            return False
        task.writes = [tuple(w) for w in hit]
        task.cached = True
        return True

    def cache_writes(self, task: Task) -> None:
        if self.cache is None or task.node.cache is None or task.cached:
            return
        self.cache.set({self._cache_key(task): (list(task.writes), task.node.cache.ttl)})

    def task_started(self, task: Task, node_events: bool = True) -> None:
        if node_events and self.events is not None and task.name != START:
            self.events.node_start(task)
        if not self.task_start or task.name == START:  # (`task_start`: tasks or debug)
            return
        modes = self.sink.modes
        payload = task_payload(task, self.task_event_metadata())
        if "tasks" in modes:
            self.sink.push((self.ns_tuple, "tasks", payload))
        if "debug" in modes:
            self.sink.push((self.ns_tuple, "debug", self._debug("task", payload)))

    def caller_metadata(self) -> dict[str, Any]:
        """The config's metadata as nodes and message chunks see it (`_metadata`)."""
        return self.meta

    def task_event_metadata(self) -> dict[str, Any]:
        """The metadata of this run's task-start chunks (`_metadata`)."""
        if self._task_event_metadata is None:
            self._task_event_metadata = task_event_metadata(self.caller_metadata(), self.config)
        return self._task_event_metadata

    def finish_step(self, tasks: list[Task]) -> None:
        """Apply the step's writes, checkpoint, and stop on interrupts (static or dynamic)."""
        interrupts: list[Interrupt] = []
        interrupted = False  # a subgraph stopped on a static interrupt has no Interrupt objects
        for task in tasks:
            if task.interrupted:
                interrupted = True
                interrupts.extend(task.interrupts)
        if interrupted:
            self.status = "interrupted"
            self.interrupts = interrupts
            if self.emits and "values" in self.sink.modes:
                self._emit_pending_values([t for t in tasks if t.done and t.writes])
            if self.parent is not None:
                raise GraphInterrupt(tuple(interrupts))
            return
        self.pending = []
        self.step_open = False
        self.updated = apply_writes(self.channels, self.versions, tasks, self.updated, self.dirty)
        if self.plan.deferred:  # finished before the checkpoint, as LangGraph (issue 27)
            self.updated = finish_deferred(self, self.updated)
        step = self.step
        self.seen[LAST_TASKS] = (
            {tasks[0].name: step} if len(tasks) == 1 else {t.name: step for t in tasks}
        )
        wants = self.emits and "values" in self.sink.modes
        if (wants or not self.valued) and any(k in self.plan.state_key_set for k in self.updated):
            self.valued = True
            if wants:
                self.sink.push((self.ns_tuple, "values", self.values()))
        self._checkpoint("loop")
        self.step += 1
        if self.interrupt_after and self._should_interrupt(self.interrupt_after, tasks):
            self.status = "interrupt_after"
            self.seen[INTERRUPT_SEEN] = dict(self.versions)
            self._static_interrupt()

    def _emit_pending_values(self, finished: list[Task]) -> None:
        """After an interrupt, the state with the finished siblings' writes applied."""
        if not finished:
            return
        values = pending_values(self, finished)
        self.sink.push((self.ns_tuple, "values", values))

    # -- state ----------------------------------------------------------------------------------

    def values(self, keys: tuple[str, ...] | None = None) -> dict[str, Any]:
        out = {}
        channels = self.channels
        for key in keys or self.plan.state_keys:
            value = channels[key].value
            if value is not MISSING:
                out[key] = value
        return out

    def shaped(self, values: dict[str, Any]) -> Any:
        """The state as callers see it: keyed state as is (`_root.RootRun` unwraps its one
        value, issue 29)."""
        return values

    def close_step(self) -> None:
        """The consumer stopped mid-run: a step whose tasks all finished is still saved."""
        tasks = self.tasks
        if self.step_open and tasks and all(
            t.done and t.error is None and not t.interrupted for t in tasks
        ):
            self.finish_step(tasks)

    def end(self) -> None:
        """The run stopped normally (done or interrupted)."""
        if self.events is not None:
            self.events.graph_end(self.values(self.plan.output_keys))

    def output(self) -> dict[str, Any] | None:
        if not (self.valued or self.interrupts or self.parent):
            return None  # no `values` chunk: LangGraph's invoke returns None (issue 17)
        # Stopped on an interrupt (a subgraph's static one too): the output has the finished
        # siblings' writes applied, as the last `values` chunk (issues 17, 27; as LangGraph).
        done = [t for t in self.tasks if t.done and t.writes] if self.step_open else None
        keys, pending = self.plan.output_keys, pending_values(self, done) if done else None
        result = {k: pending[k] for k in keys if k in pending} if pending else self.values(keys)
        if self.interrupts:
            result["__interrupt__"] = list(self.interrupts)
        return result

    def snapshot_result(self, writes: list[tuple[str, Any]]) -> Any:
        """A finished task's result as a snapshot's `PregelTask.result` shows it."""
        return task_result(writes, self.plan.state_key_set)  # a key written twice: `$writes`

    def _update_of(self, task: Task) -> Any:
        keys = self.plan.state_key_set
        update = {}
        count = 0
        for ch, v in task.writes:
            if ch in keys:
                update[ch] = v
                count += 1
        if count > len(update):
            # a key written twice (a list of Commands): one dict per write, as LangGraph
            return [{ch: v} for ch, v in task.writes if ch in keys]
        return update or None

    def _emit_task_end(self, task: Task) -> None:
        modes = self.sink.modes
        if task.name != START:
            if "updates" in modes:
                chunk: dict[str, Any] = {task.name: task.update}
                if task.cached:
                    chunk["__metadata__"] = {"cached": True}
                self.sink.push((self.ns_tuple, "updates", chunk))
            if "tasks" in modes or "debug" in modes:
                self._emit_task_result(task)

    def _emit_task_result(self, task: Task) -> None:
        payload = task_result_payload(task, self.plan.state_key_set)
        if "tasks" in self.sink.modes:
            self.sink.push((self.ns_tuple, "tasks", payload))
        if "debug" in self.sink.modes:
            self.sink.push((self.ns_tuple, "debug", self._debug("task_result", payload)))

    def emit_cached(self, task: Task) -> None:
        """A task replayed from pending writes: its update, and no result (as LangGraph)."""
        if self.events is not None and task.name != START:
            self.events.node_replayed(task)
        if self.emits and "updates" in self.sink.modes and task.name != START:
            chunk = {task.name: task.update, "__metadata__": {"cached": True}}
            self.sink.push((self.ns_tuple, "updates", chunk))

    def _debug(self, kind: str, payload: Any) -> dict[str, Any]:
        return {
            "step": self.step,
            "timestamp": now_iso(),
            "type": kind,
            "payload": payload,
        }

    # -- persistence ----------------------------------------------------------------------------

    def _put_writes(self, task: Task | str, writes: list[tuple[str, Any]]) -> None:
        """Queue `writes` of `task` (or of a task id) for the saver; without one, nothing
        (and a task's id is never computed)."""
        if self.checkpointer is None or self.checkpoint_config is None:
            return
        tid = task if isinstance(task, str) else task.id
        self.outbox.append(("put_writes", (self.checkpoint_config, writes, tid, self.ns)))

    def _checkpoint(self, source: str) -> None:
        if self.checkpointer is None and not self.checkpoint_events:
            # Nothing is saved: task ids only need a seed unique to this run (the step is
            # part of the task id), so skip making a time-ordered id every step.
            if self.checkpoint_id is None:
                self.checkpoint_id = new_checkpoint_id()
            self.dirty.clear()
            return
        checkpoint_id = new_checkpoint_id()
        self.checkpoint_id = checkpoint_id
        # Only the channels whose version moved travel (SPEC §2: a saver stores just those).
        new_versions = {}
        values = {}
        channels = self.channels
        versions = self.versions
        for name in self.dirty:
            version = versions.get(name)
            if version is not None:
                new_versions[name] = version
                values[name] = channels[name].checkpoint()
        self.dirty = set()
        # a literal: calling the TypedDict with keywords builds the same dict in 3.4 vs 0.45 µs
        checkpoint: Checkpoint = {
            "v": 1,
            "id": checkpoint_id,
            "ts": now_iso(),
            "channel_values": values,
            "channel_versions": dict(versions),
            "versions_seen": dict(self.seen),  # inner dicts are replaced, never mutated
            "updated_channels": list(self.updated or ()),
        }
        metadata = self._metadata(source)
        parent_config = self.checkpoint_config
        config = {
            "configurable": {
                "thread_id": self.thread_id,
                "checkpoint_ns": self.ns,
                "checkpoint_id": checkpoint_id,
            }
        }
        if self.checkpointer is not None:
            base = parent_config or {
                "configurable": {"thread_id": self.thread_id, "checkpoint_ns": self.ns}
            }
            if self.parent is not None:
                base = self._nested_put_config(base)
            self.outbox.append(("put", (base, checkpoint, metadata, new_versions)))
        self.checkpoint_config = config
        self.owns_checkpoint = True
        self.saved_metadata = metadata
        if self.checkpoint_events:  # "exit" saves none between: the loaded one's parent (issue 27)
            parent_config = self.parent_config if self.durability == "exit" else parent_config
            self._emit_checkpoint(config, parent_config, metadata, self.step)

    def _nested_put_config(self, base: dict[str, Any]) -> dict[str, Any]:
        """A subgraph's saver sees its parent task's config as under LangGraph: the ancestors'
        `checkpoint_map` and the task's metadata (library savers ignore both; the agent server's
        stores them in the checkpoint's metadata, issue 18)."""
        conf = self.config.get("configurable") or {}
        configurable = {**base["configurable"], "checkpoint_map": conf.get("checkpoint_map") or {}}
        return {"configurable": configurable, "metadata": self.config.get("metadata") or {}}

    def _wants_checkpoint_events(self) -> bool:
        modes = self.sink.modes
        return self.checkpointer is not None and ("checkpoints" in modes or "debug" in modes)

    def _metadata(self, source: str) -> dict[str, Any]:
        # The caller's metadata (the server's run_id, graph_id...) and configurable scalars; a
        # subgraph's config metadata is its parent task's, stored without LangGraph's own keys
        # (as LangGraph's savers skip them).
        base = self._base_metadata
        if base is None:
            base = self._base_metadata = (
                root_metadata(self.config) if self.parent is None
                else {k: v for k, v in root_metadata(self.config).items() if k not in NOT_METADATA}
            )
        meta: dict[str, Any] = dict(base)
        meta["source"] = source
        meta["step"] = self.step
        meta["parents"] = self._parents() if self.parent is not None else dict(self.parents_given)
        return meta

    def _parents(self) -> dict[str, str]:
        if self.parent is None:
            return {}
        parents: dict[str, str] = {}
        run = self.parent
        while run is not None:
            if run.checkpoint_id is not None:
                parents[run.ns] = run.checkpoint_id
            run = run.parent
        return parents

    def _emit_checkpoint(
        self,
        config: dict[str, Any],
        parent_config: dict[str, Any] | None,
        metadata: dict[str, Any],
        step: int,
    ) -> None:
        # in the order the loop runs them: Sends, then nodes by name (as LangGraph's payload;
        # a snapshot's `next` keeps insertion order, as LangGraph's get_state)
        next_tasks = sorted(self._prepare(self.updated, step + 1), key=_run_order)
        outcomes = pending_by_task(self.pending) if self.pending else {}
        payload = {
            "config": event_config(self, config),
            "parent_config": event_config(self, parent_config) if parent_config else None,
            "values": self.values(),
            # the loop's own keys: LangGraph's events show the checkpoint's metadata before the
            # saver adds the caller's (issue 18)
            "metadata": {k: metadata[k] for k in ("source", "step", "parents") if k in metadata},
            "next": [t.name for t in next_tasks],
            "tasks": [
                {**checkpoint_task(t, outcomes.get(t.id), self.plan.output_keys),
                 "state": task_state(self, t)}
                for t in next_tasks
            ],
        }
        if "checkpoints" in self.sink.modes:
            self.sink.push((self.ns_tuple, "checkpoints", payload))
        if "debug" in self.sink.modes:
            event = self._debug("checkpoint", payload)
            event["step"] = step
            self.sink.push((self.ns_tuple, "debug", event))


def _run_order(task: Task) -> tuple[int, Any]:
    kind, key = task.order
    return (0, key) if kind == 1 else (1, key)


def _noop(_: Any) -> None:
    return None


def _langchain_loaded() -> bool:
    import sys

    return "langchain_core" in sys.modules


def pending_values(run: Run, finished: list[Task]) -> dict[str, Any]:
    """The state with the writes of `finished` tasks applied, on copies of the channels."""
    plan = run.plan
    grouped: dict[str, list[Any]] = {}
    for task in sorted(finished, key=lambda t: t.order):
        for channel, value in task.writes:
            if channel in plan.state_key_set:
                grouped.setdefault(channel, []).append(value)
    values = run.values(plan.state_keys)
    for key, items in grouped.items():
        channel = run.channels[key].fresh()
        channel.restore(run.channels[key].value)
        channel.update(items)
        values[key] = channel.value
    return run.shaped({k: values[k] for k in plan.state_keys if k in values})


def snapshot_tasks(run: Run, with_pending: bool) -> tuple[list[Task], tuple[PregelTask, ...]]:
    """The next tasks of a restored run, with results, errors and interrupts from pending
    writes; `with_pending` also marks the finished ones done (their writes then apply)."""
    tasks = run._prepare(run.updated, run.step + 1)
    if not tasks:  # deferred nodes run once nothing else is left: they are next
        deferred = [name for name, ch in run.channels.items() if ch.finish()]
        if deferred:
            tasks = run._prepare(deferred, run.step + 1)
    if tasks and tasks[-1].order[0] == 1:  # Sends first, nodes in insertion order (LangGraph)
        tasks.sort(key=lambda t: t.order[0] != 1)
    by_task = pending_by_task(run.pending)
    empty = Outcome()
    out = []
    for task in tasks:
        outcome = by_task.get(task.id, empty)
        error, interrupts, result = outcome.error, outcome.interrupts, None
        if outcome.finished:
            result = run.snapshot_result(outcome.writes)
            if with_pending:  # history shows the results but not applied (as LangGraph)
                error, interrupts = None, ()  # and what happened before the task finished
                task.writes = outcome.writes
                task.done = True
        state = None
        if task.node.is_subgraph:
            state = {"configurable": {"thread_id": run.thread_id, "checkpoint_ns": task.ns}}
        out.append(
            PregelTask(
                id=task.id,
                name=task.name,
                path=task.path,
                error=error_repr(error) if error is not None else None,
                interrupts=interrupts,
                state=state,
                result=result,
            )
        )
    return tasks, tuple(out)


def make_snapshot(run: Run, saved: CheckpointTuple, with_pending: bool = True) -> StateSnapshot:
    """A `StateSnapshot`; `get_state` applies finished tasks' pending writes, history does not."""
    raw, tasks = snapshot_tasks(run, with_pending)
    finished = [t for t in raw if t.done]
    interrupts = tuple(i for t in tasks for i in t.interrupts)
    return StateSnapshot(
        values=pending_values(run, finished) if finished else run.values(),
        next=tuple(t.name for t in raw if not t.done),
        config=saved.config,
        metadata=saved.metadata,
        created_at=saved.checkpoint["ts"],
        parent_config=saved.parent_config,
        tasks=tasks,
        interrupts=interrupts,
    )

