"""Executing a step's tasks, and the thin sync/async drivers around the `Run` core.

- One task runs inline; several run concurrently: a thread pool for sync runs, one anyio task
  group per step for async runs (STYLE 8). The first failure cancels the async siblings; sync
  siblings already running are waited for. A cancelled consumer waits for no sync node: its
  thread runs on in the background and saves nothing (as LangGraph; `_worker.py`). A
  concurrent step ended early saves its unfinished tasks as cancelled (as LangGraph).
- An interrupt in one task does not stop its siblings; their writes are saved as pending writes.
- Persistence is flushed from the run's outbox after each task and step (`durability="exit"`
  defers it to the end of the run).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import queue
import random
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

import anyio

from ._calls import aclose_children, close_children
from ._concurrency import async_gate, binding_limit, gated, run_limited_in_threads
from ._context import TaskScope, current_scope
from ._error_handler import handle_failure, node_cancelled, resume_handlers
from ._plan import Plan, root_writes
from ._run import Run
from ._routing import local_state as _local_state
from ._routing import route_writes as _route_writes
from ._run_control import drained, note_retry
from ._step import Task
from ._step_timeout import get_before, step_deadline, timed, wait_before
from ._stream import Wakeup
from ._timeout import run_timed
from .errors import GraphBubbleUp, GraphDrained, GraphInterrupt, InvalidUpdateError, ParentCommand
from .types import START, Command, RetryPolicy

if TYPE_CHECKING:
    from ._worker import Halt

__all__ = ["drive_async", "drive_sync", "save_cancelled", "write_out"]

_POOL: concurrent.futures.ThreadPoolExecutor | None = None
_DONE = object()


def _pool() -> concurrent.futures.ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = concurrent.futures.ThreadPoolExecutor(thread_name_prefix="graphrun-task")
    return _POOL


# -- output processing (pure) --------------------------------------------------------------------


def _writes_of(run: Run, task: Task, output: Any) -> list[tuple[str, Any]]:
    plan = run.plan
    node = task.node
    if type(output) is dict and node.writer is None and task.name != START:
        # the common case first (a graph node returning a dict): `updates_of` inlined
        keys = plan.state_key_set
        writes = [(k, v) for k, v in output.items() if k in keys]
        writes.extend(node.edge_writes)
        return writes
    if task.name == START and isinstance(output, Command):  # a fresh thread's Command (issue 18)
        writes = [(k, v) for k, v in output.update_items() if k in plan.input_keys]
        writes.extend(_command(run, Command(goto=output.goto)))
    elif task.name == START:
        writes = [(k, v) for k, v in _input_items(plan, output) if k in plan.state_key_set]
    elif task.node.writer is not None and task.node.writer is not root_writes:  # issue 17
        return task.node.writer(output)  # functional API; a one-value state goes on (issue 29)
    elif isinstance(output, Command):
        writes = _command(run, output)
    elif isinstance(output, (list, tuple)) and output and any(
        isinstance(c, Command) for c in output
    ):  # updates and Commands, applied in order (as LangGraph)
        writes = [
            w for c in output
            for w in (_command(run, c) if isinstance(c, Command) else plan.updates_of(c))
        ]
        plan.check_single_writes(writes)
    else:
        writes = plan.updates_of(output)
    writes.extend(task.node.edge_writes)
    return writes


def _input_items(plan: Plan, value: Any) -> list[tuple[str, Any]]:
    if plan.root:
        return root_writes(value)
    if isinstance(value, dict):
        return [(k, v) for k, v in value.items() if k in plan.input_keys]
    from ._schema import object_to_dict

    as_dict = object_to_dict(value)
    if as_dict is None:
        raise InvalidUpdateError(f"Expected dict, got {value}")
    return list(as_dict.items())


def _command(run: Run, command: Command) -> list[tuple[str, Any]]:
    if command.graph == Command.PARENT:
        if run.parent is None:  # nothing to apply it: it leaves the run (as LangGraph; issue 27)
            raise ParentCommand(command)
        signal = ParentCommand(Command(update=command.update, goto=command.goto))
        signal.target = run.parent
        raise signal
    return run.plan.command_writes(command)


def _delay(policy: RetryPolicy, attempt: int) -> float:
    interval = min(policy.max_interval, policy.initial_interval * policy.backoff_factor ** attempt)
    return interval + random.uniform(0, 1) if policy.jitter else interval


def _retry_policy(task: Task, error: Exception, attempt: int) -> RetryPolicy | None:
    for policy in task.node.retry:
        if policy.should_retry(error):
            return policy if attempt + 1 < policy.max_attempts else None
    return None


def _handle_parent_command(run: Run, task: Task, signal: ParentCommand) -> None:
    """A node of this task's subgraph asked this graph to update/goto, as if this task had."""
    if getattr(signal, "target", None) is not run:
        raise signal  # meant for a graph further up: leaves this run like an error
    task.writes = run.plan.command_writes(signal.command) + list(task.node.edge_writes)
    if run.want_messages:  # what it sends up is not streamed as its messages (issue 27)
        run.sent_up = run.sent_up or set()
        run.sent_up.add(task.id)


