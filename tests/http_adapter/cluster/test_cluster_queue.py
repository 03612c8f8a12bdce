"""Two ClusterQueues (two server states, as two hosts) on one PostgreSQL database, without
Redis: the database poll is the only signal (issue 19 §7 fallback). A run created on one host
runs on the other; waits and cancels work from either; every multitask strategy holds across
them; a run whose host died or drained resumes without re-running finished steps."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import anyio
import msgspec
import pytest

from http_adapter.agent_server.cluster.queue import ClusterQueue
from http_adapter.agent_server.errors import Conflict
from http_adapter.agent_server.records import now
from http_adapter.agent_server.thread_values import values_of

from ._helpers import ledger, rows, run, thread
from ._queue_hosts import (
    HELD, RAN, Host, hosts, ran, serve, start, status, thread_row, until, waiter,
)

pytestmark = pytest.mark.anyio


async def test_a_run_created_on_one_host_runs_on_the_other_and_any_host_answers(
    pg_url: str,
) -> None:
    async with hosts(pg_url) as (a, b):
        a.scope.cancel()  # host a only takes requests: b must run the work
        await anyio.sleep(0.1)
        run_id = await start(a, "r1", "t1")
        outcome = await a.queue.wait(run_id)
        assert outcome is not None and outcome.status == "success"
        assert outcome.values["log"] == ["one", "slow", "three"]
        assert (await b.queue.outcome(run_id)).status == "success"
        assert await a.queue.attempt(run_id) == 1
        assert b.queue.busy() == 0 and b.queue.pool_stats()["size"] >= 1
        row = await thread_row(pg_url, "t1")
        # issue 32: the record names the checkpoint holding the values, not a copy
        assert row["status"] == "idle" and '"three"' not in row["body"]
        assert '"values_checkpoint"' in row["body"]
        assert RAN == ["r1 one", "r1 slow", "r1 three"]
        # what the routes read (PgRecords) on either host
        found = await a.state.records.get_run(run_id)
        assert found.status == "success" and found.kwargs["input"] == {"tag": "r1"}
        thread_record = await b.state.records.get_thread("t1")
        assert thread_record.status == "idle"
        assert (await values_of(b.state, thread_record))["log"] == ["one", "slow", "three"]


async def test_cancel_from_the_other_host_without_redis(pg_url: str) -> None:
    async with hosts(pg_url) as (a, b):
        HELD.add("c1")
        run_id = await start(a, "c1", "t1")
        await until(lambda: ran("c1 slow"))
        runner, other = (a, b) if run_id in a.queue._active else (b, a)
        await other.queue.cancel(run_id, "interrupt")  # only the DB flag reaches the runner
        outcome = await other.queue.wait(run_id)
        assert outcome is not None and outcome.status == "interrupted"
        assert outcome.error["error"] == "UserInterrupt"
        assert await status(pg_url, run_id) == "interrupted"
        assert (await thread_row(pg_url, "t1"))["status"] == "interrupted"
        HELD.clear()
        await anyio.sleep(1.5)  # leases lapse, the reaper runs: a cancelled run never retries
        assert RAN.count("c1 one") == 1 and "c1 three" not in RAN


async def test_multitask_strategies_across_hosts(pg_url: str) -> None:
    async with hosts(pg_url) as (a, b):
        HELD.add("first")
        first = await start(a, "first", "t1")
        await until(lambda: ran("first slow"))
        with pytest.raises(Conflict):
            await start(b, "rejected", "t1", "reject")
        # enqueue: waits for the running one, then runs
        queued = await start(b, "queued", "t1", "enqueue")
        await anyio.sleep(0.5)
        assert await status(pg_url, queued) == "pending"
        # interrupt from b: the running run (maybe on a) and the pending one end interrupted
        second = await start(b, "second", "t1", "interrupt")
        assert (await b.queue.wait(first)).status == "interrupted"
        assert (await a.queue.wait(queued)).status == "interrupted"
        assert (await a.queue.wait(second)).status == "success"
        assert "queued one" not in RAN and "first three" not in RAN
        # rollback from a: the running run is deleted with its checkpoints
        HELD.add("third")
        third = await start(a, "third", "t1")
        await until(lambda: ran("third slow"))
        waiting = await waiter(b, third)
        fourth = await start(a, "fourth", "t1", "rollback")
        assert (await waiting()).error["error"] == "UserRollback"
        assert (await a.queue.wait(fourth)).status == "success"
        assert await status(pg_url, third) is None
        states = [s async for s in a.state.saver.alist({"configurable": {"thread_id": "t1"}})]
        assert {s.metadata.get("run_id") for s in states} & {third} == set()
        row = await thread_row(pg_url, "t1")
        assert row["status"] == "idle"
        statuses = [r.status for r in await b.state.records.runs_of("t1")]
        assert statuses == ["interrupted", "interrupted", "success", "success"]


async def wait_on_a_new_host(state: Any, pg_url: str, run_id: str) -> Any:
    """A host that starts now (on `state`, with a queue of its own) takes the run: its outcome."""
    async with anyio.create_task_group() as tg:
        c = Host(state, ClusterQueue(state, pg_url, lease=1.0, heartbeat=0.25, reaper=0.3,
                                     poll=0.3))
        tg.start_soon(serve, c)
        outcome = await c.queue.wait(run_id)
        tg.cancel_scope.cancel()
    await c.queue.close()
    return outcome


async def test_a_dead_hosts_run_resumes_elsewhere_without_rerunning_finished_steps(
    pg_url: str,
) -> None:
    async with hosts(pg_url) as (a, b):
        b.scope.cancel()  # b starts later: a takes the run
        await anyio.sleep(0.1)
        HELD.add("d1")
        run_id = await start(a, "d1", "t1")
        await until(lambda: ran("d1 slow"))
        a.scope.cancel()  # host a dies: no finish, no release; its lease lapses
        await anyio.sleep(0.1)
        HELD.clear()
        outcome = await wait_on_a_new_host(b.state, pg_url, run_id)
        assert outcome is not None and outcome.status == "success"
        assert outcome.values["log"] == ["one", "slow", "three"]
        assert RAN.count("d1 one") == 1  # the finished step ran once, on the dead host
        assert RAN.count("d1 slow") == 2 and RAN.count("d1 three") == 1
        [row] = await rows(pg_url, "SELECT attempt FROM server_runs")
        assert row["attempt"] == 2


async def test_drain_hands_the_run_to_another_host_without_spending_an_attempt(
    pg_url: str,
) -> None:
    async with hosts(pg_url) as (a, b):
        b.scope.cancel()
        await anyio.sleep(0.1)
        HELD.add("r1")
        run_id = await start(a, "r1", "t1")
        await until(lambda: ran("r1 slow"))
        await a.queue.drain(0.2)
        assert await status(pg_url, run_id) == "pending"
        assert RAN.count("r1 slow") == 1
        HELD.clear()
        outcome = await wait_on_a_new_host(b.state, pg_url, run_id)
        assert outcome is not None and outcome.status == "success"
        assert RAN.count("r1 one") == 1
        [row] = await rows(pg_url, "SELECT attempt FROM server_runs")
        assert row["attempt"] == 1


async def test_a_pending_run_cancelled_from_another_host_ends_at_once(pg_url: str) -> None:
    async with hosts(pg_url) as (a, b):
        run_id = await start(a, "p1", "t1", after_seconds=30)
        assert await status(pg_url, run_id) == "pending"
        with anyio.fail_after(2):
            await b.queue.cancel(run_id, "interrupt")
            outcome = await a.queue.wait(run_id)
        assert outcome is not None and outcome.status == "interrupted"
        assert await status(pg_url, run_id) == "interrupted"
        assert (await thread_row(pg_url, "t1"))["status"] == "idle"
        assert RAN == []


async def test_stateless_runs_stay_on_the_receiving_host(pg_url: str) -> None:
    async with hosts(pg_url) as (a, b):
        r = run("none", input={"tag": "s1"})
        await a.queue.create(r, None)
        assert b.queue.stateless(r.run_id) is None
        outcome = await a.queue.wait(r.run_id)
        assert outcome is not None and outcome.status == "success"
        assert await status(pg_url, r.run_id) is None  # never in the database
        assert RAN == ["s1 one", "s1 slow", "s1 three"]


async def test_a_node_blocking_the_event_loop_past_its_lease_is_not_run_again(pg_url: str) -> None:
    async with hosts(pg_url) as (a, b):
        stop = threading.Event()
        reaped: list[Any] = []
        other = threading.Thread(target=lambda: asyncio.run(_reap_until(pg_url, stop, reaped)))
        other.start()  # a third host on its own loop: it reaps while our loop is stuck
        try:
            t = msgspec.structs.replace(thread("t1"), metadata={"graph_id": "agent"})
            r = run("t1", input={"tag": "b1", "block": 3.5})  # 3.5 leases of 1 s
            await a.queue.create(r, t)
            outcome = await b.queue.wait(r.run_id)
        finally:
            stop.set()
            other.join()
        assert reaped and not any(found.requeued for found in reaped)
        assert outcome is not None and outcome.status == "success"
        assert RAN == ["b1 one", "b1 slow", "b1 three"]
        assert await a.queue.attempt(r.run_id) == 1


async def _reap_until(url: str, stop: threading.Event, reaped: list[Any]) -> None:
    async with ledger(url, "other", lease=1.0) as book:
        while not stop.is_set():
            found = await book.reap(now())
            if found is not None:
                reaped.append(found)
            await asyncio.sleep(0.2)


async def test_a_failing_graph_ends_run_and_thread_in_error_with_one_error_event(
    pg_url: str,
) -> None:
    async with hosts(pg_url) as (a, b):
        b.scope.cancel()  # a runs it: its local stream is the one we read
        await anyio.sleep(0.1)
        t = msgspec.structs.replace(thread("t1"), metadata={"graph_id": "agent"})
        r = run("t1", input={"tag": "f1", "fail": True})
        _, subscription = await a.queue.create(r, t, subscribe=True)
        names = []
        with anyio.fail_after(10):
            async for _key, name, _frame in subscription:
                names.append(name)
        outcome = await b.queue.wait(r.run_id)
        assert outcome is not None and outcome.status == "error"
        assert outcome.error == {"error": "ValueError", "message": "boom from three"}
        assert names.count("error") == 1 and names[0] == "metadata"
        row = await thread_row(pg_url, "t1")
        assert row["status"] == "error" and "boom from three" in row["body"]


async def test_a_run_deleted_while_running_releases_its_waiters_and_stream(pg_url: str) -> None:
    async with hosts(pg_url) as (a, b):
        b.scope.cancel()
        await anyio.sleep(0.1)
        HELD.add("x1")
        t = msgspec.structs.replace(thread("t1"), metadata={"graph_id": "agent"})
        r = run("t1", input={"tag": "x1"})
        _, subscription = await a.queue.create(r, t, subscribe=True)
        await until(lambda: ran("x1 slow"))
        await rows(pg_url, "DELETE FROM server_runs WHERE run_id = $1", r.run_id)
        HELD.clear()
        with anyio.fail_after(5):
            async for _ in subscription:
                pass
            assert await a.queue.wait(r.run_id) is None


async def test_a_run_whose_last_attempt_dies_ends_in_error_and_frees_its_thread(
    pg_url: str,
) -> None:
    async with hosts(pg_url) as (a, b):
        b.scope.cancel()
        await anyio.sleep(0.1)
        HELD.add("e1")
        run_id = await start(a, "e1", "t1")
        await until(lambda: ran("e1 slow"))
        await rows(pg_url, "UPDATE server_runs SET attempt = 3 WHERE run_id = $1", run_id)
        a.scope.cancel()  # the third attempt's host dies

        async def values_read_back() -> bool:
            # The status changed with the run (one transaction); the values the checkpoints
            # hold are written right after, by the reaping host (a poll may wake us between).
            found = await b.state.records.get_thread("t1")
            values = await values_of(b.state, found)  # named by checkpoint (issue 32)
            return found.status == "error" and (values or {}).get("log") == ["one"]

        async with anyio.create_task_group() as tg:
            c = Host(b.state, ClusterQueue(b.state, pg_url, lease=1.0, heartbeat=0.25,
                                           reaper=0.3, poll=0.3))
            tg.start_soon(serve, c)
            with anyio.fail_after(10):
                outcome = await c.queue.wait(run_id)
            found = await b.state.records.get_thread("t1")
            await until(values_read_back, timeout=5)
            tg.cancel_scope.cancel()
        await c.queue.close()
        assert outcome is not None and outcome.status == "error"
        assert outcome.error["error"] == "RunAttemptsExhausted"
        assert found.status == "error" and found.error["error"] == "RunAttemptsExhausted"
        assert RAN.count("e1 one") == 1 and "e1 three" not in RAN


async def test_works_behind_pgbouncer_in_transaction_mode(pg_url: str, pgbouncer: Any) -> None:
    url = pgbouncer.url(pg_url.rsplit("/", 1)[1])
    async with hosts(url, prepared_statements=False) as (a, b):
        HELD.add("first")
        first = await start(a, "first", "t1")
        await until(lambda: ran("first slow"))
        with pytest.raises(Conflict):
            await start(b, "rejected", "t1", "reject")
        second = await start(b, "second", "t2")
        HELD.clear()
        assert (await b.queue.wait(first)).status == "success"
        assert (await a.queue.wait(second)).status == "success"
