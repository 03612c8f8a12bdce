"""What node code can reach while it runs: config, store, stream writer, runtime, interrupt().

One `TaskScope` per running task, held in a context variable; sync nodes run in a copied
context so threads see their own task's scope.
"""

from __future__ import annotations

import contextvars
import dataclasses
import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ._resume_schema import resume_adapter, surfaced_schema, validate_resume
from .errors import GraphInterrupt
from .types import Interrupt

if TYPE_CHECKING:
    from ._run import Run as RunContext
    from ._step import Task

__all__ = [
    "Runtime",
    "get_config",
    "get_runtime",
    "get_store",
    "get_stream_writer",
    "interrupt",
]

ContextT = TypeVar("ContextT")
NOTHING: Any = object()


def _no_writer(_: Any) -> None:
    return None


def _no_heartbeat() -> None:
    return None


@dataclasses.dataclass(slots=True)
class Runtime(Generic[ContextT]):
    """Run-scoped dependencies a node may ask for with a `runtime` parameter."""

    context: ContextT = None  # type: ignore[assignment]
    store: Any = None
    stream_writer: Callable[[Any], None] = _no_writer
    previous: Any = None
    # progress for an `idle_timeout` (TimeoutPolicy); a no-op outside a timed attempt
    heartbeat: Callable[[], None] = _no_heartbeat


class TaskScope:
    """The running task's view of its run: used by interrupt() and the get_* helpers."""

    __slots__ = (
        "task", "run", "_config", "_runtime", "writer", "interrupt_index", "resume", "calls",
        "children", "watch",
    )

    def __init__(self, task: Task, run: RunContext) -> None:
        self.task = task
        self.run = run
        self._config: dict[str, Any] | None = None
        self.writer = run.custom_writer(task)
        self._runtime: Runtime[Any] | None = None
        self.interrupt_index = 0
        self.resume: list[Any] = list(task.resume)
        self.calls = 0  # `@task` calls made so far: the index in a called task's id (issue 17)
        self.children: Any = None  # the calls a graph's node started, waited for at its end
        self.watch: Any = None  # a timed attempt's progress clock (`_timeout.Watch`)

    @property
    def ns(self) -> str:
        return self.task.ns

    @property
    def runtime(self) -> Runtime[Any]:
        """Built on first use: most nodes never ask for it."""
        if self._runtime is None:
            self._runtime = Runtime(
                context=self.run.context, store=self.run.store, stream_writer=self.writer,
                heartbeat=self.watch.touch if self.watch is not None else _no_heartbeat,
            )
        return self._runtime

    @property
    def config(self) -> dict[str, Any]:
        """The task's config, built on first use (most nodes never ask for it)."""
        if self._config is None:
            config = self.run.task_config(self.task)
            self._config = config if self.watch is None else self.watch.with_callbacks(config)
        return self._config


current_scope: contextvars.ContextVar[TaskScope | None] = contextvars.ContextVar(
    "graphrun_task", default=None
)


def _scope(what: str) -> TaskScope:
    scope = current_scope.get()
    if scope is None:
        raise RuntimeError("Called get_config outside of a runnable context")
    return scope


def get_config() -> dict[str, Any]:
    """The running task's config (`configurable`, tags, metadata...)."""
    return _scope("get_config").config


def get_store() -> Any:
    """The store given to `compile(store=...)`, or None."""
    return _scope("get_store").run.store


def get_stream_writer() -> Callable[[Any], None]:
    """A function that emits `custom` stream chunks (a no-op unless `custom` was asked for)."""
    return _scope("get_stream_writer").writer


def get_runtime(context_schema: Any = None) -> Runtime[Any]:
    """The run's `Runtime` (context, store, stream writer)."""
    return _scope("get_runtime").runtime


def interrupt_id(ns: str, index: int) -> str:
    """Stable across re-runs of the task: its namespace holds its deterministic task id."""
    key = ns if index == 0 else f"{ns}|{index}"
    return hashlib.blake2b(key.encode(), digest_size=16).hexdigest()


def interrupt(value: Any, *, response_schema: Any = None) -> Any:
    """Pause the run and surface `value`; returns the resume value once resumed.

    The node re-runs from its start on resume, so the i-th `interrupt()` call of a task
    returns the i-th resume value it was given (SPEC §1). With `response_schema` the answer
    is validated into it (`_resume_schema`, issue 29); an invalid one is not kept.
    """
    scope = _scope("interrupt")
    adapter = resume_adapter(response_schema)
    index = scope.interrupt_index
    scope.interrupt_index += 1
    if index < len(scope.resume):
        return validate_resume(adapter, scope.resume[index])
    iid = interrupt_id(scope.ns, index)
    resumed = scope.run.take_resume(iid)
    if resumed is not NOTHING:
        checked = validate_resume(adapter, resumed)
        scope.resume.append(resumed)
        scope.task.resume = list(scope.resume)
        return checked
    schema = surfaced_schema(response_schema, adapter)
    raise GraphInterrupt((Interrupt(value=value, id=iid, response_schema=schema),))