def _langchain_context(run: Run, scope: TaskScope) -> Any:
    """Let LangChain runnables called inside the node inherit the task config (callbacks)."""
    if not run.lc_callbacks and (scope.watch is None or not scope.watch.langchain):
        return None
    from langchain_core.runnables.config import var_child_runnable_config

    return var_child_runnable_config.set(scope.config)


# -- one task, sync -------------------------------------------------------------------------------


def _call_sync(run: Run, task: Task) -> None:
    scope = TaskScope(task, run)
    token = current_scope.set(scope)
    # a new scope has no `watch` (a timed attempt's, async only): only `lc_callbacks` counts
    lc_token = _langchain_context(run, scope) if run.lc_callbacks else None
    try:
        output = task.node.callee.call(task.input, scope) if task.node.callee else task.input
        if scope.children is not None:  # the `@task`s the node called (issue 17)
            close_children(scope, False)
        writes = _writes_of(run, task, output)  # after any `push_message` writes (issue 29)
        task.writes = [*task.writes, *writes] if task.writes else writes
        for index, branch in enumerate(task.node.branches):
            state = _local_state(run, task, branch, output)
            events = run.events
            run_id = events.router_start(task, index, state) if events is not None else None
            result = branch.router.call(state, scope)
            if events is not None:
                events.router_end(task, index, run_id, state, result)
            task.writes.extend(_route_writes(run, branch, result))
    except GraphBubbleUp:
        if scope.children is not None:  # an interrupt lets its calls finish (issue 27)
            close_children(scope, False)
        raise
    finally:
        if scope.children is not None:
            close_children(scope, True)
        if lc_token is not None:
            lc_token.var.reset(lc_token)
        current_scope.reset(token)


def _settle(run: Run, task: Task, error: BaseException, attempt: int) -> float | Task | None:
    """Record how a task ended on `error`; the delay before a retry, None when it is over, or
    the task of its node's error handler, to run now.

    Shared by the sync and async executors, so a task ends the same way in both.
    """
    if isinstance(error, GraphInterrupt):
        run.task_interrupted(task, error.interrupts)
        return None
    if isinstance(error, (ParentCommand, GraphDrained)):
        task.error = error  # not persisted: the parent graph applies it, or its run drains
        return None
    if isinstance(error, GraphBubbleUp) or not isinstance(error, Exception):
        run.task_failed(task, error)
        return None
    policy = _retry_policy(task, error, attempt)
    if policy is None:  # over, unless its node's error handler takes over (issue 29)
        return handle_failure(run, task, error)
    task.writes = []
    note_retry(run, task, attempt)  # the next attempt's `execution_info` (issue 29)
    return _delay(policy, attempt)


def _stopped(run: Run) -> bool:
    """The root run's consumer stopped (a cancelled server run): what is in flight is dropped,
    in its subgraphs too (LangGraph cancels a subgraph's loop with its parent's)."""
    stop = run.root.stop_event
    return stop is not None and stop.is_set()


def _done(run: Run, task: Task) -> None:
    if _stopped(run):  # finished after the cancel: dropped (issue 18; `_worker.Halt`)
        return
    if run.cache is not None:
        run.cache_writes(task)
    run.task_finished(task)


