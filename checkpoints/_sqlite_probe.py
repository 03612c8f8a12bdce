"""A synchronous "is anything stored here?" check for the SQLite saver's sync reads.

The saver's reads go through its loop thread and aiosqlite's connection thread: four thread
hand-offs even when the answer is "nothing", which is the answer for every new thread's first
run. This probe asks that one question on a plain sqlite3 connection, in the caller's thread.
It only ever answers "absent" with certainty; anything else (a row exists, an error, a closed
saver) sends the caller down the normal read path.
"""

from __future__ import annotations

import pathlib
import sqlite3
import threading
from typing import Any

from .base import get_checkpoint_id

__all__ = ["Probe"]

_EXISTS = "SELECT 1 FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?"


class Probe:
    """One lazily opened read-only connection, shared by the caller threads under a lock."""

    def __init__(self, path: str, busy_timeout: float) -> None:
        self._path = path
        self._busy_timeout = busy_timeout
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._closed = False

    def absent(self, config: dict[str, Any]) -> bool:
        """True only when no checkpoint matches the config's thread, namespace (and id)."""
        conf = config.get("configurable") or {}
        thread_id = conf.get("thread_id")
        if thread_id is None:
            return False
        sql, params = _EXISTS, [str(thread_id), conf.get("checkpoint_ns", "")]
        if checkpoint_id := get_checkpoint_id(config):
            sql += " AND checkpoint_id = ?"
            params.append(checkpoint_id)
        with self._lock:
            if self._closed:
                return False
            try:
                conn = self._conn or self._open()
                return conn.execute(sql + " LIMIT 1", params).fetchone() is None
            except sqlite3.Error:
                return False  # locked, or anything unexpected: let the full read decide

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            pathlib.Path(self._path).absolute().as_uri() + "?mode=ro",
            uri=True,
            timeout=self._busy_timeout,
            isolation_level=None,  # autocommit: each query sees the latest commit
            check_same_thread=False,  # used from any caller thread, always under the lock
        )
        self._conn = conn
        return conn

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None
