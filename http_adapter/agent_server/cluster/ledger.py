"""The run queue's SQL on `server_runs` / `server_threads` (issue 19 §2-5).

The database, not any process, decides who runs what: a claim is one statement that stamps a
fresh attempt token, and every later write of that attempt is conditioned on the token and on
the run still being `running` (zero rows = a stale attempt, which changes nothing). A thread's
multitask strategy is decided under a lock on its row, so `reject` holds across hosts. Leases
lapse when a host dies; the reaper (one host at a time, by advisory lock) requeues those runs,
finalises cancelled ones, and ends a run whose retry budget is spent together with its thread.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

import asyncpg
import msgspec

from checkpoints.postgres_files import migrate

from ..errors import Conflict
from ..schemas import Run, Thread
from ._jsonb import no_nul
from ._schema import COMPONENT, MIGRATIONS

__all__ = [
    "BUDGET", "FENCE", "Claim", "Enqueued", "Finished", "Ledger", "REAPER_LOCK", "REJECTED",
    "Reaped",
]

BUDGET = 3  # attempts a run may start (issue 19 §3); the reaper ends it after the last one
REAPER_LOCK = 0x67_72_71_72_65_61_70  # "grqreap": single-flight reaper across hosts
REJECTED = (
    "Thread is already running a task. Wait for it to finish or choose a different "
    "multitask strategy."
)
_INFLIGHT = ("pending", "running")
# The checkpoint saver's fence of an attempt (issue 26, `checkpoints.Fence`; `fence` is
# [run_id, token]): its writes are stored only while its token is the running run's. The row
# is locked FOR KEY SHARE for the write's statement: the reaper's FOR UPDATE then waits for
# the write, or the write waits for the reaper and sees the run taken back. Renewals and
# the attempt's own end (no key change) do not wait for it.
FENCE = (
    "EXISTS (SELECT 1 FROM server_runs WHERE run_id = fence->>0 "
    "AND token = (fence->>1)::uuid AND status = 'running' FOR KEY SHARE)"
)


@dataclasses.dataclass(frozen=True, slots=True)
class Claim:
    """One attempt of a run this host now owns: every write of it carries `token`."""

    run: Run
    token: uuid.UUID
    attempt: int
    cancel_action: str | None
    claimed_before: bool = False  # an earlier attempt (retried or drained) may have checkpoints
    more: bool = True  # other due runs were pending when this one was claimed: look again
    started: bool = False  # claimed as it was enqueued: `run` is stored as it starts


@dataclasses.dataclass(frozen=True, slots=True)
class Finished:
    """An attempt's end: whether it was written (False: stale, nothing written) and whether
    another run of its thread is in flight (a pending one can start now)."""

    written: bool
    others: bool


@dataclasses.dataclass(slots=True)
class Enqueued:
    """What `enqueue` did to the thread's other runs (multitask `interrupt` / `rollback`)."""

    claim: Claim | None = None  # the run, claimed at once for the caller (`enqueue(started=)`)
    running: list[str] = dataclasses.field(default_factory=list)  # flagged: their owner cancels
    finalised: list[Run] = dataclasses.field(default_factory=list)  # pending ones, ended here
    deleted: list[str] = dataclasses.field(default_factory=list)  # pending ones rolled back


@dataclasses.dataclass(slots=True)
class Reaped:
    """Runs whose lease lapsed, by what the reaper did with them."""

    requeued: list[str] = dataclasses.field(default_factory=list)
    interrupted: list[Run] = dataclasses.field(default_factory=list)  # cancel was requested
    rolled_back: list[Run] = dataclasses.field(default_factory=list)  # deleted: rollback cancel
    exhausted: list[Run] = dataclasses.field(default_factory=list)  # retry budget spent


def _json(value: Any) -> str:
    """A body for `jsonb`; a NUL in it is a 422 (`no_nul`), not the database's error."""
    return no_nul(msgspec.json.encode(value)).decode()


