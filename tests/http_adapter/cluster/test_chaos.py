"""Redis holds nothing that cannot be lost (issue 19 §1): two real `graphrun serve` hosts on one
PostgreSQL and one Redis, 30 short runs in flight from six client threads (thread and stateless
`/runs/wait`, background + `/join`, `/runs/stream`, a resumable stream joined on the other
host), while Redis is flushed (and every connection to it dropped) every 20 ms, or stopped for
seconds, twice. Every run must end once, in success, each of
its nodes having run once (the graph logs every node to `ran.log`); no thread stays busy; every
stream ends (maybe with fewer events: Redis lost them), none hangs.
"""

from __future__ import annotations

import itertools
import os
import signal
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from redis.asyncio import Redis

from http_adapter.agent_server.broker import Event
from http_adapter.agent_server.cluster.broker import RedisSubscription
from tests.services import RedisServer

from .conftest import brokers
from .hosts import Host, Hosts, log_lines, wait_until

FAST = ["--lease-seconds", "2", "--reaper-seconds", "0.5", "--drain-grace", "1"]
STEPS = ("first", "slow-start", "slow-done", "last")  # the `agent` graph's side effects
WORKERS, PER_WORKER = 6, 5  # 30 runs
# a stream that hangs fails the test here instead of at the 60 s test timeout
CLIENT_TIMEOUT = httpx.Timeout(25.0, connect=5.0)


