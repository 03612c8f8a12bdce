"""`PostgresStore`: the store in PostgreSQL (asyncpg), usable from sync and async code.

The store's semantics (validation, TTL, embedding, ranking) are `RowStore`'s, shared with the
memory and SQLite back ends; this module only reads and writes rows (issue 19). One connection
owned by a private loop thread (the saver's `LoopThread`) runs each batch as one transaction,
behind a lock; sync methods block on it, async ones run the batch in a worker thread
(`RowStore._offload`), so the caller's event loop never waits on the network.

Layout as in `SqliteStore`: namespaces as their labels joined with ``.`` (compared bytewise,
COLLATE "C", so the prefix range works in any locale), values as JSON text, times as integer
microseconds, vectors as float32 blobs. Migrations: the ``"store"`` component of the database's
shared schema table, under the advisory lock (`checkpoints._postgres_schema`).

Requires the ``postgres`` extra (``pip install 'graphrun[postgres]'``).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

import anyio.to_thread

try:
    import asyncpg
except ImportError as error:  # pragma: no cover - exercised without the extra installed
    raise ImportError(
        "PostgresStore needs asyncpg: pip install 'graphrun[postgres]' (from a clone: "
        "pip install -e '.[postgres]')"
    ) from error

from .._loop_thread import LoopThread
from .._postgres_schema import connect_options, migrate
from .._postgres_writer import LOST
from ._core import Row
from ._embed import Vector, from_blob, to_blob
from ._rowstore import OpenedRowStore
from .base import IndexConfig, TTLConfig

__all__ = ["PostgresStore"]

T = TypeVar("T")

COMPONENT = "store"
# pg_try_advisory_xact_lock key of the TTL sweep ("gr-sweep" as 8 ASCII bytes).
_SWEEP_KEY = int.from_bytes(b"gr-sweep", "big")

# Entry N (1-based) upgrades the component from version N-1. Append only.
MIGRATIONS: list[tuple[str, ...]] = [
    (
        """CREATE TABLE store_items (
            prefix text COLLATE "C" NOT NULL,
            key text COLLATE "C" NOT NULL,
            value text NOT NULL,
            created_at bigint NOT NULL,
            updated_at bigint NOT NULL,
            expires_at bigint,
            ttl_minutes double precision,
            PRIMARY KEY (prefix, key))""",
        """CREATE INDEX store_items_expires_at ON store_items (expires_at)
            WHERE expires_at IS NOT NULL""",
        """CREATE TABLE store_vectors (
            prefix text COLLATE "C" NOT NULL,
            key text COLLATE "C" NOT NULL,
            field text NOT NULL,
            embedding bytea NOT NULL,
            PRIMARY KEY (prefix, key, field),
            FOREIGN KEY (prefix, key) REFERENCES store_items (prefix, key) ON DELETE CASCADE)""",
    ),
]

_ALIVE = "(expires_at IS NULL OR expires_at > {})"
_COLUMNS = "prefix, key, value, created_at, updated_at, expires_at, ttl_minutes"
# The row and the removal of its old vectors in one statement (different tables).
_UPSERT = f"""WITH gone AS (DELETE FROM store_vectors WHERE prefix = $1 AND key = $2)
    INSERT INTO store_items ({_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
    ON CONFLICT (prefix, key) DO UPDATE SET value = excluded.value,
        created_at = excluded.created_at, updated_at = excluded.updated_at,
        expires_at = excluded.expires_at, ttl_minutes = excluded.ttl_minutes"""


def _prefix_clause(prefix: tuple[str, ...], first: int) -> tuple[str, list[str]]:
    """SQL matching whole labels from parameter `$first` on (see `SqliteStore`)."""
    if not prefix:
        return "TRUE", []
    text = ".".join(prefix)
    a, b, c = first, first + 1, first + 2
    return f"(prefix = ${a} OR (prefix >= ${b} AND prefix < ${c}))", [text, text + ".", text + "/"]


def _row(record: Any) -> Row:
    prefix, key, raw, created_at, updated_at, expires_at, ttl_minutes = record
    return Row(tuple(prefix.split(".")), key, raw, created_at, updated_at, expires_at, ttl_minutes)


class PostgresStore(OpenedRowStore):
    """A persistent store in PostgreSQL, with TTL and optional semantic search.

    Safe to share between threads and event loops, and between processes on one database.
    Close it (or use ``with``/``async with``) to release the connection.
    """

    def __init__(
        self,
        url: str,
        *,
        index: IndexConfig | None = None,
        ttl_config: TTLConfig | None = None,
        clock: Callable[[], datetime] | None = None,
        prepared_statements: bool = True,
    ) -> None:
        super().__init__(index=index, ttl_config=ttl_config, clock=clock)
        self.url = url
        self._lock = threading.Lock()
        self._loop_thread: LoopThread | None = LoopThread(name="graphrun-postgres-store")
        self._options = connect_options(prepared_statements)
        try:
            self._conn: asyncpg.Connection = self._run(asyncpg.connect(url, **self._options))
            self.setup()
        except BaseException:
            self.close()
            raise

    def setup(self) -> None:
        """Create or upgrade the schema; idempotent, and run by the constructor."""
        with self._lock:
            self._run(migrate(self._conn, COMPONENT, MIGRATIONS))

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._loop_thread is None:
            coro.close()
            raise RuntimeError(f"PostgresStore({self.url!r}) is closed.")
        return self._loop_thread.run(coro)

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[None]:
        with self._lock:
            self._begin()
            try:
                yield
            except BaseException:
                with contextlib.suppress(*LOST):  # a lost connection rolled back already
                    self._run(self._conn.execute("ROLLBACK"))
                raise
            self._run(self._conn.execute("COMMIT"))

    def _begin(self) -> None:
        """BEGIN (READ COMMITTED; a batch is still all or nothing), on a new connection if the
        server dropped the last one (a restart, a proxy): nothing of a batch ran before it."""
        try:
            self._run(self._conn.execute("BEGIN"))
        except LOST:
            self._conn.terminate()
            self._conn = self._run(asyncpg.connect(self.url, **self._options))
            self._run(self._conn.execute("BEGIN"))

    async def _offload(self, fn: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(fn, *args)

    def _read(self, namespace: tuple[str, ...], key: str, now: int) -> Row | None:
        sql = (
            f"SELECT {_COLUMNS} FROM store_items WHERE prefix = $1 AND key = $2 AND "
            + _ALIVE.format("$3")
        )
        if "\x00" in key:
            return None  # never stored (`_write`); PostgreSQL's text would refuse the query
        record = self._run(self._conn.fetchrow(sql, ".".join(namespace), key, now))
        return None if record is None else _row(record)

    def _write(self, row: Row, vectors: list[tuple[str, Vector]]) -> None:
        if "\x00" in row.key:  # the batch rolls back: all or nothing
            raise ValueError(f"Key {row.key!r} contains a NUL character, which PostgreSQL "
                             "cannot store in text")
        prefix = ".".join(row.namespace)
        times = (row.created_at, row.updated_at, row.expires_at, row.ttl_minutes)
        self._run(self._conn.execute(_UPSERT, prefix, row.key, row.raw, *times))
        if vectors:
            self._run(self._conn.executemany(
                "INSERT INTO store_vectors (prefix, key, field, embedding) "
                "VALUES ($1, $2, $3, $4)",
                [(prefix, row.key, field, to_blob(vector)) for field, vector in vectors],
            ))

    def _remove(self, namespace: tuple[str, ...], key: str) -> None:
        if "\x00" in key:
            return  # never stored (`_write`)
        self._run(self._conn.execute(
            "DELETE FROM store_items WHERE prefix = $1 AND key = $2", ".".join(namespace), key
        ))

    def _touch(self, rows: list[Row]) -> None:
        self._run(self._conn.executemany(
            "UPDATE store_items SET expires_at = $1 WHERE prefix = $2 AND key = $3",
            [(row.expires_at, ".".join(row.namespace), row.key) for row in rows],
        ))

    def _scan(
        self, prefix: tuple[str, ...], now: int, *, limit: int | None, vectors: bool
    ) -> list[Row]:
        clause, params = _prefix_clause(prefix, 2)
        sql = (
            f"SELECT {_COLUMNS} FROM store_items WHERE {clause} AND {_ALIVE.format('$1')} "
            "ORDER BY updated_at DESC, prefix, key"
        )
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        rows = [_row(r) for r in self._run(self._conn.fetch(sql, now, *params))]
        if vectors:
            self._attach_vectors(rows, prefix)
        return rows

    def _attach_vectors(self, rows: list[Row], prefix: tuple[str, ...]) -> None:
        by_item = {(".".join(row.namespace), row.key): row for row in rows}
        clause, params = _prefix_clause(prefix, 1)
        records = self._run(self._conn.fetch(
            f"SELECT prefix, key, embedding FROM store_vectors WHERE {clause}", *params
        ))
        for prefix_text, key, blob in records:
            row = by_item.get((prefix_text, key))
            if row is not None:
                row.vectors.append(from_blob(blob))

    def _namespaces(self, now: int) -> list[tuple[str, ...]]:
        records = self._run(self._conn.fetch(
            f"SELECT DISTINCT prefix FROM store_items WHERE {_ALIVE.format('$1')}", now
        ))
        return [tuple(prefix.split(".")) for (prefix,) in records]

    def _expire(self, now: int) -> int:
        """Delete expired items, unless another process is sweeping this database right now:
        sweeps run on one host at a time (issue 19 §8), the others skip this round."""
        if not self._run(self._conn.fetchval("SELECT pg_try_advisory_xact_lock($1)", _SWEEP_KEY)):
            return 0
        # Vectors go with their items (ON DELETE CASCADE). Status: "DELETE <count>".
        sql = "DELETE FROM store_items WHERE expires_at <= $1"
        status = self._run(self._conn.execute(sql, now))
        return int(status.split()[-1])

    def close(self) -> None:
        """Stop the sweeper, close the connection and the loop thread. Idempotent."""
        super().close()
        with self._lock:
            loop_thread, self._loop_thread = self._loop_thread, None
            if loop_thread is None:
                return
            conn = getattr(self, "_conn", None)
            try:
                if conn is not None:
                    loop_thread.run(conn.close())
            finally:
                loop_thread.stop()
