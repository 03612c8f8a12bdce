"""`PgRecords`: the server's records (SCALEOUT §1 `RecordStore`) in PostgreSQL, shared by every
`graphrun serve` process on the database (issue 19).

Same answers as the embedded `records.Records`: creation order is each table's `seq`; searches
narrow in SQL and decide in Python with the same `matches` (`_jsonb.sql_pattern` says why); a run's
status is its `status` column, which the queue also writes. Each call is one statement, so one
round trip and atomic on its own: records written together (a run with its thread, an assistant
with its version) go in one statement of data-modifying CTEs. Only a compare-and-set that fails
where Python and `jsonb` equality may disagree takes a second look (`replace_extra`).

The queue's columns of `server_runs` (attempt, token, owner, lease_until, cancel_action,
not_before, outcome) are never written here.

Where `jsonb` itself differs from the embedded back end (as on LangGraph Platform's PostgreSQL):
objects come back with their keys sorted (shorter first, then bytewise), a whole float that JSON
spells with an exponent comes back as an int (1e20), -0.0 as 0.0, and a string holding U+0000 is
refused (the write fails whole, nothing of it stored).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import anyio
import asyncpg
import msgspec

from checkpoints.postgres_files import connect_options, migrate

from ..metrics import asyncpg_pool_stats
from ..records import RecordStats, matches
from ..schemas import Assistant, Run, Thread
from ._jsonb import no_nul, numeric_free, setup_codec, sql_pattern
from ._schema import COMPONENT, MIGRATIONS

__all__ = ["PgRecords"]


def _encode(value: Any) -> bytes:
    """A body for `jsonb`; a NUL in it is a 422 (`no_nul`), not the database's error."""
    return no_nul(msgspec.json.encode(value))


_assistant = msgspec.json.Decoder(Assistant).decode
_thread = msgspec.json.Decoder(Thread).decode
_run = msgspec.json.Decoder(Run).decode
_plain = msgspec.json.Decoder().decode

_PUT_ASSISTANT = """INSERT INTO server_assistants (assistant_id, graph_id, body)
    VALUES ($1, $2, $3) ON CONFLICT (assistant_id)
    DO UPDATE SET graph_id = excluded.graph_id, body = excluded.body"""
_PUT_THREAD = """INSERT INTO server_threads (thread_id, status, updated_at, body)
    VALUES ($1, $2, $3, $4) ON CONFLICT (thread_id)
    DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at, body = excluded.body"""
# Never the queue's columns: a re-put run keeps its attempt, token, lease and outcome.
_PUT_RUN = """INSERT INTO server_runs (run_id, thread_id, status, body)
    VALUES ($1, $2, $3, $4) ON CONFLICT (run_id)
    DO UPDATE SET status = excluded.status, body = excluded.body"""
# unnest ... WITH ORDINALITY ORDER BY keeps the callers' order for `seq` (creation order).
_PUT_RUNS = """WITH r AS (
        INSERT INTO server_runs (run_id, thread_id, status, body)
        SELECT i, t, s, b FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[])
            WITH ORDINALITY AS u(i, t, s, b, n) ORDER BY n
        ON CONFLICT (run_id) DO UPDATE SET status = excluded.status, body = excluded.body
    )
    INSERT INTO server_threads (thread_id, status, updated_at, body)
    SELECT i, s, w, b FROM unnest($5::text[], $6::text[], $7::text[], $8::jsonb[])
        WITH ORDINALITY AS u(i, s, w, b, n) ORDER BY n
    ON CONFLICT (thread_id) DO UPDATE SET
        status = excluded.status, updated_at = excluded.updated_at, body = excluded.body"""
# A running run whose cancel was asked for reads `interrupted` at once, as the reference's
# (issue 31); its `status` column stays `running` for the queue until its owner ends it.
_SHOWN_STATUS = ("CASE WHEN status = 'running' AND cancel_action IN ('interrupt', 'rollback') "
                 "THEN 'interrupted' ELSE status END AS status")
_STATS = """SELECT 'a', '', count(*) FROM server_assistants
    UNION ALL SELECT 't', status, count(*) FROM server_threads GROUP BY status
    UNION ALL SELECT 'r', status, count(*) FROM server_runs GROUP BY status"""


async def _no_reset(conn: asyncpg.Connection) -> None:
    """Pool connections keep no session state (no LISTEN, session locks or SETs), so the
    default reset query, one more round trip on every release, is skipped."""


