"""A PostgreSQL outage and a Redis restart under load leave every host serving (issue 26 §1).

Two real `graphrun serve` hosts on a PostgreSQL and a Redis of this test's own. Runs are held in
flight on both hosts and a client keeps creating more while PostgreSQL is stopped for longer
than the cron scheduler's rescan (so every host's scheduler reads the database during it), then
Redis is restarted empty. Before the fix, the scheduler's failed read ended each host's
background task group: records, saver and queue closed, every database route answered 500 for
good, `/ok` answered 200, and the runs in flight stayed `running`.

Every host must answer `/ok` 503 naming the database during the outage and 200 by itself after;
every run accepted must end (success, or an error with its cause) and no thread stay busy; new
runs must execute on every host.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.services import PostgresServer, RedisServer, ServiceMissing

from .hosts import Host, Hosts, log_lines, wait_until

FAST = ["--lease-seconds", "2", "--reaper-seconds", "0.5", "--drain-grace", "1"]
OUTAGE = 6.0  # seconds: longer than the cron scheduler's 5 s rescan (app._CRON_RESCAN)
ENDED = ("success", "error", "interrupted")


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL for this test alone (it stops and restarts it: `halt`, `resume`)."""
    try:
        server = PostgresServer()
    except ServiceMissing as error:
        pytest.skip(str(error))
    with server:
        yield server


class Creator:
    """A client creating a background run every few tens of ms, alternating hosts, until
    stopped; keeps the runs that were accepted. A refusal must be a 503, never a 500."""

    def __init__(self, hosts: list[Host]) -> None:
        self.hosts = hosts
        self.accepted: list[tuple[str, str, str]] = []  # (host url, thread id, run id)
        self.refused = 0
        self.errors: list[str] = []
        self.stop = threading.Event()
        self._thread = threading.Thread(target=self._main)

    def __enter__(self) -> Creator:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self._thread.join(30)

    def _main(self) -> None:
        for index in itertools.count():
            if self.stop.wait(0.05):
                return
            host = self.hosts[index % len(self.hosts)]
            try:
                self._one(host.url, f"c{index}")
            except httpx.HTTPError as error:  # a timeout would be a hung request: reported
                self.errors.append(f"c{index}: {error!r}")

    def _one(self, url: str, tag: str) -> None:
        with httpx.Client(base_url=url, timeout=30) as client:
            made = client.post("/threads", json={})
            if made.status_code != 200:
                self._refused(tag, made)
                return
            thread_id = made.json()["thread_id"]
            run = client.post(f"/threads/{thread_id}/runs",
                              json={"assistant_id": "quick", "input": {"tag": tag, "log": []}})
            if run.status_code != 200:
                self._refused(tag, run)
                return
            self.accepted.append((url, thread_id, run.json()["run_id"]))

    def _refused(self, tag: str, answer: httpx.Response) -> None:
        if answer.status_code != 503 or not answer.json().get("detail"):
            self.errors.append(f"{tag}: {answer.status_code} {answer.text[:200]}")
        self.refused += 1


def _ok(host: Host) -> httpx.Response:
    return httpx.get(f"{host.url}/ok", timeout=10)


def _run_status(url: str, thread_id: str, run_id: str) -> str:
    answer = httpx.get(f"{url}/threads/{thread_id}/runs/{run_id}", timeout=10)
    if answer.status_code != 200:
        return f"http {answer.status_code}"
    return str(answer.json()["status"])


def _held_runs(hosts: list[Host], per_host: int) -> list[tuple[str, str, str]]:
    """Runs of the `agent` graph on every host, each waiting in its slow node (no `go` yet)."""
    held = []
    for index in range(per_host * len(hosts)):
        url = hosts[index % len(hosts)].url
        with httpx.Client(base_url=url, timeout=10) as client:
            thread_id = client.post("/threads", json={}).json()["thread_id"]
            run = client.post(f"/threads/{thread_id}/runs", json={
                "assistant_id": "agent", "input": {"tag": f"h{index}", "log": []}}).json()
            held.append((url, thread_id, run["run_id"]))
    return held


@pytest.mark.timeout(120)
def test_postgres_outage_and_redis_restart_under_load_leave_every_host_serving(
    tmp_path: Path, own_postgres: PostgresServer, own_redis: RedisServer
) -> None:
    made = Hosts(tmp_path, own_postgres.new_database(), own_redis.url, FAST)
    hosts = made.start(2)
    try:
        held = _held_runs(hosts, per_host=2)
        wait_until(lambda: sum(line[1] == "slow-start" for line in log_lines(made.project))
                   == len(held), what="the held runs to be in their slow node")
        with Creator(hosts) as creator:
            wait_until(lambda: len(creator.accepted) >= 4, what="runs created under load")
            own_postgres.halt()
            down = time.monotonic()
            for host in hosts:  # unhealthy, naming the database
                wait_until(lambda: _ok(host).status_code == 503, what=f"{host.name} /ok 503")
                body = _ok(host).json()
                assert body["ok"] is False and body["services"]["postgres"] == "unavailable"
                assert "postgres" in body["detail"], body
            time.sleep(max(0.0, OUTAGE - (time.monotonic() - down)))  # the outage's length
            failing = [_ok(host).json().get("failing", {}) for host in hosts]
            assert all("cron scheduler" in f for f in failing), failing  # the path was taken
            own_postgres.resume()
            wait_until(lambda: all(_ok(host).status_code == 200 for host in hosts),
                       timeout=30, what="every host healthy again")
            made.go()  # the held runs go on
            own_redis.halt()  # and Redis restarts, empty, while runs go on
            own_redis.start()
            before = len(creator.accepted)
            wait_until(lambda: len(creator.accepted) >= before + 4,
                       what="runs created after the outage")
        assert creator.refused >= 1 and not creator.errors, (creator.refused, creator.errors)
        runs = held + creator.accepted
        wait_until(lambda: all(_run_status(*run) in ENDED for run in runs), timeout=45,
                   what="every run to end")
        for url, thread_id, run_id in runs:
            _check_ended(url, thread_id, run_id)
        _check_serving(hosts)
    finally:
        made.close()


def _check_ended(url: str, thread_id: str, run_id: str) -> None:
    """The run ended in success, or in error with its cause; its thread is not busy."""
    with httpx.Client(base_url=url, timeout=10) as client:
        status = client.get(f"/threads/{thread_id}/runs/{run_id}").json()["status"]
        thread = client.get(f"/threads/{thread_id}").json()
        assert thread["status"] != "busy", thread
        if status != "success":
            joined = client.get(f"/threads/{thread_id}/runs/{run_id}/join").json()
            assert joined.get("__error__", {}).get("message"), (status, joined)


def _check_serving(hosts: list[Host]) -> None:
    """New runs execute on every host; every database route answers."""
    for index, host in enumerate(hosts):
        with host.client() as client:
            thread_id = client.post("/threads", json={}).raise_for_status().json()["thread_id"]
            values = client.post(f"/threads/{thread_id}/runs/wait", json={
                "assistant_id": "agent", "input": {"tag": f"after{index}", "log": []}}
            ).raise_for_status().json()
            assert values["log"] == ["first", "slow", "last"], values
            assert client.post("/threads/search", json={}).status_code == 200
            assert "background tasks stopped" not in host.log_path.read_text()