def _run(body: str, status: str) -> Run:
    """A run from its row: the `status` column wins over the body's."""
    run = msgspec.json.decode(body, type=Run)
    return run if run.status == status else msgspec.structs.replace(run, status=status)


# Lock order, everywhere: a thread's row, then its runs' rows (enqueue displacing a running run
# and an attempt finishing it would otherwise deadlock). A thread's status is settled by its own
# statement after the lock is held, so its snapshot sees every run committed before (a status
# computed in the statement that waited for the lock would miss a run enqueued meanwhile).
_LOCK_THREAD = "SELECT 1 FROM server_threads WHERE thread_id = $1 FOR UPDATE"

# The thread row after a run ended or was cancelled: `busy` while another run of it is pending
# or running (SPEC §3), else `$2`; the body is `$4` (or kept) patched with `$5`. Runs under the thread row's lock, in the caller's transaction.
_SETTLE_THREAD = """
UPDATE server_threads SET
    status = s.status, updated_at = $3::text,
    body = COALESCE($4::jsonb, body) || COALESCE($5::jsonb, '{}'::jsonb)
        || jsonb_build_object('status', s.status, 'updated_at', $3::text)
FROM (SELECT CASE WHEN EXISTS (
        SELECT 1 FROM server_runs WHERE thread_id = $1::text AND status IN ('pending', 'running'))
      THEN 'busy' ELSE $2::text END AS status) AS s
WHERE thread_id = $1::text
"""

# The attempt's end and a run's enqueue: PL/pgSQL functions (schema step 4, `_schema.py`),
# each one round trip where a transaction took four.
_FINISH = (
    "SELECT written, others "
    "FROM graphrun_finish($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7, $8, $9::jsonb)"
)
_ENQUEUE = (
    "SELECT found_id AS run_id, found_status AS status, found_body AS body, found_token "
    "FROM graphrun_enqueue($1, $2, $3::jsonb, $4, $5, $6::jsonb, $7, $8::jsonb, $9::jsonb, "
    "$10, $11)"
)
# A pending run and its thread marked busy (after the displacing strategies' changes). The
# thread's metadata gains the keys the route added (the first graph run names it: graph_id,
# assistant_id) without losing any another host wrote meanwhile. $1 run_id, $2 thread_id,
# $3 body, $4 after seconds, $5 stamp, $6 metadata.
_INSERT = """
WITH ins AS (
    INSERT INTO server_runs (run_id, thread_id, status, body, not_before)
    SELECT $1, $2, 'pending', $3::jsonb, now() + make_interval(secs => $4)
    RETURNING 1)
UPDATE server_threads SET status = 'busy', updated_at = $5, body = body ||
    jsonb_build_object('status', 'busy', 'updated_at', $5::text, 'metadata',
        $6::jsonb || COALESCE(body->'metadata', '{}'::jsonb))
WHERE thread_id = $2 AND EXISTS (SELECT 1 FROM ins)
"""

_CLAIM = """
UPDATE server_runs SET status = 'running', attempt = attempt + 1, token = gen_random_uuid(),
    owner = $1, lease_until = now() + make_interval(secs => $2), claims = claims + 1
WHERE run_id = (
    SELECT r.run_id FROM server_runs r
    WHERE r.status = 'pending' AND r.not_before <= now() AND NOT EXISTS (
        SELECT 1 FROM server_runs o WHERE o.thread_id = r.thread_id AND (o.status = 'running'
            OR (o.status = 'pending' AND o.seq < r.seq AND o.not_before <= now())))
    ORDER BY r.seq FOR UPDATE SKIP LOCKED LIMIT 1)
RETURNING run_id, body::text, attempt, token, cancel_action, claims, EXISTS (
    SELECT 1 FROM server_runs m WHERE m.status = 'pending' AND m.not_before <= now()
        AND m.run_id <> server_runs.run_id) AS more
"""


