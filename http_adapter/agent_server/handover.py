"""Taking an embedded server's SQLite file over from the server before it (issue 26, finding 8).

The embedded records live in the memory of one process, loaded from the file at start-up, and
its queue re-runs every run the file says is "running" as left by a dead process. A second
server on the same file (the next revision of a control-plane deployment) would therefore run a
run in flight a second time and never see what the first one writes. With `--handover` a server
holds an exclusive lock on `<file>.lock` while it owns the file; one started while another
holds it answers `GET /ok` at once (with `X-Graphrun-Standby: 1`), holds every other request,
and opens the file only when the lock is free: when the server before it has drained its runs
and exited (or died). What that one could not finish in its drain grace is then re-run from its
last checkpoint by the normal recovery, so finished steps are not run again; that is what
LangGraph Platform does with the runs of an old revision that outlive its shutdown grace period.

Without `--handover`, or on PostgreSQL (whose queue has leases and shares records), nothing here
applies.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import anyio.abc

from .settings import Settings

__all__ = ["STANDBY_HEADER", "Handover", "HandoverGate"]

logger = logging.getLogger("http_adapter.handover")

STANDBY_HEADER = "x-graphrun-standby"  # on `/ok` while the server waits for the file
_POLL = 0.05  # seconds between attempts at the lock while another server holds it

Lifespan = Callable[[Any], AbstractAsyncContextManager[None]]


class _FileLock:
    """An exclusive `flock` on a file: released by the kernel when the process ends, however."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return True

    def holder(self) -> str:
        try:
            with open(self.path) as file:
                return file.read().strip() or "?"
        except OSError:
            return "?"

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the lock
            self._fd = None


class Handover:
    """The lock, the standby state the gate reads, and the lifespan wrapper that waits."""

    def __init__(self, settings: Settings) -> None:
        path = settings.db_path
        on = settings.handover and path is not None and not settings.cluster
        self.lock = _FileLock(f"{path}.lock") if on else None
        self.ready: anyio.Event | None = None  # set once the server serves; made in the lifespan
        self.failed = False

    def wrap(self, inner: Lifespan) -> Lifespan:
        """`inner` (the server's lifespan) entered once this process owns the file."""
        if self.lock is None:
            return inner

        @contextlib.asynccontextmanager
        async def lifespan(app: Any) -> AsyncIterator[None]:
            assert self.lock is not None
            self.ready = anyio.Event()
            if self.lock.try_acquire():  # nobody before us: start as usual (errors fail the start)
                try:
                    async with inner(app):
                        self.ready.set()
                        yield
                finally:
                    self.lock.release()
                return
            print(f"graphrun: {self.lock.path} is held by pid {self.lock.holder()}: serving "
                  "/ok and waiting for it to stop before taking its runs over", file=sys.stderr,
                  flush=True)
            stop = anyio.Event()
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._take_over, app, inner, stop)
                try:
                    yield
                finally:
                    stop.set()

        return lifespan

    async def _take_over(self, app: Any, inner: Lifespan, stop: anyio.Event) -> None:
        assert self.lock is not None and self.ready is not None
        while not self.lock.try_acquire():
            if stop.is_set():  # stopped before it could take over: held requests get 503
                self.failed = True
                self.ready.set()
                return
            await anyio.sleep(_POLL)
        try:
            logger.info("took %s over", self.lock.path)
            async with inner(app):
                self.ready.set()
                await stop.wait()
        except Exception:
            logger.exception("the server failed after taking the data directory over")
            self.failed = True
            self.ready.set()
            if not stop.is_set():  # end, so a supervisor starts the server again
                os.kill(os.getpid(), signal.SIGTERM)
        finally:
            self.lock.release()


class HandoverGate:
    """ASGI middleware: while the server waits for its file, `/ok` answers (standby) and every
    other request waits; if taking over failed, they answer 503."""

    def __init__(self, app: Any, handover: Handover) -> None:
        self.app = app
        self.handover = handover

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        ready = self.handover.ready
        serving = ready is None or (ready.is_set() and not self.handover.failed)
        if scope["type"] != "http" or serving:
            await self.app(scope, receive, send)
            return
        assert ready is not None
        if not ready.is_set() and scope["path"] == "/ok":
            await _answer(send, 200, b'{"ok":true}', [(STANDBY_HEADER.encode(), b"1")])
            return
        await ready.wait()
        if self.handover.failed:
            await _answer(send, 503, b'{"detail":"the server could not start"}', [])
            return
        await self.app(scope, receive, send)


async def _answer(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        *headers]})
    await send({"type": "http.response.body", "body": body})
