"""`StreamChannel`: one projection of a v3 run, read by exactly one consumer (issue 29).

A channel holds items only once someone subscribed (a projection nobody reads costs nothing),
and its reader drives the run: an empty buffer asks the run's pump for one more event. A
named channel also forwards each item into its run's main event log.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from ._mux import StreamMux

__all__ = ["StreamChannel"]

T = TypeVar("T")


class StreamChannel(Generic[T]):
    """A drain-as-you-read queue bound to a sync or an async run; `tee(n)` fans it out."""

    def __init__(self, name: str | None = None, *, maxlen: int | None = None) -> None:
        if maxlen is not None and maxlen <= 0:
            raise ValueError("StreamChannel maxlen must be a positive int or None")
        self.name = name
        self._maxlen = maxlen  # accepted for LangGraph's signature; the pull pump bounds memory
        self._items: deque[tuple[int, T]] = deque()  # (arrival stamp, item)
        self._closed = False
        self._error: BaseException | None = None
        self._is_async: bool | None = None
        self._subscribed = False
        self._request_more: Callable[[], bool] | None = None
        self._arequest_more: Callable[[], Awaitable[bool]] | None = None
        self._wire_fn: Callable[[T], None] | None = None
        self._mux: StreamMux | None = None

    # -- set up by the mux ----------------------------------------------------------------------

    def _bind_mux(self, mux: StreamMux) -> None:
        self._mux = mux

    def _bind(self, *, is_async: bool) -> None:
        if self._is_async is not None:
            raise RuntimeError("StreamChannel is already bound")
        self._is_async = is_async

    def _wire(self, fn: Callable[[T], None]) -> None:
        self._wire_fn = fn

    # -- producer side --------------------------------------------------------------------------

    def push(self, item: T) -> None:
        """Queue `item` for the subscriber (if any) and forward it to the event log (if named)."""
        if self._subscribed:
            if self._closed:
                raise RuntimeError("Cannot push to a closed StreamChannel")
            stamp = self._mux._next_push_seq() if self._mux is not None else 0
            self._items.append((stamp, item))
        if self._wire_fn is not None:
            self._wire_fn(item)

    def close(self) -> None:
        self._closed = True

    def fail(self, err: BaseException) -> None:
        self._error = err
        self._closed = True

    # -- consumer side --------------------------------------------------------------------------

    def _subscribe(self, want_async: bool) -> None:
        if self._is_async is None:
            raise TypeError(
                "StreamChannel has not been bound yet: register its transformer with a run first."
            )
        if self._is_async != want_async:
            hint = "use 'async for'" if self._is_async else "use 'for'"
            mode = "async" if self._is_async else "sync"
            raise TypeError(f"This StreamChannel is bound to {mode} mode: {hint} instead.")
        if self._subscribed:
            raise RuntimeError("StreamChannel already has a subscriber; use tee() for fan-out.")
        self._subscribed = True

    def __iter__(self) -> Iterator[T]:
        self._subscribe(False)
        return self._read()

    def _read(self) -> Iterator[T]:
        while True:
            if self._items:
                yield self._items.popleft()[1]
            elif self._closed:
                if self._error is not None:
                    raise self._error
                return
            elif self._request_more is None or not self._request_more():
                if not self._items and not self._closed:
                    return

    def __aiter__(self) -> AsyncIterator[T]:
        self._subscribe(True)
        return self._aread()

    async def _aread(self) -> AsyncIterator[T]:
        while True:
            if self._items:
                yield self._items.popleft()[1]
            elif self._closed:
                if self._error is not None:
                    raise self._error
                return
            elif self._arequest_more is None or not await self._arequest_more():
                if not self._items and not self._closed:
                    return

    # -- fan-out --------------------------------------------------------------------------------

    def tee(self, n: int = 2) -> tuple[Iterator[T], ...]:
        """`n` independent readers of this channel (it counts as its one subscriber)."""
        if n < 1:
            raise ValueError("tee() requires n >= 1")
        source = iter(self)
        queues: list[deque[T]] = [deque() for _ in range(n)]

        def reader(own: deque[T]) -> Iterator[T]:
            while True:
                if own:
                    yield own.popleft()
                    continue
                try:
                    item = next(source)
                except StopIteration:
                    return
                for q in queues:
                    q.append(item)

        return tuple(reader(q) for q in queues)

    def atee(self, n: int = 2) -> tuple[AsyncIterator[T], ...]:
        """Async `tee`: readers take turns pulling from the channel under a lock."""
        if n < 1:
            raise ValueError("atee() requires n >= 1")
        source = self.__aiter__()
        queues: list[deque[T]] = [deque() for _ in range(n)]
        state: dict[str, Any] = {"done": False, "error": None}
        lock = asyncio.Lock()

        async def reader(own: deque[T]) -> AsyncIterator[T]:
            while True:
                if own:
                    yield own.popleft()
                    continue
                if state["done"]:
                    if state["error"] is not None:
                        raise state["error"]
                    return
                async with lock:
                    if own or state["done"]:
                        continue
                    try:
                        item = await source.__anext__()
                    except StopAsyncIteration:
                        state["done"] = True
                        continue
                    except Exception as error:
                        state["done"], state["error"] = True, error
                        continue
                    for q in queues:
                        q.append(item)

        return tuple(reader(q) for q in queues)