class PgRecords:
    """The records of every server process sharing one PostgreSQL database.

    `prepared_statements=False` for PgBouncer in transaction mode. `open()` migrates the
    database (once, however many processes start together) and opens the pool."""

    def __init__(
        self, url: str, *, min_size: int = 1, max_size: int = 10,
        prepared_statements: bool = True,
    ) -> None:
        self.url = url
        self.min_size = min_size
        self.max_size = max_size
        self._options = connect_options(prepared_statements)
        self._pool: asyncpg.Pool | None = None
        # The schema version `open()` found: 0 when this process created the tables.
        self.found_version: int | None = None

    async def open(self) -> None:
        if self._pool is not None:
            return
        pool = await asyncpg.create_pool(
            self.url, min_size=self.min_size, max_size=self.max_size, init=setup_codec,
            reset=_no_reset, **self._options,
        )
        try:
            async with pool.acquire() as conn:
                self.found_version = await migrate(conn, COMPONENT, MIGRATIONS)
        except BaseException:
            await pool.close()
            raise
        self._pool = pool

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()

    @property
    def pool(self) -> asyncpg.Pool:
        """The connection pool (for `/metrics`: its size and idle connections)."""
        if self._pool is None:
            raise RuntimeError("PgRecords is not open")
        return self._pool

    async def health(self) -> bool:
        """Whether the database answers a query within 2 s (the server's `/ok`, issue 19 §10)."""
        pool = self.pool
        try:
            with anyio.fail_after(2):
                if pool.get_idle_size() == 0 and pool.get_size() >= self.max_size:
                    # A saturated pool is a busy host, not a lost database: ask on the side.
                    conn = await asyncpg.connect(self.url, **self._options)
                    try:
                        return await conn.fetchval("SELECT 1") == 1
                    finally:
                        await conn.close()
                return await pool.fetchval("SELECT 1") == 1
        except Exception:  # down, refusing, or no answer within 2 s: not healthy
            return False

    def pool_stats(self) -> dict[str, int]:
        """The pool's open connections, those in use and its bound (`/metrics`)."""
        return asyncpg_pool_stats(self.pool)

    # -- assistants -----------------------------------------------------------------------------

    async def get_assistant(self, assistant_id: str) -> Assistant | None:
        body = await self.pool.fetchval(
            "SELECT body FROM server_assistants WHERE assistant_id = $1", assistant_id
        )
        return None if body is None else _assistant(body)

    async def assistant_versions(self, assistant_id: str) -> dict[int, Assistant]:
        rows = await self.pool.fetch(
            "SELECT version, body FROM server_assistant_versions WHERE assistant_id = $1 "
            "ORDER BY version", assistant_id,
        )
        return {version: _assistant(body) for version, body in rows}

    async def put_assistant(self, assistant: Assistant) -> Assistant:
        """The assistant and its version row, in one statement."""
        await self.pool.execute(
            "WITH v AS (INSERT INTO server_assistant_versions (assistant_id, version, body) "
            "VALUES ($1, $4, $3) ON CONFLICT (assistant_id, version) "
            "DO UPDATE SET body = excluded.body) " + _PUT_ASSISTANT,
            assistant.assistant_id, assistant.graph_id, _encode(assistant), assistant.version,
        )
        return assistant

    async def set_assistant(self, assistant: Assistant) -> Assistant:
        await self.pool.execute(
            _PUT_ASSISTANT, assistant.assistant_id, assistant.graph_id, _encode(assistant)
        )
        return assistant

    async def delete_assistant(self, assistant_id: str) -> None:
        await self.pool.execute(
            "WITH v AS (DELETE FROM server_assistant_versions WHERE assistant_id = $1) "
            "DELETE FROM server_assistants WHERE assistant_id = $1", assistant_id,
        )

    async def search_assistants(
        self, *, metadata: dict[str, Any] | None = None, graph_id: str | None = None,
        name: str | None = None,
    ) -> list[Assistant]:
        """As `Records.search_assistants`; the name test stays in Python (PostgreSQL's
        `lower()` follows the database's locale, Python's does not)."""
        query = _Query("SELECT body FROM server_assistants")
        if graph_id is not None and "\x00" in graph_id:
            return []  # no stored graph_id has one (text refuses NUL: it would be a 500)
        if graph_id is not None:
            query.where("graph_id = $", graph_id)
        query.contains("body->'metadata'", metadata)
        needle = name.lower() if name else None
        found = [_assistant(body) for body, in await query.fetch(self.pool)]
        return [
            a for a in found
            if (needle is None or needle in (a.name or "").lower()) and matches(a.metadata, metadata)
        ]

    # -- threads --------------------------------------------------------------------------------

    async def get_thread(self, thread_id: str) -> Thread | None:
        body = await self.pool.fetchval(
            "SELECT body FROM server_threads WHERE thread_id = $1", thread_id
        )
        return None if body is None else _thread(body)

    async def put_thread(self, thread: Thread) -> Thread:
        await self.pool.execute(
            _PUT_THREAD, thread.thread_id, thread.status, thread.updated_at, _encode(thread)
        )
        return thread

    async def delete_thread(self, thread_id: str) -> None:
        """The thread with its runs, in one statement; a missing thread is a no-op."""
        await self.pool.execute(
            "WITH r AS (DELETE FROM server_runs WHERE thread_id = $1) "
            "DELETE FROM server_threads WHERE thread_id = $1", thread_id,
        )

    async def search_threads(
        self, *, metadata: dict[str, Any] | None = None, status: str | None = None,
        ids: list[str] | None = None,
    ) -> list[Thread]:
        query = _Query("SELECT body FROM server_threads")
        if ids is not None:
            query.where("thread_id = ANY($::text[])", list(ids))
        if status is not None:
            query.where("status = $", status)
        query.contains("body->'metadata'", metadata)
        found = [_thread(body) for body, in await query.fetch(self.pool)]
        return [t for t in found if matches(t.metadata, metadata)]

    async def threads_updated_before(self, stamp: str) -> list[Thread]:
        """Threads last updated before `stamp`, compared as Python compares strings."""
        rows = await self.pool.fetch(
            'SELECT body FROM server_threads WHERE updated_at < $1 COLLATE "C" ORDER BY seq',
            stamp,
        )
        return [_thread(body) for body, in rows]

    # -- runs -----------------------------------------------------------------------------------

    async def get_run(self, run_id: str) -> Run | None:
        row = await self.pool.fetchrow(
            f"SELECT {_SHOWN_STATUS}, body FROM server_runs WHERE run_id = $1", run_id
        )
        return None if row is None else _run_of(row)

    async def put_run(self, run: Run) -> Run:
        await self.pool.execute(_PUT_RUN, run.run_id, run.thread_id, run.status, _encode(run))
        return run

    async def put_runs(self, runs: list[Run], threads: Sequence[Thread] = ()) -> None:
        """Runs and threads in one statement (a run's status with its thread's)."""
        run_list = list(_last_wins(runs, "run_id"))
        thread_list = list(_last_wins(threads, "thread_id"))
        if not run_list and not thread_list:
            return
        await self.pool.execute(
            _PUT_RUNS,
            [r.run_id for r in run_list], [r.thread_id for r in run_list],
            [r.status for r in run_list], [_encode(r) for r in run_list],
            [t.thread_id for t in thread_list], [t.status for t in thread_list],
            [t.updated_at for t in thread_list], [_encode(t) for t in thread_list],
        )

    async def delete_run(self, run_id: str) -> None:
        await self.pool.execute("DELETE FROM server_runs WHERE run_id = $1", run_id)

    async def runs_of(self, thread_id: str, status: str | None = None) -> list[Run]:
        query = _Query(f"SELECT {_SHOWN_STATUS}, body FROM server_runs")
        query.where("thread_id = $", thread_id)
        if status is not None:
            query.where("status = $", status)
        return [_run_of(row) for row in await query.fetch(self.pool)]

    async def runs_with_status(self, *statuses: str) -> list[Run]:
        """One equality per status, ORed: each can use its partial index (pending,
        running), where `status = ANY($1)` reads every run ever made."""
        wanted = list(dict.fromkeys(statuses))
        if not wanted:
            return []
        either = " OR ".join(f"status = ${n}" for n in range(1, len(wanted) + 1))
        rows = await self.pool.fetch(
            f"SELECT {_SHOWN_STATUS}, body FROM server_runs WHERE {either} ORDER BY seq", *wanted
        )
        # a run whose cancel was asked for reads `interrupted` here too, as in GET (issue 31)
        return [_run_of(row) for row in rows if row["status"] in wanted]

    async def stats(self) -> RecordStats:
        counts: dict[str, dict[str, int]] = {"a": {}, "t": {}, "r": {}}
        for table, status, count in await self.pool.fetch(_STATS):
            counts[table][status] = count
        return RecordStats(
            assistants=counts["a"].get("", 0), threads=counts["t"], runs=counts["r"]
        )

    # -- other kinds (crons, ...) ---------------------------------------------------------------

    async def get_extra(self, kind: str, key: str) -> Any | None:
        body = await self.pool.fetchval(
            "SELECT body FROM server_extras WHERE kind = $1 AND key = $2", kind, key
        )
        return None if body is None else _plain(body)

    async def extras(self, kind: str) -> dict[str, Any]:
        rows = await self.pool.fetch(
            "SELECT key, body FROM server_extras WHERE kind = $1 ORDER BY seq", kind
        )
        return {key: _plain(body) for key, body in rows}

    async def put_extra(self, kind: str, key: str, body: Any) -> None:
        await self.pool.execute(
            "INSERT INTO server_extras (kind, key, body) VALUES ($1, $2, $3) "
            "ON CONFLICT (kind, key) DO UPDATE SET body = excluded.body",
            kind, key, _encode(body),
        )

    async def replace_extra(self, kind: str, key: str, expected: Any, new: Any) -> bool:
        """Compare-and-set on the whole body, atomic across connections and hosts: of two
        concurrent replaces from the same `expected`, one writes (crons fire once, issue 19
        §8). `jsonb` equality decides in one statement; where it may differ from Python's
        (`True == 1`), a refusal is checked again in Python under a row lock."""
        want = msgspec.to_builtins(expected)
        if want is None:
            return False  # as `Records`: a missing or null body is never replaced
        done = await self.pool.execute(
            "UPDATE server_extras SET body = $4 WHERE kind = $1 AND key = $2 AND body = $3",
            kind, key, _encode(want), _encode(new),
        )
        if done == "UPDATE 1":
            return True
        if numeric_free(want):
            return False
        return await self._replace_checked(kind, key, want, _encode(new))

    async def delete_extra(self, kind: str, key: str) -> None:
        await self.pool.execute(
            "DELETE FROM server_extras WHERE kind = $1 AND key = $2", kind, key
        )

    async def _replace_checked(self, kind: str, key: str, want: Any, new: bytes) -> bool:
        async with self.pool.acquire() as conn, conn.transaction():
            body = await conn.fetchval(
                "SELECT body FROM server_extras WHERE kind = $1 AND key = $2 FOR UPDATE",
                kind, key,
            )
            if body is None or _plain(body) != want:
                return False
            await conn.execute(
                "UPDATE server_extras SET body = $3 WHERE kind = $1 AND key = $2", kind, key, new
            )
            return True


