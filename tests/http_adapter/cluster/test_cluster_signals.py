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