class Ledger:
    """The queue's state in PostgreSQL. `host` names this process in `owner`."""

    def __init__(self, pool: asyncpg.Pool, *, host: str, lease: float = 30.0,
                 budget: int = BUDGET) -> None:
        self.pool = pool
        self.host = host
        self.lease = lease
        self.budget = budget

    async def migrate(self) -> None:
        """Create or upgrade the server's tables (idempotent, under the shared advisory lock)."""
        async with self.pool.acquire() as conn:
            await migrate(conn, COMPONENT, MIGRATIONS)

    # -- creating -------------------------------------------------------------------------------

    async def enqueue(self, run: Run, thread: Thread, stamp: str, after: float = 0.0, *,
                      started: Run | None = None) -> Enqueued:
        """Insert a pending run and mark its thread busy, applying its multitask strategy under
        the thread row's lock: `reject` raises Conflict when the thread has a run in flight on
        any host; `interrupt` / `rollback` flag the running ones (returned for their owner to
        stop) and end the pending ones here. With `started` (the run as its first attempt
        starts it; the caller has a free worker), the run is claimed at once for this host
        when nothing else is due and its thread has nothing in flight (`Enqueued.claim`)."""
        strategy = run.multitask_strategy
        values = (run.run_id, run.thread_id, _json(run), float(after), stamp,
                  _json(thread.metadata or {}))
        # One round trip (schema step 4): the thread row created or locked, its runs in flight
        # read, and the run inserted when its strategy lets it in whatever is in flight, or
        # nothing is (the common case; it was four round trips).
        async with self.pool.acquire() as conn:
            inflight = await conn.fetch(
                _ENQUEUE, *values, strategy == "enqueue", _json(thread),
                _json(started) if started is not None else None, self.host, self.lease,
            )
        if started is not None and inflight and inflight[0]["found_token"] is not None:
            return Enqueued(claim=Claim(started, inflight[0]["found_token"], 1, None,
                                        more=False, started=True))
        if not inflight or strategy == "enqueue":
            return Enqueued()
        if strategy == "reject":
            raise Conflict(REJECTED)  # nothing was inserted
        return await self._enqueue_displacing(values, strategy, stamp, thread)

    async def _enqueue_displacing(self, values: tuple[Any, ...], strategy: str, stamp: str,
                                  thread: Thread) -> Enqueued:
        """`interrupt` / `rollback` with runs in flight: in one transaction, under the thread
        row's lock (taken by the enqueue function, held to the end), flag or end them, then
        insert the run."""
        done = Enqueued()
        async with self.pool.acquire() as conn, conn.transaction():
            inflight = await conn.fetch(_ENQUEUE, *values, False, _json(thread), None, None, 0.0)
            if not inflight:  # they ended meanwhile: inserted by that statement
                return done
            if strategy in ("interrupt", "rollback"):
                await self._displace(conn, inflight, strategy, stamp, done)
            await conn.execute(_INSERT, *values)
        return done

    async def _displace(self, conn: asyncpg.Connection, inflight: list[asyncpg.Record],
                        action: str, stamp: str, done: Enqueued) -> None:
        for row in inflight:
            if row["status"] == "running":
                await conn.execute(
                    "UPDATE server_runs SET cancel_action = COALESCE(cancel_action, $2) "
                    "WHERE run_id = $1", row["run_id"], action,
                )
                done.running.append(row["run_id"])
            elif action == "rollback":
                await conn.execute("DELETE FROM server_runs WHERE run_id = $1", row["run_id"])
                done.deleted.append(row["run_id"])
            else:
                run = _run(row["body"], "interrupted")
                run = msgspec.structs.replace(run, updated_at=stamp)
                await conn.execute(
                    "UPDATE server_runs SET status = 'interrupted', cancel_action = $2, "
                    "body = $3::jsonb, outcome = $4::jsonb WHERE run_id = $1",
                    run.run_id, action, _json(run), _json(_cancel_outcome(action)),
                )
                done.finalised.append(run)

    # -- claiming and the attempt's writes ------------------------------------------------------

    async def claim(self) -> Claim | None:
        """Take the oldest runnable run (due, its thread has no running run and no older due
        pending run): one statement, SKIP LOCKED, a fresh token, attempt + 1, a lease."""
        while True:
            try:
                async with self.pool.acquire() as conn:
                    row = await conn.fetchrow(_CLAIM, self.host, self.lease)
            except asyncpg.UniqueViolationError:
                # Another host claimed a run of the same thread in the same instant: the
                # partial unique index server_runs_one_running refused ours. Look again.
                continue
            if row is None:
                return None
            run = _run(row["body"], "running")
            return Claim(run, row["token"], row["attempt"], row["cancel_action"],
                         claimed_before=row["claims"] > 1, more=row["more"])

    async def started(self, claim: Claim, run: Run) -> bool:
        """Store the running run's body (its kwargs as this attempt started them)."""
        async with self.pool.acquire() as conn:
            result = await conn.execute(
                "UPDATE server_runs SET body = $3::jsonb "
                "WHERE run_id = $1 AND token = $2 AND status = 'running'",
                run.run_id, claim.token, _json(run),
            )
        return result != "UPDATE 0"

    async def finish(self, claim: Claim, run: Run, outcome: Any, thread: Thread | None,
                     stamp: str) -> Finished:
        """End the attempt: the run's status, body and outcome and its thread's record in one
        transaction, only while the token is still the run's (else nothing is written).
        The thread's status becomes `thread.status`, or `busy` if another run is in flight.
        One round trip (schema step 4): the thread row locked, then the writes."""
        if run.status in _INFLIGHT:
            raise ValueError(f"finish needs a final status, not {run.status!r}")
        async with self.pool.acquire() as conn:
            row = await conn.fetchrow(
                _FINISH, run.run_id, claim.token, run.status, _json(run), _json(outcome),
                run.thread_id, thread.status if thread else None, stamp,
                _json(thread) if thread else None,
            )
        return Finished(row["written"], row["others"])

    async def finish_rollback(self, claim: Claim, thread: Thread | None, stamp: str) -> bool:
        """A run cancelled with `rollback`: delete it (token-conditioned) and settle its thread."""
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(_LOCK_THREAD, claim.run.thread_id)
            result = await conn.execute(
                "DELETE FROM server_runs WHERE run_id = $1 AND token = $2 AND status = 'running'",
                claim.run.run_id, claim.token,
            )
            if result == "DELETE 0":
                return False
            if thread is not None:
                await conn.execute(_SETTLE_THREAD, thread.thread_id, thread.status, stamp,
                                   _json(thread), None)
        return True

    async def release(self, claims: list[Claim]) -> list[str]:
        """Give runs back on shutdown (drain): pending again, no token, and the attempt they
        took returned (a rolling restart spends none). Returns the ids released."""
        if not claims:
            return []
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(
                "UPDATE server_runs r SET status = 'pending', token = NULL, owner = NULL, "
                "lease_until = NULL, attempt = r.attempt - 1 "
                "FROM unnest($1::text[], $2::uuid[]) AS c(run_id, token) "
                "WHERE r.run_id = c.run_id AND r.token = c.token AND r.status = 'running' "
                "RETURNING r.run_id",
                [c.run.run_id for c in claims], [c.token for c in claims],
            )
        return [row["run_id"] for row in rows]

    # -- cancelling -----------------------------------------------------------------------------

    async def request_cancel(self, run_id: str, action: str) -> str | None:
        """Flag a pending or running run as cancelled (durable: the owner's heartbeat and the
        reaper read it back). Returns the run's status, None when it is not in flight."""
        async with self.pool.acquire() as conn:
            return await conn.fetchval(
                "UPDATE server_runs SET cancel_action = COALESCE(cancel_action, $2) "
                "WHERE run_id = $1 AND status IN ('pending', 'running') RETURNING status",
                run_id, action,
            )

    async def cancel_pending(self, run_id: str, action: str, thread: Thread | None,
                             stamp: str) -> Run | None:
        """End a run that never started, only if it is still pending (else its owner or the
        reaper ends it): `interrupt` marks it interrupted, `rollback` deletes it."""
        async with self.pool.acquire() as conn, conn.transaction():
            thread_id = await conn.fetchval(
                "SELECT thread_id FROM server_runs WHERE run_id = $1", run_id
            )
            await conn.execute(_LOCK_THREAD, thread_id)
            row = await conn.fetchrow(
                "SELECT body::text FROM server_runs WHERE run_id = $1 AND status = 'pending' "
                "FOR UPDATE", run_id,
            )
            if row is None:
                return None
            run = msgspec.structs.replace(_run(row["body"], "interrupted"), updated_at=stamp)
            if action == "rollback":
                await conn.execute("DELETE FROM server_runs WHERE run_id = $1", run_id)
            else:
                await conn.execute(
                    "UPDATE server_runs SET status = 'interrupted', body = $2::jsonb, "
                    "outcome = $3::jsonb, cancel_action = $4 WHERE run_id = $1",
                    run_id, _json(run), _json(_cancel_outcome(action)), action,
                )
            if thread is not None:
                await conn.execute(_SETTLE_THREAD, thread.thread_id, thread.status, stamp,
                                   _json(thread), None)
        return run

    # -- leases ---------------------------------------------------------------------------------

    async def renew(self, conn: asyncpg.Connection, claims: list[tuple[str, uuid.UUID]]
                    ) -> dict[str, str | None]:
        """Extend the leases of this host's attempts; returns run id -> cancel_action for each
        attempt still ours (an attempt missing from the answer lost its lease: stale)."""
        if not claims:
            return {}
        rows = await conn.fetch(
            "UPDATE server_runs r SET lease_until = now() + make_interval(secs => $3) "
            "FROM unnest($1::text[], $2::uuid[]) AS c(run_id, token) "
            "WHERE r.run_id = c.run_id AND r.token = c.token AND r.status = 'running' "
            "RETURNING r.run_id, r.cancel_action",
            [c[0] for c in claims], [c[1] for c in claims], self.lease,
        )
        return {row["run_id"]: row["cancel_action"] for row in rows}

    async def renew_once(self, claim: Claim) -> str | None:
        """Renew one attempt's lease now; its cancel flag (for tests and start-up checks)."""
        async with self.pool.acquire() as conn:
            found = await self.renew(conn, [(claim.run.run_id, claim.token)])
        return found.get(claim.run.run_id)

    async def reap(self, stamp: str) -> Reaped | None:
        """Deal with runs whose lease lapsed (their host died or stalled), on one host at a time
        (None: another host holds the reaper lock). Cancelled runs are finalised, never retried;
        a run whose attempts reached the budget ends in error with its thread in the same
        transaction; the rest go back to pending and resume from their last checkpoint."""
        reaped = Reaped()
        async with self.pool.acquire() as conn, conn.transaction():
            if not await conn.fetchval("SELECT pg_try_advisory_xact_lock($1)", REAPER_LOCK):
                return None
            lapsed = await conn.fetch(
                "SELECT run_id, thread_id FROM server_runs "
                "WHERE status = 'running' AND lease_until < now() ORDER BY seq"
            )
            for found in lapsed:
                await conn.execute(_LOCK_THREAD, found["thread_id"])
                row = await conn.fetchrow(  # still lapsed now that we hold the locks?
                    "SELECT run_id, thread_id, attempt, cancel_action, body::text "
                    "FROM server_runs WHERE run_id = $1 AND status = 'running' "
                    "AND lease_until < now() FOR UPDATE", found["run_id"],
                )
                if row is not None:
                    await self._reap_one(conn, row, stamp, reaped)
        return reaped

    async def _reap_one(self, conn: asyncpg.Connection, row: asyncpg.Record, stamp: str,
                        reaped: Reaped) -> None:
        run_id, action = row["run_id"], row["cancel_action"]
        if action is None and row["attempt"] < self.budget:
            await conn.execute(
                "UPDATE server_runs SET status = 'pending', token = NULL, owner = NULL, "
                "lease_until = NULL WHERE run_id = $1", run_id,
            )
            reaped.requeued.append(run_id)
            return
        if action == "rollback":
            await conn.execute("DELETE FROM server_runs WHERE run_id = $1", run_id)
            run = _run(row["body"], "interrupted")
            reaped.rolled_back.append(run)
            await conn.execute(_SETTLE_THREAD, run.thread_id, "idle", stamp, None, None)
            return
        status, outcome = (
            ("interrupted", _cancel_outcome(action)) if action is not None
            else ("error", _exhausted_outcome(row["attempt"]))
        )
        run = msgspec.structs.replace(_run(row["body"], status), updated_at=stamp)
        await conn.execute(
            "UPDATE server_runs SET status = $2, body = $3::jsonb, outcome = $4::jsonb, "
            "owner = NULL, lease_until = NULL WHERE run_id = $1",
            run_id, status, _json(run), _json(outcome),
        )
        # The thread leaves `busy` in this same transaction (issue 19 §3), recording why.
        await conn.execute(_SETTLE_THREAD, run.thread_id, status, stamp, None,
                           _json({"error": outcome["error"]}))
        (reaped.interrupted if action is not None else reaped.exhausted).append(run)

    # -- reading --------------------------------------------------------------------------------

    async def state(self, run_id: str) -> tuple[str, Any, int] | None:
        """(status, stored outcome or None, attempt) of a run; None when there is no such run."""
        async with self.pool.acquire() as conn:
            row = await conn.fetchrow(
                "SELECT status, outcome::text, attempt FROM server_runs WHERE run_id = $1", run_id
            )
        if row is None:
            return None
        outcome = None if row["outcome"] is None else msgspec.json.decode(row["outcome"])
        return row["status"], outcome, row["attempt"]

    async def run(self, run_id: str) -> Run | None:
        """A run's record as stored (its `status` column wins)."""
        async with self.pool.acquire() as conn:
            row = await conn.fetchrow(
                "SELECT status, body::text FROM server_runs WHERE run_id = $1", run_id
            )
        return None if row is None else _run(row["body"], row["status"])

    async def thread(self, thread_id: str) -> Thread | None:
        """A thread's record as stored (its `status` column wins)."""
        async with self.pool.acquire() as conn:
            row = await conn.fetchrow(
                "SELECT status, body::text FROM server_threads WHERE thread_id = $1", thread_id
            )
        if row is None:
            return None
        found = msgspec.json.decode(row["body"], type=Thread)
        return found if found.status == row["status"] else msgspec.structs.replace(
            found, status=row["status"])

    async def settle_thread(self, thread: Thread, stamp: str) -> None:
        """Store a thread's record after the reaper ended its run (busy if another is in
        flight): its values and interrupts from the checkpoints, which SQL cannot read."""
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(_LOCK_THREAD, thread.thread_id)
            await conn.execute(_SETTLE_THREAD, thread.thread_id, thread.status, stamp,
                               _json(thread), None)

    async def in_flight(self, run_id: str) -> bool:
        """Whether a run is pending or running (its waiters keep waiting)."""
        found = await self.state(run_id)
        return found is not None and found[0] in _INFLIGHT


def _cancel_outcome(action: str | None) -> dict[str, Any]:
    """A cancelled run's stored outcome (the thread records why, as the LangGraph server)."""
    kind = "UserRollback" if action == "rollback" else "UserInterrupt"
    verb = "rollback" if action == "rollback" else "interrupt"
    message = f"{verb} requested via POST /threads/{{thread_id}}/runs/{{run_id}}/cancel"
    return {"status": "interrupted", "values": None, "interrupts": [],
            "error": {"error": kind, "message": message}}


def _exhausted_outcome(attempts: int) -> dict[str, Any]:
    message = f"Run lost its worker {attempts} times; retry budget spent (issue 19 §3)"
    return {"status": "error", "values": None, "interrupts": [],
            "error": {"error": "RunAttemptsExhausted", "message": message}}
