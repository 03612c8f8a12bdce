"""/metrics and /ok on a real server (issue 19 §10): queue figures, the wait histogram, pools,
and the health check's shape; SQLite mode here (the cluster mode's are in test_cluster_wiring)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import httpx

from http_adapter.agent_server.metrics import WAIT_BUCKETS, WaitHistogram, prometheus
from http_adapter.agent_server.settings import Settings

from . import graphs as test_graphs

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? '
                     r'(-?[0-9.e+-]+)$')


def settings_for(tmp_path: Path, **overrides: Any) -> Settings:
    return Settings(graphs=test_graphs.GRAPHS, data_dir=tmp_path / ".graphrun", **overrides)


def parse(text: str) -> tuple[dict[str, float], dict[str, str]]:
    """Samples by `name{labels}` and each metric's TYPE; every line must be well formed."""
    samples: dict[str, float] = {}
    types: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            types[name] = kind
            continue
        if line.startswith("#"):
            assert re.match(r"^# HELP \w+ \S", line), line
            continue
        match = _SAMPLE.match(line)
        assert match, line
        key, value = line.rsplit(" ", 1)
        assert key not in samples, f"duplicate sample {key}"
        samples[key] = float(value)
    return samples, types


def test_pending_runs_their_wait_and_busy_workers(serve_app: Any, tmp_path: Path) -> None:
    """One worker busy with a slow run: the next run waits, and /metrics says so."""
    url = serve_app(settings_for(tmp_path, workers=1)).url
    with httpx.Client(base_url=url, timeout=10) as client:
        threads = [client.post("/threads", json={}).json()["thread_id"] for _ in range(2)]
        slow = client.post(f"/threads/{threads[0]}/runs",
                           json={"assistant_id": "agent", "input": {"sleep": 1.5}}).json()
        time.sleep(0.3)
        queued = client.post(f"/threads/{threads[1]}/runs",
                             json={"assistant_id": "agent", "input": {"x": 1}}).json()
        time.sleep(0.4)
        during = client.get("/metrics", params={"format": "json"}).json()
        text, types = parse(client.get("/metrics").text)
        for thread, run in ((threads[0], slow), (threads[1], queued)):
            joined = client.get(f"/threads/{thread}/runs/{run['run_id']}/join")
            assert joined.status_code == 200
        after = client.get("/metrics", params={"format": "json"}).json()
    assert during["queue"]["n_pending"] == 1 and during["queue"]["n_running"] == 1
    assert during["workers"] == {"max": 1, "active": 1, "available": 0}
    assert 0.3 <= during["queue"]["pending_runs_wait_time_max_secs"] < 5
    assert text["lg_api_num_pending_runs"] == 1 and text["lg_api_workers_active"] == 1
    assert 0.3 <= text["lg_api_pending_runs_wait_time_max_seconds"] < 5
    assert types["graphrun_queue_wait_seconds"] == "histogram"
    # Afterwards: both runs were taken by a worker, the second after waiting ~1 s.
    waits = after["queue_wait"]
    assert waits["count"] == 2 and 0.8 <= waits["sum"] < 5
    assert waits["buckets"]["+Inf"] == 2 and waits["buckets"]["0.5"] == 1
    assert after["queue"]["n_pending"] == 0 and after["workers"]["active"] == 0
    assert after["runs"]["success"] == 2 and after["threads"]["idle"] == 2


def test_histogram_samples_are_cumulative_and_named_as_prometheus_wants(
    serve_app: Any, tmp_path: Path
) -> None:
    url = serve_app(settings_for(tmp_path)).url
    with httpx.Client(base_url=url, timeout=10) as client:
        for _ in range(3):
            assert client.post("/runs/wait", json={"assistant_id": "agent",
                                                   "input": {"x": 1}}).status_code == 200
        samples, types = parse(client.get("/metrics").text)
    buckets = [samples[f'graphrun_queue_wait_seconds_bucket{{le="{le}"}}']
               for le in [*map(repr, WAIT_BUCKETS), "+Inf"]]
    assert buckets == sorted(buckets) and buckets[-1] == 3  # stateless runs are counted too
    assert samples["graphrun_queue_wait_seconds_count"] == 3
    assert 0 <= samples["graphrun_queue_wait_seconds_sum"] < 3
    # SQLite: no connection pool, so no pool metrics at all.
    assert not [name for name in types if name.startswith("graphrun_db_pool")]


def test_pool_metrics_render_per_pool() -> None:
    histogram = WaitHistogram()
    for seconds in (0.001, 0.2, 7.0, 1000.0):
        histogram.observe(seconds)
    snapshot = {
        "queue": {"n_pending": 0, "n_running": 0, "pending_runs_wait_time_max_secs": None,
                  "pending_runs_wait_time_med_secs": None},
        "workers": {"max": 2, "active": 0, "available": 2},
        "queue_wait": {"buckets": dict(histogram.cumulative()), "sum": histogram.total,
                       "count": 4},
        "pools": {"records": {"size": 3, "in_use": 1, "max": 10},
                  "checkpoints": {"size": 2, "in_use": 0, "max": 4}},
        "runs": {}, "threads": {}, "assistants": 0, "uptime_seconds": 1.0, "version": "0",
    }
    samples, types = parse(prometheus(snapshot))
    assert samples['graphrun_db_pool_in_use{pool="records"}'] == 1
    assert samples['graphrun_db_pool_size{pool="checkpoints"}'] == 2
    assert samples['graphrun_db_pool_max{pool="records"}'] == 10
    assert types["graphrun_db_pool_in_use"] == "gauge"
    assert samples['graphrun_queue_wait_seconds_bucket{le="0.005"}'] == 1
    assert samples['graphrun_queue_wait_seconds_bucket{le="10.0"}'] == 3
    assert samples['graphrun_queue_wait_seconds_bucket{le="+Inf"}'] == 4


def test_ok_keeps_langgraph_devs_shape_in_sqlite_mode(serve_app: Any, tmp_path: Path) -> None:
    url = serve_app(settings_for(tmp_path)).url
    for query in ("", "?check_db=0", "?check_db=1"):
        answer = httpx.get(f"{url}/ok{query}")
        assert answer.status_code == 200 and answer.json() == {"ok": True, "services": {}}
    bad = httpx.get(f"{url}/ok?check_db=yes")
    assert bad.status_code == 422 and "check_db" in bad.json()["detail"]
