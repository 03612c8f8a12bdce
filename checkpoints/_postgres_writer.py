"""The PostgreSQL saver's writer: the SQLite writer's queue, one statement per commit.

Ordering, group commit, lingering and backpressure are the SQLite `Writer`'s (one queue, one
connection); only how a batch reaches the database differs. Whatever piled up is sent as ONE
statement (data-modifying CTEs over ``unnest``ed arrays of the tables' row types): one round
trip, atomic on its own, so no BEGIN/COMMIT. A batch with a maintenance task (delete, copy,
prune) runs in a transaction.

The statement is a plain INSERT: a row stored again (a checkpoint put twice, a retried task's
writes) is rare, and PostgreSQL's ON CONFLICT costs ~40% more server time per row (issue 19:
29 -> 18 µs per step of a long thread). A plain insert that meets a stored row fails whole, and
the batch is sent again as the upsert, which gives it the old meaning: a checkpoint or blob put
again replaces the earlier one (as SQLite's INSERT OR REPLACE), a regular write keeps the first
(a retried task saves the same writes), a special channel's write (negative idx) replaces it in
place. A batch carrying a special write, or one inside a transaction (where a failed statement
would abort it), is sent as the upsert at once.

The plain insert sends a batch's rows as they are: a row repeated within the batch fails it as a
stored one does, and only the upsert gets them merged first (one upsert may not touch a row
twice). Merging every batch (a dictionary per table, `str` per version) cost ~115 µs of the
writer's CPU per 35 steps of the long thread; building a batch's statement argument now takes
~62 µs against ~135 (minimum of repeated timings on one recorded batch).

Hand-over (issue 19): the writer's loop thread needs the GIL to encode and send a batch, and a
graph running Python in another thread holds it; the loop thread then gets it only every
``sys.getswitchinterval()`` (5 ms), so a fast run queued most of its steps for one long commit at
its end (then blocked at `BACKLOG` until they committed). Every `HANDOFF` background changes
queued, the submitting thread waits (at most `HANDOFF_WAIT`) until the writer has sent what is
queued: the statement then runs in the server process beside the graph, and the final flush
waits for the last few steps only. While the batch in flight has no reply yet (the server is
still at it) a submit does not wait; it asks again at the next one.
"""

from __future__ import annotations

import operator
import select
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import msgspec

from ._blob_cache import BlobCache
from ._sqlite_writer import _BUSY, _IDLE, _LINGERING, Job, Rows, Writer, has_task, only_barriers
from .fence import FenceRefused

__all__ = [
    "HANDOFF", "HANDOFF_WAIT", "JSON_LIMIT", "LOST", "PgWriter", "check_fences", "fences_of",
    "insert_rows",
]

# What the next statement on a connection the server dropped (a restart, a proxy, or
# pg_terminate_backend) raises, depending on when asyncpg noticed.
LOST = (
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    OSError,
)

# Background changes queued per hand-over, and how long a submit waits for the writer to send
# them. 64 changes are 32 steps of a one-node graph; a hand-over costs the caller ~0.2 ms, and
# 32, 64 and 128 measured alike on the 200-step long thread (issue 19).
HANDOFF = 64
HANDOFF_WAIT = 0.002

# The rows reach the server as one JSON document, an array per table of row arrays (bytes in
# base64), which msgspec writes in C: asyncpg's encoding of one array per column cost ~12 µs per
# step of a long thread in the writer's thread (which competes with the graph for the GIL), this
# ~3 µs, for ~3 µs more server time (measured again on one 35-step batch: typed column arrays
# ~1000 µs of client CPU and ~1.3 ms of server CPU, this ~240 µs and ~1.5 ms; the `json` type
# instead of `jsonb`: the same client CPU, ~3.6 ms of server CPU). A batch whose document is over
# `JSON_LIMIT` bytes (a jsonb value holds at most 255 MB) goes as arrays of the tables' row types.
JSON_LIMIT = 16 << 20
_encode = msgspec.json.Encoder().encode
_VERSION = operator.itemgetter(3)  # a blob row's version
_IDX = operator.itemgetter(4)  # a write row's idx
_FENCE = operator.attrgetter("fence")  # of a `Job`
_PLAIN_VERSIONS = frozenset((int, str))  # JSON gives ``r->>3 == str(v)`` for these

