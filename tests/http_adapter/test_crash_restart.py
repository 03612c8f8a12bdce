"""A real `graphrun serve` process killed with SIGKILL mid-run, then started again on the same
SQLite file: the run is retried from its last checkpoint (attempt 2) and nothing is lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.services import free_port

GRAPH = '''
import operator, time
from pathlib import Path
from typing import Annotated, TypedDict
from engine import StateGraph, START

LOG = Path(__file__).with_name("ran.log")

class State(TypedDict, total=False):
    log: Annotated[list, operator.add]

def first(state):
    with LOG.open("a") as f:
        f.write("first\\n")
    return {"log": ["first"]}

def slow(state):
    with LOG.open("a") as f:
        f.write("slow-start\\n")
    if not Path(__file__).with_name("go").exists():
        time.sleep(60)  # the test kills the process here
    return {"log": ["slow"]}

builder = StateGraph(State)
builder.add_node("first", first)
builder.add_node("slow", slow)
builder.add_edge(START, "first")
builder.add_edge("first", "slow")
graph = builder.compile()
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "graph.py").write_text(textwrap.dedent(GRAPH))
    (tmp_path / "langgraph.json").write_text(json.dumps(
        {"dependencies": ["."], "graphs": {"agent": "./graph.py:graph"}}
    ))
    return tmp_path


@pytest.fixture
def start(project: Path) -> Iterator[object]:
    procs: list[subprocess.Popen[bytes]] = []

    def launch() -> str:
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "http_adapter.cli", "serve", "--config",
             str(project / "langgraph.json"), "--port", str(port)],
            cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        procs.append(proc)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/ok", timeout=1).status_code == 200:
                    return url
            except httpx.HTTPError:
                time.sleep(0.05)
        raise AssertionError("server did not start")

    launch.procs = procs  # type: ignore[attr-defined]
    yield launch
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_sigkill_mid_run_then_restart_retries_from_the_last_checkpoint(
    project: Path, start: object
) -> None:
    url = start()  # type: ignore[operator]
    with httpx.Client(base_url=url, timeout=30) as http:
        thread_id = http.post("/threads", json={}).json()["thread_id"]
        run = http.post(f"/threads/{thread_id}/runs",
                        json={"assistant_id": "agent", "input": {"log": []}}).json()
        ran = project / "ran.log"
        deadline = time.monotonic() + 20
        while "slow-start" not in (ran.read_text() if ran.exists() else ""):
            assert time.monotonic() < deadline, "the slow node never started"
            time.sleep(0.05)
    killed = start.procs[-1]  # type: ignore[attr-defined]
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait(10)

    (project / "go").write_text("")  # the retried node finishes this time
    url = start()  # type: ignore[operator]
    with httpx.Client(base_url=url, timeout=30) as http:
        joined = http.get(f"/threads/{thread_id}/runs/{run['run_id']}/join").json()
        assert joined["log"] == ["first", "slow"]
        assert http.get(f"/threads/{thread_id}/runs/{run['run_id']}").json()["status"] == "success"
        assert http.get(f"/threads/{thread_id}").json()["status"] == "idle"
    lines = (project / "ran.log").read_text().split()
    assert lines.count("first") == 1  # the finished step was not run again
    assert lines.count("slow-start") == 2
