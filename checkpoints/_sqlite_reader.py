"""Reads of the SQLite saver: checkpoint rows, then their values and writes in bulk.

Every read first waits for the changes handed to the writer before it, so a caller always sees
its own earlier puts, including the `*_nowait` ones. The coroutines run on the saver's loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

import aiosqlite

from ._common import damaged, matches_filter, skipped
from ._deltas import (
    MISSING,
    Lineage,
    Stored,
    is_delta,
    load_write,
    needs_of,
    resolve,
    whole_channels,
)
from ._sqlite_writer import Writer
from .base import (
    Checkpoint,
    CheckpointTuple,
    DamagedCheckpointError,
    get_checkpoint_id,
    thread_config,
)
from .serde import Serializer

__all__ = ["PAGE", "Found", "Reader", "readable"]

PAGE = 64  # checkpoints hydrated per round trip by `list`
_PAIRS_PER_QUERY = 400  # (channel, version) pairs per blob query, under SQLite's 999 variables
_SELECT = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata "
    "FROM checkpoints"
)
_NEWEST_FIRST = " ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC"

_BlobKey = tuple[str, str, str, Any]  # thread_id, checkpoint_ns, channel, version
_WriteRow = tuple[str, str, bytes]  # task_id, channel, value


class Found(NamedTuple):
    """A checkpoint row whose metadata is decoded (`list` filters on it) but values not yet."""

    thread_id: str
    ns: str
    checkpoint_id: str
    parent_id: str | None
    checkpoint: bytes
    metadata: dict[str, Any]


class Reader:
    """Queries on the reader connection, in (thread, namespace) batches.

    With `lineage` (the saver's, unless it stores full values) `get_tuple` hands back the lists
    of a checkpoint the saver remembers instead of reading them, and remembers those it reads,
    so the thread's next checkpoint stores only what is new (issue 32). A remembered checkpoint
    is used only when the database names that very checkpoint id, so a cache hit is current
    even when other processes write the same database.
    """

    lineage: Lineage | None = None

    def __init__(self, conn: aiosqlite.Connection, writer: Writer, serde: Serializer) -> None:
        self._conn = conn
        self._writer = writer
        self._serde = serde

    async def _settle(self) -> None:
        if self._writer.pending():
            await asyncio.wrap_future(self._writer.barrier())

    def _mark(self, n: int) -> str:
        """The SQL placeholder of the n-th (1-based) parameter; PostgreSQL's are numbered."""
        return "?"

    async def _fetch(self, sql: str, *args: Any) -> list[Any]:
        return list(await self._conn.execute_fetchall(sql, args))

    async def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """The checkpoint named by the config, or the newest of its thread and namespace."""
        await self._settle()
        conf = config["configurable"]
        # a thread id may be any value with a str() (a UUID), as LangGraph's saver (issue 27)
        params: list[Any] = [str(conf["thread_id"]), conf.get("checkpoint_ns", "")]
        sql = _SELECT + f" WHERE thread_id = {self._mark(1)} AND checkpoint_ns = {self._mark(2)}"
        if checkpoint_id := get_checkpoint_id(config):
            sql += f" AND checkpoint_id = {self._mark(3)}"
            params.append(checkpoint_id)
        stored = self._stored(conf)
        rows = await self._fetch(sql + _NEWEST_FIRST + " LIMIT 1", *params)
        return await self.read_one(rows[0], stored=stored) if rows else None

    def _stored(self, conf: dict[str, Any]) -> Stored | None:
        """What the saver remembers of the thread, taken before the read: if its data is
        deleted meanwhile (`Stored.dead`), what the read found is not remembered."""
        lineage = self.lineage
        if lineage is None:
            return None
        return lineage.channels(str(conf["thread_id"]), conf.get("checkpoint_ns", ""))

    async def read_one(
        self,
        row: Any,
        writes: dict[tuple[str, str, str], list[_WriteRow]] | None = None,
        stored: Stored | None = None,
    ) -> CheckpointTuple:
        """One checkpoint row, hydrated; a damaged one raises its `DamagedCheckpointError`.
        `writes`: its pending writes when the query that found it read them too. `stored`: what
        the saver remembers of its thread (issue 32)."""
        found = self._found(row)
        if isinstance(found, DamagedCheckpointError):
            raise found
        held = stored.held(found.checkpoint_id) if stored is not None else None
        read = (await self.hydrate([found], writes, held))[0]
        if isinstance(read, DamagedCheckpointError):
            raise read
        if stored is not None and held is None:
            checkpoint = read.checkpoint
            stored.remember_read(
                found.checkpoint_id, checkpoint["channel_versions"], checkpoint["channel_values"]
            )
        return read

    async def select(
        self,
        config: dict[str, Any] | None,
        filter: dict[str, Any] | None,
        before: dict[str, Any] | None,
        limit: int | None,
    ) -> list[Found]:
        """The rows `list` yields, newest first; metadata filters are applied here."""
        await self._settle()
        where, params = self._where(config, before)
        sql = _SELECT + where + _NEWEST_FIRST
        if limit is not None and not filter:
            params.append(limit)
            sql += f" LIMIT {self._mark(len(params))}"
        rows = await self._fetch(sql, *params)
        found = [f for f in readable(map(self._found, rows)) if matches_filter(f.metadata, filter)]
        return found if limit is None else found[:limit]

    def _where(
        self, config: dict[str, Any] | None, before: dict[str, Any] | None
    ) -> tuple[str, list[Any]]:
        """The WHERE clause of `list`: thread, namespace and checkpoint id when given."""
        conf = config["configurable"] if config else {}
        clauses: list[str] = []
        params: list[Any] = []
        for column, value in (
            ("thread_id =", None if conf.get("thread_id") is None else str(conf["thread_id"])),
            ("checkpoint_ns =", conf.get("checkpoint_ns")),
            ("checkpoint_id =", conf.get("checkpoint_id")),
            ("checkpoint_id <", get_checkpoint_id(before) if before else None),
        ):
            if value is not None:
                params.append(value)
                clauses.append(f"{column} {self._mark(len(params))}")
        return (" WHERE " + " AND ".join(clauses) if clauses else ""), params

    def _found(self, row: Any) -> Found | DamagedCheckpointError:
        thread_id, ns, cid, parent_id, checkpoint, metadata = row
        try:
            return Found(thread_id, ns, cid, parent_id, checkpoint, self._serde.loads(metadata))
        except Exception as error:
            return damaged(thread_id, ns, cid, error)

    async def hydrate(
        self,
        found: list[Found],
        loaded: dict[tuple[str, str, str], list[_WriteRow]] | None = None,
        held: dict[str, Any] | None = None,
    ) -> list[CheckpointTuple | DamagedCheckpointError]:
        """Attach channel values and pending writes (unless `loaded` has them), with one query
        per (thread, namespace). A checkpoint whose record cannot be decoded comes back as
        its error. `held`: the remembered lists of the one checkpoint in `found` (issue 32)."""
        checkpoints: list[Checkpoint | None] = []
        for f in found:
            try:
                checkpoints.append(self._serde.loads(f.checkpoint))
            except Exception:
                checkpoints.append(None)  # `_tuple` decodes it again to name the error
        groups: dict[tuple[str, str], list[int]] = {}
        for i, f in enumerate(found):
            if checkpoints[i] is not None:
                groups.setdefault((f.thread_id, f.ns), []).append(i)
        blobs: dict[_BlobKey, bytes | None] = {}
        writes: dict[tuple[str, str, str], list[_WriteRow]] = loaded or {}
        for (thread_id, ns), indexes in groups.items():
            pairs = {p for i in indexes for p in _versions(checkpoints[i])}
            if held:
                pairs = {(ch, v) for ch, v in pairs if _held_version(held, ch) != v}
            blobs.update(await self._load_blobs(thread_id, ns, [*pairs]))
            if loaded is None:
                ids = [found[i].checkpoint_id for i in indexes]
                writes.update(await self._load_writes(thread_id, ns, ids))
        memos: dict[tuple[str, str], dict[Any, list[Any]]] = {key: {} for key in groups}
        return [
            self._tuple(
                f, checkpoint, blobs, writes.get((f.thread_id, f.ns, f.checkpoint_id), []),
                held, memos.get((f.thread_id, f.ns)),
            )
            for f, checkpoint in zip(found, checkpoints, strict=True)
        ]

    async def _load_blobs(
        self, thread_id: str, ns: str, pairs: list[tuple[str, Any]]
    ) -> dict[_BlobKey, bytes | None]:
        loaded = await self._query_blobs(thread_id, ns, pairs)
        # Pre-32 deltas name every blob they build on: those come in one more round. An
        # issue-32 delta names its direct base only: a chain as long as the thread comes in
        # one query per channel, the channel's blobs taken whole.
        whole: set[str] = set()
        while True:
            missing = {
                pair
                for key, value in loaded.items()
                if is_delta(value)
                for pair in _needs(value, key[2])  # type: ignore[arg-type]
                if (thread_id, ns, *pair) not in loaded and pair[0] not in whole
            }
            if not missing:
                return loaded
            deep = {
                ch
                for key, value in loaded.items()
                if is_delta(value)
                for ch in _whole(value, key[2])  # type: ignore[arg-type]
                if ch not in whole
            } & {ch for ch, _ in missing}
            if deep:
                whole |= deep
                loaded.update(await self._query_channels(thread_id, ns, sorted(deep)))
            rest = [p for p in missing if (thread_id, ns, *p) not in loaded and p[0] not in deep]
            if rest:
                loaded.update(await self._query_blobs(thread_id, ns, rest))
            if not deep:
                return loaded

    async def _query_channels(
        self, thread_id: str, ns: str, channels: list[str]
    ) -> dict[_BlobKey, bytes | None]:
        """Every stored version of these channels (issue 32: a delta chain's reads at once)."""
        sql = (
            "SELECT channel, version, value FROM blobs WHERE thread_id = ? AND checkpoint_ns = ? "
            f"AND channel IN ({', '.join(['?'] * len(channels))})"
        )
        rows = await self._conn.execute_fetchall(sql, [thread_id, ns, *channels])
        return {(thread_id, ns, ch, v): value for ch, v, value in rows}

    async def _query_blobs(
        self, thread_id: str, ns: str, pairs: list[tuple[str, Any]]
    ) -> dict[_BlobKey, bytes | None]:
        loaded: dict[_BlobKey, bytes | None] = {}
        for start in range(0, len(pairs), _PAIRS_PER_QUERY):
            chunk = pairs[start : start + _PAIRS_PER_QUERY]
            sql = (
                "SELECT channel, version, value FROM blobs WHERE thread_id = ? AND "
                "checkpoint_ns = ? AND (channel, version) IN (VALUES "
                + ", ".join(["(?, ?)"] * len(chunk))
                + ")"
            )
            params = [thread_id, ns, *(x for pair in chunk for x in pair)]
            for ch, v, value in await self._conn.execute_fetchall(sql, params):
                loaded[(thread_id, ns, ch, v)] = value
        return loaded

    async def _load_writes(
        self, thread_id: str, ns: str, ids: list[str]
    ) -> dict[tuple[str, str, str], list[_WriteRow]]:
        sql = (
            "SELECT checkpoint_id, task_id, channel, value FROM writes WHERE thread_id = ? AND "
            f"checkpoint_ns = ? AND checkpoint_id IN ({', '.join(['?'] * len(ids))}) "
            "ORDER BY rowid"
        )
        loaded: dict[tuple[str, str, str], list[_WriteRow]] = {}
        for cid, task_id, ch, value in await self._conn.execute_fetchall(
            sql, [thread_id, ns, *ids]
        ):
            loaded.setdefault((thread_id, ns, cid), []).append((task_id, ch, value))
        return loaded

    def _blob(
        self, blobs: dict[_BlobKey, bytes | None], thread_id: str, ns: str, ch: str, v: Any
    ) -> Any:
        """A fetched blob by (channel, version); MISSING when no row was found."""
        return blobs.get((thread_id, ns, ch, v), MISSING)

    def _tuple(
        self,
        f: Found,
        checkpoint: Checkpoint | None,
        blobs: dict[_BlobKey, bytes | None],
        writes: list[_WriteRow],
        held: dict[str, Any] | None = None,
        memo: dict[Any, list[Any]] | None = None,
    ) -> CheckpointTuple | DamagedCheckpointError:
        try:
            return self._decode(f, checkpoint, blobs, writes, held, memo)
        except Exception as error:
            return damaged(f.thread_id, f.ns, f.checkpoint_id, error)

    def _decode(
        self,
        f: Found,
        checkpoint: Checkpoint | None,
        blobs: dict[_BlobKey, bytes | None],
        writes: list[_WriteRow],
        held: dict[str, Any] | None = None,
        memo: dict[Any, list[Any]] | None = None,
    ) -> CheckpointTuple:
        loads = self._serde.loads
        if checkpoint is None:
            checkpoint = loads(f.checkpoint)  # raises what made `hydrate` give up on it
            assert checkpoint is not None
        values = checkpoint["channel_values"] = resolve(
            checkpoint["channel_versions"].items(),
            lambda ch, v: self._blob(blobs, f.thread_id, f.ns, ch, v),
            loads,
            held,
            memo,
        )
        return CheckpointTuple(
            config=thread_config(f.thread_id, f.ns, f.checkpoint_id),
            checkpoint=checkpoint,
            metadata=f.metadata,  # type: ignore[arg-type]
            parent_config=thread_config(f.thread_id, f.ns, f.parent_id) if f.parent_id else None,
            pending_writes=[
                (task_id, ch, load_write(value, values, loads)) for task_id, ch, value in writes
            ],
        )


def readable(
    items: Iterable[CheckpointTuple | Found | DamagedCheckpointError],
) -> Iterator[Any]:
    """What `list` yields: damaged checkpoints are left out, each logged (`skipped`)."""
    for item in items:
        if isinstance(item, DamagedCheckpointError):
            skipped(item)
        else:
            yield item


def _held_version(held: dict[str, Any], channel: str) -> Any:
    entry = held.get(channel)
    return MISSING if entry is None else entry.version


def _whole(blob: bytes, channel: str) -> list[str]:
    try:
        return whole_channels(blob, channel)
    except Exception:  # damaged: `_tuple` names the error
        return []


def _versions(checkpoint: Checkpoint | None) -> Iterable[tuple[str, Any]]:
    """A decoded checkpoint's (channel, version) pairs; none when they are not readable."""
    try:
        pairs = list(checkpoint["channel_versions"].items())  # type: ignore[index]
        set(pairs)  # hashable, as every version we write is
        return pairs
    except Exception:  # damaged: `_tuple` names the error
        return []


def _needs(blob: bytes, channel: str) -> list[tuple[str, Any]]:
    """The blobs a delta reads besides itself; none when its header is damaged (`_tuple`
    then names the error for the checkpoints that read it, and only those)."""
    try:
        return [(ch, v) for ch, v in needs_of(blob, channel) if hash(v) is not None]
    except Exception:
        return []
