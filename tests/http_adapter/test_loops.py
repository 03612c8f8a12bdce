"""Background loops survive a failing dependency (issue 26 §1): `loops.keep_going` on its own,
and a real SQLite server whose cron scheduler cannot read its records for a while: before, the
tick's exception ended the lifespan's task group (run queue included), so no run executed
again; now the server keeps serving, `/ok` names the failing loop, and crons fire again."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from http_adapter.agent_server import create_app
from http_adapter.agent_server.loops import Failing, keep_going
from http_adapter.agent_server.settings import Settings

from . import graphs
from .conftest import Served


def _until(check: Callable[[], Any], timeout: float = 15.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while not (found := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
    return found


# -- keep_going ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_keep_going_retries_with_backoff_and_says_it_recovered(
    caplog: pytest.LogCaptureFixture
) -> None:
    turns: list[str] = []
    failing = Failing()
    seen_failing: list[dict[str, str]] = []

    async def body() -> None:
        turns.append("turn")
        if len(turns) <= 3:
            raise ConnectionRefusedError("database down")
        if len(turns) == 4:
            seen_failing.append(dict(failing.now))

    with caplog.at_level(logging.WARNING, logger="test.loops"):
        with anyio.fail_after(10):
            await keep_going("test loop", body, until=lambda: len(turns) >= 5,
                             log=logging.getLogger("test.loops"), failing=failing,
                             backoff=(0.01, 0.02))
    assert len(turns) == 5
    assert seen_failing == [{"test loop": "ConnectionRefusedError: database down"}]
    assert failing.now == {}  # recovered
    messages = [r.getMessage() for r in caplog.records]
    assert sum("failed (retrying with backoff)" in m for m in messages) == 1  # once a streak
    assert any("test loop recovered after" in m for m in messages)
    assert not any(r.exc_info for r in caplog.records)  # an OSError: no traceback


@pytest.mark.anyio
async def test_keep_going_logs_an_unexpected_error_with_its_traceback_and_passes_cancellation(
    caplog: pytest.LogCaptureFixture
) -> None:
    calls = 0

    async def body() -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise KeyError("bad record")
        await anyio.sleep_forever()

    with caplog.at_level(logging.WARNING, logger="test.loops"):
        with anyio.move_on_after(0.5) as scope:
            await keep_going("odd loop", body, log=logging.getLogger("test.loops"),
                             backoff=(0.01, 0.01))
    assert scope.cancelled_caught and calls == 2  # the cancel ended it, not a retry
    assert [bool(r.exc_info) for r in caplog.records] == [True]


# -- a real server ---------------------------------------------------------------------------


def test_a_cron_tick_that_cannot_read_the_records_leaves_the_server_serving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutation-checked: with the scheduler's old bare loop, the stateless run below never
    ends (the run queue's workers were cancelled with the scheduler's task group)."""
    settings = Settings(graphs=graphs.GRAPHS, data_dir=tmp_path / ".graphrun", heartbeat=1.0,
                        drain_grace=0.0)
    app = create_app(settings)
    served = Served(app, settings)
    try:
        state = app.state.server
        extras = state.records.extras
        broken = {"on": True}

        async def unreadable(kind: str) -> dict[str, Any]:
            if broken["on"] and kind == "cron":
                raise sqlite3.OperationalError("disk I/O error")
            return await extras(kind)

        monkeypatch.setattr(state.records, "extras", unreadable)
        with httpx.Client(base_url=served.url, timeout=20) as http:
            thread_id = http.post("/threads", json={}).json()["thread_id"]
            cron = http.post(f"/threads/{thread_id}/runs/crons", json={  # wakes the scheduler
                "assistant_id": "agent", "schedule": "* * * * * *", "input": {"x": 1}})
            assert cron.status_code == 200, cron.text
            ok = _until(lambda: "failing" in (body := http.get("/ok").json()) and body,
                        what="/ok to name the failing loop")
            assert ok["failing"] == {"cron scheduler": "OperationalError: disk I/O error"}
            assert http.get(f"/threads/{thread_id}/runs").json() == []  # nothing fired
            # The rest of the server works meanwhile: a run executes.
            answer = http.post("/runs/wait", json={"assistant_id": "agent", "input": {"x": 1}})
            assert answer.status_code == 200 and answer.json()["x"] == 2
            broken["on"] = False
            _until(lambda: any(r["status"] == "success" for r in
                               http.get(f"/threads/{thread_id}/runs").json()),
                   what="the cron to fire")
            _until(lambda: "failing" not in http.get("/ok").json(), what="the loop to recover")
    finally:
        served.stop()


def test_ok_fails_once_the_background_tasks_have_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should a background task still die (a bug outside every loop's guard), the host no
    longer answers 200 on /ok as if it worked: it names what stopped."""
    from http_adapter.agent_server.crons import CronScheduler

    async def dies(self: Any, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        await anyio.sleep(0.05)
        raise RuntimeError("scheduler bug")

    monkeypatch.setattr(CronScheduler, "serve", dies)
    settings = Settings(graphs=graphs.GRAPHS, data_dir=tmp_path / ".graphrun", heartbeat=1.0,
                        drain_grace=0.0)
    served = Served(create_app(settings), settings)
    try:
        with httpx.Client(base_url=served.url, timeout=10) as http:
            answer = _until(lambda: (found := http.get("/ok")).status_code == 503 and found,
                            what="/ok 503")
            assert answer.json()["ok"] is False
            assert "background tasks stopped" in answer.json()["detail"]
            assert "scheduler bug" in answer.json()["detail"]
    finally:
        served.stop()
