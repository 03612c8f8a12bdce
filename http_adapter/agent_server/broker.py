"""Per-run event fan-out to stream subscribers, with a replay log for resumable runs.

Each event is encoded once (the SSE frame) and the bytes are fanned out (DESIGN). A subscriber
that joins gets only what is published after it joined (SPEC §3 rule 3), unless the run is
resumable and it asks to replay after a `Last-Event-ID`. Process-local: a scale-out back end
(Redis) implements the same methods.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream

__all__ = ["Broker", "Event", "Subscription"]

Event = tuple[int, str, bytes]  # (id, event name, JSON data)
_END: Any = None


class _RunLog:
    __slots__ = ("resumable", "events", "subscribers", "closed", "next_id")

    def __init__(self, resumable: bool) -> None:
        self.resumable = resumable
        self.events: list[Event] = []
        self.subscribers: set[MemoryObjectSendStream[Event | None]] = set()
        self.closed = False
        self.next_id = 0


class Broker:
    """Run id -> its event log and live subscribers."""

    def __init__(self, keep_closed: int = 1000) -> None:
        self._runs: dict[str, _RunLog] = {}
        self._closed_order: list[str] = []
        self._keep_closed = keep_closed

    def open(self, run_id: str, *, resumable: bool = False) -> None:
        log = self._runs.get(run_id)
        if log is None:
            self._runs[run_id] = _RunLog(resumable)
        else:  # a retried run (new attempt) keeps its log and subscribers
            log.closed = False
            log.resumable = log.resumable or resumable

    def has_subscribers(self, run_id: str) -> bool:
        log = self._runs.get(run_id)
        return bool(log and log.subscribers)

    def publish(self, run_id: str, name: str, data: bytes) -> None:
        log = self._runs.get(run_id)
        if log is None:
            return
        event = (log.next_id, name, data)
        log.next_id += 1
        if log.resumable:
            log.events.append(event)
        for subscriber in list(log.subscribers):
            try:
                subscriber.send_nowait(event)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                log.subscribers.discard(subscriber)

    def close(self, run_id: str) -> None:
        log = self._runs.get(run_id)
        if log is None or log.closed:
            return
        log.closed = True
        for subscriber in list(log.subscribers):
            try:
                subscriber.send_nowait(_END)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass
        log.subscribers.clear()
        self._closed_order.append(run_id)
        while len(self._closed_order) > self._keep_closed:
            self._runs.pop(self._closed_order.pop(0), None)

    def forget(self, run_id: str) -> None:
        self.close(run_id)
        self._runs.pop(run_id, None)

    def attach(self, run_id: str, *, last_event_id: int | None = None) -> Subscription:
        """Subscribe now (synchronously, so nothing published after this call is missed)."""
        return Subscription(self._runs.get(run_id), last_event_id)


class Subscription:
    """Events of one run from the moment of `attach` (or replayed after `last_event_id`)."""

    def __init__(self, log: _RunLog | None, last_event_id: int | None) -> None:
        self._log = log
        send, receive = anyio.create_memory_object_stream[Event | None](math.inf)
        self._send, self._receive = send, receive
        self._replay: list[Event] = []
        if log is None:
            send.close()
            return
        if last_event_id is not None and log.resumable:
            self._replay = [e for e in log.events if e[0] > last_event_id]
        if log.closed:
            send.close()
        else:
            log.subscribers.add(send)

    async def __aiter__(self) -> AsyncIterator[Event]:
        last = self._replay[-1][0] if self._replay else -1
        try:
            for event in self._replay:
                yield event
            async with self._receive:
                async for event in self._receive:
                    if event is None:
                        return
                    if event[0] <= last:
                        continue
                    yield event
        finally:
            self.close()

    def close(self) -> None:
        if self._log is not None:
            self._log.subscribers.discard(self._send)
        self._send.close()
