"""The functional API's `@entrypoint` (issue 17), shaped as LangGraph's `langgraph.func`.

An entrypoint is a graph of one node named after the function: the node is triggered by
`__start__` (the input), and writes its return value to `__end__` (the run's output and the
thread's state) and what the next run of the thread receives as `previous` to `__previous__`.
It runs on the same run core as a `StateGraph`; `EntrypointRun` only changes how the state
reads (one channel, not a dict of keys) and how called `@task`s show (`_calls.py`).
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any, Generic, TypeVar

import anyio

from ._calls import (
    PREVIOUS, RETURN, AsyncioCalls, CallingRun, GroupCalls, is_call, own_calls, spawner,
)
from ._channels import MISSING, Ephemeral, LastValue, Topic
from ._context import current_scope
from ._jsonschema import EntrySchemaMethods
from ._node import Callee
from ._plan import TASKS, NodePlan, Plan
from ._pregel import CompiledStateGraph
from ._run import Run
from ._step import Task
from ._tasks import _on_asyncio
from ._timeout import timeout_policy
from .errors import GraphBubbleUp
from .graph import NodeSpec
from .types import END, START, CachePolicy, RetryPolicy, TimeoutPolicy
from .warnings import renamed

__all__ = ["EntrypointGraph", "EntrypointRun", "entrypoint"]

ValueT = TypeVar("ValueT")
SaveT = TypeVar("SaveT")

_INJECTABLE = ("config", "writer", "store", "previous", "runtime")
_ALL_MODES = frozenset(
    ("values", "updates", "custom", "messages", "debug", "events", "tasks", "checkpoints")
)


@dataclasses.dataclass(frozen=True, slots=True)
class _Final(Generic[ValueT, SaveT]):
    """Return `value` to the caller but save `save` as the thread's next `previous`."""

    value: ValueT
    save: SaveT

    def __repr__(self) -> str:
        return f"entrypoint.final(value={self.value!r}, save={self.save!r})"


class entrypoint:  # noqa: N801 - LangGraph's spelling: `@entrypoint(checkpointer=...)`
    """Decorator turning a function into a runnable workflow (a one-node graph)."""

    final = _Final

    def __init__(
        self,
        checkpointer: Any = None,
        store: Any = None,
        cache: Any = None,
        context_schema: Any = None,
        cache_policy: CachePolicy | None = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        timeout: float | timedelta | TimeoutPolicy | None = None,
        **legacy: Any,
    ) -> None:
        for old, new in (("config_schema", "context_schema"), ("retry", "retry_policy")):
            if old in legacy:
                renamed(old, new)
        retry_policy = retry_policy or legacy.pop("retry", None)
        context_schema = context_schema or legacy.pop("config_schema", None)
        if legacy:
            raise TypeError(f"entrypoint() got unexpected arguments: {sorted(legacy)}")
        self.checkpointer = checkpointer
        self.store = store
        self.cache = cache
        self.context_schema = context_schema
        self.cache_policy = cache_policy
        self.retry_policy = retry_policy
        self.timeout = TimeoutPolicy.coerce(timeout)

    def __call__(self, func: Callable[..., Any]) -> EntrypointGraph:
        if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
            raise NotImplementedError("Generators are not supported in the Functional API.")
        name = func.__name__
        retry = self.retry_policy
        callee = Callee(_entry_callable(func), name)
        node = NodePlan(
            name=name,
            callee=callee,
            triggers=(START,),
            reads=(START,),
            reader=_start_value,
            edge_writes=(),
            branches=(),
            retry=(retry,) if isinstance(retry, RetryPolicy) else tuple(retry or ()),
            cache=self.cache_policy,
            metadata={},
            is_async=callee.is_async,
            is_subgraph=False,
            index=1,
            input_group=0,
            writer=_entry_writes,
            timeout=timeout_policy(self.timeout, callee.is_async, name),
        )
        plan = Plan(
            channels={
                START: Ephemeral(START),
                END: LastValue(END),
                PREVIOUS: LastValue(PREVIOUS),
                TASKS: Topic(TASKS),
            },
            state_keys=(END,),
            # `__return__` is no channel: listing it makes a called task's result show in
            # `tasks`/`debug` payloads as `{"__return__": value}` (as LangGraph)
            state_key_set=frozenset((END, RETURN)),
            input_keys=(START,),
            output_keys=(END,),
            nodes={name: node},
            trigger_to_nodes={START: (name,)},
            interrupt_before=(),
            interrupt_after=(),
            has_async=callee.is_async,
            state_schema=None,
            context_schema=self.context_schema,
            output_reader=None,
        )
        return EntrypointGraph(
            plan,
            builder=_Shape.of(func, name, self.context_schema),
            checkpointer=self.checkpointer,
            store=self.store,
            cache=self.cache,
            name="LangGraph",
            debug=False,
        )


def _start_value(values: dict[str, Any]) -> Any:
    return values.get(START)


def _entry_writes(output: Any) -> list[tuple[str, Any]]:
    if isinstance(output, _Final):
        return [(END, output.value), (PREVIOUS, output.save)]
    return [(END, output), (PREVIOUS, output)]


def _previous(run: Run) -> Any:
    value = run.channels[PREVIOUS].value
    return None if value is MISSING else value


