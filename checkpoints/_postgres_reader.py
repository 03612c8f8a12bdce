"""Reads of the PostgreSQL saver: the SQLite `Reader` with PostgreSQL queries.

Hydration (values resolved through append deltas and write references, `_deltas`) is the SQLite
reader's, unchanged; only the queries differ. They run on a connection pool, so reads from many
threads proceed side by side and never wait behind the writer's connection. Blob versions are
stored as text and handed back under the version objects the checkpoint names.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from ._common import matches_filter
from ._postgres_writer import LOST
from ._sqlite_reader import Found, Reader, readable
from ._sqlite_writer import Writer
from .base import CheckpointTuple, get_checkpoint_id
from .serde import Serializer

__all__ = ["PgReader"]

_SELECT = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata "
    "FROM checkpoints"
)
_NEWEST_FIRST = " ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC"
_BLOBS = (
    "SELECT channel, version, value FROM checkpoint_blobs WHERE thread_id = $1 AND "
    "checkpoint_ns = $2 AND (channel, version) IN "
    "(SELECT * FROM unnest($3::text[], $4::text[]))"
)
_WRITES = (
    "SELECT checkpoint_id, task_id, channel, value FROM checkpoint_writes WHERE thread_id = $1 "
    "AND checkpoint_ns = $2 AND checkpoint_id = ANY($3::text[]) ORDER BY seq"
)

_BlobKey = tuple[str, str, str, Any]


class PgReader(Reader):
    """`Reader` over an asyncpg pool (the SQLite one's `_conn` slot holds the pool)."""

    def __init__(self, pool: asyncpg.Pool, writer: Writer, serde: Serializer) -> None:
        super().__init__(pool, writer, serde)  # type: ignore[arg-type]
        self._pool = pool

    async def _fetch(self, sql: str, *args: Any) -> list[Any]:
        try:
            return await self._pool.fetch(sql, *args)
        except LOST:  # a pooled connection the server dropped: the pool replaces them all
            await self._pool.expire_connections()  # the others were likely dropped too
            return await self._pool.fetch(sql, *args)

    async def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        await self._settle()
        conf = config["configurable"]
        params: list[Any] = [conf["thread_id"], conf.get("checkpoint_ns", "")]
        sql = _SELECT + " WHERE thread_id = $1 AND checkpoint_ns = $2"
        if checkpoint_id := get_checkpoint_id(config):
            sql += " AND checkpoint_id = $3"
            params.append(checkpoint_id)
        rows = await self._fetch(sql + _NEWEST_FIRST + " LIMIT 1", *params)
        return await self.read_one(tuple(rows[0])) if rows else None

    async def select(
        self,
        config: dict[str, Any] | None,
        filter: dict[str, Any] | None,
        before: dict[str, Any] | None,
        limit: int | None,
    ) -> list[Found]:
        await self._settle()
        where, params = _where(config, before)
        sql = _SELECT + where + _NEWEST_FIRST
        if limit is not None and not filter:
            params.append(limit)
            sql += f" LIMIT ${len(params)}"
        rows = await self._fetch(sql, *params)
        found = [f for f in readable(self._found(tuple(row)) for row in rows)
                 if matches_filter(f.metadata, filter)]
        return found if limit is None else found[:limit]

    async def _query_blobs(
        self, thread_id: str, ns: str, pairs: list[tuple[str, Any]]
    ) -> dict[_BlobKey, bytes | None]:
        named = {(ch, str(v)): v for ch, v in pairs}
        rows = await self._fetch(
            _BLOBS, thread_id, ns, [ch for ch, _ in named], [v for _, v in named]
        )
        return {(thread_id, ns, ch, named[(ch, v)]): value for ch, v, value in rows}

    async def _load_writes(
        self, thread_id: str, ns: str, ids: list[str]
    ) -> dict[tuple[str, str, str], list[tuple[str, str, bytes]]]:
        loaded: dict[tuple[str, str, str], list[tuple[str, str, bytes]]] = {}
        for cid, task_id, ch, value in await self._fetch(_WRITES, thread_id, ns, ids):
            loaded.setdefault((thread_id, ns, cid), []).append((task_id, ch, value))
        return loaded


def _where(config: dict[str, Any] | None, before: dict[str, Any] | None) -> tuple[str, list[Any]]:
    """The WHERE clause of `list`: thread, namespace and checkpoint id when given."""
    conf = config["configurable"] if config else {}
    clauses: list[str] = []
    params: list[Any] = []
    for column, value in (
        ("thread_id =", conf.get("thread_id")),
        ("checkpoint_ns =", conf.get("checkpoint_ns")),
        ("checkpoint_id =", conf.get("checkpoint_id")),
        ("checkpoint_id <", get_checkpoint_id(before) if before else None),
    ):
        if value is not None:
            params.append(value)
            clauses.append(f"{column} ${len(params)}")
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params
