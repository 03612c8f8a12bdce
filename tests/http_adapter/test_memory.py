"""Memory of a long-lived single host (issue 26 §3): what a finished run leaves behind is
bounded, and a run whose outcome is no longer in memory still answers `join` from the records."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchmarks.http import Server
from benchmarks.soak import serve
from http_adapter.agent_server import queue as queue_module

from .conftest import Served


def _server_rss(server: Server, runs: int, payload: str, client: httpx.Client) -> float:
    for _ in range(runs):
        client.post("/runs/wait", json={"assistant_id": "chain",
                                        "input": {"x": 1, "log": [payload]}}).raise_for_status()
    return server.rss_mib()


def test_resident_memory_levels_off_over_many_runs(tmp_path: Path) -> None:
    """A real `graphrun serve`: 600 runs of 100 KB. Every finished run's output was kept, so
    runs 200-600 added ~40 MiB; now they add allocator noise only (measured: under 1 MiB)."""
    server = serve(tmp_path)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            payload = "x" * 100_000
            warm = _server_rss(server, 200, payload, client)  # past every bounded cache's fill
            later = _server_rss(server, 400, payload, client)
    finally:
        server.stop()
    assert later - warm < 12, f"{warm:.1f} -> {later:.1f} MiB over 400 runs"


@pytest.fixture
def forgetful(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep one outcome only, so the next run's end drops the previous one's."""
    monkeypatch.setattr(queue_module, "_REMEMBERED", 1)


def _run(http: httpx.Client, **payload: Any) -> tuple[str, str]:
    thread = http.post("/threads", json={}).json()["thread_id"]
    run = http.post(f"/threads/{thread}/runs", json={"assistant_id": "agent", **payload}).json()
    return thread, run["run_id"]


def test_join_after_the_outcome_left_memory(forgetful: None,
                                            serve_app: Callable[..., Served]) -> None:
    served = serve_app()
    with httpx.Client(base_url=served.url, timeout=20) as http:
        failed = _run(http, input={"x": 1, "fail": True})
        ok = _run(http, input={"x": 1})
        for thread, run in (failed, ok):
            http.get(f"/threads/{thread}/runs/{run}/join")
        for _ in range(3):  # later runs push both outcomes out of memory
            http.post("/runs/wait", json={"assistant_id": "agent", "input": {"x": 5}})
        error = http.get(f"/threads/{failed[0]}/runs/{failed[1]}/join").json()
        assert error == {"__error__": {"error": "ValueError", "message": "boom from c"}}
        values = http.get(f"/threads/{ok[0]}/runs/{ok[1]}/join").json()
        assert values["x"] == 2 and values["log"][:3] == ["a", "b", "c"]
        run = http.get(f"/threads/{ok[0]}/runs/{ok[1]}").json()
        assert run["status"] == "success"
