"""Reads of the PostgreSQL saver: the SQLite `Reader` with PostgreSQL queries.

Hydration (values resolved through append deltas and write references, `_deltas`) is the SQLite
reader's, unchanged; only the queries differ. They run on a connection pool, so reads from many
threads proceed side by side and never wait behind the writer's connection. Blob versions are
stored as text and handed back under the version objects the checkpoint names.

`get_tuple` reads the checkpoint row and its pending writes in one query, and takes the blobs
this process wrote or read lately from a `BlobCache`: reading back the checkpoint just written
(a thread's next run, its state after a run) is one round trip instead of four (issue 19).
"""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg

from ._blob_cache import BlobCache
from ._deltas import MISSING
from ._postgres_writer import LOST
from ._sqlite_reader import Reader
from ._sqlite_writer import Writer
from .base import CheckpointTuple, get_checkpoint_id
from .serde import Serializer

__all__ = ["PgReader"]

_BLOBS = (
    "SELECT channel, version, value FROM checkpoint_blobs WHERE thread_id = $1 AND "
    "checkpoint_ns = $2 AND (channel, version) IN "
    "(SELECT * FROM unnest($3::text[], $4::text[]))"
)
_CHANNELS = (
    "SELECT channel, version, value FROM checkpoint_blobs WHERE thread_id = $1 AND "
    "checkpoint_ns = $2 AND channel = ANY($3::text[])"
)
_WRITES = (
    "SELECT checkpoint_id, task_id, channel, value FROM checkpoint_writes WHERE thread_id = $1 "
    "AND checkpoint_ns = $2 AND checkpoint_id = ANY($3::text[]) ORDER BY seq"
)

# The checkpoint row and its pending writes (in write order) in one query.
_ONE = (
    "SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, "
    "c.checkpoint, c.metadata, w.tasks, w.channels, w.vals FROM checkpoints c "
    "LEFT JOIN LATERAL (SELECT array_agg(x.task_id ORDER BY x.seq) AS tasks, "
    "array_agg(x.channel ORDER BY x.seq) AS channels, array_agg(x.value ORDER BY x.seq) AS vals "
    "FROM checkpoint_writes x WHERE x.thread_id = c.thread_id "
    "AND x.checkpoint_ns = c.checkpoint_ns AND x.checkpoint_id = c.checkpoint_id) w ON true "
    "WHERE c.thread_id = $1 AND c.checkpoint_ns = $2"
)
_NEWEST = " ORDER BY c.checkpoint_id DESC, c.thread_id DESC, c.checkpoint_ns DESC LIMIT 1"
_LATEST = _ONE + _NEWEST
_BY_ID = _ONE + " AND c.checkpoint_id = $3" + _NEWEST

_BlobKey = tuple[str, str, str, Any]


class PgReader(Reader):
    """`Reader` over an asyncpg pool (the SQLite one's `_conn` slot holds the pool)."""

    def __init__(
        self, pool: asyncpg.Pool, writer: Writer, serde: Serializer, blobs: BlobCache
    ) -> None:
        super().__init__(pool, writer, serde)  # type: ignore[arg-type]
        self._pool = pool
        self._blobs = blobs
        self._releasing: set[asyncio.Future[None]] = set()  # connections going back to the pool

    async def _fetch(self, sql: str, *args: Any) -> list[Any]:
        try:
            return await self._fetch_once(sql, *args)
        except LOST:  # a pooled connection the server dropped: the pool replaces them all
            await self._pool.expire_connections()  # the others were likely dropped too
            return await self._fetch_once(sql, *args)

    async def _fetch_once(self, sql: str, *args: Any) -> list[Any]:
        """`Pool.fetch`, except that the rows are returned before the connection goes back to
        the pool: asyncpg's release runs as a shielded task, a few loop iterations that made
        each read ~100 µs slower for its caller (~490 against ~390 µs for a `SELECT 1` round
        trip from another thread, on a loaded machine)."""
        conn = await self._pool.acquire()
        try:
            return await conn.fetch(sql, *args)
        finally:
            release = asyncio.ensure_future(self._pool.release(conn))
            self._releasing.add(release)  # a task nobody refers to may be collected
            release.add_done_callback(self._released)

    def _released(self, release: asyncio.Future[None]) -> None:
        self._releasing.discard(release)
        if not release.cancelled():
            release.exception()  # the pool terminated a connection it could not reset

    def _mark(self, n: int) -> str:
        return f"${n}"  # `select` is the SQLite reader's, with these

    async def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """The checkpoint named by the config, or the newest of its thread and namespace."""
        await self._settle()
        conf = config["configurable"]
        thread_id, ns = conf["thread_id"], conf.get("checkpoint_ns", "")
        stored = self._stored(conf)
        if checkpoint_id := get_checkpoint_id(config):
            rows = await self._fetch(_BY_ID, thread_id, ns, checkpoint_id)
        else:
            rows = await self._fetch(_LATEST, thread_id, ns)
        if not rows:
            return None
        row = rows[0]
        tasks, channels, values = row[6] or (), row[7] or (), row[8] or ()
        writes = {(thread_id, ns, row[2]): list(zip(tasks, channels, values, strict=True))}
        return await self.read_one(tuple(row)[:6], writes, stored)

    async def _query_blobs(
        self, thread_id: str, ns: str, pairs: list[tuple[str, Any]]
    ) -> dict[_BlobKey, bytes | None]:
        loaded: dict[_BlobKey, bytes | None] = {}
        named: dict[tuple[str, str], Any] = {}
        for ch, v in pairs:
            found, value = self._blobs.get((thread_id, ns, ch, v))
            if found:
                loaded[(thread_id, ns, ch, v)] = value
            else:
                named[(ch, str(v))] = v
        if not named:
            return loaded
        rows = await self._fetch(
            _BLOBS, thread_id, ns, [ch for ch, _ in named], [v for _, v in named]
        )
        fetched = {(thread_id, ns, ch, named[(ch, v)]): value for ch, v, value in rows}
        self._blobs.put_many((*key, value) for key, value in fetched.items())
        loaded.update(fetched)
        return loaded

    async def _query_channels(
        self, thread_id: str, ns: str, channels: list[str]
    ) -> dict[_BlobKey, bytes | None]:
        """Every stored version of these channels (issue 32), under their text versions:
        `_blob` finds a version object by its text."""
        rows = await self._fetch(_CHANNELS, thread_id, ns, channels)
        return {(thread_id, ns, ch, v): value for ch, v, value in rows}

    def _blob(
        self, blobs: dict[_BlobKey, bytes | None], thread_id: str, ns: str, ch: str, v: Any
    ) -> Any:
        found = blobs.get((thread_id, ns, ch, v), MISSING)
        if found is MISSING and not isinstance(v, str):
            return blobs.get((thread_id, ns, ch, str(v)), MISSING)
        return found

    async def _load_writes(
        self, thread_id: str, ns: str, ids: list[str]
    ) -> dict[tuple[str, str, str], list[tuple[str, str, bytes]]]:
        loaded: dict[tuple[str, str, str], list[tuple[str, str, bytes]]] = {}
        for cid, task_id, ch, value in await self._fetch(_WRITES, thread_id, ns, ids):
            loaded.setdefault((thread_id, ns, cid), []).append((task_id, ch, value))
        return loaded