def _entry_kwargs(names: tuple[str, ...]) -> dict[str, Any]:
    scope = current_scope.get()
    assert scope is not None  # the wrapper only runs as a task
    kwargs: dict[str, Any] = {}
    for name in names:
        if name == "config":
            kwargs[name] = scope.config
        elif name == "writer":
            kwargs[name] = scope.writer
        elif name == "store":
            kwargs[name] = scope.run.store
        elif name == "previous":
            kwargs[name] = _previous(scope.run)
        else:
            kwargs[name] = scope.runtime.override(previous=_previous(scope.run))
    return kwargs


def _entry_callable(func: Callable[..., Any]) -> Callable[[Any], Any]:
    """The node: `func(input, **injected)`; a sync one waits for the tasks it called, an async
    one holds the task group its tasks run in (so none outlives the entrypoint)."""
    params = inspect.signature(func).parameters
    if not params:
        raise TypeError("Entrypoint function must have at least one parameter")
    names = tuple(name for name in _INJECTABLE if name in params)
    if inspect.iscoroutinefunction(func):

        async def acall(value: Any) -> Any:
            kwargs = _entry_kwargs(names) if names else {}
            if _on_asyncio():
                calls = AsyncioCalls()
                token = spawner.set(calls)
                failed = True
                try:
                    result = await func(value, **kwargs)
                    failed = False
                    return result
                except GraphBubbleUp:
                    failed = False  # an interrupt lets its calls finish (LangGraph; issue 27)
                    raise
                finally:
                    spawner.reset(token)
                    await calls.close(failed)
            try:
                async with anyio.create_task_group() as tg:
                    token = spawner.set(GroupCalls(tg))
                    try:
                        return await func(value, **kwargs)
                    except GraphBubbleUp as signal:
                        held = signal  # raised once the group's calls have finished
                    finally:
                        spawner.reset(token)
                raise held
            except BaseExceptionGroup as group:
                # calls record their own failures, so only the body raises: unwrap it (an
                # interrupt must reach the run as itself)
                if len(group.exceptions) == 1:
                    raise group.exceptions[0] from None
                raise

        return acall

    def call(value: Any) -> Any:
        kwargs = _entry_kwargs(names) if names else {}
        with own_calls():
            return func(value, **kwargs)

    return call


@dataclasses.dataclass(slots=True)
class _Shape:
    """What the drawing and the server read of a builder: `__start__ -> fn -> __end__`."""

    nodes: dict[str, NodeSpec]
    edges: list[tuple[str, str]]
    state_schema: Any
    input_schema: Any
    output_schema: Any
    context_schema: Any
    waiting_edges: list[Any] = dataclasses.field(default_factory=list)
    branches: dict[str, Any] = dataclasses.field(default_factory=dict)
    fields: dict[str, Any] = dataclasses.field(default_factory=dict)
    input_type: Any = Any  # the first parameter's and the returned value's types (issue 29)
    output_type: Any = Any

    @classmethod
    def of(cls, func: Callable[..., Any], name: str, context_schema: Any) -> _Shape:
        try:
            hints = typing.get_type_hints(func)
        except Exception:  # unresolvable annotations: untyped
            hints = {}
        first = next(iter(inspect.signature(func).parameters), None)
        output = _returned_type(hints.get("return", Any))
        state = typing.TypedDict("LangGraphState", {END: output})  # type: ignore[operator]
        return cls(
            nodes={name: NodeSpec(name=name, action=func, destinations=(END,))},
            edges=[(START, name)],
            state_schema=state,
            input_schema=_record_type(hints.get(first) if first else None),
            output_schema=_record_type(output),
            context_schema=context_schema,
            input_type=hints.get(first, Any) if first else Any,
            output_type=output,
        )


def _returned_type(hint: Any) -> Any:
    """`-> entrypoint.final[R, S]` returns an R; a bare `entrypoint.final`, anything."""
    if hint is _Final:
        return Any
    if typing.get_origin(hint) is _Final:
        return typing.get_args(hint)[0]
    return hint


def _record_type(hint: Any) -> Any:
    """A type with named fields (TypedDict, dataclass, Struct, pydantic) or None."""
    if not isinstance(hint, type) or hint in (dict, list, str, int, float, bool):
        return None
    return hint if getattr(hint, "__annotations__", None) else None


class EntrypointRun(CallingRun):
    """A run of an entrypoint: its state is the `__end__` channel's value (None before the
    first return); the `@task`s it calls are recorded as pending writes of its step."""

    def values(self, keys: tuple[str, ...] | None = None) -> Any:
        value = self.channels[END].value
        return None if value is MISSING else value

    def output(self) -> Any:
        if self.interrupts:
            return self.interrupted_values(list(self.interrupts))
        return self.values()

    def interrupted_values(self, interrupts: Any) -> Any:
        value = self.values()
        if isinstance(value, dict):
            return {**value, "__interrupt__": interrupts}
        return {"__interrupt__": interrupts}

    def emit_values(self) -> None:
        if self.emits and "values" in self.sink.modes:  # None too (as LangGraph)
            self.sink.push((self.ns_tuple, "values", self.values()))

    def snapshot_result(self, writes: list[tuple[str, Any]]) -> Any:
        return next((v for ch, v in writes if ch == END), None)

    def _update_of(self, task: Task) -> Any:
        key = RETURN if is_call(task) else END
        return next((v for ch, v in task.writes if ch == key), None)


class EntrypointGraph(EntrySchemaMethods, CompiledStateGraph):
    """What `@entrypoint` returns: invoke, stream, state and history like a compiled graph."""

    run_class = EntrypointRun
    # Called tasks finish while the entrypoint still runs: every mode streams live.
    live_modes = _ALL_MODES

    def __repr__(self) -> str:
        return f"<EntrypointGraph {next(iter(self.plan.nodes))!r}>"
