"""The functional API's `@task` (issue 17): calls that run in parallel and are checkpointed.

Calling a task inside an entrypoint (or inside another task) starts one more task of the
running step and returns a future at once: sync callers get a `concurrent.futures.Future`
run in the engine's thread pool, async callers an awaitable run in the entrypoint's task
group. The call's id is deterministic (the caller's task id and how many tasks it called
before), so when the entrypoint runs again after an interrupt or a failure, a call that
already finished finds its result in the step's pending writes and does not run again.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import inspect
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta
from typing import Any

import anyio

from ._cache_clear import TaskCacheMethods
from ._context import TaskScope, current_scope
from ._node import Callee
from ._plan import NodePlan
from ._run import Outcome, Run, pending_by_task
from ._step import PUSH, Task, task_id
from ._stream import task_result_payload
from ._timeout import timeout_policy
from .errors import GraphBubbleUp, GraphInterrupt
from .types import CachePolicy, Interrupt, RetryPolicy, TimeoutPolicy
from .warnings import renamed

__all__ = [
    "PREVIOUS", "RETURN", "AsyncioCalls", "CallingRun", "GroupCalls", "TaskFunction", "is_call",
    "aclose_children", "close_children", "named_input", "own_calls", "spawner", "task",
]

PREVIOUS = "__previous__"
RETURN = "__return__"
_RETURN_KEYS = frozenset((RETURN,))
_INJECTABLE = ("config", "writer", "store", "runtime")

# The task group an async entrypoint's calls run in (inherited by the calls themselves).
spawner: contextvars.ContextVar[Any] = contextvars.ContextVar("graphrun_spawner", default=None)
# The futures a running sync entrypoint or task has started: it waits for them before it ends.
_started: contextvars.ContextVar[list[CallFuture] | None] = contextvars.ContextVar(
    "graphrun_calls", default=None
)


def _return_writes(output: Any) -> list[tuple[str, Any]]:
    return [(RETURN, output)]


def is_call(task: Task) -> bool:
    """Whether `task` is a called `@task` (not a node of the graph)."""
    return task.node.writer is _return_writes


class CallingRun(Run):
    """A run whose tasks may call `@task`s (a graph's nodes, an entrypoint). A call is one more
    task of the running step whose result is saved as a pending write of the step, so when the
    step runs again (after an interrupt, a failure or a retry) a finished call is not re-run."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._calling()

    def _calling(self) -> None:
        self.lock = threading.Lock()  # calls flush the outbox from their own threads
        self.outcomes: dict[str, Outcome] | None = None
        self.results: dict[str, list[tuple[str, Any]]] = {}  # calls finished in this run

    def _update_of(self, task: Task) -> Any:
        if task.node.writer is _return_writes:
            return _result_of(task.writes)
        return super()._update_of(task)

    def task_finished(self, task: Task) -> None:
        if task.node.writer is _return_writes:
            self.results[task.id] = task.writes
        super().task_finished(task)

    def _emit_task_end(self, task: Task) -> None:
        if task.cached and is_call(task):  # a cache hit shows in updates only (as LangGraph)
            if "updates" in self.sink.modes:
                chunk = {task.name: task.update, "__metadata__": {"cached": True}}
                self.sink.push((self.ns_tuple, "updates", chunk))
            return
        super()._emit_task_end(task)

    def _emit_task_result(self, task: Task) -> None:
        if not is_call(task):
            super()._emit_task_result(task)
            return
        payload = task_result_payload(task, _RETURN_KEYS)  # `{"__return__": value}`
        if "tasks" in self.sink.modes:
            self.sink.push((self.ns_tuple, "tasks", payload))
        if "debug" in self.sink.modes:
            self.sink.push((self.ns_tuple, "debug", self._debug("task_result", payload)))

    def task_interrupted(self, task: Task, interrupts: tuple[Interrupt, ...]) -> None:
        """A call's interrupt is saved for its resume but shows only once, as its caller's
        (it reaches the caller through the call's future)."""
        if not is_call(task):
            super().task_interrupted(task, interrupts)
            return
        from checkpoints.base import INTERRUPT, RESUME

        task.interrupts = interrupts
        task.interrupted = True
        writes: list[tuple[str, Any]] = [(INTERRUPT, list(interrupts))]
        if task.resume:
            writes.append((RESUME, list(task.resume)))
        self._put_writes(task, writes)

    def saved_call(self, tid: str) -> tuple[list[tuple[str, Any]] | None, list[Any]]:
        """A call's writes if it already finished (in this run or before a resume), else
        None, and the resume values its interrupts were answered with."""
        done = self.results.get(tid)
        if done is not None:
            return done, []
        with self.lock:
            if self.outcomes is None:
                self.outcomes = pending_by_task(self.pending)
        outcome = self.outcomes.get(tid)
        if outcome is None:
            return None, []
        return (outcome.writes if outcome.finished else None), outcome.resume


class TaskFunction(TaskCacheMethods):
    """What `@task` returns: call it inside an entrypoint to get a future of its result."""

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        cache_policy: CachePolicy | None = None,
        timeout: float | timedelta | TimeoutPolicy | None = None,
    ) -> None:
        if not callable(func):
            raise TypeError(f"@task needs a function, got {type(func).__name__}")
        self.func = func
        self.name = name or _task_name(func)
        callee = Callee(_task_callable(func), self.name)
        retry = retry_policy
        self.node = NodePlan(
            name=self.name,
            callee=callee,
            triggers=(PUSH,),
            reads=(),
            reader=None,
            edge_writes=(),
            branches=(),
            retry=(retry,) if isinstance(retry, RetryPolicy) else tuple(retry or ()),
            cache=cache_policy,
            metadata={},
            is_async=callee.is_async,
            is_subgraph=False,
            writer=_return_writes,
            timeout=timeout_policy(timeout, callee.is_async, self.name, "Task"),
        )
        functools.update_wrapper(self, func)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"<task {self.name!r}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        scope = current_scope.get()
        if scope is None:
            raise RuntimeError("Called get_config outside of a runnable context")
        run = scope.run
        if not isinstance(run, CallingRun):
            run = _calling(run)
        in_async = scope.task.node.is_async
        if self.node.is_async and not in_async:
            raise RuntimeError("In an sync context async tasks cannot be called")
        if scope.watch is not None:
            scope.watch.progress()  # a call is progress of a timed caller
        call = _new_call(self.node, scope, (args, kwargs))
        run.task_started(call)
        done, resume = run.saved_call(call.id)
        if done is not None:  # finished before this run: its saved result, not run again
            return _resolved(_result_of(done), in_async)
        call.resume = list(resume)
        return _start_async(run, call) if in_async else _start_sync(run, call)