def execute_sync(run: Run, task: Task) -> None:
    """Run one task to a recorded outcome (finished, interrupted or failed); never raises."""
    if run.cache is not None and run.cached_writes(task):
        run.task_finished(task)
        return
    attempt = 0
    while True:
        try:
            try:
                _call_sync(run, task)
            except ParentCommand as signal:
                _handle_parent_command(run, task, signal)
            _done(run, task)
            return
        except (Exception, GraphBubbleUp) as error:
            delay = _settle(run, task, error, attempt)
            if delay is None or isinstance(delay, Task):  # over, or its error handler's turn
                return None if delay is None else execute_sync(run, delay)
            time.sleep(delay)
            attempt += 1


# -- one task, async ------------------------------------------------------------------------------


def _in_scope(scope: TaskScope, fn: Any, *args: Any) -> Any:
    token = current_scope.set(scope)
    try:
        return fn(*args)
    finally:
        current_scope.reset(token)


async def _acall(run: Run, task: Task, watch: Any = None) -> None:
    scope = TaskScope(task, run)
    if watch is not None:  # a timed attempt (issue 17): its progress signals touch the watch
        scope.watch = watch
        scope.writer = watch.writer(scope.writer)
    callee = task.node.callee
    token = current_scope.set(scope)
    lc_token = _langchain_context(run, scope)
    try:
        if callee is None:
            output = task.input
        elif callee.is_async or callee.afn is not None:
            output = await callee.acall(task.input, scope)
        else:
            ctx = contextvars.copy_context()
            # abandoned on cancel, as LangGraph leaves its executor thread: the node runs on, its
            # result dropped
            output = await anyio.to_thread.run_sync(ctx.run, callee.call, task.input, scope,
                                                    abandon_on_cancel=True)
        if scope.children is not None:  # the `@task`s the node called (issue 17)
            await aclose_children(scope, False)
        writes = _writes_of(run, task, output)  # after any `push_message` writes (issue 29)
        task.writes = [*task.writes, *writes] if task.writes else writes
        for index, branch in enumerate(task.node.branches):
            state = _local_state(run, task, branch, output)
            events = run.events
            run_id = events.router_start(task, index, state) if events is not None else None
            if branch.router.is_async:
                result = await branch.router.acall(state, scope)
            else:
                result = branch.router.call(state, scope)
            if events is not None:
                events.router_end(task, index, run_id, state, result)
            task.writes.extend(_route_writes(run, branch, result))
    except asyncio.CancelledError as error:  # raised by the node itself: it failed (issue 29)
        raise node_cancelled(task, error) from error
    except GraphBubbleUp:
        if scope.children is not None:  # an interrupt lets its calls finish (issue 27)
            await aclose_children(scope, False)
        raise
    finally:
        if scope.children is not None:
            await aclose_children(scope, True)
        if lc_token is not None:
            lc_token.var.reset(lc_token)
        current_scope.reset(token)


async def execute_async(run: Run, task: Task) -> None:
    """`execute_sync` for async runs; cancellation propagates (it is not a task outcome)."""
    if run.cache is not None and run.cached_writes(task):
        run.task_finished(task)
        return
    attempt = 0
    while True:
        try:
            try:
                if task.node.timeout is None:
                    await _acall(run, task)
                else:
                    await run_timed(_acall, run, task)
            except ParentCommand as signal:
                _handle_parent_command(run, task, signal)
            _done(run, task)
            return
        except (Exception, GraphBubbleUp) as error:
            delay = _settle(run, task, error, attempt)
            if delay is None or isinstance(delay, Task):  # over, or its error handler's turn
                return None if delay is None else await execute_async(run, delay)
            await anyio.sleep(delay)
            attempt += 1


# -- persistence ----------------------------------------------------------------------------------


def _background(run: Run, op: str) -> Any:
    """With "async" durability, a saver's non-blocking form (ordered background commits)."""
    if run.durability != "async":
        return None
    return getattr(run.checkpointer, op + "_nowait", None)