def _redis(port: int, command: bytes) -> None:
    """One raw command (FLUSHALL) on a fresh connection; Redis down is not an error here."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
            sock.sendall(command + b"\r\n")
            sock.recv(64)
    except OSError:
        pass


def _drain_sse(response: httpx.Response) -> list[str]:
    """Every event name of an SSE response, to its end."""
    assert response.status_code == 200, response.read()
    return [line[7:] for line in response.iter_lines() if line.startswith("event: ")]


class Load:
    """`WORKERS` client threads, each making `PER_WORKER` runs, alternating hosts and kinds."""

    KINDS = ("wait", "background", "stream", "resumable", "stateless")

    def __init__(self, hosts: list[Host]) -> None:
        self.hosts = hosts
        self.runs: dict[str, dict[str, Any]] = {}  # tag -> {kind, thread_id, run_id?, ...}
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._tags = itertools.count()

    def run(self, during: Callable[[threading.Event], None]) -> None:
        """Run the load; `during(done)` runs in this thread until every worker is done."""
        done = threading.Event()
        workers = [threading.Thread(target=self._worker, args=(w,)) for w in range(WORKERS)]
        for worker in workers:
            worker.start()
        chaos = threading.Thread(target=during, args=(done,))
        chaos.start()
        for worker in workers:
            worker.join(50)
        done.set()
        chaos.join(20)
        assert not any(w.is_alive() for w in workers), "a client hung: " + repr(self.errors)
        assert not self.errors, (self.errors, self._tracebacks())

    def _tracebacks(self) -> list[str]:
        """The hosts' logged tracebacks (the cause of a client's error, if a host had one)."""
        return [text[text.index("Traceback") - 200:][:3000] for host in self.hosts
                if "Traceback" in (text := host.log_path.read_text())]

    def _worker(self, index: int) -> None:
        for i in range(PER_WORKER):
            with self._lock:
                tag = f"t{next(self._tags)}"
            kind = self.KINDS[(index + i) % len(self.KINDS)]
            here, there = self.hosts[(index + i) % 2], self.hosts[(index + i + 1) % 2]
            try:
                self._one(tag, kind, here, there)
            except Exception as error:  # noqa: BLE001 - reported by the main thread
                self.errors.append(f"{tag} {kind}: {error!r}")

    def _one(self, tag: str, kind: str, here: Host, there: Host) -> None:
        body = {"assistant_id": "agent", "input": {"tag": tag, "log": []}}
        with httpx.Client(base_url=here.url, timeout=CLIENT_TIMEOUT) as client:
            if kind == "stateless":  # no thread: it runs on the host that got it
                values = client.post("/runs/wait", json=body).raise_for_status().json()
                self.runs[tag] = {"kind": kind, "values": values}
                return
            thread_id = client.post("/threads", json={}).raise_for_status().json()["thread_id"]
            self.runs[tag] = {"kind": kind, "thread_id": thread_id}
            path = f"/threads/{thread_id}/runs"
            if kind == "wait":
                values = client.post(f"{path}/wait", json=body).raise_for_status().json()
                self.runs[tag]["values"] = values
            elif kind == "stream":
                with client.stream("POST", f"{path}/stream",
                                   json={**body, "stream_mode": ["updates"]}) as response:
                    self.runs[tag]["events"] = _drain_sse(response)
            else:
                resumable = kind == "resumable"
                run = client.post(path, json={**body, "stream_mode": ["updates"],
                                              "stream_resumable": resumable}
                                  ).raise_for_status().json()
                self.runs[tag]["run_id"] = run["run_id"]
                if resumable:  # joined on the other host, from the start: it must end
                    with httpx.Client(base_url=there.url, timeout=CLIENT_TIMEOUT) as other:
                        with other.stream("GET", f"{path}/{run['run_id']}/stream",
                                          headers={"Last-Event-ID": "-1"}) as response:
                            self.runs[tag]["events"] = _drain_sse(response)
                values = client.get(f"{path}/{run['run_id']}/join").raise_for_status().json()
                self.runs[tag]["values"] = values

    def check(self, project: Path) -> None:
        """Each run once, in success, each node once; no thread busy; no host hurt."""
        for host in self.hosts:  # first: a host's traceback explains any failure below
            text = host.log_path.read_text()
            assert "Traceback" not in text, text[-3000:]
        assert len(self.runs) == WORKERS * PER_WORKER
        counts = Counter((line[0], line[1]) for line in log_lines(project))
        with httpx.Client(base_url=self.hosts[0].url, timeout=CLIENT_TIMEOUT) as client:
            for tag, seen in self.runs.items():
                for step in STEPS:
                    assert counts[(tag, step)] == 1, (tag, seen["kind"], step, counts)
                if "values" in seen:  # all but the streamed ones
                    assert seen["values"]["log"] == ["first", "slow", "last"], (tag, seen)
                if seen["kind"] == "stateless":
                    continue
                thread_id = seen["thread_id"]
                runs = client.get(f"/threads/{thread_id}/runs").json()
                assert [r["status"] for r in runs] == ["success"], (tag, seen["kind"], runs)
                # Redis has no say in leases: no run was taken up again
                assert runs[0]["kwargs"]["config"]["metadata"]["run_attempt"] == 1, tag
                events = Counter(seen.get("events", ()))  # fewer maybe, never one twice
                assert events["metadata"] <= 1 and events["updates"] <= 3, (tag, seen)
                assert set(events) <= {"metadata", "updates"}, (tag, seen)
                assert client.get(f"/threads/{thread_id}").json()["status"] == "idle", tag
                state = client.get(f"/threads/{thread_id}/state").json()
                assert state["values"]["log"] == ["first", "slow", "last"], (tag, state)
        assert sum(counts.values()) == len(self.runs) * len(STEPS), counts


def _start(tmp_path: Path, pg_url: str, redis_url: str) -> tuple[Hosts, list[Host]]:
    made = Hosts(tmp_path, pg_url, redis_url, FAST)
    made.go()  # the slow node does not wait: three quick steps a run
    return made, made.start(2)


@pytest.mark.timeout(120)  # a loaded machine: the workers' join(50) reports a hang first
def test_flushing_redis_under_load_loses_and_duplicates_no_run(
    tmp_path: Path, pg_url: str, own_redis: RedisServer
) -> None:
    """Mutation-checked: without `down_grace` in RedisSubscription (a read failing forever
    retried forever), streams of finished runs whose end marker was flushed away hang;
    without Signals' _QUIET, each host logs hundreds of 'signals not received'."""
    made, started = _start(tmp_path, pg_url, own_redis.url)
    flushes = 0

    def flush(done: threading.Event) -> None:
        nonlocal flushes
        while not done.wait(0.02):
            _redis(own_redis.port, b"FLUSHALL")
            # and every connection dropped: readers blocked in XREAD fail, again and again
            _redis(own_redis.port, b"CLIENT KILL TYPE normal")
            _redis(own_redis.port, b"CLIENT KILL TYPE pubsub")
            flushes += 1

    try:
        load = Load(started)
        load.run(flush)
        assert flushes >= 5, flushes  # the flushes fell among the runs
        load.check(made.project)
        for host in started:  # dropped connections are told once, not at every reconnect
            assert host.log_path.read_text().count("signals not received") <= 2
    finally:
        made.close()


@pytest.mark.timeout(120)  # a loaded machine: the workers' join(50) reports a hang first
def test_redis_stopped_under_load_loses_and_duplicates_no_run(
    tmp_path: Path, pg_url: str, own_redis: RedisServer
) -> None:
    made, started = _start(tmp_path, pg_url, own_redis.url)

    def outage(done: threading.Event) -> None:
        done.wait(0.5)  # some runs under way
        own_redis.halt()
        time.sleep(3)
        own_redis.start()  # empty, as after a crash
        done.wait(1.0)
        own_redis.halt()  # once more, shorter
        time.sleep(1.5)
        own_redis.start()

    try:
        load = Load(started)
        load.run(outage)
        load.check(made.project)
    finally:
        made.close()


