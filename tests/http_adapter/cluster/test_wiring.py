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


def test_postgres_mode_serves_restarts_and_reports(serve_app: Any, pg_url: str,
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
    serve_app: Any, pg_url: str
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
