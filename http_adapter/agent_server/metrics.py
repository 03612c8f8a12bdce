"""What `/metrics` reports: queue, workers, records and database pools, both back ends.

`figures(state)` is one snapshot in LangGraph's JSON shape (`queue`, `workers`) plus ours;
`prometheus(figures)` renders it in the text exposition format 0.0.4. Metric names follow the
LangGraph Agent Server's (`lg_api_` prefix) where it has one; the rest are `graphrun_`.

Counts come from the records, so in cluster mode they are the whole cluster's (every host
sees the same numbers); workers and the wait histogram are this process's. Pool metrics
appear only for parts that have a pool (`pool_stats()`): none with SQLite (issue 19 §10).
"""

from __future__ import annotations

import bisect
import statistics
import time
from datetime import datetime
from typing import Any

from .executor import after_seconds

__all__ = [
    "WAIT_BUCKETS", "WaitHistogram", "asyncpg_pool_stats", "figures", "prometheus", "queue_wait",
]

WAIT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
_RUN_STATUSES = ("pending", "running", "success", "error", "timeout", "interrupted")
_THREAD_STATUSES = ("idle", "busy", "interrupted", "error")
_STARTED = time.time()  # stands in for the server's start when the state does not record it


class WaitHistogram:
    """How long runs waited between becoming runnable and a worker taking them (seconds)."""

    def __init__(self) -> None:
        self.counts = [0] * (len(WAIT_BUCKETS) + 1)  # the last one is +Inf
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(WAIT_BUCKETS, seconds)] += 1
        self.total += seconds

    def cumulative(self) -> list[tuple[str, int]]:
        """(le, count of observations <= le), Prometheus' cumulative buckets."""
        found, running = [], 0
        for bound, count in zip((*map(_number, WAIT_BUCKETS), "+Inf"), self.counts):
            running += count
            found.append((bound, running))
        return found


def queue_wait(run: Any) -> float:
    """Seconds since `run` became runnable: created, plus its `after_seconds` delay."""
    created = _timestamp(run.created_at)
    if created is None:
        return 0.0
    return max(time.time() - created - after_seconds(run.kwargs), 0.0)


def _timestamp(stamp: Any) -> float | None:
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except (TypeError, ValueError):
        return None


# -- the snapshot ------------------------------------------------------------------------------


async def figures(state: Any) -> dict[str, Any]:
    """One snapshot of the numbers."""
    runs, threads, assistants = await _record_counts(state.records)
    queue = await _queue_numbers(state, runs)
    workers = state.settings.workers
    busy = state.queue.busy()
    found: dict[str, Any] = {
        "queue": {
            "n_pending": queue["pending"],
            "n_running": queue["running"],
            "pending_runs_wait_time_max_secs": queue["wait_max"],
            "pending_runs_wait_time_med_secs": queue["wait_med"],
        },
        "workers": {"max": workers, "active": min(busy, workers),
                    "available": max(workers - busy, 0)},
        "runs": {s: runs.get(s, 0) for s in _RUN_STATUSES},
        "threads": {s: threads.get(s, 0) for s in _THREAD_STATUSES},
        "assistants": assistants,
        "uptime_seconds": round(time.time() - (getattr(state, "started_at", None) or _STARTED), 3),
        "version": _version(),
    }
    waits: WaitHistogram = state.queue.waits
    found["queue_wait"] = {"buckets": dict(waits.cumulative()), "sum": round(waits.total, 6),
                           "count": sum(waits.counts)}
    pools = _pools(state)
    if pools:
        found["pools"] = pools
    return found


async def _record_counts(records: Any) -> tuple[dict[str, int], dict[str, int], int]:
    """Runs and threads by status, and the assistants (`RecordStore.stats()`)."""
    got = await records.stats()
    return dict(got.runs), dict(got.threads), int(got.assistants)


async def _queue_numbers(state: Any, runs: dict[str, int]) -> dict[str, Any]:
    """Pending and running runs (this process's stateless ones included) and how long the
    pending have waited. A queue may count its own (`stats()`: every host's, in one query);
    else the records say."""
    queue = state.queue
    stateless = [queue_wait(r) for r in queue.waiting_stateless()]
    stats = getattr(queue, "stats", None)
    if callable(stats):
        given = await stats()
        waits = [w for w in (given["wait_max"], *stateless) if w is not None]
        return {**given, "pending": given["pending"] + len(stateless),
                "wait_max": round(max(waits), 3) if waits else None}
    waits = [queue_wait(r) for r in await state.records.runs_with_status("pending")] + stateless
    return {
        "pending": len(waits),
        "running": max(queue.busy(), runs.get("running", 0)),
        "wait_max": round(max(waits), 3) if waits else None,
        "wait_med": round(statistics.median(waits), 3) if waits else None,
    }


