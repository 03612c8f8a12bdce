"""Lease heartbeats (issue 19 §3): a thread the graph cannot block keeps the leases, reads
back cancel flags and reports attempts this host lost."""

from __future__ import annotations

import asyncio
import time

import pytest

from http_adapter.agent_server.cluster.leases import Heartbeat
from http_adapter.agent_server.records import now

from ._helpers import ledger, rows, run, thread

pytestmark = pytest.mark.anyio


async def test_a_blocked_event_loop_keeps_its_lease(pg_url: str) -> None:
    async with ledger(pg_url, lease=1.0) as book:
        await book.enqueue(run("t"), thread("t"), now())
        claim = await book.claim()
        assert claim is not None
        beat = Heartbeat(pg_url, book, interval=0.25, on_cancel=lambda *a: None,
                         on_lost=lambda *a: None)
        beat.start()
        try:
            beat.track(claim.run.run_id, claim.token)
            time.sleep(3.0)  # a sync call in an async node: the loop is stuck for 3 leases
            reaped = await book.reap(now())
            assert reaped is not None and reaped.requeued == []
            [row] = await rows(pg_url, "SELECT status, token, lease_until > now() AS held "
                                       "FROM server_runs")
            assert (row["status"], row["token"], row["held"]) == ("running", claim.token, True)
            assert beat.beats >= 6
        finally:
            beat.stop()
        await asyncio.sleep(1.2)  # without the heartbeat the lease lapses
        assert (await book.reap(now())).requeued == [claim.run.run_id]


async def test_heartbeat_reads_back_cancel_flags_and_lost_attempts(pg_url: str) -> None:
    async with ledger(pg_url, "a", lease=1.0) as a, ledger(pg_url, "b", lease=1.0) as b:
        for t in ("t", "u"):
            await a.enqueue(run(t), thread(t), now())
        first, second = await a.claim(), await a.claim()
        assert first is not None and second is not None
        cancels: list[tuple[str, str]] = []
        lost: list[str] = []
        beat = Heartbeat(pg_url, a, interval=0.1, on_cancel=lambda r, x: cancels.append((r, x)),
                         on_lost=lost.append)
        beat.start()
        try:
            beat.track(first.run.run_id, first.token)
            beat.track(second.run.run_id, second.token)
            assert await b.request_cancel(first.run.run_id, "rollback") == "running"
            await rows(pg_url, "UPDATE server_runs SET token = gen_random_uuid() "
                               "WHERE run_id = $1", second.run.run_id)  # another host's now
            deadline = time.monotonic() + 5
            while (not cancels or not lost) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)  # more beats: each finding is reported once
        finally:
            beat.stop()
        assert cancels == [(first.run.run_id, "rollback")]
        assert lost == [second.run.run_id]


async def test_an_attempt_knows_by_its_own_clock_when_its_lease_ran_out(pg_url: str) -> None:
    """Issue 26: `holds` says whether the lease still runs without a round trip, so a host
    resuming from a stall longer than its lease stops before its next write: renewals extend
    it, a lapse without them ends it, and a lost attempt (another token) ends at once."""
    async with ledger(pg_url, lease=1.0) as book:
        for t in ("t", "u"):
            await book.enqueue(run(t), thread(t), now())
        first, second = await book.claim(), await book.claim()
        assert first is not None and second is not None
        beat = Heartbeat(pg_url, book, interval=0.1, on_cancel=lambda *a: None,
                         on_lost=lambda *a: None)
        beat.start()
        try:
            since = time.monotonic()
            beat.track(first.run.run_id, first.token, since)
            beat.track(second.run.run_id, second.token, since)
            assert not beat.holds(first.run.run_id, second.token)  # not this attempt's token
            while time.monotonic() < since + 1.5:  # renewed past the first lease
                assert beat.holds(first.run.run_id, first.token)
                await asyncio.sleep(0.05)
            await rows(pg_url, "UPDATE server_runs SET token = gen_random_uuid() "
                               "WHERE run_id = $1", second.run.run_id)  # another host's now
            deadline = time.monotonic() + 5
            while beat.holds(second.run.run_id, second.token):
                assert time.monotonic() < deadline, "the lost attempt still holds"
                await asyncio.sleep(0.02)
        finally:
            beat.stop()  # no more renewals: as a host stalled past its lease
        deadline = time.monotonic() + 5
        while beat.holds(first.run.run_id, first.token):
            assert time.monotonic() < deadline, "the lease never ran out"
            await asyncio.sleep(0.05)
