"""Switching a shared SQLite file to WAL, for every component and process that opens it.

``PRAGMA journal_mode = WAL`` needs an exclusive lock while the file is still in rollback mode,
and SQLite answers "database is locked" at once instead of calling the busy handler: two
components (or processes) opening a fresh file together would fail without the retry here.
Once the file is in WAL mode the pragma succeeds immediately. The agent server's own connections
to the shared file should go through `enable_wal` / `aenable_wal` too.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time

import aiosqlite

__all__ = ["aenable_wal", "enable_wal"]

_PAUSE = 0.005  # between attempts; the lock is held only for the other switch


def enable_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Put the file in WAL mode, retrying for up to `timeout` seconds while it is locked."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL").fetchall()
            return
        except sqlite3.OperationalError as exc:
            if not _retry(exc, deadline):
                raise
        time.sleep(_PAUSE)


async def aenable_wal(conn: aiosqlite.Connection, timeout: float) -> None:
    """`enable_wal` on an aiosqlite connection."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            async with conn.execute("PRAGMA journal_mode = WAL") as cursor:
                await cursor.fetchall()
            return
        except sqlite3.OperationalError as exc:
            if not _retry(exc, deadline):
                raise
        await asyncio.sleep(_PAUSE)


def _retry(exc: sqlite3.OperationalError, deadline: float) -> bool:
    return "locked" in str(exc) and time.monotonic() < deadline