# Each source is (rows, their order): a fenced statement's condition goes between the two.
_FROM_JSON = (
    ("SELECT r->>0, r->>1, r->>2, r->>3, decode(r->>4, 'base64') "
     "FROM jsonb_array_elements($1::jsonb -> 0) AS r", ""),
    ("SELECT r->>0, r->>1, r->>2, r->>3, decode(r->>4, 'base64'), decode(r->>5, 'base64') "
     "FROM jsonb_array_elements($1::jsonb -> 1) AS r", ""),
    ("SELECT r->>0, r->>1, r->>2, r->>3, (r->>4)::int, r->>5, decode(r->>6, 'base64'), r->>7 "
     "FROM jsonb_array_elements($1::jsonb -> 2) WITH ORDINALITY AS u(r, o)", " ORDER BY o"),
)
_FROM_ARRAYS = (  # a write's `seq` travels as NULL; the insert assigns it in array order
    ("SELECT * FROM unnest($1::checkpoint_blobs[])", ""),
    ("SELECT * FROM unnest($2::checkpoints[])", ""),
    ("SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, value, task_path "
     "FROM unnest($3::checkpoint_writes[]) WITH ORDINALITY AS u", " ORDER BY ordinality"),
)
# Where a fenced statement finds its fences' arguments: the JSON document's fourth element, or
# a fourth parameter beside the arrays (issue 26).
_FENCES_JSON, _FENCES_ARRAYS = "$1::jsonb -> 3", "$4::jsonb"
_GATE = " WHERE (SELECT ok FROM f)"
_CONFLICTS = (
    " ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET"
    " value = excluded.value",
    " ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET"
    " parent_checkpoint_id = excluded.parent_checkpoint_id,"
    " checkpoint = excluded.checkpoint, metadata = excluded.metadata",
    " ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET"
    " channel = excluded.channel, value = excluded.value, task_path = excluded.task_path"
    " WHERE excluded.idx < 0",
)


Sources = tuple[tuple[str, str], tuple[str, str], tuple[str, str]]


def _statement(sources: Sources, upsert: bool, fences: str | None = None) -> str:
    """One statement storing the three tables' rows, as plain inserts or as the upsert.

    With `fences` (the `f` CTE, `_fence_check`) every insert is gated on it and the statement
    answers whether the fences held: a refused write stores nothing (issue 26)."""
    gate = _GATE if fences is not None else ""
    blobs, checkpoints, writes = (
        rows + gate + order + (conflict if upsert else "")
        for (rows, order), conflict in zip(sources, _CONFLICTS)
    )
    inserts = (
        "b AS (INSERT INTO checkpoint_blobs "
        f"(thread_id, checkpoint_ns, channel, version, value) {blobs}), "
        "c AS (INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
        f"parent_checkpoint_id, checkpoint, metadata) {checkpoints}) "
    )
    last = (
        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, "
        f"channel, value, task_path) {writes}"
    )
    if fences is None:
        return f"WITH {inserts}{last}"
    return f"WITH {fences}, {inserts.rstrip()}, w AS ({last}) SELECT ok FROM f"


def _fence_check(sqls: tuple[str, ...], source: str) -> str:
    """The `f` CTE: whether every fence holds. `source -> i` is the array of the arguments of
    the fences whose SQL is `sqls[i]` (each one a jsonb array named `fence` in that SQL)."""
    parts = [
        f"(SELECT COALESCE(bool_and({sql}), true) "
        f"FROM jsonb_array_elements({source} -> {i}) AS fence)"
        for i, sql in enumerate(sqls)
    ]
    return f"f AS MATERIALIZED (SELECT {' AND '.join(parts)} AS ok)"


# (insert, upsert) per form
_JSON = (_statement(_FROM_JSON, False), _statement(_FROM_JSON, True))
_ARRAYS = (_statement(_FROM_ARRAYS, False), _statement(_FROM_ARRAYS, True))
_FENCED: dict[tuple[bool, tuple[str, ...]], tuple[str, str]] = {}  # (arrays?, SQLs): statements


def _fenced_statements(arrays: bool, sqls: tuple[str, ...]) -> tuple[str, str]:
    """(insert, upsert) gated on fences with these SQLs (built once per set of SQLs)."""
    found = _FENCED.get((arrays, sqls))
    if found is None:
        sources, where = (_FROM_ARRAYS, _FENCES_ARRAYS) if arrays else (_FROM_JSON, _FENCES_JSON)
        check = _fence_check(sqls, where)
        found = _FENCED[(arrays, sqls)] = (
            _statement(sources, False, check), _statement(sources, True, check)
        )
    return found


def _merged(rows: Rows) -> tuple[list[Any], list[Any], list[Any]]:
    """The three tables' rows, each row at most once (see the module docstring)."""
    blobs = {(t, n, ch, str(v)): (t, n, ch, str(v), b) for t, n, ch, v, b in rows.blobs}
    checkpoints = {r[:3]: r for r in rows.checkpoints}
    writes: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for row in rows.writes:
        key = row[:5]
        if row[4] < 0 or key not in writes:
            writes[key] = row
    return list(blobs.values()), list(checkpoints.values()), list(writes.values())


