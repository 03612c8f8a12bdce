"""The ordered background writer of the SQLite saver.

Every change to the file goes through one queue and one connection, in the order it was handed
over. Whatever piles up while a commit runs is written by the next one, in a single transaction
(group commit), so threads never contend for the SQLite write lock. A change nobody waits for
("async" durability) lingers up to `LINGER` seconds so a run's consecutive steps share a commit;
a change somebody waits for (a durable put, a flush, a read) starts the commit at once.

Backpressure: a caller that runs ahead of the writer (a CPU-bound graph holds the GIL, and the
writer's thread needs it for every row) would otherwise queue steps without bound, holding their
serialized values in memory and losing them all in a crash. Once `BACKLOG` changes wait in the
queue, the next background submit blocks until they are committed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import operator
import sqlite3
import sys
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import aiosqlite

from ._loop_thread import LoopThread
from .fence import Fence

__all__ = ["BACKLOG", "LINGER", "Job", "Rows", "Writer", "has_task", "only_barriers"]

LINGER = 0.005
BACKLOG = 256  # queued background changes before a submit waits for the writer
_PAGE = 4096  # SQLite's default page size: what a commit logs at least per b-tree it touches

# Writer states: waiting with nothing queued / a lingering commit is scheduled / committing.
_IDLE, _LINGERING, _BUSY = range(3)

_INSERT_CHECKPOINT = """INSERT OR REPLACE INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
    VALUES (?, ?, ?, ?, ?, ?)"""
_INSERT_BLOB = """INSERT OR REPLACE INTO blobs
    (thread_id, checkpoint_ns, channel, version, value) VALUES (?, ?, ?, ?, ?)"""
# Special channels (negative idx) replace an earlier write in place; regular ones keep the first
# (a retried task saves the same writes twice), as LangGraph's savers do.
_INSERT_WRITE = """INSERT INTO writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, value, task_path)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE
    SET channel = excluded.channel, value = excluded.value, task_path = excluded.task_path
    WHERE excluded.idx < 0"""

Task = Callable[[aiosqlite.Connection], Awaitable[None]]
_ROWS, _TASK = operator.attrgetter("rows"), operator.attrgetter("task")  # of a `Job`


@dataclass
class Rows:
    """Insert rows of one or more `put`/`put_writes` calls, written with one statement each."""

    checkpoints: list[tuple[Any, ...]] = field(default_factory=list)
    blobs: list[tuple[Any, ...]] = field(default_factory=list)
    writes: list[tuple[Any, ...]] = field(default_factory=list)

    @classmethod
    def joined(cls, jobs: Iterable[Job]) -> Rows:
        """The rows of these jobs, in order (a barrier's or a task's rows are None). Extending
        local lists: ~10 µs a 70-job batch, against ~17 for `extend` per job and ~25 for
        `itertools.chain`."""
        checkpoints: list[tuple[Any, ...]] = []
        blobs: list[tuple[Any, ...]] = []
        writes: list[tuple[Any, ...]] = []
        for job in jobs:
            rows = job.rows
            if rows is not None:
                checkpoints += rows.checkpoints
                blobs += rows.blobs
                writes += rows.writes
        return cls(checkpoints, blobs, writes)

    def extend(self, other: Rows) -> None:
        self.checkpoints += other.checkpoints
        self.blobs += other.blobs
        self.writes += other.writes

    def nbytes(self) -> int:
        """Roughly what the commit adds to the WAL: the serialized bytes these rows carry, and
        at least a page of each table they go to and one of its key's index (issue 32: a long
        thread's turn carries a few KB, yet each commit logs whole pages; counting the bytes
        alone, the WAL grew to its 64 MB safety net before anything copied it back)."""
        pages = _PAGE * 2 * sum(map(bool, (self.checkpoints, self.blobs, self.writes)))
        return (
            pages
            + sum(len(r[4]) + len(r[5]) for r in self.checkpoints)
            + sum(len(r[4]) for r in self.blobs if r[4] is not None)
            + sum(len(r[6]) for r in self.writes)
        )

    def statements(self) -> list[tuple[str, list[tuple[Any, ...]]]]:
        """(insert, rows) per non-empty table, blobs first."""
        return [
            (sql, rows)
            for sql, rows in (
                (_INSERT_BLOB, self.blobs),
                (_INSERT_CHECKPOINT, self.checkpoints),
                (_INSERT_WRITE, self.writes),
            )
            if rows
        ]

    def insert_and_commit(
        self, raw: sqlite3.Connection, committed: Callable[[], object] | None = None
    ) -> None:
        """On the connection thread: every insert, then the commit; any failure rolls back.
        `committed` runs right after the commit, still on this thread."""
        try:
            for sql, rows in self.statements():
                raw.executemany(sql, rows)
            raw.commit()
        except BaseException:
            raw.rollback()
            raise
        if committed is not None:
            committed()

    async def insert(self, conn: aiosqlite.Connection) -> None:
        """Queue all statements on the connection thread at once: it runs them in order, and
        the loop waits for one round trip instead of three. A failure still stops the commit,
        which the caller issues only after they all succeeded."""
        statements = [conn.executemany(sql, rows) for sql, rows in self.statements()]
        if len(statements) == 1:
            await statements[0]  # no gather task for the common single-statement batch
        else:
            await asyncio.gather(*statements)


async def _insert_and_commit(
    conn: aiosqlite.Connection, rows: Rows, committed: Callable[[], object]
) -> None:
    """Insert `rows` and commit on the connection's own thread, in one round trip; then
    `committed()`, on that thread (it wakes the waiters without a hop through the loop).

    aiosqlite has no public call for this; `_execute` and `_conn` are the attributes its own
    methods use (0.17 through 0.22). Each statement awaited separately cost a thread round trip
    (a third of a short run's final commit); a release without them falls back to that.
    """
    execute = getattr(conn, "_execute", None)
    raw = getattr(conn, "_conn", None)
    if execute is None or not isinstance(raw, sqlite3.Connection):
        try:
            await rows.insert(conn)
            await conn.commit()
        except BaseException:
            await conn.rollback()
            raise
        committed()
        return
    await execute(rows.insert_and_commit, raw, committed)


@dataclass
class Job:
    """One handed-over change: rows to insert and/or a task run inside the transaction.

    `future` is set once the change is committed; without one, a failure is kept for `flush`
    (by its `fence`, when it has one: the fenced writer's own flush reports it, issue 26).
    `fence`: the change is stored only while it holds (a back end that supports fences).
    """

    rows: Rows | None = None
    task: Task | None = None
    future: concurrent.futures.Future[None] | None = None
    fence: Fence | None = None


class Writer:
    """Commits handed-over jobs in order on one connection. Thread-safe `submit`."""

    def __init__(
        self,
        conn: aiosqlite.Connection,
        loop_thread: LoopThread,
        on_error: Callable[[], object] | None = None,
        on_commit: Callable[[int], object] | None = None,
    ) -> None:
        self._conn = conn
        self._on_error = on_error  # told of every failed job
        self._on_commit = on_commit  # told the bytes of every committed batch (on the loop)
        self._loop_thread = loop_thread
        self._jobs: deque[Job] = deque()
        self._lock = threading.Lock()
        self._state = _IDLE
        self._closed = False
        self._wake = asyncio.Event()
        self._timer: asyncio.TimerHandle | None = None  # the lingering commit, loop-side only
        self._error: BaseException | None = None
        self._task = loop_thread.loop.create_task(self._run())

    def submit(self, job: Job) -> None:
        """Hand a job over from any thread; it commits after everything handed over before.

        A job without a future returns at once, unless `BACKLOG` jobs are queued: then it waits
        until they are committed (a failure is still reported by `flush`)."""
        if self.hand(job):
            self.catch_up()

    def catch_up(self) -> None:
        """Wait until everything handed over so far is committed (a failure is still reported
        by `flush`)."""
        concurrent.futures.wait([self.barrier()])

    def hand(self, job: Job) -> bool:
        """`submit` without its wait: whether the caller is `BACKLOG` jobs ahead and should
        `catch_up`. A caller that hands over under a lock of its own (to keep its order) waits
        after releasing it, so its other threads go on handing over meanwhile."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the saver is closed")
            self._jobs.append(job)
            queued = len(self._jobs)
            urgent = job.future is not None
            if self._state == _BUSY or (self._state == _LINGERING and not urgent):
                schedule = False  # a commit is already on its way and will take this job
            else:
                schedule = True
                self._state = _BUSY if urgent else _LINGERING
        if schedule:
            self._loop_thread.call_soon(self._schedule, urgent)
        if urgent:
            return False
        if queued >= BACKLOG:
            return True
        if queued >= self._due:
            self._hand_over()
        return False

    # Background jobs queued that make a submit call `_hand_over` (a subclass's; read without
    # the lock, it re-checks under it).
    _due = sys.maxsize

    def _hand_over(self) -> None:
        """Called by a background submit once `_due` jobs are queued; nothing here."""

    def _schedule(self, urgent: bool) -> None:
        """On the loop: commit now, or in `LINGER` seconds unless something urgent comes."""
        if urgent:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._wake.set()
        elif self._timer is None:
            self._timer = self._loop_thread.loop.call_later(LINGER, self._linger_over)

    def _linger_over(self) -> None:
        self._timer = None
        self._wake.set()

    def barrier(self) -> concurrent.futures.Future[None]:
        """A future that resolves once everything handed over so far is committed."""
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.submit(Job(future=future))
        return future

    def pending(self) -> bool:
        """Whether some handed-over job is not committed yet."""
        return self._state != _IDLE

    def take_error(self) -> BaseException | None:
        """The first failure of a job nobody waited for, cleared once reported."""
        error, self._error = self._error, None
        return error

    async def close(self) -> None:
        """Stop taking jobs, commit those already queued, then end the writer task."""
        last: concurrent.futures.Future[None] = concurrent.futures.Future()
        with self._lock:  # refuse new jobs and queue the last one in the same step
            self._closed = True
            self._jobs.append(Job(future=last))
            wake, self._state = self._state != _BUSY, _BUSY
        if wake:
            self._schedule(urgent=True)
        await asyncio.wrap_future(last)
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while jobs := self._take():
                await self._commit(jobs)

    def _take(self) -> list[Job]:
        with self._lock:
            jobs = list(self._jobs)
            self._jobs.clear()
            self._state = _BUSY if jobs else _IDLE
        return jobs

    async def _commit(self, jobs: list[Job]) -> None:
        """Write `jobs` in one transaction. If a job's data is refused, retry them one by one
        so only that job fails; an OperationalError (locked, disk full, I/O) fails them all."""
        try:
            await self._apply(jobs)
        except sqlite3.OperationalError as exc:
            for job in jobs:
                self._fail(job, exc)
        except Exception as exc:
            if len(jobs) == 1:
                self._fail(jobs[0], exc)
                return
            for job in jobs:
                await self._commit([job])
        else:
            _resolve(jobs)  # those the connection thread has not already woken
            if self._on_commit is not None:
                self._on_commit(sum(job.rows.nbytes() for job in jobs if job.rows is not None))

    async def _apply(self, jobs: list[Job]) -> None:
        if only_barriers(jobs):
            return
        # The connection opens the transaction itself (BEGIN IMMEDIATE) at the first INSERT or
        # DELETE, which saves a round trip to the connection thread per commit.
        conn = self._conn
        if not has_task(jobs):  # the common batch: puts and writes only
            await _insert_and_commit(conn, Rows.joined(jobs), lambda: _resolve(jobs))
            return
        try:
            rows = Rows()
            for job in jobs:
                if job.rows is not None:
                    rows.extend(job.rows)
                if job.task is not None:  # runs after the inserts handed over before it
                    await rows.insert(conn)
                    rows = Rows()
                    await job.task(conn)
            await rows.insert(conn)
            await conn.commit()
        except BaseException:
            await conn.rollback()
            raise

    def _fail(self, job: Job, exc: Exception) -> None:
        if self._on_error is not None:
            self._on_error()
        if job.future is not None:
            job.future.set_exception(exc)
        elif job.fence is not None:
            job.fence.failed(exc)
        elif self._error is None:
            self._error = exc


def has_task(jobs: list[Job]) -> bool:
    """Whether a maintenance task is among these jobs (the batch then runs in a transaction)."""
    return any(map(_TASK, jobs))


def only_barriers(jobs: list[Job]) -> bool:
    """Whether these jobs carry nothing to write (flushes and reads waiting for the writer)."""
    return not any(map(_ROWS, jobs)) and not has_task(jobs)


def _resolve(jobs: list[Job]) -> None:
    """Wake whoever waits for these committed jobs (from any thread; each future once)."""
    for job in jobs:
        future = job.future
        if future is not None and not future.done():
            with contextlib.suppress(concurrent.futures.InvalidStateError):  # cancelled meanwhile
                future.set_result(None)
