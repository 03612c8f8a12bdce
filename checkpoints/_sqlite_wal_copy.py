"""Copying the SQLite write-ahead log into the database file off the commit path.

SQLite's own "autocheckpoint" copies the WAL into the main file inside whichever commit pushes
the log past 1000 pages, so one put in every ~4 MB waits for that copy (and its fsync). With
large states that was most of a run's SQLite time. The saver's writer connection therefore
raises the threshold to a safety net (`INLINE_PAGES`) and this helper runs a PASSIVE checkpoint
on its own connection, on the saver's loop, after every `THRESHOLD` bytes committed. PASSIVE
never blocks writers or readers: a commit arriving meanwhile appends to the log as usual.
Durability is unchanged: a committed transaction is in the WAL, which recovery replays.
During a burst the log can grow past SQLite's usual ~4 MB (measured: 30-70 MB while a loop of
24 MB runs outran the copies); `WAL_SIZE_LIMIT` cuts the file back when the log restarts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import aiosqlite

__all__ = ["INLINE_PAGES", "THRESHOLD", "WAL_SIZE_LIMIT", "WalCopier"]

THRESHOLD = 4 << 20  # bytes committed between background copies (SQLite's default is 1000 pages)
INLINE_PAGES = 16384  # the writer still copies inline if the log ever gets this far behind
WAL_SIZE_LIMIT = 32 << 20  # bytes the log file is truncated to when it restarts
_PASSES = 3  # copies in a row while commits keep adding frames (issue 32)

_log = logging.getLogger("checkpoints.sqlite")


class WalCopier:
    """One saver's background WAL checkpoints. Every method runs on the saver's loop."""

    def __init__(self, path: str, busy_timeout: float) -> None:
        self._path = path
        self._busy_timeout = busy_timeout
        self._conn: aiosqlite.Connection | None = None
        self._task: asyncio.Task[None] | None = None
        self._written = 0
        self._closed = False

    def committed(self, nbytes: int) -> None:
        """Count a commit's bytes; start a copy once enough accumulated and none is running."""
        self._written += nbytes
        if self._written >= THRESHOLD and self._task is None and not self._closed:
            self._written = 0
            self._task = asyncio.get_running_loop().create_task(self._copy())

    async def _copy(self) -> None:
        try:
            if self._conn is None:
                self._conn = await aiosqlite.connect(self._path, isolation_level=None)
                # No busy waits: PASSIVE never waits, and the TRUNCATE after it gives up at
                # once rather than hold back a writer (issue 32).
                await self._conn.execute("PRAGMA busy_timeout = 0")
            await self._copy_and_restart(self._conn)
        except Exception:  # the next copy (or the writer's inline safety net) catches up
            _log.warning("background WAL checkpoint failed", exc_info=True)
        finally:
            self._task = None

    @staticmethod
    async def _copy_and_restart(conn: aiosqlite.Connection) -> None:
        """Copy the log into the file, then let it start over (issue 32).

        SQLite writes the log from its start again only once a copy was complete and no
        reader still needs the old frames when the next commit begins; under a long thread's
        steady small commits that moment never came and the file grew to the writer's inline
        safety net (64 MB, 32 MB after a restart). So: PASSIVE copies (a second pass for frames
        that came in meanwhile), then, once complete, TRUNCATE with no busy wait, which only
        resets the log (nothing is left to copy) and gives up at once if anyone is busy.
        """
        for _ in range(_PASSES):
            rows = await conn.execute_fetchall("PRAGMA wal_checkpoint(PASSIVE)")
            if rows and rows[0][0] == 0 and rows[0][1] == rows[0][2]:
                await conn.execute_fetchall("PRAGMA wal_checkpoint(TRUNCATE)")
                return

    async def idle(self) -> None:
        """Wait for a copy in progress (tests, close)."""
        task = self._task
        if task is not None:
            with contextlib.suppress(Exception):
                await task

    async def close(self) -> None:
        self._closed = True
        await self.idle()
        if self._conn is not None:
            await self._conn.close()
            self._conn = None
