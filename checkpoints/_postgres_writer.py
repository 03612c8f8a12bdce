"""The PostgreSQL saver's writer: the SQLite writer's queue, one statement per commit.

Ordering, group commit, lingering and backpressure are the SQLite `Writer`'s (one queue, one
connection); only how a batch reaches the database differs. Whatever piled up is sent as ONE
statement (data-modifying CTEs over ``unnest``ed arrays): one round trip, atomic on its own, so
no BEGIN/COMMIT. A batch with a maintenance task (delete, copy, prune) runs in a transaction.

Rows of one batch are merged first, because one ``INSERT ... ON CONFLICT DO UPDATE`` may not
touch a row twice: a checkpoint or blob put again replaces the earlier one (as SQLite's INSERT OR
REPLACE), a regular write keeps the first (a retried task saves the same writes), a special
channel's write (negative idx) replaces it in place.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg

from ._sqlite_writer import _LINGERING, Job, Rows, Writer

__all__ = ["EAGER", "LOST", "PgWriter", "insert_rows"]

# What the next statement on a connection the server dropped (a restart, a proxy, or
# pg_terminate_backend) raises, depending on when asyncpg noticed.
LOST = (
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    OSError,
)

# Background changes queued before a lingering commit starts at once. The inserts run in the
# server process, which can work beside the graph (a SQLite commit needs this process), so an
# early start overlaps them with the next steps instead of leaving them all to the final flush
# (a 1500-step long thread, interleaved: 656 -> 490 µs/step; a 100-step chain: no change).
EAGER = 16

_PUT = """WITH
b AS (INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, value)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bytea[])
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET value = excluded.value),
c AS (INSERT INTO checkpoints
        (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
    SELECT * FROM unnest($6::text[], $7::text[], $8::text[], $9::text[], $10::bytea[],
        $11::bytea[])
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
        parent_checkpoint_id = excluded.parent_checkpoint_id,
        checkpoint = excluded.checkpoint, metadata = excluded.metadata)
INSERT INTO checkpoint_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, value, task_path)
SELECT t, n, c, k, i, ch, v, p FROM unnest($12::text[], $13::text[], $14::text[], $15::text[],
    $16::int[], $17::text[], $18::bytea[], $19::text[]) WITH ORDINALITY AS u(t, n, c, k, i, ch, v,
    p, o)
ORDER BY o
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
    channel = excluded.channel, value = excluded.value, task_path = excluded.task_path
    WHERE excluded.idx < 0"""


def _columns(rows: list[tuple[Any, ...]], width: int) -> list[list[Any]]:
    """Rows to one list per column (what ``unnest`` takes)."""
    if not rows:
        return [[] for _ in range(width)]
    return [list(column) for column in zip(*rows, strict=True)]


def _merged(rows: Rows) -> list[list[Any]]:
    """The statement's 19 array parameters, each row at most once (see the module docstring)."""
    # Versions are stored as text (`_postgres_schema`).
    blobs = {(t, n, ch, str(v)): (t, n, ch, str(v), b) for t, n, ch, v, b in rows.blobs}
    checkpoints = {r[:3]: r for r in rows.checkpoints}
    writes: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for row in rows.writes:
        key = row[:5]
        if row[4] < 0 or key not in writes:
            writes[key] = row
    return [
        *_columns(list(blobs.values()), 5),
        *_columns(list(checkpoints.values()), 6),
        *_columns(list(writes.values()), 8),
    ]


async def insert_rows(conn: asyncpg.Connection, rows: Rows) -> None:
    """Every row in one statement (a no-op for none)."""
    if rows.blobs or rows.checkpoints or rows.writes:
        await conn.execute(_PUT, *_merged(rows))


class PgWriter(Writer):
    """`Writer` whose commit is one `insert_rows` statement, or a transaction with tasks.

    A commit that finds its connection gone (the server restarted, a proxy dropped it) opens a
    new one with `reconnect` and runs once more: every statement here is an upsert or a delete,
    so running one again after a commit whose reply was lost stores the same rows.
    """

    def __init__(
        self,
        conn: asyncpg.Connection,
        loop_thread: Any,
        reconnect: Callable[[], Awaitable[asyncpg.Connection]],
        on_error: Callable[[], object] | None = None,
    ) -> None:
        super().__init__(conn, loop_thread, on_error=on_error)  # type: ignore[arg-type]
        self._reconnect = reconnect

    @property
    def connection(self) -> asyncpg.Connection:
        return self._conn  # type: ignore[return-value]

    def submit(self, job: Job) -> None:
        super().submit(job)
        with self._lock:
            eager = self._state == _LINGERING and len(self._jobs) == EAGER
        if eager:  # once per batch: the loop takes the jobs (and the state) from here
            self._loop_thread.call_soon(self._schedule, True)

    async def _apply(self, jobs: list[Job]) -> None:
        if all(job.rows is None and job.task is None for job in jobs):
            return  # only barriers
        try:
            await self._apply_on(self.connection, jobs)
        except Exception as error:
            if not (self.connection.is_closed() or isinstance(error, LOST)):
                raise  # the data or the statement was refused: not a lost connection
            self.connection.terminate()
            self._conn = await self._reconnect()  # type: ignore[assignment]
            await self._apply_on(self.connection, jobs)

    async def _apply_on(self, conn: asyncpg.Connection, jobs: list[Job]) -> None:
        rows = Rows()
        if all(job.task is None for job in jobs):
            for job in jobs:
                if job.rows is not None:
                    rows.extend(job.rows)
            await insert_rows(conn, rows)
            return
        async with conn.transaction():
            for job in jobs:
                if job.rows is not None:
                    rows.extend(job.rows)
                if job.task is not None:  # runs after the inserts handed over before it
                    await insert_rows(conn, rows)
                    rows = Rows()
                    await job.task(conn)
            await insert_rows(conn, rows)
