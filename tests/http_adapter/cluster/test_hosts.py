"""Several `graphrun serve` processes on one PostgreSQL database and Redis (issue 19, "Proof").

Real processes, real SIGKILL and SIGTERM, real PostgreSQL and Redis from Debian's packages.
Leases are short here (`--lease-seconds`) so a dead host's runs come back within seconds.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import asyncpg
import httpx
import pytest

from tests.services import RedisServer

from .hosts import Hosts, log_lines, wait_until

# Fast leases and reaping for tests; production defaults are 30 s / 5 s.
FAST = ["--lease-seconds", "2", "--reaper-seconds", "0.5", "--drain-grace", "1"]


@pytest.fixture
def hosts(tmp_path: Path, pg_url: str, redis_url: str) -> Iterator[Hosts]:
    made = Hosts(tmp_path, pg_url, redis_url, FAST)
    yield made
    made.close()


def _run(client: httpx.Client, tag: str, assistant: str = "agent", **body: Any) -> dict[str, Any]:
    thread_id = client.post("/threads", json={}).json()["thread_id"]
    response = client.post(f"/threads/{thread_id}/runs", json={
        "assistant_id": assistant, "input": {"tag": tag, "log": []}, **body,
    })
    assert response.status_code == 200, response.text
    return response.json()


def _path(run: dict[str, Any]) -> str:
    return f"/threads/{run['thread_id']}/runs/{run['run_id']}"


def _started(project: Path, tags: list[str]) -> bool:
    begun = {line[0] for line in log_lines(project) if line[1] == "slow-start"}
    return set(tags) <= begun


def _count(project: Path, what: str) -> int:
    return sum(1 for line in log_lines(project) if line[1] == what)


def _each_event(response: httpx.Response) -> Iterator[tuple[str | None, str, str]]:
    """(id, event, data) of an SSE response, as they come."""
    event_id, name, data = None, None, ""
    for line in response.iter_lines():
        if line.startswith("id: "):
            event_id = line[4:]
        elif line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data = line[6:]
        elif line == "" and name is not None:
            yield event_id, name, data
            event_id, name, data = None, None, ""


def _events(response: httpx.Response, until: str | None = None) -> list[tuple[str | None, str]]:
    """(id, event) pairs of an SSE response, in order; stops after an event whose data
    contains `until`, if given."""
    out = []
    for event_id, name, data in _each_event(response):
        out.append((event_id, name))
        if until is not None and until in data:
            break
    return out


def _entry(event_id: str) -> tuple[int, int]:
    """A Redis stream id `<ms>-<n>` as numbers (n is the run's gap-free event counter)."""
    ms, _, n = event_id.partition("-")
    return int(ms), int(n)


def test_a_run_created_on_one_host_is_joined_and_cancelled_from_another(hosts: Hosts) -> None:
    """Mutation-checked: with ClusterQueue.cancel's running branch a no-op (no flag read back
    and no signal), B's `cancel?wait=true` times out."""
    a, b = hosts.start(2)
    with a.client() as on_a, b.client() as on_b:
        run = _run(on_a, "x", "agent_async", stream_mode=["updates"], stream_resumable=True)
        path = _path(run)
        wait_until(lambda: _started(hosts.project, ["x"]), what="the slow node")
        seen: list[str] = []

        def join() -> None:  # from the start: what A published so far, then live
            with httpx.Client(base_url=b.url, timeout=30) as client:
                with client.stream("GET", f"{path}/stream",
                                   headers={"Last-Event-ID": "-1"}) as response:
                    for _, name, _ in _each_event(response):
                        seen.append(name)

        joiner = threading.Thread(target=join)
        joiner.start()
        wait_until(lambda: len(seen) == 2, what="the joined stream's first events")
        began = time.monotonic()
        cancelled = on_b.post(f"{path}/cancel", params={"wait": "true"}, timeout=15)
        took = time.monotonic() - began
        assert cancelled.status_code == 200, cancelled.text
        joiner.join(20)
        assert not joiner.is_alive(), "the joined stream did not end after the cancel"
        assert seen == ["metadata", "updates"]  # `first`'s, then nothing
        assert took < 10, f"cancel took {took:.1f} s"
        assert on_a.get(path).json()["status"] == "interrupted"
        assert on_b.get(f"/threads/{run['thread_id']}").json()["status"] != "busy"
    # the slow node never finished and the run was not retried anywhere
    assert [line[1] for line in log_lines(hosts.project)] == ["first", "slow-start"]


def test_a_cancel_from_another_host_stops_a_sync_node_run_at_once(hosts: Hosts) -> None:
    """A sync graph runs in a worker thread the engine abandons on a cancel (as LangGraph):
    B's `cancel?wait=true` answers while the node still blocks, the node finishes in the
    background with its result dropped, and `last` never runs. Mutation-checked: with the
    engine waiting for the worker thread (`_worker.in_worker_thread` without `abandon`) the
    cancel waits for `go` and times out."""
    a, b = hosts.start(2)
    with a.client() as on_a, b.client() as on_b:
        run = _run(on_a, "y")
        wait_until(lambda: _started(hosts.project, ["y"]), what="the slow node")
        began = time.monotonic()
        cancelled = on_b.post(f"{_path(run)}/cancel", params={"wait": "true"}, timeout=15)
        took = time.monotonic() - began
        assert cancelled.status_code == 200, cancelled.text
        assert took < 10, f"cancel took {took:.1f} s"
        assert on_b.get(_path(run)).json()["status"] == "interrupted"
        assert _count(hosts.project, "slow-done") == 0  # answered while the node blocks
        state = on_b.get(f"/threads/{run['thread_id']}/state").json()
        hosts.go()
        wait_until(lambda: _count(hosts.project, "slow-done") == 1, what="the node to return")
        time.sleep(1)  # time for a run that was not really stopped to save or go on
        assert on_b.get(f"/threads/{run['thread_id']}/state").json() == state
        assert state["values"]["log"] == ["first"] and state["next"] == ["slow"]
    assert [line[1] for line in log_lines(hosts.project)] == ["first", "slow-start", "slow-done"]


def test_sigkill_of_a_host_with_runs_in_flight_finishes_each_run_once(hosts: Hosts) -> None:
    """Each run resumes once on the other host; one cancelled after its host died is ended by
    the reaper, never retried. Mutation-checked: resuming without the last checkpoint
    (`claimed_before` ignored) runs `first` twice; a reaper requeueing cancelled runs makes
    the dropped run's attempt 2."""
    (a,) = hosts.start(1)
    tags = [f"r{i}" for i in range(3)]
    with a.client() as on_a:
        runs = [_run(on_a, tag) for tag in [*tags, "dropped"]]
    wait_until(lambda: _started(hosts.project, [*tags, "dropped"]),
               what="every run inside its slow node")
    (b,) = hosts.start(1)
    a.kill()
    with b.client() as on_b:
        dropped = runs.pop()
        cancelled = on_b.post(f"{_path(dropped)}/cancel", params={"wait": "true"}, timeout=15)
        assert cancelled.status_code == 200, cancelled.text
        record = on_b.get(_path(dropped)).json()
        assert record["status"] == "interrupted"
        assert record["kwargs"]["config"]["metadata"]["run_attempt"] == 1  # not claimed again
        assert on_b.get(f"/threads/{dropped['thread_id']}").json()["status"] != "busy"
        hosts.go()
        for run in runs:
            joined = on_b.get(f"{_path(run)}/join").json()
            assert joined["log"] == ["first", "slow", "last"]  # every step's output once
            record = on_b.get(_path(run)).json()
            assert record["status"] == "success"
            assert record["kwargs"]["config"]["metadata"]["run_attempt"] == 2
            assert on_b.get(f"/threads/{run['thread_id']}").json()["status"] == "idle"
    counts = Counter((line[0], line[1]) for line in log_lines(hosts.project))
    for tag in tags:
        assert counts[(tag, "first")] == 1  # a finished step is not run again
        assert counts[(tag, "slow-start")] == 2  # the killed attempt, then the retry
        assert counts[(tag, "last")] == 1
    assert counts[("dropped", "slow-start")] == 1  # a cancelled run is not retried


def test_a_rolling_restart_loses_no_run_and_spends_no_attempt(hosts: Hosts) -> None:
    """SIGTERM: host0 drains (1 s), stops its attempts and gives the runs back; host1 resumes
    them after `first`. Both attempts stop at once (the sync node's thread is abandoned and
    runs on in the background), and the stale attempt writes nothing the thread shows.
    Mutation-checked: `release` without `attempt - 1`, or a stopped attempt waiting for the
    drain's end to be released (its lease lapses meanwhile), makes run_attempt 2."""
    (a,) = hosts.start(1)
    with a.client() as on_a:
        runs = [_run(on_a, "s0", "agent_async"), _run(on_a, "s1", "agent")]
    wait_until(lambda: _started(hosts.project, ["s0", "s1"]),
               what="both runs inside their slow node")
    (b,) = hosts.start(1)
    a.signal_term()
    wait_until(lambda: _count(hosts.project, "slow-start") == 4,
               what="host1 to take the released runs")
    hosts.go()
    assert a.proc.wait(30) == 0
    with b.client() as on_b:
        for run in runs:
            assert on_b.get(f"{_path(run)}/join").json()["log"] == ["first", "slow", "last"]
            record = on_b.get(_path(run)).json()
            assert record["status"] == "success"
            assert record["kwargs"]["config"]["metadata"]["run_attempt"] == 1
            state = on_b.get(f"/threads/{run['thread_id']}/state").json()
            assert state["values"]["log"] == ["first", "slow", "last"] and state["next"] == []
    counts = Counter((line[0], line[1]) for line in log_lines(hosts.project))
    assert all(counts[(tag, "first")] == 1 and counts[(tag, "last")] == 1
               for tag in ("s0", "s1"))


def test_redis_killed_mid_run_runs_still_finish_and_streams_resume(
    tmp_path: Path, pg_url: str, own_redis: RedisServer
) -> None:
    """While Redis is down a run finishes and another is cancelled from B (its owner reads the
    flag in its heartbeat). Mutation-checked: without the queue's database poll
    (`_wait_signal` waiting for the signal only) the join on B never returns; without the
    heartbeat's cancel read-back (`on_cancel` a no-op) the cancel on B times out."""
    redis = own_redis
    made = Hosts(tmp_path, pg_url, redis.url, FAST)
    try:
        a, b = made.start(2)
        with a.client() as on_a, b.client() as on_b:
            run = _run(on_a, "k", stream_mode=["updates"], stream_resumable=True)
            doomed = _run(on_a, "c", "agent_async")
            path = _path(run)
            wait_until(lambda: _started(made.project, ["k", "c"]), what="the slow nodes")
            with on_b.stream("GET", f"{path}/stream", headers={"Last-Event-ID": "-1"}) as first:
                before = _events(first, until='"first"')  # everything before the slow node
            assert [name for _, name in before] == ["metadata", "updates"]
            redis.halt()
            cancelled = on_b.post(f"{_path(doomed)}/cancel", params={"wait": "true"}, timeout=15)
            assert cancelled.status_code == 200, cancelled.text
            assert on_b.get(_path(doomed)).json()["status"] == "interrupted"
            made.go()
            # completion comes through the database poll while Redis is down
            joined = on_b.get(f"{path}/join", timeout=30).json()
            assert joined["log"] == ["first", "slow", "last"]
            redis.start()  # empty: what was in it is gone; the hosts re-send what they held
            last = before[-1][0]
            assert last is not None
            with on_b.stream("GET", f"{path}/stream", headers={"Last-Event-ID": last}) as resumed:
                after = _events(resumed)
        counters = [_entry(event_id)[1] for event_id, _ in after if event_id]
        assert counters == list(range(_entry(last)[1] + 1, _entry(last)[1] + 1 + len(counters)))
        assert [name for _, name in after] == ["updates", "updates"]  # slow, then last
        assert [line[1] for line in log_lines(made.project) if line[0] == "c"] == [
            "first", "slow-start"]
    finally:
        made.close()


def _versions(url: str) -> dict[str, int]:
    async def read() -> dict[str, int]:
        conn = await asyncpg.connect(url)
        try:
            rows = await conn.fetch("SELECT component, version FROM graphrun_schema")
        finally:
            await conn.close()
        return {row["component"]: row["version"] for row in rows}

    return anyio.run(read)


def test_five_hosts_started_together_on_an_empty_database_migrate_once(
    hosts: Hosts, pg_url: str
) -> None:
    """Mutation-checked: without the advisory lock in `migrate`, hosts die on duplicate
    CREATE TABLE (pg_type unique violations)."""
    started = hosts.start(5)
    for host in started:
        with host.client() as client:
            assert client.get("/ok").status_code == 200
            run = client.post("/runs/wait", json={"assistant_id": "quick",
                                                  "input": {"tag": host.name}})
            assert run.status_code == 200 and run.json()["log"] == ["quick"], run.text
    assert set(_versions(pg_url)) >= {"server", "checkpoints", "store"}
    for host in started:
        text = host.log_path.read_text()
        assert "Traceback" not in text and "ERROR" not in text, text[-2000:]


@pytest.mark.timeout(100)  # waits for the next minute boundary (at most 60 s)
def test_a_one_minute_cron_over_three_hosts_fires_once_a_minute(hosts: Hosts) -> None:
    """The host the cron was created on dies; the other two learn of it (their schedulers
    rescan the shared records) and wake at the boundary; one fires. Mutation-checked: a
    plain `put_extra` instead of the compare-and-set fires it 3 times (with every host
    alive; twice here), and without the rescan it never fires."""
    first, second, _ = hosts.start(3)
    now = datetime.now(UTC).second
    if now >= 52:  # leave the other hosts a rescan (5 s) to learn of it before the boundary
        time.sleep(60.5 - now)
    with first.client() as client:
        thread_id = client.post("/threads", json={}).json()["thread_id"]
        cron = client.post(f"/threads/{thread_id}/runs/crons", json={
            "assistant_id": "quick", "schedule": "* * * * *", "input": {"tag": "cron"},
        })
        assert cron.status_code == 200, cron.text
    first.kill()
    wait_until(lambda: any(line[0] == "cron" for line in log_lines(hosts.project)),
               timeout=70, what="the cron to fire at the next minute")
    time.sleep(3)  # the other host fires at the same instant, if at all
    with second.client() as client:
        runs = client.get(f"/threads/{thread_id}/runs").json()
    fired = [line for line in log_lines(hosts.project) if line[0] == "cron"]
    assert len(runs) == 1 and len(fired) == 1, (runs, fired)
