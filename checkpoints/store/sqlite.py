"""`SqliteStore`: the store in one SQLite file (WAL), usable from sync and async code.

Why stdlib `sqlite3` behind a lock rather than aiosqlite: aiosqlite is sqlite3 on a private
thread, and a sync facade over it needs a second thread running an event loop, so every sync
call would cross two threads. Here the sync methods run the transaction in the caller's thread
(zero hops), and the async methods run the very same function in a worker thread through
`anyio.to_thread` (one hop, any anyio backend). A cancelled async caller waits for the
transaction to finish, so a put is either fully stored or not at all.

Layout: namespaces stored as their labels joined with ``.`` (labels cannot contain one), values
as JSON text, times as integer microseconds since the Unix epoch (UTC), vectors as
little-endian float32 blobs. The tables are the ``"store"`` component of the file's shared schema
table (`checkpoints._schema_versions`), so the store can share a file with the checkpoint saver
and the server's records.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

import anyio.to_thread

from .._schema_versions import migrate
from .._sqlite_wal import enable_wal
from ._core import Row
from ._embed import Vector, from_blob, to_blob
from ._rowstore import OpenedRowStore
from .base import IndexConfig, TTLConfig

__all__ = ["SqliteStore"]

T = TypeVar("T")

COMPONENT = "store"

# Ordered migrations: entry N (1-based) upgrades the component from version N-1. Append only.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE store_items (
            prefix TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            expires_at INTEGER,
            ttl_minutes REAL,
            PRIMARY KEY (prefix, key)
        ) WITHOUT ROWID""",
        """CREATE INDEX store_items_expires_at ON store_items (expires_at)
            WHERE expires_at IS NOT NULL""",
        """CREATE TABLE store_vectors (
            prefix TEXT NOT NULL,
            key TEXT NOT NULL,
            field TEXT NOT NULL,
            embedding BLOB NOT NULL,
            PRIMARY KEY (prefix, key, field),
            FOREIGN KEY (prefix, key) REFERENCES store_items (prefix, key) ON DELETE CASCADE
        ) WITHOUT ROWID""",
    ),
)

_ALIVE = "(expires_at IS NULL OR expires_at > ?)"
_COLUMNS = "prefix, key, value, created_at, updated_at, expires_at, ttl_minutes"
_UPSERT = f"""INSERT INTO store_items ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (prefix, key) DO UPDATE SET value = excluded.value,
        created_at = excluded.created_at, updated_at = excluded.updated_at,
        expires_at = excluded.expires_at, ttl_minutes = excluded.ttl_minutes"""


def _prefix_clause(prefix: tuple[str, ...]) -> tuple[str, list[str]]:
    """SQL matching whole labels: ("a",) matches "a" and "a.b" but not "ab" (range on the PK)."""
    if not prefix:
        return "1", []
    text = ".".join(prefix)
    # "/" is the character after "."; every "a.…" sorts in ["a.", "a/").
    return "(prefix = ? OR (prefix >= ? AND prefix < ?))", [text, text + ".", text + "/"]


def _row(record: tuple[Any, ...]) -> Row:
    prefix, key, raw, created_at, updated_at, expires_at, ttl_minutes = record
    return Row(tuple(prefix.split(".")), key, raw, created_at, updated_at, expires_at, ttl_minutes)


def _connect(path: str, busy_timeout_ms: int) -> sqlite3.Connection:
    # Autocommit mode: transactions are opened explicitly by `_transaction`.
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        enable_wal(conn, busy_timeout_ms / 1000)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    except BaseException:
        conn.close()
        raise
    return conn


