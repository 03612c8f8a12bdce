"""The SQLite checkpoint saver (aiosqlite), with sync and async methods over one design.

A private loop thread (`LoopThread`) owns the aiosqlite connections: one writer, fed in order
by the group-committing `Writer`, and one reader (WAL lets it read while the writer commits).
Sync methods block on a future and async methods await it, from any thread or event loop, so
neither path creates a loop per call and there is no sync/async twin of the storage logic.

Durability: `put`, `put_writes` and the maintenance methods return once committed. The engine's
"async" durability hands steps over with `put_nowait` / `put_writes_nowait` instead, and calls
`flush()` / `aflush()` before it reports the run finished; the writer commits whatever piled up
in one transaction, and holds back a caller that gets too far ahead (`BACKLOG`). Reads first wait
for everything handed over before them, so a read always sees earlier puts. A sync `get_tuple`
with nothing queued first asks a plain sqlite3 connection whether anything is stored at all
(`Probe`): a new thread's first run then reads nothing without a trip through the loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import os
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, Literal, Self

import aiosqlite

from . import _sqlite_tasks as tasks
from ._common import prune_cutoff, serialize_put, serialize_writes
from ._deltas import Lineage, Stored
from ._loop_thread import LoopThread
from ._sqlite_probe import Probe
from ._sqlite_reader import PAGE, Reader, readable
from ._sqlite_schema import migrate
from ._sqlite_wal import aenable_wal
from ._sqlite_wal_copy import INLINE_PAGES, WAL_SIZE_LIMIT, WalCopier
from ._sqlite_writer import Job, Rows, Task, Writer
from .base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    thread_config,
)
from .fence import Fence
from .serde import Serializer, default_serializer

__all__ = ["AsyncSqliteSaver", "SqliteSaver"]


class Backend:
    """What a `QueuedSaver`'s back end shares: closed once, by `close`, `aclose` or at exit.

    A subclass sets `loop_thread` and `writer`, calls `_start_closing` in its constructor and
    says in `_close_connections` how its connections close on the loop (issue 19).
    """

    loop_thread: LoopThread
    writer: Writer
    probe: Probe | None = None
    wal_copier: WalCopier | None = None

    def _start_closing(self) -> None:
        self._lock = threading.Lock()
        self._closed = False

    def _close_at_exit(self) -> None:
        register = getattr(threading, "_register_atexit", None)
        if register is not None:
            register(self.close)

    def _begin_close(self) -> bool:
        with self._lock:
            first, self._closed = not self._closed, True
        return first

    async def _close_connections(self) -> None:
        raise NotImplementedError

    async def _shutdown(self) -> None:
        try:
            await self.writer.close()
        finally:
            await self._close_connections()
        error = self.writer.take_error()
        if error is not None:
            raise error

    def close(self) -> None:
        if self._begin_close():
            if self.probe is not None:
                self.probe.close()
            try:
                self.loop_thread.run(self._shutdown())
            finally:
                self.loop_thread.stop()

    async def aclose(self) -> None:
        if self._begin_close():
            if self.probe is not None:
                self.probe.close()
            try:
                await self.loop_thread.arun(self._shutdown())
            finally:
                self.loop_thread.stop()


class _Backend(Backend):
    """The loop thread, connections, writer and reader of one saver; closed once, also at exit."""

    def __init__(self, path: str, busy_timeout: float, serde: Serializer) -> None:
        self.loop_thread = LoopThread(name=f"graphrun-sqlite:{os.path.basename(path)}")
        # Lets a list that only grew be stored as its new items; forgotten after a failed write,
        # so no later delta builds on a version that never reached the file.
        self.lineage = Lineage()
        self.wal_copier: WalCopier | None = None
        # ":memory:" exists only on the writer's own connection: nothing to probe.
        in_memory = path in ("", ":memory:")
        self.probe = None if in_memory else Probe(path, busy_timeout)
        self._start_closing()
        try:
            self.conn, self.reader_conn, self.writer = self.loop_thread.run(
                self._open(path, busy_timeout)
            )
        except BaseException:
            self.loop_thread.stop()
            raise
        # aiosqlite's connection threads are not daemons: an unclosed saver would hang the
        # interpreter at exit. This hook runs before those threads are joined, and flushes.
        self._close_at_exit()
        self.reader = Reader(self.reader_conn, self.writer, serde)

    async def _open(
        self, path: str, busy_timeout: float
    ) -> tuple[aiosqlite.Connection, aiosqlite.Connection, Writer]:
        # The writer lets sqlite3 open its transactions as BEGIN IMMEDIATE (see `Writer`); the
        # reader runs in autocommit. A ":memory:" database exists only on its own connection.
        conn = await _connect(path, busy_timeout, "IMMEDIATE")
        try:
            await migrate(conn)
            in_memory = path in ("", ":memory:")
            reader = conn if in_memory else await _connect(path, busy_timeout, None)
            if not in_memory:  # the WAL is copied into the file in the background
                self.wal_copier = WalCopier(path, busy_timeout)
                await conn.execute(f"PRAGMA wal_autocheckpoint = {INLINE_PAGES}")
                # After a burst the log file is cut back to this size when it restarts, instead
                # of keeping its high-water mark on disk.
                await conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}")
        except BaseException:
            await conn.close()
            raise
        on_commit = self.wal_copier.committed if self.wal_copier is not None else None
        writer = Writer(conn, self.loop_thread, on_error=self.lineage.clear, on_commit=on_commit)
        return conn, reader, writer

    async def _close_connections(self) -> None:
        if self.wal_copier is not None:
            await self.wal_copier.close()
        if self.reader_conn is not self.conn:
            await self.reader_conn.close()
        await self.conn.close()


async def _connect(
    path: str, busy_timeout: float, isolation_level: Literal["IMMEDIATE"] | None
) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(path, isolation_level=isolation_level)
    try:
        await conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        await aenable_wal(conn, busy_timeout)
        # With WAL: durable across crashes of the process (SIGKILL), without an fsync per commit.
        await conn.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        await conn.close()
        raise
    return conn


class QueuedSaver(BaseCheckpointSaver):
    """The saver methods the SQL back ends share: serialize in the caller's thread, hand rows
    to an ordered `Writer`, read through a `Reader`, both on a private `LoopThread`.

    A back end's constructor sets `serde`, `_backend` (with `close`, `aclose`, `probe` and
    `wal_copier`), `_writer`, `_reader`, `_loop_thread` and `_lineage`; `_tasks` is its module of
    maintenance tasks (`_sqlite_tasks` here, `_postgres_tasks` for PostgreSQL, issue 19).
    """

    serde: Serializer
    _backend: Any
    _writer: Writer
    _reader: Reader
    _loop_thread: LoopThread
    _lineage: Lineage
    _tasks: Any = tasks
    # `full_values=True`: every value stored whole, no deltas or references (issue 16)
    full_values: bool = False
    # Orders a put's lineage check with its hand-over, against a maintenance change that
    # forgets the thread's lineage and hands itself over (issue 16: no delta may be queued
    # after the change that deleted its base). Each back end's constructor sets it.
    _order: threading.Lock
    # A fenced view's fence (issue 26, `PostgresSaver.fenced`): each of its writes carries it.
    _fence: Fence | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def close(self) -> None:
        """Commit what was handed over, close the connections and stop the loop thread."""
        self._backend.close()

    async def aclose(self) -> None:
        """`close` for async callers."""
        await self._backend.aclose()

    # --- handing changes to the writer ----------------------------------------------------------

    def _job(
        self,
        rows: Rows | None,
        task: Task | None = None,
        future: concurrent.futures.Future[None] | None = None,
    ) -> Job:
        """A change to hand over; a fenced view's carries its fence, and is refused here at
        once when the fence is known not to hold (issue 26)."""
        fence = self._fence
        if fence is not None:
            fence.check()
        return Job(rows, task, future, fence)

    def _commit(self, rows: Rows | None = None, task: Task | None = None) -> None:
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._writer.submit(self._job(rows, task, future))
        future.result()

    async def _acommit(self, rows: Rows | None = None, task: Task | None = None) -> None:
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._writer.submit(self._job(rows, task, future))
        await asyncio.wrap_future(future)

    def flush(self) -> None:
        """Wait until everything handed over is committed; raise the first failure of a
        `*_nowait` change since the last flush."""
        self._writer.barrier().result()
        self._raise_background_error()

    async def aflush(self) -> None:
        """`flush` for async callers."""
        await asyncio.wrap_future(self._writer.barrier())
        self._raise_background_error()

    def wait_idle(self) -> None:
        """Wait for background maintenance (the WAL copied into the file) to finish.

        Nothing depends on it for durability (`flush` covers that); benchmarks call it between
        runs so that work does not land in another measurement."""
        copier = self._backend.wal_copier
        if copier is not None:
            self._loop_thread.run(copier.idle())

    def _raise_background_error(self) -> None:
        # A fenced view reports its own writes' failures, not another writer's (issue 26).
        error = self._writer.take_error() if self._fence is None else self._fence.take_error()
        if error is not None:
            raise error

    # --- puts -----------------------------------------------------------------------------------

    def _put_rows(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
        full: bool = False,
    ) -> tuple[Rows, dict[str, Any], Stored | None]:
        conf = config["configurable"]
        ns, cid = conf.get("checkpoint_ns", ""), checkpoint["id"]
        thread_id = str(conf["thread_id"])  # any value with a str(), a UUID too (issue 27)
        parent_id = conf.get("checkpoint_id")
        lineage = None if full or self.full_values else self._lineage.channels(thread_id, ns)
        data = serialize_put(self.serde, checkpoint, metadata, new_versions, lineage, parent_id)
        rows = Rows(
            [(thread_id, ns, cid, parent_id, data.checkpoint, data.metadata)],
            [(thread_id, ns, ch, v, blob) for ch, v, blob in data.blobs],
            [],
        )
        return rows, thread_config(thread_id, ns, cid), lineage

    def _hand_over_put(
        self,
        args: tuple[dict[str, Any], Checkpoint, CheckpointMetadata, ChannelVersions],
        future: concurrent.futures.Future[None] | None = None,
    ) -> dict[str, Any]:
        """Serialize a put and queue it; redone in full if its thread's data was deleted,
        pruned or copied over in between."""
        rows, new_config, lineage = self._put_rows(*args)
        with self._order:
            if lineage is not None and lineage.dead:
                rows = self._put_rows(*args, full=True)[0]
            behind = self._writer.hand(self._job(rows, None, future))
        if behind:  # waited for outside the lock: other threads' puts go on meanwhile
            self._writer.catch_up()
        return new_config

    def _forget_and_commit(
        self, thread_ids: Sequence[str], task: Task
    ) -> concurrent.futures.Future[None]:
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        with self._order:
            job = self._job(None, task, future)
            for thread_id in thread_ids:
                self._lineage.forget(thread_id)
            self._writer.submit(job)
        return future

    def _write_rows(
        self, config: dict[str, Any], writes: Sequence[tuple[str, Any]], task_id: str, path: str
    ) -> Rows:
        conf = config["configurable"]
        ns, cid = conf.get("checkpoint_ns", ""), conf["checkpoint_id"]
        thread_id = str(conf["thread_id"])
        lineage = None if self.full_values else self._lineage.peek(thread_id, ns)
        rows = serialize_writes(self.serde, writes, lineage, cid)
        # Rows spelled out, not (*key, ...), and positional: 3k fewer instructions a step.
        return Rows(
            [], [], [(thread_id, ns, cid, task_id, i, ch, value, path) for i, ch, value in rows]
        )

    def put(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        """Store the checkpoint and its changed channels in one transaction; returns once
        committed."""
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        new_config = self._hand_over_put((config, checkpoint, metadata, new_versions), future)
        future.result()
        return new_config

    async def aput(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        new_config = self._hand_over_put((config, checkpoint, metadata, new_versions), future)
        await asyncio.wrap_future(future)
        return new_config

    def put_nowait(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        """Serialize now and commit in the background, after everything handed over before.

        Returns at once unless the writer is `BACKLOG` changes behind (a caller outrunning it):
        then it waits for them to commit, which bounds memory and what a crash can lose. Safe on
        an event loop (the commit runs on the saver's own). `flush` makes it durable.
        """
        return self._hand_over_put((config, checkpoint, metadata, new_versions))

    def put_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes in one transaction; returns once committed."""
        self._commit(self._write_rows(config, writes, task_id, task_path))

    async def aput_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self._acommit(self._write_rows(config, writes, task_id, task_path))

    def put_writes_nowait(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """`put_writes` handed to the background writer, like `put_nowait`."""
        self._writer.submit(self._job(self._write_rows(config, writes, task_id, task_path)))

    # --- maintenance ----------------------------------------------------------------------------

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, blob and write of the thread."""
        thread_id = str(thread_id)
        task = functools.partial(self._tasks.delete_thread, thread_id=thread_id)
        self._forget_and_commit([thread_id], task).result()

    async def adelete_thread(self, thread_id: str) -> None:
        thread_id = str(thread_id)
        task = functools.partial(self._tasks.delete_thread, thread_id=thread_id)
        await asyncio.wrap_future(self._forget_and_commit([thread_id], task))

    def delete_checkpoints(self, thread_id: str, checkpoint_ids: Sequence[str]) -> None:
        """Delete these checkpoints (every namespace) and their writes in one transaction."""
        task = self._delete_task(thread_id, checkpoint_ids)
        self._forget_and_commit([thread_id], task).result()

    async def adelete_checkpoints(self, thread_id: str, checkpoint_ids: Sequence[str]) -> None:
        task = self._delete_task(thread_id, checkpoint_ids)
        await asyncio.wrap_future(self._forget_and_commit([thread_id], task))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy all namespaces, checkpoints, blobs and writes to another thread id."""
        task = self._copy_task(source_thread_id, target_thread_id)
        self._forget_and_commit([target_thread_id], task).result()

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        task = self._copy_task(source_thread_id, target_thread_id)
        await asyncio.wrap_future(self._forget_and_commit([target_thread_id], task))

    def prune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: Literal["keep_latest", "delete"] = "keep_latest",
        keep_last: int = 1,
        older_than_seconds: float | None = None,
    ) -> None:
        """Drop old checkpoints with their unreferenced blobs and writes.

        "keep_latest": per namespace keep the newest `keep_last` checkpoints, and with
        `older_than_seconds` also any checkpoint younger than that. "delete": delete the threads
        (with `older_than_seconds`, only those whose newest checkpoint is older than that).
        """
        task = self._prune_task(thread_ids, strategy, keep_last, older_than_seconds)
        self._forget_and_commit(thread_ids, task).result()

    async def aprune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: Literal["keep_latest", "delete"] = "keep_latest",
        keep_last: int = 1,
        older_than_seconds: float | None = None,
    ) -> None:
        task = self._prune_task(thread_ids, strategy, keep_last, older_than_seconds)
        await asyncio.wrap_future(self._forget_and_commit(thread_ids, task))

    def _prune_task(
        self,
        thread_ids: Sequence[str],
        strategy: Literal["keep_latest", "delete"],
        keep_last: int,
        older_than_seconds: float | None,
    ) -> Task:
        return functools.partial(
            self._tasks.prune,
            serde=self.serde,
            thread_ids=list(thread_ids),
            strategy=strategy,
            keep_last=keep_last,
            cutoff=prune_cutoff(older_than_seconds),
        )

    # --- reads ----------------------------------------------------------------------------------

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """The checkpoint named by ``checkpoint_id``, or the thread's latest in the namespace."""
        probe = self._backend.probe
        if probe is not None and not self._writer.pending() and probe.absent(config):
            return None  # nothing stored, nothing queued: no round trip through the loop
        return self._loop_thread.run(self._reader.get_tuple(config))

    async def aget_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        return await self._loop_thread.arun(self._reader.get_tuple(config))

    def list(
        self,
        config: dict[str, Any] | None,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Newest first (by checkpoint id); all threads when `config` is None and all namespaces
        of the thread when it names none. Values are loaded page by page as you iterate."""
        run, reader = self._loop_thread.run, self._reader
        found = run(reader.select(config, filter, before, limit))
        for start in range(0, len(found), PAGE):
            yield from readable(run(reader.hydrate(found[start : start + PAGE])))

    async def alist(
        self,
        config: dict[str, Any] | None,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        arun, reader = self._loop_thread.arun, self._reader
        found = await arun(reader.select(config, filter, before, limit))
        for start in range(0, len(found), PAGE):
            for item in readable(await arun(reader.hydrate(found[start : start + PAGE]))):
                yield item

    def _copy_task(self, source: str, target: str) -> Task:
        return functools.partial(self._tasks.copy_thread, source=source, target=target)

    def _delete_task(self, thread_id: str, checkpoint_ids: Sequence[str]) -> Task:
        return functools.partial(
            self._tasks.delete_checkpoints, thread_id=thread_id, checkpoint_ids=list(checkpoint_ids)
        )


class SqliteSaver(QueuedSaver):
    """Checkpoints in a SQLite file (or ":memory:"). Thread-safe; usable from any event loop.

    Use it as a context manager or call `close()` / `aclose()` (idempotent); a saver left open
    is flushed and closed at interpreter exit.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | sqlite3.Connection = ":memory:",
        *,
        serde: Serializer | None = None,
        busy_timeout: float = 5.0,
        full_values: bool = False,
    ) -> None:
        """`full_values=True` stores every value whole: no append deltas, no references
        (slower on long lists; the fuzz tests use it as the oracle of the shortcuts). Files
        written either way read the same. A `sqlite3.Connection` (LangGraph's
        `SqliteSaver(conn)`, issue 27) names the file it is open on; the saver opens its own
        connections to it (an in-memory connection: a new in-memory database)."""
        self.path = _path_of(path) if isinstance(path, sqlite3.Connection) else os.fspath(path)
        self.serde = serde or default_serializer
        self.full_values = full_values
        self._order = threading.Lock()
        self._backend = _Backend(self.path, busy_timeout, self.serde)
        self._writer = self._backend.writer
        self._reader = self._backend.reader
        self._loop_thread = self._backend.loop_thread
        self._lineage = self._backend.lineage
        if not full_values:  # the reader remembers what it reads (issue 32)
            self._reader.lineage = self._lineage

    @classmethod
    @contextlib.contextmanager
    def from_conn_string(cls, conn_string: str, **options: Any) -> Iterator[Self]:
        """LangGraph's way to open a saver on a path (issue 27): closed when the block ends."""
        with cls(conn_string, **options) as saver:
            yield saver


class AsyncSqliteSaver(SqliteSaver):
    """LangGraph's `AsyncSqliteSaver` under its name (issue 27). Every `SqliteSaver` serves
    async callers already; this class only makes `from_conn_string` an async context."""

    @classmethod
    @contextlib.asynccontextmanager
    async def from_conn_string(cls, conn_string: str, **options: Any) -> AsyncIterator[Self]:  # type: ignore[override]
        async with cls(conn_string, **options) as saver:
            yield saver


def _path_of(conn: sqlite3.Connection) -> str:
    """The file a connection's main database is on; ":memory:" for an in-memory one."""
    for _, name, file in conn.execute("PRAGMA database_list"):
        if name == "main":
            return file or ":memory:"
    return ":memory:"
