"""`StreamTransformer`, the extension point of v3 runs, and `ProtocolEvent`, what it sees.

A transformer watches every protocol event of a run and builds projections from them (its
`init()` returns them by name: `StreamChannel`s, or anything else). Sync transformers run in
`stream_events`, async ones (an `aprocess`/`afinalize`/`afail` override, `schedule()`d work)
only in `astream_events` (issue 29).
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Coroutine
from typing import Any, ClassVar, Literal, TypedDict

__all__ = ["ProtocolEvent", "StreamTransformer", "needs_event_loop"]

_log = logging.getLogger(__name__)


class _Params(TypedDict, total=False):
    namespace: list[str]
    timestamp: int  # wall-clock ms: for ordering use the event's `seq`
    data: Any
    interrupts: tuple[Any, ...]


class ProtocolEvent(TypedDict, total=False):
    """One event of a run's main log: `method` is the stream mode (or projection) it carries."""

    type: Literal["event"]
    event_id: str
    seq: int
    method: str
    params: _Params


class StreamTransformer(ABC):
    """Builds projections of a run from its protocol events.

    Subclasses implement `init()` and `process()` (or `aprocess()`); `process` returns False to
    keep an event out of the main log. `_native = True` puts the projections on the run object
    as attributes. `required_stream_modes` are the stream modes the run must produce for it;
    `before_builtins` runs it ahead of the built-in transformers (to rewrite events first).
    """

    requires_async: ClassVar[bool] = False
    supports_sync: ClassVar[bool] = False
    required_stream_modes: ClassVar[tuple[str, ...]] = ()
    before_builtins: ClassVar[bool] = False

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        self.scope: tuple[str, ...] = scope

    @abstractmethod
    def init(self) -> dict[str, Any]:
        """The projections, by name."""

    def _on_register(self, mux: Any) -> None:
        """Called once the mux has wired this transformer in."""

    def process(self, event: ProtocolEvent) -> bool:
        raise NotImplementedError(
            f"{type(self).__name__} must override process() or aprocess()"
        )

    async def aprocess(self, event: ProtocolEvent) -> bool:
        return self.process(event)

    def finalize(self) -> None:
        """The run ended normally (the mux closes the projection channels itself)."""

    async def afinalize(self) -> None:
        self.finalize()

    def fail(self, err: BaseException) -> None:
        """The run ended with `err` (the mux fails the projection channels itself)."""

    async def afail(self, err: BaseException) -> None:
        self.fail(err)

    def schedule(
        self,
        coro: Coroutine[Any, Any, Any],
        *,
        on_error: Literal["log", "raise"] = "log",
    ) -> asyncio.Task[Any]:
        """Run `coro` alongside the run: the mux awaits it before `afinalize`, cancels it on
        failure. With `on_error="log"` its exception is logged instead of failing the run."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                f"{type(self).__name__}.schedule() requires a running event loop: use "
                "astream_events(), not stream_events(), and set requires_async=True."
            ) from None
        task = asyncio.create_task(_logged(coro) if on_error == "log" else coro)
        pending = self._scheduled_task_set()
        pending.add(task)
        task.add_done_callback(pending.discard)
        return task

    def _scheduled_task_set(self) -> set[asyncio.Task[Any]]:
        # created lazily: subclasses need not call `super().__init__()`
        pending = self.__dict__.get("_stream_scheduled_tasks")
        if pending is None:
            pending = self.__dict__["_stream_scheduled_tasks"] = set()
        return pending


async def _logged(coro: Coroutine[Any, Any, Any]) -> Any:
    try:
        return await coro
    except asyncio.CancelledError:
        raise
    except BaseException:
        _log.exception("A scheduled StreamTransformer task failed")
        return None


def needs_event_loop(transformer: StreamTransformer) -> bool:
    """Whether `transformer` can only run under `astream_events`."""
    if transformer.requires_async:
        return True
    if transformer.supports_sync:
        return False
    cls = type(transformer)
    return any(
        getattr(cls, name) is not getattr(StreamTransformer, name)
        for name in ("aprocess", "afinalize", "afail")
    )