class SqliteStore(OpenedRowStore):
    """A persistent store in a SQLite file, with TTL and optional semantic search.

    Safe to share between threads and event loops; several processes may open the same file
    (WAL, `busy_timeout_ms`). Close it (or use ``with``/``async with``) to release the file.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        index: IndexConfig | None = None,
        ttl_config: TTLConfig | None = None,
        clock: Callable[[], datetime] | None = None,
        busy_timeout_ms: int = 5000,
    ) -> None:
        super().__init__(index=index, ttl_config=ttl_config, clock=clock)
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = _connect(self.path, busy_timeout_ms)
        try:
            self.setup()
        except BaseException:
            self.close()
            raise

    def setup(self) -> None:
        """Create or upgrade the schema; idempotent, and run by the constructor."""
        with self._transaction(write=True):
            # Before the shared table the store counted its migrations in user_version (legacy).
            migrate(self._db(), COMPONENT, MIGRATIONS, legacy_table="store_items")

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError(f"SqliteStore({self.path!r}) is closed.")
        return self._conn

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[None]:
        with self._lock:
            conn = self._db()
            # IMMEDIATE takes the write lock up front: a read that turns into a write later
            # could fail with SQLITE_BUSY instead of waiting for another process.
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:  # also after a failed COMMIT, so the next BEGIN works
                    conn.execute("ROLLBACK")
                raise

    async def _offload(self, fn: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(fn, *args)

    def _read(self, namespace: tuple[str, ...], key: str, now: int) -> Row | None:
        sql = f"SELECT {_COLUMNS} FROM store_items WHERE prefix = ? AND key = ? AND {_ALIVE}"
        record = self._db().execute(sql, (".".join(namespace), key, now)).fetchone()
        return None if record is None else _row(record)

    def _write(self, row: Row, vectors: list[tuple[str, Vector]]) -> None:
        conn, prefix = self._db(), ".".join(row.namespace)
        times = (row.created_at, row.updated_at, row.expires_at, row.ttl_minutes)
        conn.execute(_UPSERT, (prefix, row.key, row.raw, *times))
        conn.execute("DELETE FROM store_vectors WHERE prefix = ? AND key = ?", (prefix, row.key))
        conn.executemany(
            "INSERT INTO store_vectors (prefix, key, field, embedding) VALUES (?, ?, ?, ?)",
            [(prefix, row.key, field, to_blob(vector)) for field, vector in vectors],
        )

    def _remove(self, namespace: tuple[str, ...], key: str) -> None:
        self._db().execute(
            "DELETE FROM store_items WHERE prefix = ? AND key = ?", (".".join(namespace), key)
        )

    def _touch(self, rows: list[Row]) -> None:
        self._db().executemany(
            "UPDATE store_items SET expires_at = ? WHERE prefix = ? AND key = ?",
            [(row.expires_at, ".".join(row.namespace), row.key) for row in rows],
        )

    def _scan(
        self, prefix: tuple[str, ...], now: int, *, limit: int | None, vectors: bool
    ) -> list[Row]:
        clause, params = _prefix_clause(prefix)
        records = self._db().execute(
            f"""SELECT {_COLUMNS} FROM store_items WHERE {clause} AND {_ALIVE}
            ORDER BY updated_at DESC, prefix, key LIMIT ?""",
            (*params, now, -1 if limit is None else limit),
        )
        rows = [_row(record) for record in records]
        if vectors:
            self._attach_vectors(rows, clause, params)
        return rows

    def _attach_vectors(self, rows: list[Row], clause: str, params: list[str]) -> None:
        by_item = {(".".join(row.namespace), row.key): row for row in rows}
        records = self._db().execute(
            f"SELECT prefix, key, embedding FROM store_vectors WHERE {clause}", params
        )
        for prefix, key, blob in records:
            row = by_item.get((prefix, key))
            if row is not None:
                row.vectors.append(from_blob(blob))

    def _namespaces(self, now: int) -> list[tuple[str, ...]]:
        records = self._db().execute(
            f"SELECT DISTINCT prefix FROM store_items WHERE {_ALIVE}", (now,)
        )
        return [tuple(prefix.split(".")) for (prefix,) in records]

    def _expire(self, now: int) -> int:
        # Vectors go with their items (ON DELETE CASCADE).
        return self._db().execute("DELETE FROM store_items WHERE expires_at <= ?", (now,)).rowcount

    def close(self) -> None:
        """Stop the sweeper and close the connection. Idempotent."""
        super().close()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
