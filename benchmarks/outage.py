"""Outage recovery (issue 26 §1): how long `graphrun serve` hosts take to serve and run again
after PostgreSQL was down, and after Redis restarted, under load.

`python -m benchmarks.outage [--hosts 3] [--outages 3,6] [--clients 4] [--json PATH]`

Starts a throwaway PostgreSQL and Redis (`tests.services`, as the tests do) and `--hosts`
`graphrun serve` processes on them, serving `benchmarks.http`'s 3-node chain. `--clients`
client threads make thread runs (`POST /threads/{id}/runs/wait`) round robin over the hosts
the whole time. Then, for each length in `--outages`, PostgreSQL is stopped (fast shutdown)
for that many seconds and started again; then Redis is restarted (empty). Reported per event:

- `detected_s`: from the stop until every host's `/ok` answers 503 (none for Redis: `/ok`
  stays 200 without it, by design);
- `healthy_s`: from the service answering again until every host's `/ok` answers 200;
- `recovered_s`: from the service answering again until every host answers `/ok` 200 AND one
  run created through each host has finished (what a user sees: hosts serve and run again);
- `refused` / `failed`: client runs answered 503 during the event / with anything else (a
  500 or a hang would be a defect);
- a `baseline` row first, nothing stopped: the same figures on a healthy cluster (under load
  on a shared machine one `/ok` alone may take a second);
- `stuck`: runs accepted but still not ended 60 s after the recovery (must be 0).

Before issue 26's fix a 5 s outage never recovered (the cron scheduler's failed read closed
every host's records and queue for good); a 3 s one recovered in ~0.01 s.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from .http import RESULTS, Server, free_port, project

_BODY = {"assistant_id": "chain", "input": {"x": 1}}
_ENDED = ("success", "error", "interrupted")
_DEADLINE = 120.0  # seconds any one wait may take before the benchmark gives up
_POOL = concurrent.futures.ThreadPoolExecutor(8)  # asks every host at once


def _until(check: Any, what: str, deadline: float = _DEADLINE) -> float:
    """Poll `check()` until true; the seconds it took (raises after `deadline`)."""
    began = time.monotonic()
    while not check():
        if time.monotonic() - began > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.02)
    return time.monotonic() - began


def _every(urls: list[str], check: Any) -> set[Any]:
    """What `check(url)` answers for the hosts, asked of all at once (under load one `/ok`
    takes a second or more: asked in turn, the hosts' times would add up)."""
    return set(_POOL.map(check, urls))


def _status(url: str) -> int:
    """/ok's status code (0: no answer)."""
    try:
        return httpx.get(f"{url}/ok", timeout=5).status_code
    except httpx.HTTPError:
        return 0


def _runs_through(url: str) -> bool:
    """A thread run created through this host finishes."""
    try:
        with httpx.Client(base_url=url, timeout=10) as client:
            thread = client.post("/threads", json={})
            if thread.status_code != 200:
                return False
            run = client.post(f"/threads/{thread.json()['thread_id']}/runs/wait", json=_BODY)
            return run.status_code == 200 and run.json().get("log") == ["a", "b", "c"]
    except httpx.HTTPError:
        return False


class Load:
    """Client threads making thread runs until stopped, counting how each request ended."""

    def __init__(self, urls: list[str], clients: int) -> None:
        self.urls = urls
        self.counts = {"done": 0, "refused": 0, "failed": 0}
        self.accepted: list[tuple[str, str]] = []  # (url, thread_id) of runs accepted
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._client, args=(i,)) for i in range(clients)]

    def __enter__(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join(30)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self.counts)

    def _count(self, key: str) -> None:
        with self._lock:
            self.counts[key] += 1

    def _client(self, index: int) -> None:
        turn = index
        while not self.stop.is_set():
            url = self.urls[turn % len(self.urls)]
            turn += 1
            try:
                self._one(url)
            except httpx.HTTPError:
                self._count("failed")
                self.stop.wait(0.05)

    def _one(self, url: str) -> None:
        with httpx.Client(base_url=url, timeout=30) as client:
            thread = client.post("/threads", json={})
            if thread.status_code != 200:
                self._count("refused" if thread.status_code == 503 else "failed")
                self.stop.wait(0.05)
                return
            thread_id = thread.json()["thread_id"]
            with self._lock:
                self.accepted.append((url, thread_id))
            run = client.post(f"/threads/{thread_id}/runs/wait", json=_BODY)
            key = "done" if run.status_code == 200 else (
                "refused" if run.status_code == 503 else "failed")
            self._count(key)


def _stuck(accepted: list[tuple[str, str]]) -> int:
    """Threads whose runs have not all ended (a thread busy for good)."""
    left = 0
    for url, thread_id in accepted:
        answer = httpx.get(f"{url}/threads/{thread_id}/runs", timeout=10)
        if answer.status_code != 200 or any(r["status"] not in _ENDED for r in answer.json()):
            left += 1
    return left


