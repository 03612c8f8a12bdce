"""Public value types: Send, Command, Interrupt, policies and snapshots (SPEC §1)."""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Hashable, Sequence
from datetime import timedelta
from typing import Any, ClassVar, Literal, NamedTuple

__all__ = [
    "All",
    "CachePolicy",
    "CheckpointPayload",
    "CheckpointStreamPart",
    "Command",
    "CustomStreamPart",
    "DebugPayload",
    "DebugStreamPart",
    "END",
    "GraphOutput",
    "Interrupt",
    "MessagesStreamPart",
    "Overwrite",
    "PregelTask",
    "RetryPolicy",
    "START",
    "Send",
    "StateSnapshot",
    "StateUpdate",
    "StreamMode",
    "StreamPart",
    "StreamWriter",
    "TaskPayload",
    "TaskResultPayload",
    "TasksStreamPart",
    "TimeoutPolicy",
    "TracePolicy",
    "UpdatesStreamPart",
    "ValuesStreamPart",
    "default_retry_on",
]

START = "__start__"
END = "__end__"

All = Literal["*"]
StreamMode = Literal[
    "values", "updates", "custom", "messages", "messages-tuple", "debug", "events", "tasks",
    "checkpoints", "tools",
]
StreamWriter = Callable[[Any], None]


@dataclasses.dataclass(eq=True, slots=True)
class Send:
    """Run `node` in the next super-step with `arg` as its input (map-reduce fan-out).

    A plain dataclass, so pending Sends round-trip through any checkpoint serializer.
    """

    node: str
    arg: Any
    # issue 29: this pushed task's own TimeoutPolicy (a number is a `run_timeout`), else the
    # target node's
    timeout: TimeoutPolicy | None = dataclasses.field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if self.timeout is not None:
            self.timeout = TimeoutPolicy.coerce(self.timeout)

    def __hash__(self) -> int:
        return hash(self.node)

    def __repr__(self) -> str:
        timeout = "" if self.timeout is None else f", timeout={self.timeout!r}"
        return f"Send(node={self.node!r}, arg={self.arg!r}{timeout})"


@dataclasses.dataclass(slots=True)
class Overwrite:
    """Write `value` to a reducer key as is, bypassing its reducer (issue 17, LangGraph's
    `langgraph.types.Overwrite`). Two in one step for one key is an `InvalidUpdateError`.

    `type` lets the channel recognise the JSON form (`{"value": ..., "type": "__overwrite__"}`)
    an HTTP client sends; `{"__overwrite__": value}` is accepted too.
    """

    value: Any
    type: Literal["__overwrite__"] = "__overwrite__"


class StateUpdate(NamedTuple):
    """One update of `bulk_update_state`: values written as if `as_node` returned them."""

    values: dict[str, Any] | None
    as_node: str | None = None
    task_id: str | None = None


@dataclasses.dataclass(frozen=True, slots=True, init=False)
class Interrupt:
    """A pause requested by `interrupt(value)`; `id` addresses it in `Command(resume={id: v})`."""

    value: Any
    id: str
    response_schema: Any

    def __init__(
        self,
        value: Any = None,
        id: str = "placeholder-id",
        *,
        response_schema: Any = None,
        **legacy: Any,
    ) -> None:
        # LangGraph before 0.6 stored `ns`, `when` and `resumable`; checkpoints written then
        # still load, the id derived from `ns` as for a live interrupt (issue 27)
        ns = legacy.pop("ns", None)
        legacy.pop("when", None), legacy.pop("resumable", None), legacy.pop("interrupt_id", None)
        if legacy:
            raise TypeError(f"Interrupt() got unexpected arguments: {sorted(legacy)}")
        if ns is not None and id == "placeholder-id" and not isinstance(ns, str):
            from ._context import interrupt_id

            id = interrupt_id("|".join(ns), 0)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "response_schema", response_schema)

    def __repr__(self) -> str:
        return (
            f"Interrupt(value={self.value!r}, id={self.id!r}, "
            f"response_schema={self.response_schema!r})"
        )

    @classmethod
    def from_ns(cls, value: Any, ns: str, *, response_schema: Any = None) -> Interrupt:
        """The interrupt a task with checkpoint namespace `ns` raised first (issue 29)."""
        from ._context import interrupt_id

        return cls(value, id=interrupt_id(ns, 0), response_schema=response_schema)

    @property
    def interrupt_id(self) -> str:
        """The old name of `id` (LangGraph deprecated it in 1.0)."""
        import warnings

        from .warnings import LangGraphDeprecatedSinceV10

        warnings.warn("`interrupt_id` is deprecated. Use `id` instead.",
                      LangGraphDeprecatedSinceV10, stacklevel=2)
        return self.id