@pytest.mark.timeout(120)  # a loaded machine: the workers' join(50) reports a hang first
def test_redis_hung_under_load_loses_and_duplicates_no_run(
    tmp_path: Path, pg_url: str, own_redis: RedisServer
) -> None:
    """SIGSTOP: Redis accepts nothing and answers nothing for 4 s (no error to react to)."""
    made, started = _start(tmp_path, pg_url, own_redis.url)
    pid = int(own_redis.pidfile.read_text())

    def hang(done: threading.Event) -> None:
        done.wait(0.5)
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(4)
        finally:
            os.kill(pid, signal.SIGCONT)

    try:
        load = Load(started)
        load.run(hang)
        load.check(made.project)
    finally:
        os.kill(pid, signal.SIGCONT)
        made.close()


def test_hosts_started_while_redis_is_down_serve_and_pick_it_up_later(
    tmp_path: Path, pg_url: str, own_redis: RedisServer
) -> None:
    """Redis is not needed to start (its version check is skipped with a warning), runs go
    through the database poll, a stream ends once its run is over; when Redis comes up the
    hosts use it. Mutation-checked: with `_resolved` waiting for the flusher alone, the
    stream of a run created while Redis is down never ends."""
    own_redis.halt()
    made, (a, b) = _start(tmp_path, pg_url, own_redis.url)
    body = {"assistant_id": "agent", "input": {"tag": "d1", "log": []},
            "stream_mode": ["updates"]}
    try:
        with a.client() as on_a, b.client() as on_b:
            assert on_a.get("/ok").json()["services"]["redis"] == "unavailable"
            thread = on_a.post("/threads", json={}).json()["thread_id"]
            with on_b.stream("POST", f"/threads/{thread}/runs/stream", json=body,
                             timeout=CLIENT_TIMEOUT) as response:
                assert set(_drain_sse(response)) <= {"metadata", "updates"}
            assert on_a.get(f"/threads/{thread}/state").json()["values"]["log"] == [
                "first", "slow", "last"]
            own_redis.start()
            wait_until(lambda: all(h.get("/ok").json()["services"]["redis"] == "ok"
                                   for h in (on_a, on_b)), what="Redis seen again")
            with on_a.stream("POST", f"/threads/{thread}/runs/stream", timeout=CLIENT_TIMEOUT,
                             json={**body, "input": {"tag": "d2"}}) as response:
                assert _drain_sse(response) == ["metadata", "updates", "updates", "updates"]
        assert "does not answer; starting without it" in a.log_path.read_text()
        assert [line[0] for line in log_lines(made.project)].count("d1") == 4
    finally:
        made.close()


RUN = "1f0c0000-0000-6000-8000-00000000c4a0"
OTHER = "1f0c0000-0000-6000-8000-00000000c4a1"


async def _read_all(subscription: RedisSubscription, into: list[Event | None]) -> None:
    """Every event into `into`, then None: the subscription ended."""
    async for event in subscription:
        into.append(event)
    into.append(None)


@pytest.mark.anyio
async def test_a_finished_runs_stream_ends_while_redis_stays_down(
    own_redis: RedisServer
) -> None:
    """Reading (XREAD failing) and joining (no stream end to read) alike: the subscription
    ends once the run is over and Redis has been unreachable for `down_grace`; while the run
    is not over it waits (its producer will re-send what it holds). Mutation-checked: with
    `_Unreadable` never raised the join hangs; with `_xread` retrying forever the reader
    does; with `_resolved` waiting for the flusher alone the local stream does."""
    async with brokers(own_redis.url, down_grace=0.5, finish_grace=0.2) as ([a, b], finished):
        a.open(RUN, resumable=True)
        a.publish(RUN, "values", b"{}")
        async with Redis.from_url(own_redis.url) as client:
            with anyio.fail_after(5):
                while not await client.exists(f"graphrun:run:{RUN}"):
                    await anyio.sleep(0.01)
        got: list[Event | None] = []
        joined: list[Event | None] = []
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(_read_all, b.attach(RUN, last_event_id="-1"), got)
                while not got:
                    await anyio.sleep(0.01)
                own_redis.halt()
                await anyio.sleep(1.2)  # > down_grace: the run is not over, the reader waits
                assert len(got) == 1
                finished.runs.add(RUN)
                await _read_all(b.attach(RUN), joined)  # joined while Redis is down: ends
                while len(got) < 2:
                    await anyio.sleep(0.01)
                # a run opened while Redis is down (its stream's end never read), streamed on
                # its own host: the stream ends once the run is over
                a.open(OTHER)
                a.publish(OTHER, "values", b"{}")
                local = a.attach(OTHER)
                finished.runs.add(OTHER)
                await _read_all(local, streamed := [])
        assert joined == [None] and got[1] is None and streamed == [None]