class _Query:
    """A SELECT with optional filters, numbered as they are added, in creation order."""

    def __init__(self, select: str) -> None:
        self.select = select
        self.conditions: list[str] = []
        self.args: list[Any] = []

    def where(self, condition: str, arg: Any) -> None:
        self.args.append(arg)
        self.conditions.append(condition.replace("$", f"${len(self.args)}"))

    def contains(self, column: str, subset: dict[str, Any] | None) -> None:
        """Narrow by JSON containment (a superset of `matches`; the caller checks)."""
        pattern = sql_pattern(subset) if subset else None
        if pattern:
            self.where(f"{column} @> $::jsonb", _encode(pattern))

    async def fetch(self, pool: asyncpg.Pool) -> list[asyncpg.Record]:
        where = f" WHERE {' AND '.join(self.conditions)}" if self.conditions else ""
        return await pool.fetch(f"{self.select}{where} ORDER BY seq", *self.args)


def _run_of(row: asyncpg.Record) -> Run:
    """A run as stored, with the status of its `status` column (the queue writes it alone)."""
    run = _run(row[1])
    run.status = row[0]
    return run


def _last_wins(records: Iterable[Any], id_field: str) -> Iterable[Any]:
    """One record per id: the first one's place, the last one's body (as `Records` indexes
    them); one INSERT ... ON CONFLICT cannot touch a row twice."""
    by_id: dict[str, Any] = {}
    for record in records:
        by_id[getattr(record, id_field)] = record
    return by_id.values()
