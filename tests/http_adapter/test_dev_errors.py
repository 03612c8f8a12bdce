"""Errors a developer can act on (issue 30 items 1, 9; issue 31 item 14): a failed run's
traceback on the terminal of `graphrun dev`, a one-sentence 422 for an unknown stream mode, a
missing env file that warns instead of refusing to start."""

from __future__ import annotations

import json
import re
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .conftest import Served
from .test_cli import Running, running  # noqa: F401 (a fixture)

FLAKY = textwrap.dedent('''\
    from typing import TypedDict

    from engine import START, StateGraph


    class State(TypedDict, total=False):
        x: int


    def divide(x):
        return 10 // x


    def node(state: State):
        return {"x": divide(state.get("x", 0))}


    builder = StateGraph(State)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    graph = builder.compile()
''')


def _project(root: Path, **config: object) -> Path:
    root.mkdir()
    (root / "flaky.py").write_text(FLAKY)
    (root / "langgraph.json").write_text(json.dumps(
        {"dependencies": ["."], "graphs": {"flaky": "./flaky.py:graph"}, **config}
    ))
    return root


def _wait_for_text(path: Path, text: str) -> str:
    """The file's text once it holds `text` (a generous deadline: the machine may be loaded)."""
    deadline, found = time.monotonic() + 30, ""
    while time.monotonic() < deadline:
        found = path.read_text() if path.exists() else ""
        if text in found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"no {text!r} in {path}:\n{found}")


def test_dev_logs_a_failed_runs_traceback(tmp_path: Path, running: list[Running]) -> None:
    stderr = tmp_path / "stderr.txt"  # the terminal's stderr, apart from stdout's banner
    server = Running(["dev", "--port", "0", "--in-memory"], cwd=_project(tmp_path / "p"),
                     wrapper=("sh", "-c", f'exec "$@" 2>"{stderr}"', "sh"))
    running.append(server)
    thread_id = httpx.post(f"{server.url}/threads", json={}).json()["thread_id"]
    answer = httpx.post(f"{server.url}/threads/{thread_id}/runs/wait",
                        json={"assistant_id": "flaky", "input": {"x": 0}}, timeout=30)
    # the wire keeps the reference's shape (tests/http_adapter/parity pins it)
    assert answer.json() == {"__error__": {"error": "ZeroDivisionError",
                                           "message": "integer division or modulo by zero"}}
    run_id = answer.headers["content-location"].rsplit("/", 1)[1]
    log = _wait_for_text(stderr, "\nZeroDivisionError: integer division or modulo by zero\n")
    head = re.search(r"ERROR: +Run (\S+) failed \(thread (\S+), graph flaky\): ZeroDivision", log)
    assert head is not None, log
    assert head.groups() == (run_id, thread_id)
    flaky = str((tmp_path / "p" / "flaky.py").resolve())
    assert f'File "{flaky}", line 15, in node' in log
    assert f'File "{flaky}", line 11, in divide' in log
    assert "framework frames trimmed" in log
    assert "engine/" not in log and "anyio" not in log  # the framework's frames are gone


def test_dev_starts_without_a_missing_env_file(tmp_path: Path, running: list[Running]) -> None:
    """Issue 31 item 14: a fresh clone of a template names a `.env` it does not ship."""
    root = _project(tmp_path / "p", env=".env")
    server = Running(["dev", "--port", "0", "--in-memory"], cwd=root)
    running.append(server)
    log = "".join(server.output)
    missing = root.resolve() / ".env"
    assert f"graphrun: warning: {root.resolve() / 'langgraph.json'}: env: env file not found: " \
           f"{missing}; starting without it" in log
    assert httpx.post(f"{server.url}/runs/wait",
                      json={"assistant_id": "flaky", "input": {"x": 5}}).json() == {"x": 2}


@pytest.mark.parametrize("path", ["/runs", "/runs/stream"])
def test_unknown_stream_mode_is_one_sentence(server: Served, path: str) -> None:
    """Issue 30 item 9: one line naming the bad mode and the known ones, not a schema dump."""
    with httpx.Client(base_url=server.url) as http:
        if path == "/runs":
            path = f"/threads/{http.post('/threads', json={}).json()['thread_id']}/runs"
        answer = http.post(path, json={"assistant_id": "agent", "stream_mode": ["values", "nope"]})
    assert answer.status_code == 422
    assert answer.json() == {"detail": (
        'Invalid stream_mode "nope": expected one of checkpoints, custom, debug, events, '
        "messages, messages-tuple, tasks, updates, values"
    )}
