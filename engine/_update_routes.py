"""Async routers on the update paths (issue 27).

`update_state` and bulk updates route a node's conditional edges synchronously. LangGraph's
`aupdate_state` awaits an async router, so the async methods run that synchronous part in a
worker thread (only for graphs that have an async router) and the router's coroutine is
awaited on the caller's event loop from there. The sync methods refuse an async router, as
LangGraph's do.
"""

from __future__ import annotations

import contextvars
import inspect
from collections.abc import Callable
from typing import Any

import anyio.from_thread
import anyio.to_thread

__all__ = ["has_async_router", "off_loop", "router_result"]

_ON_LOOP: contextvars.ContextVar[bool] = contextvars.ContextVar("graphrun_update_off_loop",
                                                                default=False)


def has_async_router(plan: Any) -> bool:
    return any(b.router.is_async for node in plan.nodes.values() for b in node.branches)


async def off_loop(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` in a worker thread whose async routers are awaited on this event loop."""

    def call() -> Any:
        _ON_LOOP.set(True)  # (the thread runs in a copy of this context)
        return fn(*args)

    return await anyio.to_thread.run_sync(call)


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def router_result(router: Any, state: Any) -> Any:
    """A router's answer for an update: its return value, an async router's awaited."""
    result = router.fn(state)
    if not inspect.isawaitable(result):
        return result
    if not _ON_LOOP.get():
        if inspect.iscoroutine(result):
            result.close()  # never awaited: no "coroutine was never awaited" warning
        raise TypeError(
            f"Router {router.name!r} is async: update the state with aupdate_state "
            "(or abulk_update_state)"
        )
    return anyio.from_thread.run(_awaited, result)