def _saves_await(run: Run) -> bool:
    """Whether a step's `flush_async` awaits the saver (otherwise it hands changes over
    without an await, which no cancellation can interrupt)."""
    if run.checkpointer is None or run.durability == "exit":
        return False
    return _background(run, "put") is None or _background(run, "put_writes") is None


def _waits_at_end(run: Run) -> bool:
    """Whether the run's end waits until the saver committed what it handed over ("async").

    A subgraph writing through its root run's saver leaves that wait to the root, which makes
    it anyway before returning: one commit wait per invocation, not one per subgraph (with
    SQLite, a fan-out to 100 subgraphs waited for 100 commits)."""
    if run.durability != "async":
        return False
    root = run.root
    return root is run or run.checkpointer is not root.checkpointer or root.durability != "async"


def _keep_exit_checkpoint(run: Run) -> None:
    """`durability="exit"` (as LangGraph): of what the run queued, only its last checkpoint is
    saved, holding every channel that moved since the checkpoint the run started from (its
    parent), with that checkpoint's pending writes; a subgraph that finished saves nothing,
    unless it keeps its own history (`checkpointer=True`: no task id in its namespace)."""
    outbox = run.outbox
    if run.parent is not None and run.status == "done" and ":" in run.ns:
        outbox.clear()
        return
    puts = [args for op, args in outbox if op == "put"]
    kept: list[tuple[str, tuple[Any, ...]]] = []
    if puts:
        values: dict[str, Any] = {}
        versions: dict[str, Any] = {}
        for _, checkpoint, _, new_versions in puts:
            values.update(checkpoint["channel_values"])
            versions.update(new_versions)
        _, last, metadata, _ = puts[-1]
        final = last["channel_versions"]
        moved = {ch: v for ch, v in versions.items() if final.get(ch) == v}
        merged = {**last, "channel_values": {ch: values[ch] for ch in moved if ch in values}}
        kept.append(("put", (puts[0][0], merged, metadata, moved)))
    current = run.checkpoint_id
    kept += [
        item
        for item in outbox
        if item[0] == "put_writes" and item[1][0]["configurable"]["checkpoint_id"] == current
    ]
    outbox[:] = kept


def _sync_ops(run: Run) -> dict[str, Any]:
    """The saver methods this run writes with, looked up once per run."""
    ops = run.saver_ops
    if ops is None:
        saver = run.checkpointer
        ops = run.saver_ops = {
            op: _background(run, op) or getattr(saver, op) for op in ("put", "put_writes")
        }
    return ops


def flush_sync(run: Run, final: bool = False) -> None:
    """Hand the outbox to the saver: "sync" waits for each commit, "async" queues them in
    order and waits once at the end of the run, "exit" writes everything at the end.

    A run whose consumer abandoned it (`_worker.Halt`) saves nothing more, nor do its
    subgraphs: the consumer made its last save."""
    if run.checkpointer is None:  # the common case first: nothing to save
        run.outbox.clear()
        return
    halt = run.root.stop_event
    if halt is None:
        write_out(run, final)
        return
    with halt.lock:
        if halt.is_set():
            run.outbox.clear()
            return
        write_out(run, final)


def write_out(run: Run, final: bool = False) -> None:
    """`flush_sync` without the abandoned-run check (`Halt.abandon` holds its lock)."""
    saver = run.checkpointer
    outbox = run.outbox
    if saver is None:
        outbox.clear()
        return
    if run.durability == "exit":
        if not final:
            return
        _keep_exit_checkpoint(run)
    if outbox:
        ops = run.saver_ops or _sync_ops(run)
        items = outbox[:]
        del outbox[: len(items)]
        for op, args in items:
            ops[op](*args)
    if final and _waits_at_end(run) and hasattr(saver, "flush"):
        saver.flush()


async def flush_async(run: Run, final: bool = False) -> None:
    saver = run.checkpointer
    outbox = run.outbox
    if saver is None:
        outbox.clear()
        return
    if run.durability == "exit":
        if not final:
            return
        _keep_exit_checkpoint(run)
    # "async" durability hands each change over without awaiting (the common case: no await,
    # so nothing a cancellation could interrupt and no cancel scope to pay for per step).
    while outbox:
        background = _background(run, outbox[0][0])
        if background is None:
            break
        background(*outbox.pop(0)[1])
    flush = final and _waits_at_end(run) and hasattr(saver, "aflush")
    if not outbox and not flush:
        return
    with anyio.CancelScope(shield=True):  # a cancelled run still saves what it finished
        while outbox:
            op, args = outbox.pop(0)
            background = _background(run, op)
            if background is not None:
                background(*args)
            else:
                await getattr(saver, "a" + op)(*args)
        if flush:
            await saver.aflush()


