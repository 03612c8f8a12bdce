"""The functional API (issue 17): an `@entrypoint` fanning out N `@task` calls and gathering
their results, sync (thread pool) and async (one task group), with and without a saver.

Every task is trivial, so a run measures what a call costs the engine: its task record, its
future, its start and result stream events, and with a saver its pending write. The figure to
read is microseconds per task call. Run it alone with `python -m benchmarks --filter func`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ._harness import Case, Lib, variants

__all__ = ["cases", "fanout"]

TASKS = 50


class _Entrypoint:
    """The harness compiles what a case builds: here, decorating is compiling."""

    def __init__(self, lib: Lib, is_async: bool) -> None:
        self.lib = lib
        self.is_async = is_async

    def compile(self, checkpointer: Any = None) -> Any:
        lib = self.lib
        if self.is_async:

            @lib.task
            async def double(x: int) -> int:
                return x * 2

            @lib.entrypoint(checkpointer=checkpointer)
            async def fan_out(n: int) -> int:
                return sum(await asyncio.gather(*[double(i) for i in range(n)]))

            return fan_out

        @lib.task
        def double_sync(x: int) -> int:
            return x * 2

        @lib.entrypoint(checkpointer=checkpointer)
        def fan_out_sync(n: int) -> int:
            futures = [double_sync(i) for i in range(n)]
            return sum(f.result() for f in futures)

        return fan_out_sync


def fanout(lib: Lib, size: int, is_async: bool) -> Any:
    return _Entrypoint(lib, is_async)


def cases() -> list[Case]:
    return variants(
        f"func_fanout_{TASKS}",
        "func",
        fanout,
        lambda size: size,
        TASKS,
        TASKS,
        savers=(None, "memory"),
        unit="step",
        units=lambda size: size,
        summarize=lambda output: output,
        note="entrypoint calling N trivial tasks; per-task time is the figure to read",
    )
