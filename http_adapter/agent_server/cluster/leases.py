"""Lease heartbeats on a thread of their own (issue 19 §3-4).

A graph node may block the server's event loop (a sync call inside an async node) for longer
than a lease. The heartbeat therefore runs on its own thread with its own event loop and its
own database connection: the host keeps its leases while its loop is stuck, so the run is not
re-executed elsewhere. Each beat also reads back the runs' `cancel_action` flags: the cancel
path that still works when Redis is down. Findings go back to the server loop thread-safely.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import asyncpg

from .ledger import Ledger

__all__ = ["Heartbeat"]

logger = logging.getLogger("http_adapter.cluster.leases")


class Heartbeat:
    """Renews the leases of this host's attempts every `interval` seconds.

    `on_cancel(run_id, action)` runs on the server loop once per run when a cancel flag shows
    up; `on_lost(run_id)` when an attempt is no longer this host's (its lease lapsed and the
    reaper took it back): that attempt is stale and should stop.

    `holds(run_id)` answers from this host's own clock whether the attempt's lease still runs
    (issue 26): a host that was paused past its lease (a VM stall, SIGSTOP) knows it lost the
    run before its first write after resuming, without waiting for a beat to tell it.
    """

    def __init__(self, url: str, ledger: Ledger, *, interval: float,
                 on_cancel: Callable[[str, str], Any], on_lost: Callable[[str], Any],
                 connect_options: dict[str, Any] | None = None) -> None:
        self._url = url
        self._ledger = ledger
        self._interval = interval
        self._on_cancel = on_cancel
        self._on_lost = on_lost
        self._options = connect_options or {}
        self._tracked: dict[str, uuid.UUID] = {}
        # Until when each attempt's lease runs by this host's monotonic clock: from the moment
        # its claim or last renewal was SENT, so never later than the database's `lease_until`.
        self._deadlines: dict[str, float] = {}
        self._flagged: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._server_loop: asyncio.AbstractEventLoop | None = None
        self.beats = 0  # completed renewals (observability, tests)

    def track(self, run_id: str, token: uuid.UUID, since: float | None = None) -> None:
        """Keep the attempt's lease; `since`: when its claim was sent (`time.monotonic()`)."""
        with self._lock:
            self._tracked[run_id] = token
            start = time.monotonic() if since is None else since
            self._deadlines[run_id] = start + self._ledger.lease

    def untrack(self, run_id: str) -> None:
        with self._lock:
            self._tracked.pop(run_id, None)
            self._deadlines.pop(run_id, None)
            self._flagged.discard(run_id)

    def holds(self, run_id: str, token: uuid.UUID) -> bool:
        """Whether the attempt's lease still runs, by this host's clock (thread-safe, no I/O)."""
        deadline = self._deadlines.get(run_id)
        return (deadline is not None and self._tracked.get(run_id) == token
                and time.monotonic() < deadline)

    def start(self) -> None:
        """Start beating; call from the server loop (callbacks are delivered there)."""
        self._server_loop = asyncio.get_running_loop()
        self._stop.clear()
        self._thread = threading.Thread(target=self._main, name="graphrun-heartbeat",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop beating and wait for the thread (blocks for at most one beat)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self._interval + 10)
            self._thread = None

    def _main(self) -> None:
        asyncio.run(self._beat_forever())

    async def _beat_forever(self) -> None:
        conn: asyncpg.Connection | None = None
        try:
            while not self._stop.is_set():
                try:
                    if conn is None or conn.is_closed():
                        conn = await asyncpg.connect(self._url, **self._options)
                    await self._beat(conn)
                except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
                    logger.warning("Lease heartbeat failed (will retry): %s", error)
                    conn = await _discard(conn)
                except Exception:  # a dead heartbeat loses every lease here (issue 26 §1)
                    logger.exception("Lease heartbeat failed (will retry)")
                    conn = await _discard(conn)
                await asyncio.get_running_loop().run_in_executor(
                    None, self._stop.wait, self._interval
                )
        finally:
            await _discard(conn)

    async def _beat(self, conn: asyncpg.Connection) -> None:
        with self._lock:
            claims = list(self._tracked.items())
        sent = time.monotonic()
        found = await self._ledger.renew(conn, claims)
        self.beats += 1
        self._renewed(claims, found, sent + self._ledger.lease)
        for run_id, _ in claims:
            if run_id not in found:
                self._deliver(self._lost, run_id)
            elif (action := found[run_id]) is not None:
                self._deliver(self._cancelled, run_id, action)

    def _renewed(self, claims: list[tuple[str, uuid.UUID]], found: dict[str, str | None],
                 deadline: float) -> None:
        """Leases renewed run until `deadline`; a lost one ends now, before the server loop
        hears of it (an attempt's next write asks `holds`)."""
        with self._lock:
            for run_id, token in claims:
                if self._tracked.get(run_id) != token:
                    continue  # finished (or claimed again) meanwhile
                if run_id in found:
                    self._deadlines[run_id] = deadline
                else:
                    self._deadlines.pop(run_id, None)

    def _lost(self, run_id: str) -> None:
        with self._lock:
            if self._tracked.pop(run_id, None) is None:
                return  # finished meanwhile: nothing was lost
        self._on_lost(run_id)

    def _cancelled(self, run_id: str, action: str) -> None:
        with self._lock:
            if run_id not in self._tracked or run_id in self._flagged:
                return
            self._flagged.add(run_id)
        self._on_cancel(run_id, action)

    def _deliver(self, callback: Callable[..., Any], *args: Any) -> None:
        loop = self._server_loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(callback, *args)


async def _discard(conn: asyncpg.Connection | None) -> None:
    if conn is not None:
        try:
            await conn.close(timeout=2)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError):
            conn.terminate()
    return None