@dataclasses.dataclass(frozen=True, slots=True)
class Command:
    """Update state and choose what runs next from inside a node, or resume an interrupt.

    `goto` takes node names and `Send`s. With `graph=Command.PARENT` the update and goto apply
    to the graph that called this subgraph.
    """

    graph: str | None = None
    update: Any = None
    resume: Any = None
    goto: Any = ()

    PARENT: ClassVar[str] = "__parent__"

    def __class_getitem__(cls, item: Any) -> Any:
        """`Command[Literal["a", "b"]]` as a return annotation (the nodes it may go to)."""
        return types.GenericAlias(cls, item)

    def __repr__(self) -> str:
        parts = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in dataclasses.fields(self)
            if getattr(self, f.name) not in (None, ())
        ]
        return f"Command({', '.join(parts)})"

    def update_items(self) -> list[tuple[str, Any]]:
        """The update as (key, value) pairs; dicts, pair lists and state objects are accepted."""
        update = self.update
        if update is None:
            return []
        if isinstance(update, dict):
            return list(update.items())
        if isinstance(update, (list, tuple)) and all(
            isinstance(p, tuple) and len(p) == 2 for p in update
        ):
            return list(update)
        from ._schema import object_to_dict

        as_dict = object_to_dict(update)
        if as_dict is None:
            from .errors import InvalidUpdateError

            raise InvalidUpdateError(f"Expected dict, got {update!r}")
        return list(as_dict.items())

    def goto_list(self) -> list[str | Send]:
        goto = self.goto
        if not goto:
            return []
        if isinstance(goto, (str, Send)):
            return [goto]
        return list(goto)


_NOT_RETRIED = (ValueError, TypeError, ArithmeticError, ImportError, LookupError, NameError,
                SyntaxError, RuntimeError, ReferenceError, StopIteration, StopAsyncIteration,
                OSError)


def default_retry_on(exc: Exception) -> bool:
    """LangGraph's default: retry connection errors and user exceptions, not programming errors."""
    if isinstance(exc, ConnectionError):
        return True
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(status, int):
        return status >= 500
    return not isinstance(exc, _NOT_RETRIED)


class RetryPolicy(NamedTuple):
    """How a failing node is retried: exponential backoff with optional jitter."""

    initial_interval: float = 0.5
    backoff_factor: float = 2.0
    max_interval: float = 128.0
    max_attempts: int = 3
    jitter: bool = True
    retry_on: (
        type[Exception] | Sequence[type[Exception]] | Callable[[Exception], bool]
    ) = default_retry_on

    def should_retry(self, exc: Exception) -> bool:
        retry_on = self.retry_on
        if isinstance(retry_on, type) and issubclass(retry_on, BaseException):
            return isinstance(exc, retry_on)
        if isinstance(retry_on, Sequence):
            return isinstance(exc, tuple(retry_on))
        return bool(retry_on(exc))


def _default_cache_key(*args: Any, **kwargs: Any) -> Hashable:
    from checkpoints.serde import default_serializer

    return default_serializer.dumps((args, kwargs))


@dataclasses.dataclass(frozen=True, slots=True)
class CachePolicy:
    """Cache a node's writes by a key of its input, for `ttl` seconds (None: forever)."""

    key_func: Callable[..., Hashable] = _default_cache_key
    ttl: float | None = None


