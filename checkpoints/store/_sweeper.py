"""A daemon thread that deletes expired items periodically, owned by its store.

A thread (not an event-loop task) so the sweeper works the same for sync and async users; the
store stops and joins it on `close`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future

logger = logging.getLogger(__name__)


class Sweeper:
    """Calls `sweep` every `interval_s` seconds until stopped."""

    def __init__(self, sweep: Callable[[], int], interval_s: float) -> None:
        self._sweep = sweep
        self._interval_s = interval_s
        self._stop = threading.Event()
        # Resolves when the loop ends; cancelling it stops the sweeper (LangGraph's contract).
        self.future: Future[None] = Future()
        self.future.add_done_callback(lambda f: self._stop.set() if f.cancelled() else None)
        self._thread = threading.Thread(target=self._run, name="graphrun-store-ttl", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                swept = self._sweep()
            except Exception:  # a failed sweep must not end the sweeper; the next one retries
                logger.exception("Store TTL sweep failed")
            else:
                if swept:
                    logger.debug("Store TTL sweep deleted %d expired items", swept)
        if self.future.set_running_or_notify_cancel():
            self.future.set_result(None)

    def alive(self) -> bool:
        """Whether the thread is still running."""
        return self._thread.is_alive()

    def stop(self, timeout: float | None = None) -> bool:
        """Signal the thread and wait for it; False if it outlived `timeout` seconds."""
        self._stop.set()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)
        return not self._thread.is_alive()
