"""The cluster run queue's SQL (issue 19 §2-5) on a real PostgreSQL: claims, tokens, leases,
the reaper, cancel flags, drain and multitask strategies across hosts."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from http_adapter.agent_server.cluster.ledger import BUDGET, REAPER_LOCK, Claim, Ledger
from http_adapter.agent_server.errors import Conflict
from http_adapter.agent_server.records import now

from ._helpers import ledger, rows, run, thread

pytestmark = pytest.mark.anyio


async def _enqueue(book: Ledger, thread_id: str, n: int = 1, **kw: Any) -> list[str]:
    t = thread(thread_id)
    ids = []
    for _ in range(n):
        r = run(thread_id, **kw)
        await book.enqueue(r, t, now())
        ids.append(r.run_id)
    return ids


def _done(claim: Claim, status: str = "success") -> Any:
    return msgspec.structs.replace(claim.run, status=status)


async def _lapse(url: str, run_id: str) -> None:
    await rows(url, "UPDATE server_runs SET lease_until = now() - interval '1 s' "
                    "WHERE run_id = $1", run_id)


async def test_concurrent_claimers_never_share_a_run_nor_run_two_of_one_thread(pg_url: str) -> None:
    async with ledger(pg_url, "a") as a, ledger(pg_url, "b") as b, ledger(pg_url, "c") as c:
        order: dict[str, list[str]] = {}
        for i in range(8):
            order[f"t{i}"] = await _enqueue(a, f"t{i}", 3)
        claimed: list[Claim] = []
        while True:
            # Each round: six claimers race; nothing finishes until all have tried.
            round_ = await asyncio.gather(*(book.claim() for book in (a, b, c) * 4))
            got = [cl for cl in round_ if cl is not None]
            if not got:
                break
            threads = [cl.run.thread_id for cl in got]
            assert len(set(threads)) == len(threads), "two runs of one thread running"
            ids = [cl.run.run_id for cl in got]
            assert len(set(ids)) == len(ids), "one run claimed twice"
            running = await rows(pg_url, "SELECT thread_id FROM server_runs WHERE status='running'")
            assert len(running) == len({r["thread_id"] for r in running})
            for cl in got:
                done = await a.finish(cl, _done(cl), {"status": "success"}, None, now())
                ran = 1 + sum(1 for c in claimed if c.run.thread_id == cl.run.thread_id)
                assert done.written and done.others == (ran < 3)  # its thread's later runs
            claimed.extend(got)
        assert sorted(cl.run.run_id for cl in claimed) == sorted(sum(order.values(), []))
        for thread_id, ids in order.items():  # each thread's runs ran in creation order
            assert [cl.run.run_id for cl in claimed if cl.run.thread_id == thread_id] == ids
        assert {cl.attempt for cl in claimed} == {1}


async def test_a_stale_attempt_changes_nothing(pg_url: str) -> None:
    async with ledger(pg_url) as book:
        [run_id] = await _enqueue(book, "t")
        first = await book.claim()
        assert first is not None and first.attempt == 1
        await _lapse(pg_url, run_id)
        reaped = await book.reap(now())
        assert reaped is not None and reaped.requeued == [run_id]
        second = await book.claim()
        assert second is not None and second.attempt == 2 and second.token != first.token
        stale = first.run.__class__(**{**_fields(_done(first)), "metadata": {"stale": True}})
        assert not await book.started(first, stale)
        assert not (await book.finish(first, stale, {"status": "success"}, thread("t"), now())
                    ).written
        assert not await book.finish_rollback(first, thread("t"), now())
        assert await book.release([first]) == []
        [row] = await rows(pg_url, "SELECT status, token, attempt, body->'metadata' AS m, "
                                   "outcome FROM server_runs")
        assert (row["status"], row["token"], row["attempt"]) == ("running", second.token, 2)
        assert row["m"] == "{}" and row["outcome"] is None
        assert (await book.finish(second, _done(second), {"status": "success"}, None, now())
                ).written


def _fields(record: Any) -> dict[str, Any]:
    return msgspec.structs.asdict(record)


async def test_reaper_requeues_lapsed_leases_and_is_single_flight(pg_url: str) -> None:
    async with ledger(pg_url) as book:
        [run_id] = await _enqueue(book, "t")
        claim = await book.claim()
        assert claim is not None
        assert (await book.reap(now())).requeued == []  # lease still valid: untouched
        await _lapse(pg_url, run_id)
        conn_rows = await asyncio.gather(_hold_reaper_lock(pg_url, book))
        assert conn_rows == [None]  # another host holds the lock: this one skips
        reaped = await book.reap(now())
        assert reaped is not None and reaped.requeued == [run_id]
        [row] = await rows(pg_url, "SELECT status, token, owner, attempt FROM server_runs")
        assert (row["status"], row["token"], row["owner"], row["attempt"]) == (
            "pending", None, None, 1)


async def _hold_reaper_lock(url: str, book: Ledger) -> Any:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", REAPER_LOCK)
            return await book.reap(now())
    finally:
        await conn.close()


async def test_reaper_finalises_a_cancelled_lapsed_run_and_never_retries_it(pg_url: str) -> None:
    async with ledger(pg_url) as book:
        [run_id] = await _enqueue(book, "t")
        assert await book.claim() is not None
        assert await book.request_cancel(run_id, "interrupt") == "running"
        await _lapse(pg_url, run_id)
        reaped = await book.reap(now())
        assert [r.run_id for r in reaped.interrupted] == [run_id] and reaped.requeued == []
        assert await book.claim() is None
        [row] = await rows(pg_url, "SELECT r.status, r.outcome->>'status' AS o, t.status AS ts "
                                   "FROM server_runs r JOIN server_threads t USING (thread_id)")
        assert (row["status"], row["o"], row["ts"]) == ("interrupted", "interrupted", "interrupted")


async def test_reaper_ends_run_and_thread_together_when_the_budget_is_spent(pg_url: str) -> None:
    async with ledger(pg_url) as book:
        [run_id] = await _enqueue(book, "t")
        for attempt in range(1, BUDGET + 1):
            claim = await book.claim()
            assert claim is not None and claim.attempt == attempt
            await _lapse(pg_url, run_id)
            reaped = await book.reap(now())
            assert (reaped.requeued == [run_id]) == (attempt < BUDGET)
        assert [r.run_id for r in reaped.exhausted] == [run_id]
        assert await book.claim() is None
        [row] = await rows(pg_url, "SELECT r.status, t.status AS ts, t.body->'error'->>'error' AS e,"
                                   " t.body->>'status' AS tb FROM server_runs r "
                                   "JOIN server_threads t USING (thread_id)")
        assert dict(row) == {"status": "error", "ts": "error", "e": "RunAttemptsExhausted",
                             "tb": "error"}
        assert (await book.state(run_id))[1]["error"]["error"] == "RunAttemptsExhausted"


async def test_drain_release_gives_the_attempt_back(pg_url: str) -> None:
    async with ledger(pg_url, "a") as a, ledger(pg_url, "b") as b:
        [run_id] = await _enqueue(a, "t")
        claim = await a.claim()
        assert claim is not None and claim.attempt == 1
        assert await a.release([claim]) == [run_id]
        [row] = await rows(pg_url, "SELECT status, token, owner, attempt FROM server_runs")
        assert (row["status"], row["token"], row["owner"], row["attempt"]) == (
            "pending", None, None, 0)
        again = await b.claim()
        assert again is not None and again.attempt == 1  # no attempt spent by the restart


async def test_reject_holds_across_hosts(pg_url: str) -> None:
    async with ledger(pg_url, "a") as a, ledger(pg_url, "b") as b:
        await _enqueue(a, "t")
        with pytest.raises(Conflict):
            await _enqueue(b, "t", strategy="reject")
        assert len(await rows(pg_url, "SELECT 1 FROM server_runs")) == 1
        # concurrently on an existing idle thread: exactly one of two rejects gets in
        for round_ in range(5):
            await rows(pg_url, "INSERT INTO server_threads (thread_id, status, updated_at, body)"
                               " VALUES ($1, 'idle', '', '{}')", f"u{round_}")
            results = await asyncio.gather(
                _enqueue(a, f"u{round_}", strategy="reject"),
                _enqueue(b, f"u{round_}", strategy="reject"), return_exceptions=True,
            )
            assert sorted(type(r).__name__ for r in results) == ["Conflict", "list"]


async def test_interrupt_and_rollback_flag_running_and_end_pending_runs(pg_url: str) -> None:
    async with ledger(pg_url, "a") as a, ledger(pg_url, "b") as b:
        first, second = await _enqueue(a, "t", 2)
        claim = await a.claim()
        assert claim is not None and claim.run.run_id == first
        r = run("t", "interrupt")
        done = await b.enqueue(r, thread("t"), now())
        assert done.running == [first] and [x.run_id for x in done.finalised] == [second]
        assert (await a.state(second))[:2] == ("interrupted", {
            "status": "interrupted", "values": None, "interrupts": [],
            "error": {"error": "UserInterrupt", "message": "interrupt requested via POST "
                      "/threads/{thread_id}/runs/{run_id}/cancel"}})
        assert await a.renew_once(claim) == "interrupt"
        r2 = run("t", "rollback")
        done = await b.enqueue(r2, thread("t"), now())
        assert done.running == [first] and done.deleted == [r.run_id]
        assert await a.state(r.run_id) is None
        assert await a.claim() is None  # the thread's run is still running


async def test_cancel_of_a_pending_run_is_conditional_on_it_still_pending(pg_url: str) -> None:
    async with ledger(pg_url) as book:
        [run_id] = await _enqueue(book, "t")
        claim = await book.claim()
        assert claim is not None
        assert await book.cancel_pending(run_id, "interrupt", thread("t"), now()) is None
        assert (await book.state(run_id))[0] == "running"
        [other] = await _enqueue(book, "u")
        t = thread("u")
        ended = await book.cancel_pending(other, "interrupt", t, now())
        assert ended is not None and ended.status == "interrupted"
        [row] = await rows(pg_url, "SELECT status FROM server_threads WHERE thread_id = 'u'")
        assert row["status"] == "idle"


async def test_a_run_ending_while_another_is_enqueued_leaves_its_thread_busy(pg_url: str) -> None:
    async with ledger(pg_url, "a") as a, ledger(pg_url, "b") as b:
        for round_ in range(20):
            thread_id = f"t{round_}"
            await _enqueue(a, thread_id)
            claim = await a.claim()
            assert claim is not None
            idle = msgspec.structs.replace(thread(thread_id), status="idle")
            finished, _ = await asyncio.gather(
                a.finish(claim, _done(claim), {"status": "success"}, idle, now()),
                b.enqueue(run(thread_id), thread(thread_id), now()),
            )
            assert finished.written
            [row] = await rows(pg_url, "SELECT status, body->>'status' AS b FROM server_threads "
                                       "WHERE thread_id = $1", thread_id)
            assert (row["status"], row["b"]) == ("busy", "busy"), round_


async def test_a_run_is_claimed_as_it_is_enqueued_only_when_nothing_else_is_due(
        pg_url: str) -> None:
    """`enqueue(started=...)`: the caller's free worker takes the run in the same statement,
    unless another run is due (no run jumps the queue) or its thread has one in flight; a run
    so claimed is an ordinary attempt (token, lease, attempt 1) and stored as it started."""
    async with ledger(pg_url, "a", lease=30.0) as a, ledger(pg_url, "b") as b:
        first = run("t1")
        started = msgspec.structs.replace(first, status="running", metadata={"started": True})
        done = await a.enqueue(first, thread("t1"), now(), started=started)
        claim = done.claim
        assert claim is not None and claim.started and claim.attempt == 1
        assert claim.run is started and not claim.claimed_before
        [row] = await rows(pg_url, "SELECT status, token, owner, attempt, claims, "
                                   "lease_until > now() AS leased, body->'metadata' AS m "
                                   "FROM server_runs")
        assert (row["status"], row["token"], row["owner"]) == ("running", claim.token, "a")
        assert (row["attempt"], row["claims"], row["leased"]) == (1, 1, True)
        assert row["m"] == '{"started": true}'
        assert await b.claim() is None  # nobody else can take it
        # its thread has a run in flight: queued behind it, not claimed
        second = run("t1")
        assert (await a.enqueue(second, thread("t1"), now(), started=second)).claim is None
        # another thread, but a run is due (t1's second waits): queued, claimed in order
        third = run("t2")
        assert (await a.enqueue(third, thread("t2"), now(), started=third)).claim is None
        assert (await a.finish(claim, _done(claim), {"status": "success"}, None, now())).others
        assert [(await b.claim()).run.run_id for _ in range(2)] == [second.run_id, third.run_id]
        # a delayed run is never claimed at once
        fourth = run("t3")
        done = await a.enqueue(fourth, thread("t3"), now(), 5.0, started=fourth)
        assert done.claim is None