def _raise_failure(tasks: list[Task]) -> None:
    if len(tasks) == 1:
        if tasks[0].error is not None:
            raise tasks[0].error
        return
    for task in sorted(tasks, key=lambda t: t.order):
        if task.error is not None:
            raise task.error


# -- drivers --------------------------------------------------------------------------------------


def drive_sync(
    run: Run, value: Any, saved: Any, live: bool, stop: Halt | None = None,
) -> Iterator[None]:
    """Run to completion; yields after anything that may have produced stream chunks.

    Once `stop` is set, a step still running is discarded: tasks that finish after it save
    nothing and the step is not applied; finished steps (and tasks) stay saved."""
    run.stop_event = stop
    if stop is not None:
        stop.run = run
    run.restore(saved)
    run.begin(value)
    flush_sync(run)
    yield
    halt = run.root.stop_event  # (`_stopped`, looked up once)
    try:
        while True:
            tasks = run.next_tasks()
            if tasks is None or (run.control is not None and drained(run, tasks)):
                break
            todo = _start(run, tasks)
            # the input task runs no user code, so it streams nothing live: no thread hop
            if len(todo) == 1 and (not live or todo[0].name == START) and not timed(run):
                # no yield here: a lone task's chunks reach the consumer once its writes
                # are applied, as in LangGraph (a reducer's ids show in `updates`, issue 17)
                execute_sync(run, todo[0])
                flush_sync(run)
                if todo[0].error is not None:
                    yield  # its chunks (a `tasks` error result) before the error
            elif todo:
                yield from _run_in_threads(run, todo, live)
            if halt is not None and halt.is_set() and not all(t.done for t in tasks):
                run.status = "cancelled"
                return
            if len(tasks) > 1 or tasks[0].error is not None:
                _raise_failure(tasks)
            run.finish_step(tasks)
            flush_sync(run)
            yield
            if run.status != "pending":
                break
        run.end()
    except GeneratorExit:
        run.close_step()
        raise
    finally:
        if run.status == "pending":
            run.status = "failed"
        flush_sync(run, final=True)


def _start(run: Run, tasks: list[Task]) -> list[Task]:
    """Announce the step's tasks (all starts before any result, as LangGraph's `tasks`
    stream) and return those left to execute; tasks finished before a resume replay."""
    if run.pending and any(t.node.error_handler for t in tasks):
        resume_handlers(run, tasks)  # a handled failure's handler runs again, not the node
    if len(tasks) == 1 and not tasks[0].cached:
        if run.events is not None or run.task_start:  # else `task_started` does nothing
            run.task_started(tasks[0])
        return tasks
    ordered = sorted(tasks, key=_start_order) if len(tasks) > 1 else tasks
    todo = [task for task in ordered if not task.cached]
    replayed = len(todo) < len(ordered)
    for task in ordered:  # replayed ones are announced too, as LangGraph (issue 17)
        run.task_started(task, node_events=not replayed)
    if replayed:  # their updates, then the node events of the tasks that really run
        for task in ordered:
            if task.cached:
                run.emit_cached(task)
        events = run.events
        if events is not None:
            for task in todo:
                if task.name != START:
                    events.node_start(task)
    return todo


def _start_order(task: Task) -> tuple[int, Any]:
    """Sends start first, in send order, then edge-triggered tasks by name (as LangGraph)."""
    kind, key = task.order
    return (0, key) if kind == 1 else (1, key)


