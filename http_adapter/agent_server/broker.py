"""Per-run event fan-out to stream subscribers, with a replay log for resumable runs.

Each event is framed once (the SSE bytes, `encode.sse_frame`) and the bytes are fanned out
(DESIGN). A subscriber that joins gets only what is published after it joined (SPEC §3 rule 3),
unless the run is resumable and it asks to replay after a `Last-Event-ID`.

Event ids have the LangGraph server's form `<epoch ms>-<seq>` (what a Redis stream id looks
like). Unlike the LangGraph server, which gave two events of the same millisecond the same id
(so a reconnect after the first lost the second), `seq` counts events within a millisecond and
ids only grow: replay after any id is exact, without loss or duplicates.

Process-local: a scale-out back end (Redis streams) implements the same methods.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from .encode import sse_frame

__all__ = ["Broker", "Event", "Subscription", "parse_event_id"]

EventKey = tuple[int, int]  # (epoch ms, seq): ordered like the ids
Event = tuple[EventKey, str, bytes]  # (key, event name, SSE frame)
_END: Any = None
_REPLAY_ALL: EventKey = (-1, -1)


def parse_event_id(value: str | None) -> EventKey | None:
    """A `Last-Event-ID` as a key; None when absent; `-1` (or anything unreadable) replays all."""
    if value is None or not value.strip():
        return None
    ms, _, seq = value.strip().partition("-")
    try:
        return (int(ms), int(seq or 0)) if ms else _REPLAY_ALL
    except ValueError:
        return _REPLAY_ALL


class _RunLog:
    __slots__ = ("closed", "events", "last", "resumable", "subscribers")

    def __init__(self, resumable: bool) -> None:
        self.resumable = resumable
        self.events: list[Event] = []
        self.subscribers: set[MemoryObjectSendStream[Event | None]] = set()
        self.closed = False
        self.last: EventKey = (0, -1)

    def next_key(self) -> EventKey:
        ms = time.time_ns() // 1_000_000
        last_ms, last_seq = self.last
        self.last = (ms, 0) if ms > last_ms else (last_ms, last_seq + 1)
        return self.last


class Broker:
    """Run id -> its event log and live subscribers."""

    def __init__(self, keep_closed: int = 1000) -> None:
        self._runs: dict[str, _RunLog] = {}
        self._closed_order: list[str] = []
        self._keep_closed = keep_closed

    def open(self, run_id: str, *, resumable: bool = False, attempt: int = 0) -> None:
        """`attempt` fences a shared broker's stream (issue 26); one process needs none."""
        log = self._runs.get(run_id)
        if log is None:
            self._runs[run_id] = _RunLog(resumable)
        else:  # a retried run (new attempt) keeps its log and subscribers
            log.closed = False
            log.resumable = log.resumable or resumable

    def has_subscribers(self, run_id: str) -> bool:
        log = self._runs.get(run_id)
        return bool(log and log.subscribers)

    def reaches(self, run_id: str) -> bool:
        """Whether an event published now could reach anyone: a subscriber, or a later replay
        (a resumable run). When not, its encoding can be skipped (issue 32: a `/runs/wait` turn
        encoded the whole state into `values` events nobody read, twice a turn)."""
        log = self._runs.get(run_id)
        return bool(log and (log.resumable or log.subscribers))

    def publish_lazy(self, run_id: str, events: Callable[[], list[tuple[str, bytes]]]
                     ) -> None:
        """Publish `events()` if they `reaches` anyone; else they are never encoded."""
        if self.reaches(run_id):
            for name, data in events():
                self.publish(run_id, name, data)

    async def watch(self, run_id: str) -> None:
        """A shared broker registers a reader on another host (issue 32); here `attach`
        tells."""

    def publish(self, run_id: str, name: str, data: bytes) -> None:
        """Frame `data` (compact JSON) as event `name` once and send it to every subscriber."""
        log = self._runs.get(run_id)
        if log is None:
            return
        key = log.next_key()
        event_id = f"{key[0]}-{key[1]}" if log.resumable else None
        event = (key, name, sse_frame(name, data, event_id))
        if log.resumable:
            log.events.append(event)
        for subscriber in list(log.subscribers):
            try:
                subscriber.send_nowait(event)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                log.subscribers.discard(subscriber)

    def close(self, run_id: str) -> None:
        """The run is over: subscribers' streams end; the log stays for late replays."""
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

    def attach(self, run_id: str, *, last_event_id: str | None = None) -> Subscription:
        """Subscribe now (synchronously, so nothing published after this call is missed).

        With a `last_event_id` on a resumable run, the events after it are replayed first.
        """
        return Subscription(self._runs.get(run_id), parse_event_id(last_event_id))


class Subscription:
    """Events of one run from the moment of `attach` (or replayed after `after`)."""

    def __init__(self, log: _RunLog | None, after: EventKey | None) -> None:
        self._log = log
        send, receive = anyio.create_memory_object_stream[Event | None](math.inf)
        self._send, self._receive = send, receive
        self._replay: list[Event] = []
        self._reading = False
        if log is None:
            send.close()
            return
        if after is not None and log.resumable:
            self._replay = [e for e in log.events if e[0] > after]
        if log.closed:
            send.close()
        else:
            log.subscribers.add(send)

    async def __aiter__(self) -> AsyncIterator[Event]:
        last = self._replay[-1][0] if self._replay else None
        self._reading = True
        try:
            for event in self._replay:
                yield event
            async with self._receive:
                async for live in self._receive:
                    if live is None:
                        return
                    if last is not None and live[0] <= last:
                        continue
                    yield live
        finally:
            self.close()

    def close(self) -> None:
        if self._log is not None:
            self._log.subscribers.discard(self._send)
        self._send.close()
        if not self._reading:  # never read: nothing else closes its receiving end
            self._receive.close()
