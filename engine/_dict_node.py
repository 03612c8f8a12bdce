"""A node given as a dict, `add_node("agent", {"messages": prompt | model})` (issue 27).

LangGraph turns the dict into LangChain's `RunnableParallel`: every entry runs on the node's
input and the node returns `{key: that entry's result}`. Entries may be runnables (anything
with `invoke`/`ainvoke`, compiled graphs too) or functions, sync or async; an async run runs
the entries concurrently.
"""

from __future__ import annotations

import inspect
from typing import Any

import anyio

__all__ = ["DictNode"]


class _Entry:
    __slots__ = ("key", "step", "is_async", "takes_config")

    def __init__(self, key: str, step: Any) -> None:
        if not (callable(step) or hasattr(step, "invoke")):
            raise TypeError(
                f"Expected a Runnable, callable or dict. Instead got an unsupported type: "
                f"{type(step)} (for key {key!r})"
            )
        self.key = key
        self.step = step
        runnable = hasattr(step, "invoke")
        self.is_async = not runnable and inspect.iscoroutinefunction(
            getattr(step, "__call__", step) if not inspect.isfunction(step) else step
        )
        self.takes_config = not runnable and _takes_config(step)

    def call(self, value: Any, config: Any) -> Any:
        if hasattr(self.step, "invoke"):
            return self.step.invoke(value, config)
        if self.is_async:
            raise TypeError(f"Entry {self.key!r} of a dict node is async: run the graph async")
        return self.step(value, config=config) if self.takes_config else self.step(value)

    async def acall(self, value: Any, config: Any) -> Any:
        if hasattr(self.step, "ainvoke"):
            return await self.step.ainvoke(value, config)
        if self.is_async:
            kwargs = {"config": config} if self.takes_config else {}
            return await self.step(value, **kwargs)
        return self.call(value, config)


def _takes_config(fn: Any) -> bool:
    try:
        return "config" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


class DictNode:
    """Runs each entry on the input; returns their results under the entries' keys."""

    def __init__(self, steps: dict[str, Any]) -> None:
        self.entries = [_Entry(key, step) for key, step in steps.items()]

    def __repr__(self) -> str:
        return f"DictNode({[e.key for e in self.entries]})"

    def __call__(self, state: Any, config: Any) -> dict[str, Any]:
        return {entry.key: entry.call(state, config) for entry in self.entries}

    async def _graphrun_acall(self, state: Any, config: Any) -> dict[str, Any]:
        """The async form (`Callee.afn`): the entries run concurrently."""
        results: dict[str, Any] = {}

        async def one(entry: _Entry) -> None:
            results[entry.key] = await entry.acall(state, config)

        async with anyio.create_task_group() as tg:
            for entry in self.entries:
                tg.start_soon(one, entry)
        return {entry.key: results[entry.key] for entry in self.entries}