def _pools(state: Any) -> dict[str, dict[str, int]]:
    """Each PostgreSQL pool's size, connections in use and bounds, by part."""
    found = {}
    for name, part in (("records", state.records), ("queue", state.queue),
                       ("checkpoints", state.saver), ("store", state.store)):
        stats = getattr(part, "pool_stats", None)
        if callable(stats):
            got = stats()
            if got:
                found[name] = dict(got)
    return found


def asyncpg_pool_stats(pool: Any) -> dict[str, int]:
    """An asyncpg pool's figures, as a part's `pool_stats()` returns them."""
    size = pool.get_size()
    return {"size": size, "in_use": size - pool.get_idle_size(), "max": pool.get_max_size()}


def _version() -> str:
    from .openapi import package_version

    return package_version()


# -- the text format ---------------------------------------------------------------------------


def prometheus(snapshot: dict[str, Any]) -> str:
    """The Prometheus text exposition format (0.0.4): HELP, TYPE, then samples."""
    lines: list[str] = []

    def metric(name: str, kind: str, help_: str, samples: list[tuple[str, Any]]) -> None:
        lines.append(f"# HELP {name} {help_}")
        lines.append(f"# TYPE {name} {kind}")
        lines.extend(f"{name}{labels} {_number(value)}" for labels, value in samples)

    queue, workers = snapshot["queue"], snapshot["workers"]
    metric("lg_api_num_pending_runs", "gauge", "Runs waiting for a worker.",
           [("", queue["n_pending"])])
    metric("lg_api_num_running_runs", "gauge", "Runs executing now.", [("", queue["n_running"])])
    metric("lg_api_pending_runs_wait_time_max_seconds", "gauge",
           "Longest wait of a pending run.", [("", queue["pending_runs_wait_time_max_secs"] or 0)])
    metric("lg_api_pending_runs_wait_time_med_seconds", "gauge",
           "Median wait of the pending runs.", [("", queue["pending_runs_wait_time_med_secs"] or 0)])
    for key in ("max", "active", "available"):
        metric(f"lg_api_workers_{key}", "gauge", f"Background run workers ({key}).",
               [("", workers[key])])
    _wait_histogram(metric, snapshot.get("queue_wait"))
    _pool_metrics(metric, snapshot.get("pools") or {})
    metric("graphrun_runs", "gauge", "Run records by status.",
           [(f'{{status="{s}"}}', n) for s, n in snapshot["runs"].items()])
    metric("graphrun_threads", "gauge", "Threads by status.",
           [(f'{{status="{s}"}}', n) for s, n in snapshot["threads"].items()])
    metric("graphrun_assistants", "gauge", "Assistants, built-in ones included.",
           [("", snapshot["assistants"])])
    metric("graphrun_uptime_seconds", "gauge", "Seconds since the server started.",
           [("", snapshot["uptime_seconds"])])
    metric("graphrun_info", "gauge", "The graphrun version serving.",
           [(f'{{version="{snapshot["version"]}"}}', 1)])
    return "\n".join(lines) + "\n"


def _wait_histogram(metric: Any, waits: dict[str, Any] | None) -> None:
    if waits is None:
        return
    samples = [(f'_bucket{{le="{le}"}}', n) for le, n in waits["buckets"].items()]
    samples += [("_sum", waits["sum"]), ("_count", waits["count"])]
    # One name, suffixed samples: the histogram type's shape.
    metric("graphrun_queue_wait_seconds", "histogram",
           "Seconds a run waited for a worker of this process.",
           [(suffix, value) for suffix, value in samples])


def _pool_metrics(metric: Any, pools: dict[str, dict[str, int]]) -> None:
    for key, help_ in (("size", "Open connections of the pool."),
                       ("in_use", "Connections of the pool in use now."),
                       ("max", "Most connections the pool may open.")):
        samples = [(f'{{pool="{name}"}}', stats[key]) for name, stats in pools.items()
                   if key in stats]
        if samples:
            metric(f"graphrun_db_pool_{key}", "gauge", help_, samples)


def _number(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    return repr(float(value))
