"""Shutdown drains the run queue (issue 19 §5): running runs get `drain_grace` seconds to finish;
what is still running then is re-run by the next start, so a rolling restart loses no run.

In-process servers (stopping one is what uvicorn does on SIGTERM: `should_exit`, then the
lifespan's shutdown) plus one real `graphrun serve` sent SIGTERM."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, TypedDict

import anyio
import httpx

from engine import START, StateGraph
from http_adapter.agent_server.settings import Settings

from .test_cli import Running


class _State(TypedDict, total=False):
    nap: float
    x: int


async def _nap(state: _State) -> dict[str, Any]:
    await anyio.sleep(state.get("nap", 0))  # async: cancellable, unlike a sync node's sleep
    return {"x": 1}


_graph = StateGraph(_State)
_graph.add_node("nap", _nap)
_graph.add_edge(START, "nap")
NAP = _graph.compile()


def settings_for(tmp_path: Path, **overrides: Any) -> Settings:
    return Settings(graphs={"nap": NAP}, data_dir=tmp_path / ".graphrun", workers=1,
                    **overrides)


def start_slow_run(url: str, seconds: float) -> tuple[str, str]:
    """A thread run sleeping `seconds` in its first node, once a worker has taken it."""
    with httpx.Client(base_url=url, timeout=10) as client:
        thread = client.post("/threads", json={}).json()["thread_id"]
        run = client.post(f"/threads/{thread}/runs",
                          json={"assistant_id": "nap", "input": {"nap": seconds}}).json()
        deadline = time.monotonic() + 10
        while client.get(f"/threads/{thread}/runs/{run['run_id']}").json()["status"] != "running":
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.02)
    return thread, run["run_id"]


def attempt_after_restart(serve_app: Any, settings: Settings, thread: str, run_id: str) -> int:
    """Restart on the same file, wait for the run, and return the attempt that finished it."""
    url = serve_app(settings).url
    with httpx.Client(base_url=url, timeout=20) as client:
        joined = client.get(f"/threads/{thread}/runs/{run_id}/join")
        assert joined.status_code == 200 and joined.json()["x"] == 1
        record = client.get(f"/threads/{thread}/runs/{run_id}").json()
    assert record["status"] == "success"
    return int(record["kwargs"]["config"]["metadata"]["run_attempt"])


def test_a_run_that_finishes_within_the_grace_is_not_run_again(
    serve_app: Any, tmp_path: Path
) -> None:
    settings = settings_for(tmp_path, drain_grace=10.0)
    first = serve_app(settings)
    thread, run_id = start_slow_run(first.url, 1.0)
    began = time.monotonic()
    first.stop()
    assert 0.4 < time.monotonic() - began < 8  # shutdown waited for the run, not the grace
    assert attempt_after_restart(serve_app, settings, thread, run_id) == 1


def test_a_run_past_the_grace_is_left_for_the_next_start(serve_app: Any, tmp_path: Path) -> None:
    settings = settings_for(tmp_path, drain_grace=0.2)
    first = serve_app(settings)
    thread, run_id = start_slow_run(first.url, 3.0)
    began = time.monotonic()
    first.stop()
    assert time.monotonic() - began < 2.5  # gave up after the grace, did not wait the run out
    assert attempt_after_restart(serve_app, settings, thread, run_id) == 2


def test_graphrun_serve_drains_on_sigterm(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "slow.py").write_text(
        "import time\n"
        "from typing import TypedDict\n"
        "from engine import StateGraph, START\n"
        "class S(TypedDict, total=False):\n"
        "    x: int\n"
        "def nap(state):\n"
        "    time.sleep(1.0)\n"
        "    return {'x': 1}\n"
        "g = StateGraph(S)\n"
        "g.add_node('nap', nap)\n"
        "g.add_edge(START, 'nap')\n"
        "graph = g.compile()\n"
    )
    (project / "langgraph.json").write_text('{"graphs": {"slow": "./slow.py:graph"}}')
    server = Running(["serve", "--port", "0", "--drain-grace", "15"], project)
    with httpx.Client(base_url=server.url, timeout=10) as client:
        thread = client.post("/threads", json={}).json()["thread_id"]
        run = client.post(f"/threads/{thread}/runs", json={"assistant_id": "slow", "input": {"x": 0}}).json()
        deadline = time.monotonic() + 10
        while client.get(f"/threads/{thread}/runs/{run['run_id']}").json()["status"] != "running":
            assert time.monotonic() < deadline
            time.sleep(0.02)
    assert server.stop() == 0  # a drained stop is a clean exit
    again = Running(["serve", "--port", "0"], project)
    try:
        with httpx.Client(base_url=again.url, timeout=10) as client:
            record = client.get(f"/threads/{thread}/runs/{run['run_id']}").json()
    finally:
        again.stop()
        for proc in (server.proc, again.proc):
            assert proc.stdout is not None
            proc.stdout.close()
    # Finished during the drain, before the restart: the first attempt, not a recovered one.
    assert record["status"] == "success", "".join(server.output)
    assert record["kwargs"]["config"]["metadata"]["run_attempt"] == 1


def test_a_node_stuck_in_sync_code_does_not_keep_graphrun_from_stopping(tmp_path: Path) -> None:
    """Cancelling cannot stop a thread: after the drain gives the run up, the process still
    ends (within the graceful 5 s + the grace + 5 s), and the next start re-runs the run."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "stuck.py").write_text(
        "import time\n"
        "from pathlib import Path\n"
        "from typing import TypedDict\n"
        "from engine import StateGraph, START\n"
        "class S(TypedDict, total=False):\n"
        "    x: int\n"
        "def wait(state):\n"
        "    go = Path(__file__).with_name('go')\n"
        "    deadline = time.monotonic() + 40\n"
        "    while not go.exists() and time.monotonic() < deadline:\n"
        "        time.sleep(0.05)\n"
        "    return {'x': 1}\n"
        "g = StateGraph(S)\n"
        "g.add_node('wait', wait)\n"
        "g.add_edge(START, 'wait')\n"
        "graph = g.compile()\n"
    )
    (project / "langgraph.json").write_text('{"graphs": {"stuck": "./stuck.py:graph"}}')
    server = Running(["serve", "--port", "0", "--drain-grace", "0.5"], project)
    with httpx.Client(base_url=server.url, timeout=10) as client:
        thread = client.post("/threads", json={}).json()["thread_id"]
        run = client.post(f"/threads/{thread}/runs",
                          json={"assistant_id": "stuck", "input": {"x": 0}}).json()
        deadline = time.monotonic() + 10
        while client.get(f"/threads/{thread}/runs/{run['run_id']}").json()["status"] != "running":
            assert time.monotonic() < deadline
            time.sleep(0.02)
    began = time.monotonic()
    assert server.stop() == 0
    assert time.monotonic() - began < 14  # not the node's 40 s
    assert "exiting; its run is re-run" in "".join(server.output)
    (project / "go").write_text("")
    again = Running(["serve", "--port", "0"], project)
    try:
        with httpx.Client(base_url=again.url, timeout=20) as client:
            path = f"/threads/{thread}/runs/{run['run_id']}"
            assert client.get(f"{path}/join").json()["x"] == 1
            record = client.get(path).json()
    finally:
        again.stop()
        for proc in (server.proc, again.proc):
            assert proc.stdout is not None
            proc.stdout.close()
    assert record["status"] == "success"
    assert record["kwargs"]["config"]["metadata"]["run_attempt"] == 2