def _run_in_threads(run: Run, tasks: list[Task], live: bool) -> Iterator[None]:
    """Run a step's tasks concurrently in the pool.

    Without a checkpointer and without live streaming, the first one runs in this thread, and
    then so does every sibling no pool thread has started yet: a pool thread only gets to start
    a task while this thread is blocked (or at the interpreter's switch interval), so tasks that
    really wait still overlap, while a step of fast tasks costs no thread hand-off at all.
    With a checkpointer every task runs in the pool, so each task's writes are saved the moment
    it finishes even while a slow sibling still runs.
    """
    # The root's live stream queue also wakes it for chunks; it is the root driver's alone. A
    # subgraph sharing the sink waits on its own queue: its tasks' completions on the root's
    # were taken by the root's step as its own, which ended the stream early (issue 17).
    ordered = sorted(tasks, key=_start_order)
    limit = binding_limit(run, len(tasks))
    if limit is not None:  # at most `max_concurrency` at once (issue 27)
        yield from run_limited_in_threads(run, ordered, live, limit)
        return
    shared = run.sink.events if live else None
    events: queue.SimpleQueue[Any] = shared if shared is not None else queue.SimpleQueue()
    pool = _pool()
    deadline = step_deadline(run)  # then none runs here: this thread keeps the clock
    here = not live and run.checkpointer is None and deadline is None
    inline = ordered.pop(0) if here else None
    jobs = []
    for task in ordered:
        claim = threading.Lock()
        ctx = contextvars.copy_context()
        pool.submit(ctx.run, _claimed, claim, events, run, task)
        jobs.append((claim, ctx, task))
    remaining = len(jobs)
    if inline is not None:
        execute_sync(run, inline)
        flush_sync(run)
        yield
        for claim, ctx, task in jobs:
            if claim.acquire(False):  # no pool thread has started it: run it here
                remaining -= 1
                ctx.run(execute_sync, run, task)
                flush_sync(run)
                yield
    yield from collect_done(run, events, remaining, deadline)


def collect_done(
    run: Run, events: queue.SimpleQueue[Any], remaining: int, deadline: float | None = None
) -> Iterator[None]:
    """Wait for `remaining` pool tasks, flushing each as it ends; yield per event."""
    sink = run.sink
    while remaining:
        try:
            item = events.get() if deadline is None else get_before(events, deadline)
        except TimeoutError:  # the threads cannot be stopped: wait for them (LangGraph)
            _drain(run, events, remaining)
            raise
        if item is _DONE:
            remaining -= 1
            flush_sync(run)
        else:
            sink.notified = False  # before the caller drains: a later push wakes us again
        yield


def _drain(run: Run, events: queue.SimpleQueue[Any], remaining: int) -> None:
    """Wait for a timed-out sync step's running tasks; what they write is saved."""
    while remaining:
        if events.get() is _DONE:
            remaining -= 1
            flush_sync(run)


def _claimed(claim: threading.Lock, events: queue.SimpleQueue[Any], run: Run, task: Task) -> None:
    """A pool job: run `task` unless the stepping thread has taken it; report only if run."""
    if not claim.acquire(False):
        return
    try:
        execute_sync(run, task)
    finally:
        events.put(_DONE)


def _on_asyncio() -> bool:
    """Whether the running loop is asyncio's (anyio no longer ships sniffio to ask)."""
    try:
        return asyncio.current_task() is not None
    except RuntimeError:  # no asyncio loop in this thread: trio or another backend
        return False


async def drive_async(run: Run, value: Any, saved: Any, live: bool) -> AsyncIterator[None]:
    run_step = _run_in_tasks if _on_asyncio() else _run_in_group
    run.restore(saved)
    run.begin(value)
    await flush_async(run)
    yield
    try:
        while True:
            tasks = run.next_tasks()
            if tasks is None or (run.control is not None and drained(run, tasks)):
                break
            todo = _start(run, tasks)
            if len(todo) == 1 and (not live or todo[0].name == START) and not timed(run):
                await execute_async(run, todo[0])  # no yield: as the sync driver
                await flush_async(run)
                if todo[0].error is not None:
                    yield
            elif todo:
                async with contextlib.aclosing(run_step(run, todo)) as step:
                    async for _ in step:
                        yield
            _raise_failure(tasks)
            run.finish_step(tasks)
            await flush_async(run)
            yield
            if run.status != "pending":
                break
        run.end()
    except GeneratorExit:
        run.close_step()
        raise
    finally:
        if run.status == "pending":
            run.status = "failed"
        await flush_async(run, final=True)


