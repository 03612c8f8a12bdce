"""`timeout=` on async nodes, entrypoints and tasks (LangGraph 1.2's `TimeoutPolicy`, issue 17).

A timed attempt runs in a cancel scope beside a watchdog: the watchdog cancels the attempt
once it ran past `run_timeout`, or went `idle_timeout` without progress, and the attempt then
fails with `NodeTimeoutError` (retried like any failure). Progress is a touch of the attempt's
`Watch`: `runtime.heartbeat()`, and with `refresh_on="auto"` also a custom stream chunk, a
`@task` call and any LangChain callback event of a runnable called inside the attempt. Sync
code cannot be cancelled in-process, so a timeout on a sync function is refused up front.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from .errors import NodeTimeoutError
from .types import TimeoutPolicy

if TYPE_CHECKING:
    from ._run import Run
    from ._step import Task

__all__ = ["Watch", "run_timed", "timeout_policy"]

_PROGRESS_HANDLER: Any = None


def timeout_policy(value: Any, is_async: bool, name: str, kind: str = "Node") -> TimeoutPolicy | None:
    """The policy `timeout=` asks for; a ValueError (LangGraph's text) on a sync function."""
    policy = TimeoutPolicy.coerce(value)
    if policy is not None and not is_async:
        raise ValueError(
            "Node timeouts are only supported for async nodes because sync Python execution "
            f"cannot be safely cancelled in-process. {kind} {name!r} is sync."
        )
    return policy


class Watch:
    """One timed attempt: when it started, when it last made progress, what fired."""

    __slots__ = ("policy", "started", "last", "fired", "auto", "langchain")

    def __init__(self, policy: TimeoutPolicy) -> None:
        self.policy = policy
        self.started = self.last = time.monotonic()
        self.fired: str | None = None
        self.auto = policy.refresh_on == "auto" and policy.idle_timeout is not None
        # LangChain runnables called inside report progress through a callback handler
        self.langchain = self.auto and "langchain_core" in sys.modules

    def touch(self) -> None:
        """Progress (from any thread: one float store)."""
        self.last = time.monotonic()

    def progress(self) -> None:
        """Progress that counts only with `refresh_on="auto"`."""
        if self.auto:
            self.last = time.monotonic()

    def writer(self, write: Callable[[Any], None]) -> Callable[[Any], None]:
        if not self.auto:
            return write

        def touching(chunk: Any) -> None:
            self.last = time.monotonic()
            write(chunk)

        return touching

    def with_callbacks(self, config: dict[str, Any]) -> dict[str, Any]:
        """`config` with a LangChain handler that touches on every callback event."""
        if not self.langchain:
            return config
        handler = _progress_handler_class()(self)
        callbacks = config.get("callbacks")
        if callbacks is None:
            callbacks = [handler]
        elif isinstance(callbacks, list):
            callbacks = [*callbacks, handler]
        else:  # a callback manager
            callbacks = callbacks.copy()
            callbacks.add_handler(handler, inherit=True)
        return {**config, "callbacks": callbacks}

    def _left(self) -> tuple[float, float]:
        now = time.monotonic()
        policy = self.policy
        run = self.started + policy.run_timeout - now if policy.run_timeout else math.inf
        idle = self.last + policy.idle_timeout - now if policy.idle_timeout else math.inf
        return run, idle  # type: ignore[operator]

    def error(self, name: str) -> NodeTimeoutError:
        policy = self.policy
        return NodeTimeoutError(
            name, time.monotonic() - self.started, kind=self.fired or "run",
            idle_timeout=policy.idle_timeout, run_timeout=policy.run_timeout,  # type: ignore[arg-type]
        )


def _progress_handler_class() -> Any:
    global _PROGRESS_HANDLER
    if _PROGRESS_HANDLER is None:
        from langchain_core.callbacks import BaseCallbackHandler

        class ProgressHandler(BaseCallbackHandler):
            """Touches the attempt's watch on any event of a runnable called inside it."""

            run_inline = True

            def __init__(self, watch: Watch) -> None:
                self.watch = watch

            def _touch(self, *args: Any, **kwargs: Any) -> None:
                self.watch.touch()

            on_llm_start = on_chat_model_start = on_llm_new_token = on_llm_end = _touch
            on_llm_error = on_chain_start = on_chain_end = on_chain_error = _touch
            on_tool_start = on_tool_end = on_tool_error = on_text = _touch
            on_retriever_start = on_retriever_end = on_retriever_error = _touch
            on_retry = on_custom_event = on_agent_action = on_agent_finish = _touch

        _PROGRESS_HANDLER = ProgressHandler
    return _PROGRESS_HANDLER


async def _watchdog(watch: Watch, scope: anyio.CancelScope) -> None:
    while True:
        run, idle = watch._left()
        if run <= 0 or idle <= 0:
            watch.fired = "run" if run <= 0 else "idle"
            scope.cancel()
            return
        await anyio.sleep(min(run, idle))


async def run_timed(
    attempt: Callable[[Run, Task, Watch], Awaitable[None]], run: Run, task: Task
) -> None:
    """Run one attempt of `task` under its node's timeout; NodeTimeoutError when it fires."""
    watch = Watch(task.node.timeout)
    finished = False
    try:
        async with anyio.create_task_group() as group:
            with anyio.CancelScope() as scope:
                group.start_soon(_watchdog, watch, scope)
                try:
                    await attempt(run, task, watch)
                    finished = True
                finally:
                    group.cancel_scope.cancel()  # the watchdog ends with the attempt
    except BaseExceptionGroup as group_error:  # the attempt's own outcome, unwrapped
        if len(group_error.exceptions) == 1:
            raise group_error.exceptions[0] from None
        raise
    if not finished:  # cancelled by the watchdog (any other cancellation propagates)
        raise watch.error(task.name)
