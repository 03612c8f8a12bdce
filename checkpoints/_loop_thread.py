"""A private event loop on a daemon thread.

aiosqlite needs an event loop to deliver results. Sync callers must not pay for a new loop per
call, and async callers may live on any loop (or several), so the SQLite back end keeps one loop
of its own: sync code blocks on `run`, async code awaits `arun`, and both work from any thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["LoopThread"]

T = TypeVar("T")


def _new_loop() -> asyncio.AbstractEventLoop:
    """uvloop when installed (the server's uvicorn[standard] brings it): a round trip through
    asyncpg costs about half the loop thread's CPU of the stdlib loop's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


class LoopThread:
    """Runs coroutines on a loop owned by a dedicated daemon thread."""

    def __init__(self, name: str) -> None:
        self.loop = _new_loop()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule `coro` from any thread; the future resolves when it finishes."""
        if not self._thread.is_alive():
            coro.close()
            raise RuntimeError(f"{self._thread.name} is stopped (the saver was closed)")
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Block the calling thread until `coro` finishes on the private loop."""
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("LoopThread.run called from its own loop would deadlock")
        return self.submit(coro).result()

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await `coro` running on the private loop from whatever loop the caller is on."""
        return await asyncio.wrap_future(self.submit(coro))

    def call_soon(self, callback: Callable[..., object], *args: Any) -> None:
        """Thread-safe `call_soon` on the private loop."""
        self.loop.call_soon_threadsafe(callback, *args)

    def stop(self) -> None:
        """Stop the loop and wait for its thread to end."""
        if self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join()
