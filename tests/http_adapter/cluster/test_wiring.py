"""The server on PostgreSQL (and Redis): built from Settings, started and stopped, and what /ok
and /metrics say about it (issue 19 §5, §10). Real PostgreSQL and Redis (tests/services.py)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from http_adapter.agent_server.settings import Settings
from tests.services import RedisServer, ServiceMissing

from .. import graphs as test_graphs
from .test_health import refuse_connections


def cluster_settings(pg_url: str, **overrides: Any) -> Settings:
    return Settings(graphs=test_graphs.GRAPHS, data_dir=None, database_url=pg_url,
                    heartbeat=1.0, lease=5.0, reaper_interval=0.5, drain_grace=2.0, **overrides)


def wait_for(check: Any, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_postgres_mode_serves_restarts_and_reports(pg_url: str, serve_app: Any,
                                                   tmp_path: Path) -> None:
    settings = cluster_settings(pg_url, workers=2)
    first = serve_app(settings)
    with httpx.Client(base_url=first.url, timeout=20) as client:
        assert client.get("/ok").json() == {"ok": True, "services": {"postgres": "ok"}}
        assert client.get("/ok?check_db=1").status_code == 200
        thread = client.post("/threads", json={"metadata": {"k": 1}}).json()["thread_id"]
        done = client.post(f"/threads/{thread}/runs/wait",
                           json={"assistant_id": "agent", "input": {"x": 1}})
        assert done.status_code == 200 and done.json()["x"] == 2
        figures = client.get("/metrics", params={"format": "json"}).json()
        text = client.get("/metrics").text
    assert figures["runs"]["success"] == 1 and figures["threads"]["idle"] == 1
    assert figures["queue"]["n_pending"] == 0 and figures["workers"]["max"] == 2
    assert figures["pools"]["records"]["max"] == settings.pool_max
    assert figures["pools"]["checkpoints"]["size"] >= 1
    assert 'graphrun_db_pool_size{pool="records"}' in text
    assert not (tmp_path / ".graphrun").exists()  # nothing on disk: PostgreSQL holds it all
    first.stop()
    # Another process (here: another server) on the same database sees every record.
    second = serve_app(settings)
    with httpx.Client(base_url=second.url, timeout=20) as client:
        assert client.get(f"/threads/{thread}").json()["metadata"]["k"] == 1
        state = client.get(f"/threads/{thread}/state").json()
        assert "x" in state["values"], (state, client.get(f"/threads/{thread}").json())
        assert state["values"]["x"] == 2, (state, client.get(f"/threads/{thread}").json())


def test_redis_is_reported_separately_and_never_fails_the_check(
    pg_url: str, serve_app: Any
) -> None:
    try:
        redis = RedisServer()
    except ServiceMissing as error:
        pytest.skip(str(error))
    with redis:
        served = serve_app(cluster_settings(pg_url, redis_url=redis.url))
        ok = wait_for(lambda: httpx.get(f"{served.url}/ok").json()["services"].get("redis") == "ok")
        assert ok, httpx.get(f"{served.url}/ok").json()
        answer = httpx.get(f"{served.url}/ok").json()
        assert answer == {"ok": True, "services": {"postgres": "ok", "redis": "ok"}}
        done = httpx.post(f"{served.url}/runs/wait", timeout=20,
                          json={"assistant_id": "agent", "input": {"x": 1}})
        assert done.status_code == 200 and done.json()["x"] == 2
    # Redis is gone: reported, and /ok still passes (the queue polls the database).
    down = wait_for(lambda: httpx.get(f"{served.url}/ok").json()["services"]["redis"]
                    == "unavailable")
    assert down
    checked = httpx.get(f"{served.url}/ok?check_db=1")
    assert checked.status_code == 200 and checked.json()["ok"] is True


def test_cluster_metrics_count_every_hosts_queue(pg_url: str, serve_app: Any) -> None:
    """Two servers, one database: /metrics on either counts the runs the other holds."""
    settings = cluster_settings(pg_url, workers=1)
    first, second = serve_app(settings), serve_app(settings)
    with httpx.Client(base_url=first.url, timeout=20) as client:
        threads = [client.post("/threads", json={}).json()["thread_id"] for _ in range(3)]
        runs = [client.post(f"/threads/{t}/runs", json={"assistant_id": "agent",
                                                         "input": {"sleep": 3.0}}).json()
                for t in threads]

    def metrics() -> dict[str, Any]:
        return httpx.get(f"{second.url}/metrics", params={"format": "json"}).json()

    # Two run (one per host: without Redis the second finds its run at its next poll), the
    # third waits for a worker.
    assert wait_for(lambda: metrics()["queue"]["n_running"] == 2, timeout=2.5), metrics()
    snapshot = metrics()
    assert snapshot["queue"]["n_running"] == 2 and snapshot["queue"]["n_pending"] == 1
    assert snapshot["queue"]["pending_runs_wait_time_max_secs"] >= 0.3
    assert snapshot["workers"] == {"max": 1, "active": 1, "available": 0}
    assert set(snapshot["pools"]) >= {"records", "queue", "checkpoints"}
    with httpx.Client(base_url=second.url, timeout=20) as client:
        for thread, run in zip(threads, runs):
            client.get(f"/threads/{thread}/runs/{run['run_id']}/join")
    waits = [httpx.get(f"{s.url}/metrics", params={"format": "json"}).json()["queue_wait"]
             for s in (first, second)]
    assert sum(w["count"] for w in waits) == 3  # each run taken once, by one of the hosts
    assert max(w["sum"] for w in waits) >= 2.0  # the third waited for a slow one to end


def test_behind_pgbouncer_without_prepared_statements(pg_url: str, serve_app: Any,
                                                       pgbouncer: Any) -> None:
    url = pgbouncer.url(pg_url.rsplit("/", 1)[1])
    served = serve_app(cluster_settings(url, prepared_statements=False))
    with httpx.Client(base_url=served.url, timeout=20) as client:
        thread = client.post("/threads", json={}).json()["thread_id"]
        for x in (1, 5):
            done = client.post(f"/threads/{thread}/runs/wait",
                               json={"assistant_id": "agent", "input": {"x": x}})
            assert done.status_code == 200 and done.json()["x"] == x + 1
        assert client.get("/ok?check_db=1").json()["services"] == {"postgres": "ok"}


def test_check_db_fails_while_the_database_refuses_connections(pg_url: str,
                                                              serve_app: Any) -> None:
    served = serve_app(cluster_settings(pg_url))
    assert httpx.get(f"{served.url}/ok?check_db=1").status_code == 200
    refuse_connections(pg_url, True)
    try:
        down = httpx.get(f"{served.url}/ok?check_db=1", timeout=10)
        plain = httpx.get(f"{served.url}/ok", timeout=10)  # without check_db too (issue 26)
        # Routes that need the database answer 503 with a detail, never a 500 (issue 19).
        thread = httpx.post(f"{served.url}/threads", json={}, timeout=20)
        metrics = httpx.get(f"{served.url}/metrics", timeout=20)
    finally:
        refuse_connections(pg_url, False)
    for answer in (thread, metrics):
        assert answer.status_code == 503, answer.text
        assert "database is unavailable" in answer.json()["detail"]
        assert answer.headers["retry-after"] == "1"
    assert down.status_code == 503
    for answer in (down, plain):  # and the loops that failed meanwhile, if any
        body = answer.json()
        body.pop("failing", None)
        assert answer.status_code == 503 and body == {
            "ok": False, "services": {"postgres": "unavailable"}, "detail": "postgres unavailable"}
    back = wait_for(lambda: httpx.get(f"{served.url}/ok?check_db=1").status_code == 200)
    assert back  # the pool reconnects: the same process serves again
    done = httpx.post(f"{served.url}/runs/wait", timeout=20,
                      json={"assistant_id": "agent", "input": {"x": 1}})
    assert done.status_code == 200 and done.json()["x"] == 2


def test_a_connection_the_outage_broke_mid_operation_answers_503(
        pg_url: str, serve_app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """asyncpg's InternalClientError ("cannot switch to state ...") comes from a connection an
    outage broke mid-operation; it was answered 500 (the outage benchmark saw one in a few
    dozen 1-s outages under load). It means what the other unreachable-database errors mean."""
    import asyncpg

    served = serve_app(cluster_settings(pg_url))
    records = served.app.state.server.records

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise asyncpg.InternalClientError(
            "cannot switch to state 12; another operation (2) is in progress")

    monkeypatch.setattr(records, "put_thread", broken)
    answer = httpx.post(f"{served.url}/threads", json={}, timeout=20)
    assert answer.status_code == 503, answer.text
    assert "database is unavailable" in answer.json()["detail"]