def _task_name(func: Callable[..., Any]) -> str:
    """An unnamed task's name, as LangGraph's: the function's, a partial's function's (issue
    27), else the callable's class."""
    found = getattr(func, "__name__", None)
    if found is None and isinstance(func, functools.partial):
        found = getattr(func.func, "__name__", None)
    return found or type(func).__name__


_PROMOTING = threading.Lock()


def _calling(run: Run) -> CallingRun:
    """A graph's run becomes a `CallingRun` when one of its nodes first calls a `@task`:
    graphs whose nodes never do pay nothing for calls on every task."""
    with _PROMOTING:
        if not isinstance(run, CallingRun):
            # a run of another kind names its calling form (`_root.RootRun`, issue 29)
            run.__class__ = getattr(run, "calling_class", CallingRun)
            run._calling()  # type: ignore[attr-defined]
    return run  # type: ignore[return-value]


def task(
    __func_or_none__: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
    cache_policy: CachePolicy | None = None,
    timeout: float | timedelta | TimeoutPolicy | None = None,
    **legacy: Any,
) -> Any:
    """Decorator: `@task` or `@task(name=..., retry_policy=..., cache_policy=..., timeout=...)`."""
    if "retry" in legacy:
        renamed("retry", "retry_policy")
    retry_policy = retry_policy or legacy.pop("retry", None)
    if legacy:
        raise TypeError(f"task() got unexpected arguments: {sorted(legacy)}")
    timeout = TimeoutPolicy.coerce(timeout)  # a bad value fails here, as LangGraph (issue 29)

    def wrap(func: Callable[..., Any]) -> TaskFunction:
        return TaskFunction(
            func, name=name, retry_policy=retry_policy, cache_policy=cache_policy, timeout=timeout
        )

    return wrap(__func_or_none__) if __func_or_none__ is not None else wrap


# -- the call as a task -----------------------------------------------------------------------


def _new_call(node: NodePlan, scope: TaskScope, value: Any) -> Task:
    """The called task: its id and path name the caller and the call's rank among its calls
    (LangGraph's `(PUSH, caller path, index, True)`); it checkpoints under the caller."""
    run, parent = scope.run, scope.task
    index = scope.calls
    scope.calls += 1
    tid = task_id(run.checkpoint_id or "", run.ns, run.step, node.name, PUSH, f"{parent.id}|{index}")
    return Task(tid, node, value, (PUSH, parent.path, index, True), (PUSH,), parent.ns, (1, index))