def _as_sent(rows: Rows) -> tuple[list[Any], list[Any], list[Any]]:
    """The rows as they are, for the plain insert: a row repeated within the batch fails it as
    a stored one does, and the upsert then gets them merged. Versions are stored as text
    (`_postgres_schema`): an int or str one goes as it is (``r->>3`` of a JSON number gives
    ``str(v)``), only another type (a float, a bool) is converted here."""
    blobs = rows.blobs
    if blobs and not _PLAIN_VERSIONS.issuperset(map(type, map(_VERSION, blobs))):
        blobs = [(t, n, ch, str(v), b) for t, n, ch, v, b in blobs]
    return blobs, rows.checkpoints, rows.writes


# A batch's fences: their distinct SQLs, and per SQL the arguments of each fence (issue 26).
Fences = tuple[tuple[str, ...], list[list[tuple[str, ...]]]]


def fences_of(jobs: list[Job]) -> Fences | None:
    """The fences these jobs carry, grouped by SQL; None when none has one (the common case)."""
    if not any(map(_FENCE, jobs)):
        return None
    by_sql: dict[str, dict[tuple[str, ...], None]] = {}
    for job in jobs:
        if job.fence is not None:
            by_sql.setdefault(job.fence.sql, {})[job.fence.args] = None
    return tuple(by_sql), [list(args) for args in by_sql.values()]


def _arguments(
    tables: tuple[list[Any], list[Any], list[Any]], fences: Fences | None = None
) -> tuple[tuple[str, str], list[Any]]:
    """(insert, upsert) and the statement's arguments for these rows (and fences)."""
    document = _encode(tables if fences is None else (*tables, fences[1]))
    if len(document) > JSON_LIMIT:
        blobs, checkpoints, writes = tables
        blobs = [(t, n, ch, str(v), b) for t, n, ch, v, b in blobs]
        arguments = [blobs, checkpoints, [(*row, None) for row in writes]]
        if fences is None:
            return _ARRAYS, arguments
        return _fenced_statements(True, fences[0]), [*arguments, _encode(fences[1]).decode()]
    statements = _JSON if fences is None else _fenced_statements(False, fences[0])
    return statements, [document.decode()]


async def _send(conn: asyncpg.Connection, sql: str, arguments: list[Any], fenced: bool) -> None:
    """Run one storing statement; a fenced one that answers its fences did not hold stored
    nothing: `FenceRefused` (issue 26)."""
    if not fenced:
        await conn.execute(sql, *arguments)
    elif not await conn.fetchval(sql, *arguments):
        raise FenceRefused("write refused: its fence no longer holds")


async def insert_rows(
    conn: asyncpg.Connection, rows: Rows, upsert: bool = False, fences: Fences | None = None
) -> None:
    """Every row in one statement (a no-op for none); see the module docstring for `upsert`.
    A batch with a special channel's write is sent as the upsert at once. With `fences`, the
    rows are stored only if every fence holds, checked in that same statement (issue 26)."""
    if not (rows.blobs or rows.checkpoints or rows.writes):
        return
    fenced = fences is not None
    if upsert or (rows.writes and min(map(_IDX, rows.writes)) < 0):
        (_, upsert_sql), arguments = _arguments(_merged(rows), fences)
        await _send(conn, upsert_sql, arguments, fenced)
        return
    (insert, _), arguments = _arguments(_as_sent(rows), fences)
    try:
        await _send(conn, insert, arguments, fenced)
    except asyncpg.UniqueViolationError:  # a row stored before, or twice here: nothing written
        (_, upsert_sql), arguments = _arguments(_merged(rows), fences)
        await _send(conn, upsert_sql, arguments, fenced)


async def check_fences(conn: asyncpg.Connection, fences: Fences) -> None:
    """Inside a transaction: raise `FenceRefused` unless every fence holds (the rows it locks
    stay locked until the transaction ends), for a batch that runs a maintenance task."""
    sql = f"WITH {_fence_check(fences[0], '$1::jsonb')} SELECT ok FROM f"
    if not await conn.fetchval(sql, _encode(fences[1]).decode()):
        raise FenceRefused("write refused: its fence no longer holds")


