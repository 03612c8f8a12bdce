"""Scale-out benchmark (issue 19): the agent server on PostgreSQL + Redis, one and two
processes, against the embedded SQLite default, in one run on one machine.

`python -m benchmarks.scaleout [--quick] [--json PATH]`

Every mode serves the same 3-node chain (`benchmarks.http`'s project) with `graphrun serve`
subprocesses on loopback. Runs are thread runs (`POST /threads/{id}/runs/wait`: queued, claimed,
checkpointed, the thread's status written), the path the scale-out back end changes; stateless
runs stay in the process that took them. Cases, per mode (`sqlite`, `pg_1`, `pg_2`):

- `wait_sequential`: one client, runs back to back on its own thread: p50 latency. The issue's
  bar: PostgreSQL + Redis within +5 ms of SQLite.
- `wait_10_clients`: ten clients, each on its own thread, spread round robin over the
  processes: runs/s.

PostgreSQL and Redis are throwaway servers from Debian's packages (`tests.services`), as in
the tests: no fsync on PostgreSQL, so both modes skip the disk flush alike (SQLite's
`synchronous=NORMAL` in WAL mode does not fsync per commit either).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from .http import RESULTS, Server, free_port, project, stats

_BODY = {"assistant_id": "chain", "input": {"x": 1}}


def _serve(work: Path, name: str, extra: list[str]) -> Server:
    config = project(work / name, "engine")
    port = free_port()
    argv = [sys.executable, "-m", "http_adapter.cli", "serve", "--config", str(config),
            "--port", str(port), "--log-level", "warning", *extra]
    return Server(name, argv, port, config.parent)


@contextlib.contextmanager
def _mode(work: Path, mode: str, pg_url: str | None, redis_url: str | None) -> Iterator[list[Server]]:
    """The servers of one mode, stopped on exit."""
    if mode == "sqlite":
        extra = ["--data-dir", str(work / "sqlite-data")]
        count = 1
    else:
        assert pg_url and redis_url
        extra = ["--database-url", pg_url, "--redis-url", redis_url]
        count = 2 if mode == "pg_2" else 1
    servers: list[Server] = []
    try:
        for index in range(count):
            servers.append(_serve(work, f"{mode}-{index}", extra))
        yield servers
    finally:
        for server in servers:
            server.stop()


def _thread(client: httpx.Client) -> str:
    response = client.post("/threads", json={})
    response.raise_for_status()
    return str(response.json()["thread_id"])


def _sequential(servers: list[Server], runs: int) -> dict[str, Any]:
    with httpx.Client(base_url=servers[0].url, timeout=30) as client:
        thread_id = _thread(client)
        path = f"/threads/{thread_id}/runs/wait"
        for _ in range(max(5, runs // 10)):
            client.post(path, json=_BODY).raise_for_status()
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            client.post(path, json=_BODY).raise_for_status()
            times.append(time.perf_counter() - started)
    out = stats(times)
    out["runs_per_s"] = runs / sum(times)
    return out


def _concurrent(servers: list[Server], clients: int, per_client: int) -> dict[str, Any]:
    ready = threading.Barrier(clients + 1, timeout=120)  # a failed client breaks it: no hang

    def work(index: int) -> None:
        url = servers[index % len(servers)].url
        with httpx.Client(base_url=url, timeout=60) as client:
            path = f"/threads/{_thread(client)}/runs/wait"
            for _ in range(3):
                client.post(path, json=_BODY).raise_for_status()
            ready.wait()
            for _ in range(per_client):
                client.post(path, json=_BODY).raise_for_status()

    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        done = [pool.submit(work, i) for i in range(clients)]
        ready.wait()
        started = time.perf_counter()
        for future in done:
            future.result()
        elapsed = time.perf_counter() - started
    total = clients * per_client
    return {"median_ms": elapsed * 1000 / total, "q1_ms": 0, "q3_ms": 0, "reps": total,
            "runs_per_s": total / elapsed}


def _measure(servers: list[Server], quick: bool) -> dict[str, dict[str, Any]]:
    return {
        "wait_sequential": _sequential(servers, 30 if quick else 300),
        "wait_10_clients": _concurrent(servers, 10, 5 if quick else 40),
    }


def run(quick: bool) -> dict[str, Any]:
    from tests.services import PostgresServer, RedisServer

    work = Path(tempfile.mkdtemp(prefix="graphrun-scaleout-bench-"))
    results: dict[str, dict[str, dict[str, Any]]] = {}
    with PostgresServer() as pg, RedisServer() as redis:
        for mode in ("sqlite", "pg_1", "pg_2"):
            url = pg.new_database() if mode != "sqlite" else None
            with _mode(work, mode, url, redis.url) as servers:
                results[mode] = _measure(servers, quick)
    base = results["sqlite"]
    cases = []
    for mode, measured in results.items():
        for case, figures in measured.items():
            cases.append({
                "case": f"scaleout_{case}_{mode}", "mode": mode, "figures": figures,
                "p50_minus_sqlite_ms": figures["median_ms"] - base[case]["median_ms"],
                "runs_per_s_vs_sqlite": figures["runs_per_s"] / base[case]["runs_per_s"],
            })
    return {"meta": {"created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "quick": quick},
            "cases": cases}


def format_report(report: dict[str, Any]) -> str:
    lines = [f"{'case':<36} {'p50 ms':>8} {'runs/s':>9} {'p50 - sqlite':>13} {'x sqlite':>9}"]
    for case in report["cases"]:
        figures = case["figures"]
        lines.append(
            f"{case['case']:<36} {figures['median_ms']:>8.2f} {figures['runs_per_s']:>9.1f} "
            f"{case['p50_minus_sqlite_ms']:>+13.2f} {case['runs_per_s_vs_sqlite']:>9.2f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scaleout", description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)
    report = run(args.quick)
    print(format_report(report))
    path = Path(args.json) if args.json else RESULTS / ("scaleout-quick.json" if args.quick
                                                        else "scaleout.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