def named_input(task: Task) -> Any:
    """A call's arguments by parameter name, defaults filled in, `**kwargs` spread: how
    LangGraph's `events` show a task's input (issue 17)."""
    args, kwargs = task.input
    func = getattr(task.node.callee, "fn", None)
    try:
        bound = _signature(func.task_func).bind(*args, **kwargs)  # type: ignore[union-attr]
    except (AttributeError, TypeError, ValueError):
        return task.input
    bound.apply_defaults()
    out: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        if bound.signature.parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
            out.update(value)
        else:
            out[name] = value
    return out


@functools.lru_cache(maxsize=256)
def _signature(func: Callable[..., Any]) -> inspect.Signature:
    return inspect.signature(func)


def _result_of(writes: list[tuple[str, Any]]) -> Any:
    return next((v for ch, v in writes if ch == RETURN), None)


def _outcome(call: Task) -> tuple[Any, BaseException | None]:
    if call.error is not None:
        return None, call.error
    if call.interrupted:
        return None, GraphInterrupt(call.interrupts)
    return _result_of(call.writes), None


def _injections(func: Callable[..., Any]) -> dict[str, int]:
    """Injectable parameters and their position (keyword-only ones: never positional)."""
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return {}
    out = {}
    for index, param in enumerate(params):
        if param.name in _INJECTABLE:
            positional = param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD)
            out[param.name] = index if positional else 1 << 30
    return out


def _inject(args: tuple[Any, ...], kwargs: dict[str, Any], wanted: dict[str, int]) -> dict[str, Any]:
    """The caller's kwargs plus what the task asks for and the caller did not pass."""
    scope = current_scope.get()
    assert scope is not None
    out = dict(kwargs)
    for name, position in wanted.items():
        if name in out or len(args) > position:
            continue
        if name == "config":
            out[name] = scope.config
        elif name == "writer":
            out[name] = scope.writer
        elif name == "store":
            out[name] = scope.run.store
        else:
            out[name] = scope.runtime
    return out


def _task_callable(func: Callable[..., Any]) -> Callable[[Any], Any]:
    """The call's body: `func(*args, **kwargs)`; a sync one waits for the tasks it called."""
    wanted = _injections(func)
    if inspect.iscoroutinefunction(func):

        async def acall(value: Any) -> Any:
            args, kwargs = value
            if wanted:
                kwargs = _inject(args, kwargs, wanted)
            return await func(*args, **kwargs)

        acall.task_func = func  # type: ignore[attr-defined]  # (named_input)
        return acall

    def call(value: Any) -> Any:
        args, kwargs = value
        if wanted:
            kwargs = _inject(args, kwargs, wanted)
        with own_calls():
            return func(*args, **kwargs)

    call.task_func = func  # type: ignore[attr-defined]  # (named_input)
    return call


# -- sync calls -------------------------------------------------------------------------------


class CallFuture(concurrent.futures.Future):  # type: ignore[type-arg]
    """A sync call's future. Asking for the result of a call no pool thread has started yet
    runs it in the asking thread: nested calls never wait for a free pool thread."""

    def __init__(self, job: Callable[[], None]) -> None:
        super().__init__()
        self._job = job
        self._claim = threading.Lock()

    def claim_and_run(self) -> None:
        if self._claim.acquire(False):
            self._job()

    def result(self, timeout: float | None = None) -> Any:
        self.claim_and_run()
        return super().result(timeout)

    def exception(self, timeout: float | None = None) -> BaseException | None:
        self.claim_and_run()
        return super().exception(timeout)

    def cancel(self) -> bool:
        """Cancel the call if it has not started (then it never runs); a started one runs on,
        its result kept (issue 27)."""
        return self._claim.acquire(False) and super().cancel()

    def settle(self) -> None:
        """Wait for the call to end (one the caller cancelled has)."""
        if not self.cancelled():
            self.exception()

    def drop(self) -> None:
        """Cancel the call if it has not started; else wait for it to end."""
        if not self.cancel():
            concurrent.futures.wait([self])


def _start_sync(run: CallingRun, call: Task) -> CallFuture:
    from ._tasks import _pool, execute_sync, flush_sync

    ctx = contextvars.copy_context()

    def job() -> None:
        ctx.run(execute_sync, run, call)
        with run.lock:
            flush_sync(run)  # a finished call is saved at once, as a node's writes are
        value, error = _outcome(call)
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    future = CallFuture(job)
    started = _started.get()
    if started is None:  # called by a graph's node: it waits for its calls when it returns
        scope = current_scope.get()
        assert scope is not None
        if scope.children is None:
            scope.children = []
        started = scope.children
    started.append(future)
    _pool().submit(future.claim_and_run)
    return future


