"""The PostgreSQL checkpoint saver (asyncpg), with the SQLite saver's sync and async methods.

Same design as `SqliteSaver` (issue 19): a private loop thread owns the connections, sync
methods block on a future and async methods await it, from any thread or event loop. Writes go
through the SQLite saver's ordered, group-committing writer on one connection, each commit one
statement (`_postgres_writer`); reads run on a small pool. Serialization, append deltas and
write references are the shared core (`_common`, `_deltas`), so both back ends store the same
bytes.

Opening a saver migrates the database under an advisory lock (`_postgres_schema`), so many
processes may start together on an empty one. ``prepared_statements=False`` keeps asyncpg from
caching named prepared statements, for PgBouncer in transaction mode. PostgreSQL 14 or newer.

`fenced(Fence(...))` gives a view whose writes are stored only while a condition of the
caller's holds, checked in the statement that stores them (issue 26; `checkpoints.fence`).

Requires the ``postgres`` extra (``pip install 'graphrun[postgres]'``).
"""

from __future__ import annotations

import threading
from typing import Any

from ._blob_cache import BlobCache
from ._deltas import Lineage
from ._loop_thread import LoopThread
from .fence import Fence
from .serde import Serializer, default_serializer
from .sqlite import Backend, QueuedSaver

try:
    import asyncpg
except ImportError as error:  # pragma: no cover - exercised without the extra installed
    raise ImportError(
        "PostgresSaver needs asyncpg: pip install 'graphrun[postgres]' (from a clone: "
        "pip install -e '.[postgres]')"
    ) from error

from . import _postgres_tasks
from ._postgres_reader import PgReader
from ._postgres_schema import SAVER_COMPONENT, SAVER_MIGRATIONS, connect_options, migrate
from ._postgres_writer import PgWriter

__all__ = ["PostgresSaver"]


class _Backend(Backend):
    """The loop thread, writer connection, read pool, writer and reader of one saver."""

    # No `probe`: SQLite answers "nothing stored" without the loop; not worth it over a network.

    def __init__(
        self, url: str, serde: Serializer, pool_size: int, prepared_statements: bool
    ) -> None:
        self.loop_thread = LoopThread(name="graphrun-postgres")
        self.lineage = Lineage()  # see SqliteSaver: forgotten after a failed write
        self.blobs = BlobCache()  # what the writer stored and the reader read (loop thread)
        self._start_closing()
        options = connect_options(prepared_statements)
        try:
            self.pool, self.writer = self.loop_thread.run(
                self._open(url, pool_size, options)
            )
        except BaseException:
            self.loop_thread.stop()
            raise
        self._close_at_exit()  # flush what was handed over before the interpreter exits
        self.reader = PgReader(self.pool, self.writer, serde, self.blobs)

    async def _open(
        self, url: str, pool_size: int, options: dict[str, Any]
    ) -> tuple[asyncpg.Pool, PgWriter]:
        conn = await asyncpg.connect(url, **options)
        try:
            await migrate(conn, SAVER_COMPONENT, SAVER_MIGRATIONS)
            pool = await asyncpg.create_pool(
                url, min_size=1, max_size=pool_size, reset=_keep_session, **options
            )
        except BaseException:
            await conn.close()
            raise
        writer = PgWriter(
            conn,
            self.loop_thread,
            reconnect=lambda: asyncpg.connect(url, **options),
            on_error=self.lineage.clear,
            blobs=self.blobs,
        )
        return pool, writer

    async def _close_connections(self) -> None:
        await self.pool.close()
        await self.writer.connection.close()


async def _keep_session(conn: asyncpg.Connection) -> None:
    """The read pool's reset: nothing. Reads change no session state (no SET, LISTEN or
    advisory lock), and asyncpg's default reset is one more round trip per read (issue 19)."""


class PostgresSaver(QueuedSaver):
    """Checkpoints in PostgreSQL. Thread-safe; usable from any event loop and many processes.

    ``PostgresSaver("postgresql://user@host/db")``; use it as a context manager or call
    `close()` / `aclose()` (idempotent); a saver left open is flushed and closed at exit.
    `pool_size` bounds the read connections (writes use one more).
    """

    _tasks = _postgres_tasks

    def __init__(
        self,
        url: str,
        *,
        serde: Serializer | None = None,
        pool_size: int = 4,
        prepared_statements: bool = True,
        full_values: bool = False,
    ) -> None:
        """`full_values=True` stores every value whole, as `SqliteSaver`'s (issue 16)."""
        self.url = url
        self.serde = serde or default_serializer
        self.full_values = full_values
        self._order = threading.Lock()
        self._backend = _Backend(url, self.serde, pool_size, prepared_statements)
        self._writer = self._backend.writer
        self._reader = self._backend.reader
        self._loop_thread = self._backend.loop_thread
        self._lineage = self._backend.lineage
        if not full_values:  # the reader remembers what it reads (issue 32)
            self._reader.lineage = self._lineage

    @classmethod
    def from_conn_string(cls, conn_string: str, **kwargs: Any) -> PostgresSaver:
        """LangGraph's constructor spelling (usable as a context manager)."""
        return cls(conn_string, **kwargs)

    def fenced(self, fence: Fence) -> PostgresSaver:
        """A view of this saver whose writes (puts, task writes, maintenance) are stored only
        while `fence` holds, checked in the statement that stores them; a refused one raises
        `FenceRefused` (issue 26: a writer that lost its right to write changes nothing). The
        view shares this saver's connections, writer and caches (closing one closes both);
        its `flush` reports only its own writes' failures."""
        view = object.__new__(type(self))  # ~1 µs; `copy.copy` took ~15 (one per run)
        view.__dict__.update(self.__dict__)
        view._fence = fence
        return view

    def setup(self) -> None:
        """LangGraph's explicit migration call: a no-op, the constructor already migrated."""

    def pool_stats(self) -> dict[str, int]:
        """The read pool's open connections, those in use and its bound (the server's /metrics,
        issue 19 §10); the writer's one connection is not counted."""
        pool = self._backend.pool
        size = pool.get_size()
        return {"size": size, "in_use": size - pool.get_idle_size(), "max": pool.get_max_size()}
