"""Several `graphrun serve` processes on one PostgreSQL database and Redis (issue 19, "Proof").

Real processes, real SIGKILL and SIGTERM, real PostgreSQL and Redis from Debian's packages.
Leases are short here (`--lease-seconds`) so a dead host's runs come back within seconds.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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


def _run(client: httpx.Client, tag: str, **body: Any) -> dict[str, Any]:
    thread_id = client.post("/threads", json={}).json()["thread_id"]
    response = client.post(f"/threads/{thread_id}/runs", json={
        "assistant_id": "agent", "input": {"tag": tag, "log": []}, **body,
    })
    assert response.status_code == 200, response.text
    return response.json()


def _started(project: Path, tags: list[str]) -> bool:
    begun = {line[0] for line in log_lines(project) if line[1] == "slow-start"}
    return set(tags) <= begun


def _events(response: httpx.Response) -> list[tuple[str | None, str]]:
    """(id, event) pairs of an SSE response, in order."""
    out, event_id, name = [], None, None
    for line in response.iter_lines():
        if line.startswith("id: "):
            event_id = line[4:]
        elif line.startswith("event: "):
            name = line[7:]
        elif line == "" and name is not None:
            out.append((event_id, name))
            event_id, name = None, None
    return out


def test_a_run_created_on_one_host_is_joined_and_cancelled_from_another(hosts: Hosts) -> None:
    a, b = hosts.start(2)
    with a.client() as on_a, b.client() as on_b:
        run = _run(on_a, "x", stream_mode=["updates"])
        path = f"/threads/{run['thread_id']}/runs/{run['run_id']}"
        wait_until(lambda: _started(hosts.project, ["x"]), what="the slow node")
        seen: list[tuple[str | None, str]] = []

        def join() -> None:
            with httpx.Client(base_url=b.url, timeout=30) as client:
                with client.stream("GET", f"{path}/stream") as response:
                    seen.extend(_events(response))

        joiner = threading.Thread(target=join)
        joiner.start()
        cancelled = on_b.post(f"{path}/cancel", params={"wait": "true"})
        assert cancelled.status_code in (200, 202, 204), cancelled.text
        joiner.join(20)
        assert not joiner.is_alive(), "the joined stream did not end after the cancel"
        assert on_a.get(path).json()["status"] == "interrupted"
        assert on_b.get(f"/threads/{run['thread_id']}").json()["status"] != "busy"
    # the slow node never finished and the run was not retried anywhere
    assert not [line for line in log_lines(hosts.project) if line[1] in ("slow-done", "last")]


def test_sigkill_of_a_host_with_runs_in_flight_finishes_each_run_once(hosts: Hosts) -> None:
    (a,) = hosts.start(1)
    tags = [f"r{i}" for i in range(3)]
    with a.client() as on_a:
        runs = [_run(on_a, tag) for tag in tags]
    wait_until(lambda: _started(hosts.project, tags), what="every run inside its slow node")
    (b,) = hosts.start(1)
    a.kill()
    hosts.go()
    with b.client() as on_b:
        for run in runs:
            joined = on_b.get(f"/threads/{run['thread_id']}/runs/{run['run_id']}/join").json()
            assert joined["log"] == ["first", "slow", "last"]  # every step's output once
            record = on_b.get(f"/threads/{run['thread_id']}/runs/{run['run_id']}").json()
            assert record["status"] == "success"
            assert on_b.get(f"/threads/{run['thread_id']}").json()["status"] == "idle"
    counts = Counter((line[0], line[1]) for line in log_lines(hosts.project))
    for tag in tags:
        assert counts[(tag, "first")] == 1  # a finished step is not run again
        assert counts[(tag, "slow-start")] == 2  # the killed attempt, then the retry
        assert counts[(tag, "last")] == 1


def test_a_rolling_restart_loses_no_run_and_spends_no_attempt(hosts: Hosts) -> None:
    (a,) = hosts.start(1)
    tags = [f"s{i}" for i in range(2)]
    with a.client() as on_a:
        runs = [_run(on_a, tag) for tag in tags]
    wait_until(lambda: _started(hosts.project, tags), what="both runs inside their slow node")
    (b,) = hosts.start(1)
    assert a.terminate() == 0  # drains for 1 s, then gives its runs back
    wait_until(lambda: sum(1 for line in log_lines(hosts.project) if line[1] == "slow-start") == 4,
               what="host1 to take the released runs")
    hosts.go()
    with b.client() as on_b:
        for run in runs:
            path = f"/threads/{run['thread_id']}/runs/{run['run_id']}"
            assert on_b.get(f"{path}/join").json()["log"] == ["first", "slow", "last"]
            record = on_b.get(path).json()
            assert record["status"] == "success"
            assert record["kwargs"]["config"]["metadata"]["run_attempt"] == 1


def test_redis_killed_mid_run_runs_still_finish_and_streams_resume(
    tmp_path: Path, pg_url: str
) -> None:
    redis = RedisServer().start()
    made = Hosts(tmp_path, pg_url, redis.url, FAST)
    try:
        a, b = made.start(2)
        with a.client() as on_a, b.client() as on_b:
            run = _run(on_a, "k", stream_mode=["updates", "custom"], stream_resumable=True)
            path = f"/threads/{run['thread_id']}/runs/{run['run_id']}"
            wait_until(lambda: _started(made.project, ["k"]), what="the slow node")
            with on_b.stream("GET", f"{path}/stream", headers={"Last-Event-ID": "-1"}) as first:
                before = []
                for line in first.iter_lines():
                    if line.startswith("id: "):
                        before.append(line[4:])
                        break
            redis.halt()
            made.go()
            # completion comes through the database poll while Redis is down
            joined = on_b.get(f"{path}/join", timeout=30).json()
            assert joined["log"] == ["first", "slow", "last"]
            redis.start()
            with on_b.stream("GET", f"{path}/stream",
                             headers={"Last-Event-ID": before[-1]}) as resumed:
                after = _events(resumed)
        ids = [event_id for event_id, _ in after if event_id]
        assert ids == sorted(set(ids)) and all(i > before[-1] for i in ids)
        assert any(name == "updates" for _, name in after)
    finally:
        made.close()
        redis.stop()


def test_a_one_minute_cron_over_three_hosts_fires_once_a_minute(hosts: Hosts) -> None:
    first, *_ = hosts.start(3)
    with first.client() as client:
        thread_id = client.post("/threads", json={}).json()["thread_id"]
        cron = client.post(f"/threads/{thread_id}/runs/crons", json={
            "assistant_id": "quick", "schedule": "* * * * *", "input": {"tag": "cron"},
        })
        assert cron.status_code == 200, cron.text
        minute = datetime.now(UTC).replace(second=0, microsecond=0)
        wait_until(lambda: datetime.now(UTC).minute != minute.minute
                   and datetime.now(UTC).second >= 8, timeout=75, what="the next minute")
        runs = client.get(f"/threads/{thread_id}/runs").json()
    fired = [line for line in log_lines(hosts.project) if line[0] == "cron"]
    assert len(runs) == 1 and len(fired) == 1, (runs, fired)
