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
from typing import TYPE_CHECKING, Any

import anyio

from ._context import TaskScope, current_scope
from ._node import Callee
from ._plan import NodePlan
from ._step import PUSH, Task, task_id
from .errors import GraphInterrupt
from .types import CachePolicy, RetryPolicy

if TYPE_CHECKING:
    from ._func import EntrypointRun

__all__ = [
    "PREVIOUS", "RETURN", "AsyncioCalls", "GroupCalls", "TaskFunction", "is_call", "own_calls",
    "spawner", "task",
]

PREVIOUS = "__previous__"
RETURN = "__return__"
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


class TaskFunction:
    """What `@task` returns: call it inside an entrypoint to get a future of its result."""

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        cache_policy: CachePolicy | None = None,
    ) -> None:
        if not callable(func):
            raise TypeError(f"@task needs a function, got {type(func).__name__}")
        self.func = func
        self.name = name or getattr(func, "__name__", type(func).__name__)
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
        )
        functools.update_wrapper(self, func)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"<task {self.name!r}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        scope = current_scope.get()
        if scope is None:
            raise RuntimeError("Called get_config outside of a runnable context")
        run: EntrypointRun = scope.run  # type: ignore[assignment]
        if not hasattr(run, "saved_call"):
            raise RuntimeError("graphrun: a @task can only be called inside an @entrypoint")
        in_async = scope.task.node.is_async
        if self.node.is_async and not in_async:
            raise RuntimeError("In an sync context async tasks cannot be called")
        call = _new_call(self.node, scope, (args, kwargs))
        run.task_started(call)
        done, resume = run.saved_call(call.id)
        if done is not None:  # finished before this run: its saved result, not run again
            return _resolved(_result_of(done), in_async)
        call.resume = list(resume)
        return _start_async(run, call) if in_async else _start_sync(run, call)


def task(
    __func_or_none__: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
    cache_policy: CachePolicy | None = None,
    **legacy: Any,
) -> Any:
    """Decorator: `@task` or `@task(name=..., retry_policy=..., cache_policy=...)`."""
    retry_policy = retry_policy or legacy.pop("retry", None)
    if legacy:
        raise TypeError(f"task() got unexpected arguments: {sorted(legacy)}")

    def wrap(func: Callable[..., Any]) -> TaskFunction:
        return TaskFunction(func, name=name, retry_policy=retry_policy, cache_policy=cache_policy)

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

        return acall

    def call(value: Any) -> Any:
        args, kwargs = value
        if wanted:
            kwargs = _inject(args, kwargs, wanted)
        with own_calls():
            return func(*args, **kwargs)

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

    def drop(self) -> None:
        """Cancel the call if it has not started; else wait for it to end."""
        if self._claim.acquire(False):
            self.cancel()
        else:
            concurrent.futures.wait([self])


def _start_sync(run: EntrypointRun, call: Task) -> CallFuture:
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
    if started is not None:
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
    finally:
        _started.reset(token)
        for future in started:
            if failed:
                future.drop()
            else:
                future.exception()


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

    def start(self, run: EntrypointRun, call: Task) -> Any:
        holder = self._loop.create_future()
        self._tasks.append(self._loop.create_task(_run_async(run, call, holder)))
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


class GroupCalls:
    """`AsyncioCalls` on other back ends (trio): an anyio task group's tasks."""

    def __init__(self, group: Any) -> None:
        self._group = group

    def start(self, run: EntrypointRun, call: Task) -> Any:
        holder = _Awaitable()
        self._group.start_soon(_run_async, run, call, holder)
        return holder


async def _run_async(run: EntrypointRun, call: Task, holder: Any) -> None:
    """The call's task; it never raises (an interrupt is a BaseException: it travels in the
    future, as a failure does)."""
    from ._tasks import execute_async, flush_async

    await execute_async(run, call)
    await flush_async(run)
    value, error = _outcome(call)
    _settle_async(holder, value, error)


def _start_async(run: EntrypointRun, call: Task) -> Any:
    calls = spawner.get()
    if calls is None:
        raise RuntimeError("graphrun: an async @task must be called inside an async @entrypoint")
    return calls.start(run, call)