def _event(name: str, urls: list[str], load: Load, stop: Any, start: Any,
           hold: float) -> dict[str, Any]:
    """Stop a service, hold it down `hold` s, start it; how the hosts took it."""
    before = load.snapshot()
    stop()
    began = time.monotonic()  # the service is down now
    detected = None
    if name.startswith("postgres"):
        detected = round(_until(lambda: _every(urls, _status) == {503}, "/ok 503"), 3)
    time.sleep(max(0.0, hold - (time.monotonic() - began)))
    start()
    back = time.monotonic()  # the service answers again
    healthy = _until(lambda: _every(urls, _status) == {200}, "/ok 200 on every host")
    pending = set(urls)

    def every_host_runs() -> bool:
        ran = dict(zip(pending, _POOL.map(_runs_through, pending), strict=True))
        pending.difference_update(u for u, done in ran.items() if done)
        return not pending

    try:
        _until(every_host_runs, "runs through every host")
    except RuntimeError as error:
        raise RuntimeError(f"{error}: not through {sorted(pending)}") from None
    recovered = time.monotonic() - back
    after = load.snapshot()
    return {"event": name, "held_s": round(hold, 2), "detected_s": detected,
            "healthy_s": round(healthy, 3), "recovered_s": round(recovered, 3),
            **{key: after[key] - before[key] for key in ("done", "refused", "failed")}}


def _nothing() -> None:
    """The baseline's service stop and start."""


@contextlib.contextmanager
def _cluster(work: Path, hosts: int) -> Iterator[tuple[Any, Any, list[Server]]]:
    from tests.services import PostgresServer, RedisServer

    with PostgresServer() as pg, RedisServer() as redis:
        config = project(work / "project", "engine")
        argv = [sys.executable, "-m", "http_adapter.cli", "serve", "--config", str(config),
                "--database-url", pg.new_database(), "--redis-url", redis.url,
                "--log-level", "warning", "--lease-seconds", "5"]
        servers: list[Server] = []
        try:
            for index in range(hosts):
                port = free_port()
                servers.append(Server(f"host{index}", [*argv, "--port", str(port)], port,
                                      config.parent))
            yield pg, redis, servers
        finally:
            for server in servers:
                server.stop()


def measure(hosts: int, outages: list[float], clients: int) -> dict[str, Any]:
    """Every event's figures, then how many accepted runs never ended."""
    tmp = tempfile.mkdtemp(prefix="graphrun-outage-")  # kept on failure: the hosts' logs
    try:
        report = _measure(Path(tmp), hosts, outages, clients)
    except BaseException:
        print(f"the hosts' logs are in {tmp}", file=sys.stderr)
        raise
    shutil.rmtree(tmp, ignore_errors=True)
    return report


def _measure(tmp: Path, hosts: int, outages: list[float], clients: int) -> dict[str, Any]:
    with _cluster(tmp, hosts) as (pg, redis, servers):
        urls = [s.url for s in servers]
        events = []
        with Load(urls, clients) as load:
            _until(lambda: load.snapshot()["done"] >= 2 * hosts, "runs before the outage")
            # nothing stopped: what /ok and a run take on this machine now, to compare with
            events.append(_event("baseline (no outage)", urls, load, _nothing, _nothing, 0.0))
            for seconds in outages:
                events.append(_event(f"postgres down {seconds:g} s", urls, load, pg.halt,
                                     pg.resume, seconds))
            events.append(_event("redis restart", urls, load, redis.halt, redis.start, 0.5))
        _until(lambda: _stuck(load.accepted) == 0, "every accepted run to end", 60.0)
        return {"hosts": hosts, "clients": clients, "events": events,
                "accepted": len(load.accepted), "stuck": _stuck(load.accepted)}


def table(report: dict[str, Any]) -> str:
    lines = [f"{'event':<22} {'detected_s':>10} {'healthy_s':>9} {'recovered_s':>11} "
             f"{'done':>6} {'refused':>8} {'failed':>7}"]
    for e in report["events"]:
        detected = "-" if e["detected_s"] is None else f"{e['detected_s']:.2f}"
        lines.append(f"{e['event']:<22} {detected:>10} {e['healthy_s']:>9.3f} "
                     f"{e['recovered_s']:>11.3f} "
                     f"{e['done']:>6} {e['refused']:>8} {e['failed']:>7}")
    lines.append(f"{report['accepted']} runs accepted, {report['stuck']} stuck, "
                 f"{report['hosts']} hosts")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.outage", description=__doc__)
    parser.add_argument("--hosts", type=int, default=3)
    parser.add_argument("--outages", default="3,6",
                        help="PostgreSQL outage lengths in seconds, comma-separated")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--json", metavar="PATH", default=str(RESULTS / "outage.json"))
    args = parser.parse_args(argv)
    report = measure(args.hosts, [float(s) for s in args.outages.split(",")], args.clients)
    print(table(report))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(report, indent=2))
    return 0 if report["stuck"] == 0 and not any(e["failed"] for e in report["events"]) else 1


if __name__ == "__main__":
    sys.exit(main())