class PregelTask(NamedTuple):
    """A task as shown in a `StateSnapshot`: what will run (or did, with its error/interrupts)."""

    id: str
    name: str
    path: tuple[Any, ...]
    error: Exception | None = None
    interrupts: tuple[Interrupt, ...] = ()
    state: Any = None
    result: Any = None


class StateSnapshot(NamedTuple):
    """A thread's state at one checkpoint, as `get_state` returns it."""

    values: dict[str, Any]
    next: tuple[str, ...]
    config: dict[str, Any]
    metadata: dict[str, Any] | None
    created_at: str | None
    parent_config: dict[str, Any] | None
    tasks: tuple[PregelTask, ...]
    interrupts: tuple[Interrupt, ...] = ()


def _seconds(value: float | timedelta | None, field: str) -> float | None:
    if value is None:
        return None
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if seconds <= 0:
        raise ValueError(f"{field} must be greater than 0")
    return seconds


@dataclasses.dataclass(frozen=True, slots=True)
class TimeoutPolicy:
    """How long one attempt of an async node or task may take (LangGraph 1.2's `timeout=`).

    `run_timeout` caps an attempt's wall-clock time; `idle_timeout` caps the time it goes
    without progress: with `refresh_on="auto"` a custom stream chunk, a `@task` call, a
    LangChain callback event (a model token...) or `runtime.heartbeat()` counts, with
    `"heartbeat"` only `runtime.heartbeat()`. An attempt that exceeds one fails with
    `NodeTimeoutError`, which the default `RetryPolicy` retries.
    """

    run_timeout: float | timedelta | None = None
    idle_timeout: float | timedelta | None = None
    refresh_on: Literal["auto", "heartbeat"] = "auto"

    @classmethod
    def coerce(cls, value: float | timedelta | TimeoutPolicy | None) -> TimeoutPolicy | None:
        """A policy in seconds from a number, a timedelta or a policy; None if it sets none."""
        if value is None:
            return None
        if not isinstance(value, TimeoutPolicy):
            value = cls(run_timeout=value)
        if value.refresh_on not in ("auto", "heartbeat"):
            raise ValueError("refresh_on must be 'auto' or 'heartbeat'")
        run = _seconds(value.run_timeout, "run_timeout")
        idle = _seconds(value.idle_timeout, "idle_timeout")
        if run is None and idle is None:
            return None
        return cls(run_timeout=run, idle_timeout=idle, refresh_on=value.refresh_on)


@dataclasses.dataclass(frozen=True, slots=True)
class TracePolicy:
    """What tracers (LangChain `BaseTracer`s, as LangSmith's) record of a node's run: its input
    and output passed through these functions first, e.g. to scrub secrets (issue 29). The
    node, its streams and other callback handlers see the real values."""

    process_inputs: Callable[[Any], Any] | None = None
    process_outputs: Callable[[Any], Any] | None = None


# issue 29: the typed shapes of `version="v2"` stream parts, and what `invoke(..., version="v2")`
# returns (imported last: both modules read `Interrupt` from here)
from ._stream_parts import (  # noqa: E402
    CheckpointPayload,
    CheckpointStreamPart,
    CustomStreamPart,
    DebugPayload,
    DebugStreamPart,
    MessagesStreamPart,
    StreamPart,
    TaskPayload,
    TaskResultPayload,
    TasksStreamPart,
    UpdatesStreamPart,
    ValuesStreamPart,
)
from ._stream_v2 import GraphOutput  # noqa: E402

# issue 29: a strict checkpoint serializer (`JsonPlusSerializer(allowed_msgpack_modules=None)`)
# still rebuilds the engine's own value types
from checkpoints.jsonplus import register_safe_types  # noqa: E402

register_safe_types(Send, Interrupt, Command, Overwrite, TimeoutPolicy, StateSnapshot, PregelTask)
