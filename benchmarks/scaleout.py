"""Scale-out benchmark (issue 19): the agent server on PostgreSQL + Redis, one and two
processes, against the embedded SQLite default, in one run on one machine.

`python -m benchmarks.scaleout [--quick] [--reps N] [--modes sqlite,pg_1,pg_2] [--json PATH]`

Every mode serves the same 3-node chain (`benchmarks.http`'s project) with `graphrun serve`
subprocesses on loopback. Every mode's servers are started first, then every case is measured
`--reps` times, the modes interleaved (the sequential runs of all modes take turns every 20
runs, so a load spike on the shared machine hits every mode alike); a figure is the median
over repetitions, with the lowest and highest beside it. Runs are thread runs (`POST
/threads/{id}/runs/wait`: queued, claimed, checkpointed, the thread's status written), the path
the scale-out back end changes; stateless runs stay in the process that took them. Cases, per mode (`sqlite`, `pg_1`, `pg_2`):

- `wait_sequential`: one client, runs back to back: p50 latency. The issue's bar: PostgreSQL +
  Redis within +5 ms of SQLite. The client moves to a new thread every 20 runs, so the thread's
  state (the chain appends to a list) stays small whatever the number of runs.
- `wait_10_clients`: ten clients, each on its own thread, spread round robin over the
  processes: runs/s (and the p50 of one run's latency under that load).

Beside each: the server processes' CPU time per run (user + system, from /proc; PostgreSQL's
and Redis's own CPU not counted), which the shared machine's load moves much less than latency.

PostgreSQL and Redis are throwaway servers from Debian's packages (`tests.services`), as in
the tests: no fsync on PostgreSQL, so both modes skip the disk flush alike (SQLite's
`synchronous=NORMAL` in WAL mode does not fsync per commit either).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import os
import statistics
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
_MODES = ("sqlite", "pg_1", "pg_2")
_PER_THREAD = 20  # runs on one thread before the client takes a new one (bounded state)


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


def _cpu_s(servers: list[Server]) -> float:
    """CPU seconds the server processes have used (user + system): a cost per run that the
    other sessions' load on the shared machine does not move much, unlike latency."""
    total = 0
    for server in servers:
        fields = Path(f"/proc/{server.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (in clock ticks)
    return total / os.sysconf("SC_CLK_TCK")


def _thread(client: httpx.Client) -> str:
    response = client.post("/threads", json={})
    response.raise_for_status()
    return str(response.json()["thread_id"])


def _sequential(started: dict[str, list[Server]], runs: int) -> dict[str, dict[str, Any]]:
    """One client per mode; the modes take turns block by block (a new thread and one
    untimed run, then `_PER_THREAD` timed ones), so a load spike on the shared machine lands
    on every mode alike. (Turns of one request each would time every mode while the other
    modes' servers still finish the previous run: SQLite's p50 tripled.)"""
    clients = {mode: httpx.Client(base_url=servers[0].url, timeout=30)
               for mode, servers in started.items()}
    times: dict[str, list[float]] = {mode: [] for mode in started}
    cpu = dict.fromkeys(started, 0.0)
    try:
        for _ in range(max(1, runs // _PER_THREAD)):
            for mode, client in clients.items():
                path = f"/threads/{_thread(client)}/runs/wait"
                client.post(path, json=_BODY).raise_for_status()
                before = _cpu_s(started[mode])
                for _ in range(_PER_THREAD):
                    began = time.perf_counter()
                    client.post(path, json=_BODY).raise_for_status()
                    times[mode].append(time.perf_counter() - began)
                cpu[mode] += _cpu_s(started[mode]) - before
    finally:
        for client in clients.values():
            client.close()
    out = {}
    for mode, measured in times.items():
        out[mode] = stats(measured)
        out[mode]["runs_per_s"] = len(measured) / sum(measured)
        out[mode]["cpu_ms_per_run"] = cpu[mode] * 1000 / len(measured)
    return out


def _concurrent(servers: list[Server], clients: int, per_client: int) -> dict[str, Any]:
    ready = threading.Barrier(clients + 1, timeout=120)  # a failed client breaks it: no hang
    times: list[float] = []

    def work(index: int) -> None:
        url = servers[index % len(servers)].url
        with httpx.Client(base_url=url, timeout=60) as client:
            path = f"/threads/{_thread(client)}/runs/wait"
            for _ in range(3):
                client.post(path, json=_BODY).raise_for_status()
            ready.wait()
            for done in range(per_client):
                if done and done % _PER_THREAD == 0:
                    path = f"/threads/{_thread(client)}/runs/wait"
                started = time.perf_counter()
                client.post(path, json=_BODY).raise_for_status()
                times.append(time.perf_counter() - started)

    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        done = [pool.submit(work, i) for i in range(clients)]
        ready.wait()
        started, before = time.perf_counter(), _cpu_s(servers)
        for future in done:
            future.result()
        elapsed, used = time.perf_counter() - started, _cpu_s(servers) - before
    out = stats(times)
    out["runs_per_s"] = clients * per_client / elapsed
    out["cpu_ms_per_run"] = used * 1000 / (clients * per_client)
    return out


def _measure(started: dict[str, list[Server]], quick: bool) -> dict[str, dict[str, Any]]:
    """One repetition of every case: {mode: {case: figures}}."""
    sequential = _sequential(started, 40 if quick else 200)
    return {mode: {"wait_sequential": sequential[mode],
                   "wait_10_clients": _concurrent(servers, 10, 6 if quick else 30)}
            for mode, servers in started.items()}


def _summary(reps: list[dict[str, Any]]) -> dict[str, Any]:
    """One case of one mode over its repetitions: medians, and the spread between reps."""
    p50s = [r["median_ms"] for r in reps]
    rates = [r["runs_per_s"] for r in reps]
    return {"median_ms": statistics.median(p50s), "median_ms_low": min(p50s),
            "median_ms_high": max(p50s), "runs_per_s": statistics.median(rates),
            "runs_per_s_low": min(rates), "runs_per_s_high": max(rates),
            "q1_ms": statistics.median(r["q1_ms"] for r in reps),
            "q3_ms": statistics.median(r["q3_ms"] for r in reps),
            "cpu_ms_per_run": statistics.median(r["cpu_ms_per_run"] for r in reps), "reps": reps}


def run(quick: bool, reps: int = 1, modes: tuple[str, ...] = _MODES) -> dict[str, Any]:
    from tests.services import PostgresServer, RedisServer

    work = Path(tempfile.mkdtemp(prefix="graphrun-scaleout-bench-"))
    measured: dict[str, list[dict[str, dict[str, Any]]]] = {mode: [] for mode in modes}
    with PostgresServer() as pg, contextlib.ExitStack() as stack:
        started = {}
        for mode in modes:
            # All up at once, each PostgreSQL mode on its own database and its own Redis (pub/sub
            # ignores Redis's database numbers: one Redis would wake every mode's hosts).
            url = redis_url = None
            if mode != "sqlite":
                url, redis_url = pg.new_database(), stack.enter_context(RedisServer()).url
            started[mode] = stack.enter_context(_mode(work, mode, url, redis_url))
        for _ in range(reps):
            for mode, figures in _measure(started, quick).items():
                measured[mode].append(figures)
    results = {
        mode: {case: _summary([rep[case] for rep in runs]) for case in runs[0]}
        for mode, runs in measured.items()
    }
    base = results.get("sqlite")
    cases = []
    for mode, by_case in results.items():
        for case, figures in by_case.items():
            cases.append({
                "case": f"scaleout_{case}_{mode}", "mode": mode, "figures": figures,
                "p50_minus_sqlite_ms": (figures["median_ms"] - base[case]["median_ms"]
                                        if base else None),
                "runs_per_s_vs_sqlite": (figures["runs_per_s"] / base[case]["runs_per_s"]
                                         if base else None),
            })
    return {"meta": {"created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "quick": quick,
                     "reps": reps}, "cases": cases}


def _spread(low: float, high: float, digits: int) -> str:
    return f"({low:.{digits}f}-{high:.{digits}f})"


def format_report(report: dict[str, Any]) -> str:
    lines = [f"{'case':<34} {'p50 ms':>7} {'(low-high)':>13} {'runs/s':>7} {'(low-high)':>13} "
             f"{'p50-sqlite':>10} {'x sqlite':>8} {'cpu ms/run':>10}"]
    for case in report["cases"]:
        f = case["figures"]
        minus, ratio = case["p50_minus_sqlite_ms"], case["runs_per_s_vs_sqlite"]
        lines.append(
            f"{case['case']:<34} {f['median_ms']:>7.2f} "
            f"{_spread(f['median_ms_low'], f['median_ms_high'], 1):>13} "
            f"{f['runs_per_s']:>7.1f} {_spread(f['runs_per_s_low'], f['runs_per_s_high'], 0):>13} "
            f"{'' if minus is None else format(minus, '+.2f'):>10} "
            f"{'' if ratio is None else format(ratio, '.2f'):>8} {f['cpu_ms_per_run']:>10.2f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scaleout", description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int, help="repetitions of every mode (default 3, quick 1)")
    parser.add_argument("--modes", default=",".join(_MODES),
                        help=f"comma-separated subset of {','.join(_MODES)}")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)
    modes = tuple(m for m in args.modes.split(",") if m)
    unknown = set(modes) - set(_MODES)
    if unknown:
        parser.error(f"unknown modes: {', '.join(sorted(unknown))}")
    reps = args.reps or (1 if args.quick else 3)
    report = run(args.quick, reps, modes)
    print(format_report(report))
    path = Path(args.json) if args.json else RESULTS / ("scaleout-quick.json" if args.quick
                                                        else "scaleout.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