class PgWriter(Writer):
    """`Writer` whose commit is one `insert_rows` statement, or a transaction with tasks.

    A commit that finds its connection gone (the server restarted, a proxy dropped it) opens a
    new one with `reconnect` and runs once more: every statement here is an insert, an upsert or
    a delete, so running one again after a commit whose reply was lost stores the same rows
    (a plain insert then meets them and is sent again as the upsert).
    """

    def __init__(
        self,
        conn: asyncpg.Connection,
        loop_thread: Any,
        reconnect: Callable[[], Awaitable[asyncpg.Connection]],
        on_error: Callable[[], object] | None = None,
        blobs: BlobCache | None = None,
    ) -> None:
        super().__init__(conn, loop_thread, on_error=on_error)  # type: ignore[arg-type]
        self._reconnect = reconnect
        self._blobs = blobs  # told what each commit stored (the reader's cache)
        self._handing: list[threading.Event] = []  # hand-overs waiting for the next send
        self._due = HANDOFF  # queued changes that make a submit hand them over
        self._fileno = _socket_of(conn)

    @property
    def connection(self) -> asyncpg.Connection:
        return self._conn  # type: ignore[return-value]

    def _hand_over(self) -> None:
        """Wait until the writer has sent what is queued (see the module docstring). Called by
        the base `submit`, so an ordinary submit takes one lock: ~0.7 µs a submit against ~1.2
        when this overrode `submit` and locked again (400 submits a 200-step run)."""
        with self._lock:
            if len(self._jobs) < self._due:
                return
            state = self._state
            if state == _BUSY and not _readable(self._fileno):
                return  # the server still runs the last batch: ask again at the next submit
            sent = threading.Event()
            self._handing.append(sent)
        if state == _LINGERING:  # a busy writer takes these jobs when its commit ends
            self._loop_thread.call_soon(self._schedule, True)
        if not sent.wait(HANDOFF_WAIT):
            with self._lock:  # the writer is slow: do not wait at every submit
                self._due = len(self._jobs) + HANDOFF

    def _take(self) -> list[Job]:
        with self._lock:  # the base `_take`, and the hand-overs these jobs answer
            jobs = list(self._jobs)
            self._jobs.clear()
            self._state = _BUSY if jobs else _IDLE
            handing, self._handing = self._handing, []
            self._due = HANDOFF
        if handing:
            # Runs once the commit that starts now awaits its reply, i.e. after it was sent
            # (or at once if there is nothing to commit).
            self._loop_thread.loop.call_soon(_set_all, handing)
        return jobs

    async def _apply(self, jobs: list[Job]) -> None:
        if only_barriers(jobs):
            return
        try:
            await self._apply_on(self.connection, jobs)
        except Exception as error:
            if not (self.connection.is_closed() or isinstance(error, LOST)):
                raise  # the data or the statement was refused: not a lost connection
            self.connection.terminate()
            self._conn = await self._reconnect()  # type: ignore[assignment]
            self._fileno = _socket_of(self.connection)
            await self._apply_on(self.connection, jobs)
        self._committed(jobs)

    def _committed(self, jobs: list[Job]) -> None:
        """The blobs these jobs stored, for the reader; a task (delete, copy, prune) may have
        removed blobs: the cache starts again."""
        if self._blobs is None:
            return
        if has_task(jobs):
            self._blobs.clear()
            return
        for job in jobs:
            if job.rows is not None and job.rows.blobs:
                self._blobs.put_many(job.rows.blobs)

    async def _apply_on(self, conn: asyncpg.Connection, jobs: list[Job]) -> None:
        fences = fences_of(jobs)
        if not has_task(jobs):
            await insert_rows(conn, Rows.joined(jobs), fences=fences)
            return
        rows = Rows()
        async with conn.transaction():
            if fences is not None:
                await check_fences(conn, fences)
            for job in jobs:
                if job.rows is not None:
                    rows.extend(job.rows)
                if job.task is not None:  # runs after the inserts handed over before it
                    await insert_rows(conn, rows, upsert=True)
                    rows = Rows()
                    await job.task(conn)
            await insert_rows(conn, rows, upsert=True)


def _socket_of(conn: asyncpg.Connection) -> int | None:
    """The file descriptor of the connection's socket, if asyncpg exposes its transport (its
    `_transport` attribute, 0.2x through 0.32); None: hand-overs always wait."""
    transport = getattr(conn, "_transport", None)
    sock = transport.get_extra_info("socket") if transport is not None else None
    return sock.fileno() if sock is not None else None


def _readable(fileno: int | None) -> bool:
    """Whether the server's reply to the batch in flight has arrived (unread) on the socket:
    the writer's thread can then finish that commit and send the next batch at once."""
    if fileno is None:
        return True
    try:
        return bool(select.select([fileno], [], [], 0)[0])
    except (OSError, ValueError):  # closed meanwhile: let the writer find out
        return True


def _set_all(events: list[threading.Event]) -> None:
    for event in events:
        event.set()
