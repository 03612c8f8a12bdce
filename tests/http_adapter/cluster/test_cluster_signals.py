"""The cluster queue with Redis signals (issue 19 §7): wake-ups, completion and cancels are
pushed, so nothing waits for the database poll (set to 30 s here, the heartbeat to 5 s)."""

from __future__ import annotations

import time

import anyio
import pytest

from http_adapter.agent_server.cluster.signals import Signals

from ._queue_hosts import HELD, RAN, hosts, ran, start, status, until

pytestmark = pytest.mark.anyio

SLOW_POLLS = {"poll": 30.0, "lease": 15.0, "heartbeat": 5.0, "reaper": 30.0}


async def test_a_run_created_on_one_host_starts_at_once_on_an_idle_other(
    pg_url: str, redis_url: str,
) -> None:
    async with hosts(pg_url, signals=lambda: Signals(redis_url), **SLOW_POLLS) as (a, b):
        a.scope.cancel()  # a takes requests only; b idles until a wake-up reaches it
        await anyio.sleep(0.3)  # b's dispatcher is asleep for its 30-s poll
        began = time.monotonic()
        run_id = await start(a, "w1", "t1")
        outcome = await a.queue.wait(run_id)  # completion pushed back to a
        elapsed = time.monotonic() - began
        assert outcome is not None and outcome.status == "success"
        assert RAN == ["w1 one", "w1 slow", "w1 three"]
        assert elapsed < 3.0, elapsed


async def test_a_cancel_reaches_the_running_host_at_once(pg_url: str, redis_url: str) -> None:
    async with hosts(pg_url, signals=lambda: Signals(redis_url), **SLOW_POLLS) as (a, b):
        a.scope.cancel()
        await anyio.sleep(0.3)
        HELD.add("c1")
        run_id = await start(a, "c1", "t1")
        await until(lambda: ran("c1 slow"))
        began = time.monotonic()
        await a.queue.cancel(run_id, "interrupt")
        outcome = await a.queue.wait(run_id)
        assert outcome is not None and outcome.status == "interrupted"
        assert time.monotonic() - began < 3.0  # not the 5-s heartbeat, not the 30-s poll
        assert await status(pg_url, run_id) == "interrupted"


async def test_a_completion_pushed_while_the_waiter_looks_the_run_up_is_not_lost(
    pg_url: str, redis_url: str,
) -> None:
    """The waiter reads the run in flight; the run ends and its `done` arrives before that read
    answers. Mutation-checked: watching for `done` only after the read slept the 30-s poll."""
    async with hosts(pg_url, signals=lambda: Signals(redis_url), **SLOW_POLLS) as (a, b):
        a.scope.cancel()  # b runs the work; a waits
        await anyio.sleep(0.3)
        HELD.add("d1")
        ledger = await a.queue.open()
        real, reads = ledger.state, []

        async def slow_read(run_id: str) -> object:
            found = await real(run_id)
            reads.append(found)
            if len(reads) == 1:  # read in flight; answer after the run ended and signalled
                HELD.discard("d1")
                await until(lambda: ran("d1 three"))
                while b.queue.busy():  # ended on b, `done` published
                    await anyio.sleep(0.02)
                await anyio.sleep(0.5)  # and delivered to a
            return found

        ledger.state = slow_read  # type: ignore[method-assign]
        run_id = await start(a, "d1", "t1")
        began = time.monotonic()
        outcome = await a.queue.wait(run_id)
        assert reads[0][0] in ("pending", "running")
        assert outcome is not None and outcome.status == "success"
        assert time.monotonic() - began < 3.0