def _step_wakeup(run: Run) -> Wakeup:
    wakeup = run.root.sink.wakeup if run.parent is None else None
    return wakeup if wakeup is not None else Wakeup()


async def _run_in_group(run: Run, tasks: list[Task]) -> AsyncIterator[None]:
    """One task group for the step; yields whenever a chunk or a task completion arrives."""
    wakeup = _step_wakeup(run)
    remaining = len(tasks)
    gate = async_gate(run, len(tasks))  # `max_concurrency` (issue 27)
    execute = execute_async if gate is None else gated(gate, execute_async)
    deadline = step_deadline(run)

    async def one(task: Task, tg: anyio.abc.TaskGroup) -> None:
        nonlocal remaining
        await execute(run, task)
        await flush_async(run)
        remaining -= 1
        wakeup.set()
        if task.stops_siblings():
            tg.cancel_scope.cancel()

    try:
        async with anyio.create_task_group() as tg:
            for task in sorted(tasks, key=_start_order):
                tg.start_soon(one, task, tg)
            while remaining:
                await wait_before(wakeup, deadline)
                try:
                    yield
                except GeneratorExit:  # the consumer left mid-step: end the tasks, then go
                    tg.cancel_scope.cancel()
                    break
    finally:
        save_cancelled(run, tasks)


def save_cancelled(run: Run, tasks: list[Task]) -> None:
    """A concurrent step ended before all its tasks did (a sibling failed, or the consumer
    left): each task still unfinished is saved as cancelled, as LangGraph commits a cancelled
    future's `CancelledError`. A lone task leaves no trace (LangGraph runs it inline), nor
    does "exit" durability (LangGraph's exit save comes before those commits)."""
    if len(tasks) < 2 or run.durability == "exit":
        return
    for task in tasks:
        if not (task.done or task.interrupted or task.error is not None):
            run.task_cancelled(task)


async def _run_in_tasks(run: Run, tasks: list[Task]) -> AsyncIterator[None]:
    """`_run_in_group` on asyncio, with plain tasks: an anyio task group costs ~5x as much
    per step (80 vs 16 µs for two tasks), which a step of parallel nodes pays every time.

    The same structure: the first failure cancels the siblings, and the step does not end,
    however it is left (consumer gone, cancelled), before every task has. With a saver each
    task whose saves are awaited runs in its own cancel scope, so that cancelling it spares a
    save in progress (shielded in `flush_async`; asyncio's own `cancel()` would cut through
    the shield).
    """
    wakeup = _step_wakeup(run)
    loop = asyncio.get_running_loop()
    remaining = len(tasks)
    scopes = [anyio.CancelScope() for _ in tasks] if _saves_await(run) else None
    gate = async_gate(run, len(tasks))  # `max_concurrency` (issue 27)
    execute = execute_async if gate is None else gated(gate, execute_async)
    deadline = step_deadline(run)

    async def one(task: Task, index: int) -> None:
        if scopes is None:
            await execute(run, task)
        else:
            with scopes[index]:
                await execute(run, task)
                await flush_async(run)
        if task.stops_siblings():
            cancel()

    def finished(_child: asyncio.Task[None]) -> None:  # also for a task cancelled unstarted
        nonlocal remaining
        remaining -= 1
        wakeup.set()

    def cancel() -> None:
        for index, child in enumerate(children):
            if scopes is not None:
                scopes[index].cancel()
            elif child is not asyncio.current_task():
                child.cancel()

    ordered = sorted(tasks, key=_start_order)
    children = [loop.create_task(one(task, i)) for i, task in enumerate(ordered)]
    for child in children:
        child.add_done_callback(finished)
    try:
        while remaining:
            await wait_before(wakeup, deadline)
            yield
    finally:
        if remaining:  # left early: stop the siblings and wait for them, even if cancelled
            cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.wait(children)
        save_cancelled(run, tasks)
    for child in children:  # not a task outcome (those are recorded on the task): a bug
        if child.done() and not child.cancelled() and child.exception() is not None:
            raise child.exception()  # type: ignore[misc]
