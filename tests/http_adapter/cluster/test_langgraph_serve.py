"""A LangGraph-built project on `graphrun serve` with PostgreSQL + Redis (issue 28 item 1).

The template-shaped project of `tests/http_adapter/langgraph_projects/` (real `langgraph`
imports, unchanged) on two `graphrun serve` processes sharing one database: LangGraph's runtime
executes it, its checkpoints go to graphrun's PostgreSQL saver, so a run interrupted on one host
resumes on the other and both read the same history.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from .hosts import Host

PROJECT = Path(__file__).parent.parent / "langgraph_projects" / "template"


@pytest.fixture
def hosts(tmp_path: Path, pg_url: str, redis_url: str) -> Iterator[list[Host]]:
    root = tmp_path / "template"
    shutil.copytree(PROJECT, root)
    argv = [sys.executable, "-m", "http_adapter.cli", "serve", "--config",
            str(root / "langgraph.json"), "--database-url", pg_url, "--redis-url", redis_url,
            "--log-level", "warning"]
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URI", "REDIS_URI")}
    started = [Host(f"host{i}", argv, root, env) for i in range(2)]
    try:
        yield [host.wait_ready() for host in started]
    finally:
        for host in started:
            host.kill()


def test_langgraph_project_on_postgres_and_redis(hosts: list[Host]) -> None:
    a, b = (get_sync_client(url=host.url) for host in hosts)
    banner = hosts[0].log_path.read_text()
    assert "Graphs:  agent (LangGraph runtime)" in banner, banner
    tid = a.threads.create()["thread_id"]
    first = [part.data for part in a.runs.stream(
        tid, "agent", input={"topic": "tides"}, context={"greeting": "Hi"},
        stream_mode="values") if part.event == "values"]
    assert first[-1]["__interrupt__"][0]["value"]["summary"] == "polished 1 note(s)"
    assert b.threads.get(tid)["status"] == "interrupted"
    done = b.runs.wait(tid, "agent", command={"resume": "ship it"})  # the other host
    assert done["verdict"] == "ship it" and done["notes"] == ["Hi, tides"]
    history = a.threads.get_history(tid, limit=20)
    assert [h["metadata"]["step"] for h in history] == [3, 2, 1, 0, -1]
    assert len({h["metadata"].get("run_id") for h in history}) == 2
    review = next(h for h in history if h["next"] == ["review"])
    forked = a.threads.update_state(tid, {"notes": ["edited"]},
                                    checkpoint_id=review["checkpoint_id"])
    ended = b.runs.wait(tid, "agent", command={"resume": "no"},
                        checkpoint_id=forked["checkpoint_id"])
    assert (ended["verdict"], ended["notes"]) == ("no", ["Hi, tides", "edited"])
    # the first branch, read on the host that did not write it, is as it was
    first_end = b.threads.get_state(tid, checkpoint_id=history[0]["checkpoint_id"])
    assert (first_end["values"]["verdict"], first_end["next"]) == ("ship it", [])
