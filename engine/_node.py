"""Calling user node code: sync or async, with `config`/`runtime`/`writer`/`store` injected.

The signature is inspected once at compile time, so a call costs one function call.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._context import TaskScope

__all__ = ["Callee"]

_INJECTABLE = ("config", "runtime", "writer", "store")


def _is_async_callable(fn: Any) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)
    return call is not None and inspect.iscoroutinefunction(call)


def _injected(fn: Callable[..., Any]) -> tuple[str, ...]:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return ()
    return tuple(name for name in _INJECTABLE if name in params)


class Callee:
    """A node function, router or subgraph ready to call with (input, scope)."""

    __slots__ = ("fn", "afn", "is_async", "injected", "kind", "name")

    def __init__(self, fn: Any, name: str) -> None:
        self.name = name
        self.fn = fn
        # A node with both forms (a sync call and `_graphrun_acall`, as `ToolNode`): sync runs
        # call it directly, async runs await the async form (LangGraph's RunnableCallable).
        # Looked up on the class: a `Mock` node answers any attribute (issue 27).
        self.afn = fn._graphrun_acall if hasattr(type(fn), "_graphrun_acall") else None
        from ._pregel import CompiledStateGraph

        if isinstance(fn, CompiledStateGraph):
            self.kind = "graph"
            self.is_async = fn.plan.has_async
            self.injected: tuple[str, ...] = ()
        elif not callable(fn) and hasattr(fn, "invoke"):
            self.kind = "runnable"  # a LangChain Runnable or anything with invoke/ainvoke
            self.is_async = False
            self.injected = ()
        else:
            self.kind = "function"
            self.is_async = _is_async_callable(fn)
            self.injected = _injected(fn)

    def _kwargs(self, scope: TaskScope) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        for name in self.injected:
            if name == "config":
                kwargs["config"] = scope.config
            elif name == "runtime":
                kwargs["runtime"] = scope.runtime
            elif name == "writer":
                kwargs["writer"] = scope.writer
            else:
                kwargs["store"] = scope.run.store
        return kwargs

    def call(self, value: Any, scope: TaskScope) -> Any:
        if scope.run.trace is not None and scope.task.node.callee is self:
            from ._tracing import traced_call  # LangChain callbacks see the node run (issue 27)

            return traced_call(self, value, scope)
        return self.plain_call(value, scope)

    def plain_call(self, value: Any, scope: TaskScope) -> Any:
        """`call` without the node's trace run (the traced call makes it)."""
        if self.kind == "function":
            if self.injected:
                return self.fn(value, **self._kwargs(scope))
            return self.fn(value)
        return self.fn.invoke(value, scope.config)  # a graph or a Runnable

    async def acall(self, value: Any, scope: TaskScope) -> Any:
        if scope.run.trace is not None and scope.task.node.callee is self:
            from ._tracing import traced_acall

            return await traced_acall(self, value, scope)
        return await self.plain_acall(value, scope)

    async def plain_acall(self, value: Any, scope: TaskScope) -> Any:
        """`acall` without the node's trace run."""
        if self.afn is not None:
            return await self.afn(value, **self._kwargs(scope))
        if self.kind == "function":
            if self.injected:
                return await self.fn(value, **self._kwargs(scope))
            return await self.fn(value)
        return await self.fn.ainvoke(value, scope.config)  # a graph or a Runnable