@contextlib.contextmanager
def own_calls() -> Iterator[None]:
    """Run a sync entrypoint or task body, then wait for every call it started (none is
    left running); after a failure, calls not yet started are cancelled instead."""
    started: list[CallFuture] = []
    token = _started.set(started)
    failed = True
    try:
        yield
        failed = False
    except GraphBubbleUp:
        failed = False  # an interrupt lets the calls started finish, as LangGraph's (issue 27)
        raise
    finally:
        _started.reset(token)
        for future in started:
            if failed:
                future.drop()
            else:
                future.settle()


# -- async calls ------------------------------------------------------------------------------


class _Awaitable:
    """An async call's result where there is no asyncio loop (trio)."""

    def __init__(self) -> None:
        self._event = anyio.Event()
        self._value: Any = None
        self._error: BaseException | None = None

    def set(self, value: Any, error: BaseException | None) -> None:
        self._value, self._error = value, error
        self._event.set()

    async def _wait(self) -> Any:
        await self._event.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def __await__(self) -> Any:
        return self._wait().__await__()


def _resolved(value: Any, in_async: bool) -> Any:
    if not in_async:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        future.set_result(value)
        return future
    holder = _new_async_future()
    _settle_async(holder, value, None)
    return holder


def _new_async_future() -> Any:
    try:
        return asyncio.get_running_loop().create_future()
    except RuntimeError:  # trio
        return _Awaitable()


def _settle_async(holder: Any, value: Any, error: BaseException | None) -> None:
    if isinstance(holder, _Awaitable):
        holder.set(value, error)
    elif holder.cancelled():
        return
    elif error is not None:
        holder.set_exception(error)
        holder.exception()  # marks it retrieved: an unawaited failed call logs nothing
    else:
        holder.set_result(value)


class AsyncioCalls:
    """Where an async entrypoint's calls run on asyncio: plain tasks, which cost a third of
    an anyio task group's `start_soon` per call. The same structure as a group: `close` waits
    for every call, and after a failure cancels those still running."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._tasks: list[asyncio.Task[None]] = []

    def start(self, run: CallingRun, call: Task) -> Any:
        holder = self._loop.create_future()
        job = self._loop.create_task(_run_async(run, call, holder))
        holder.add_done_callback(functools.partial(_cancel_with, job))
        self._tasks.append(job)
        return holder

    async def close(self, failed: bool) -> None:
        pending = [t for t in self._tasks if not t.done()]
        if not pending:
            return
        if failed:
            for child in pending:
                child.cancel()
        with anyio.CancelScope(shield=True):  # even when cancelled: no call outlives the run
            await asyncio.wait(pending)


def _cancel_with(job: asyncio.Task[None], holder: asyncio.Future[Any]) -> None:
    """The caller cancelled a call's future: the call is cancelled too (LangGraph; issue 27)."""
    if holder.cancelled():
        job.cancel()


class GroupCalls:
    """`AsyncioCalls` on other back ends (trio): an anyio task group's tasks."""

    def __init__(self, group: Any) -> None:
        self._group = group

    def start(self, run: CallingRun, call: Task) -> Any:
        holder = _Awaitable()
        self._group.start_soon(_run_async, run, call, holder)
        return holder


async def _run_async(run: CallingRun, call: Task, holder: Any) -> None:
    """The call's task; it never raises (an interrupt is a BaseException: it travels in the
    future, as a failure does)."""
    from ._tasks import execute_async, flush_async

    await execute_async(run, call)
    await flush_async(run)
    value, error = _outcome(call)
    _settle_async(holder, value, error)


def _start_async(run: CallingRun, call: Task) -> Any:
    calls = spawner.get()
    if calls is None:  # called by a graph's async node: it waits for its calls when it returns
        scope = current_scope.get()
        assert scope is not None
        calls = scope.children
        if calls is None:
            from ._tasks import _on_asyncio

            if not _on_asyncio():
                raise RuntimeError(
                    "graphrun: a graph's node calls an async @task only on asyncio (on other "
                    "back ends, call it inside an async @entrypoint)"
                )
            calls = scope.children = AsyncioCalls()
    return calls.start(run, call)


def close_children(scope: TaskScope, failed: bool) -> None:
    """A graph's sync node returned (or raised): wait for the calls it started, or after a
    failure cancel those not started yet (none outlives its step, as LangGraph)."""
    children, scope.children = scope.children, None
    for future in children:
        if failed:
            future.drop()
        else:
            future.settle()


async def aclose_children(scope: TaskScope, failed: bool) -> None:
    """`close_children` for a node run by the async driver (an async one or a sync one in a
    worker thread)."""
    children = scope.children
    if isinstance(children, AsyncioCalls):
        scope.children = None
        await children.close(failed)
    else:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(close_children, scope, failed)
