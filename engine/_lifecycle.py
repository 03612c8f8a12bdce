"""Telling `GraphCallbackHandler`s in `config["callbacks"]` that a run resumed or paused on
interrupts (issue 29). A root run without callbacks never reaches this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import sys
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._run import Run

__all__ = ["graph_handlers", "with_lifecycle", "with_lifecycle_async"]

_PAUSED = {"interrupted": "pending", "interrupt_before": "interrupt_before",
           "interrupt_after": "interrupt_after"}


def graph_handlers(config: dict[str, Any]) -> list[Any] | None:
    """The lifecycle handlers among the run's callbacks (a list, a handler or a manager)."""
    callbacks = config.get("callbacks")
    if not callbacks or "langchain_core" not in sys.modules:
        return None
    from .callbacks import GraphCallbackHandler

    if hasattr(callbacks, "handlers"):
        callbacks = callbacks.handlers
    elif not isinstance(callbacks, (list, tuple)):
        callbacks = [callbacks]
    found = [h for h in callbacks if isinstance(h, GraphCallbackHandler)]
    return found or None


def _event(run: Run) -> tuple[str, Any] | None:
    """The event the run's state calls for now: a resume once it began, a pause at its end."""
    from .callbacks import GraphInterruptEvent, GraphResumeEvent

    base = {"run_id": run.config.get("run_id"), "checkpoint_id": run.checkpoint_id or "",
            "checkpoint_ns": run.ns_tuple}
    if run.status == "pending":
        return "on_resume", GraphResumeEvent(status="pending", **base) if run.resuming else None
    status = _PAUSED.get(run.status)
    if status is None:
        return None
    return "on_interrupt", GraphInterruptEvent(
        status=status, interrupts=tuple(run.interrupts), **base  # type: ignore[arg-type]
    )


def _tell(handlers: list[Any], name: str, event: Any) -> None:
    """LangChain's rules: a handler's error is logged, unless the handler sets `raise_error`.
    `async def` handlers are awaited here (a sync run, or an async one of a sync graph, runs
    in a thread without an event loop), so their errors follow the same rule."""
    from langchain_core.callbacks.manager import ahandle_event, handle_event

    if any(inspect.iscoroutinefunction(getattr(h, name, None)) for h in handlers):
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(ahandle_event(handlers, name, None, event))
            return
    handle_event(handlers, name, None, event)


def with_lifecycle(run: Run, driver: Iterator[None], handlers: list[Any]) -> Iterator[None]:
    """`driver`, telling `handlers` of the run's resume and pause."""
    try:
        first = next(driver, None)
        if (found := _event(run)) is not None and found[1] is not None:
            _tell(handlers, *found)
        yield first
        yield from driver
    finally:
        driver.close()
    if (found := _event(run)) is not None and found[0] == "on_interrupt":
        _tell(handlers, *found)


async def with_lifecycle_async(
    run: Run, driver: AsyncIterator[None], handlers: list[Any]
) -> AsyncIterator[None]:
    """`with_lifecycle` for the async driver."""
    from langchain_core.callbacks.manager import ahandle_event

    async with contextlib.aclosing(driver):  # type: ignore[type-var]
        first = True
        async for item in driver:
            if first:
                first = False
                if (found := _event(run)) is not None and found[1] is not None:
                    await ahandle_event(handlers, found[0], None, found[1])
            yield item
    if (found := _event(run)) is not None and found[0] == "on_interrupt":
        await ahandle_event(handlers, found[0], None, found[1])
