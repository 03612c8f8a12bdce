"""`graphrun dev` reloads on save (issue 30 item 2): a real `graphrun dev` subprocess, a graph
file edited while it runs. The server answers with the new code, threads made before the edit
keep their history, a run in flight across the reload is resumed and ends in success (as
`langgraph dev` retries the runs a stopped process left running), and `--no-reload` keeps the
code it started with."""

from __future__ import annotations

import json
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .test_cli import Running, running  # noqa: F401 (a fixture)

GRAPHS = textwrap.dedent('''\
    from pathlib import Path
    from typing import TypedDict

    import anyio

    from engine import START, StateGraph

    GO = Path(__file__).with_name("go")


    class State(TypedDict, total=False):
        answer: str


    def answer(state: State):
        return {"answer": "v1"}


    async def wait(state: State):
        while not GO.exists():  # async: the drain can cancel it, as a reload does
            await anyio.sleep(0.05)
        return {"answer": "waited"}


    agent = StateGraph(State)
    agent.add_node("answer", answer)
    agent.add_edge(START, "answer")
    agent = agent.compile()

    slow = StateGraph(State)
    slow.add_node("wait", wait)
    slow.add_edge(START, "wait")
    slow = slow.compile()
''')


def _answer(http: httpx.Client) -> str:
    """What the agent graph answers now (a connection the reload closed: nothing yet)."""
    try:
        return str(http.post("/runs/wait", json={"assistant_id": "agent", "input": {}}).json())
    except httpx.TransportError as error:
        return repr(error)


def _wait_for(check: object, what: str, deadline: float = 60) -> None:
    """Poll `check()` until true (a generous deadline: a reload restarts Python)."""
    end = time.monotonic() + deadline
    while not check():  # type: ignore[operator]
        assert time.monotonic() < end, what
        time.sleep(0.1)


@pytest.mark.timeout(150)
def test_dev_reloads_a_saved_graph_and_keeps_threads_and_runs(
    tmp_path: Path, running: list[Running]
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    graph = project / "graphs.py"
    graph.write_text(GRAPHS)
    (project / "langgraph.json").write_text(json.dumps({"dependencies": ["."], "graphs": {
        "agent": "./graphs.py:agent", "slow": "./graphs.py:slow"}}))
    server = Running(["dev", "--port", "0", "--drain-grace", "0.5"], project)
    running.append(server)
    # the same project without reload, on its own data dir (it must keep the old code)
    fixed = Running(["dev", "--port", "0", "--no-reload", "--data-dir", str(tmp_path / "d2")],
                    project)
    running.append(fixed)
    with httpx.Client(base_url=server.url, timeout=30) as http:
        thread = http.post("/threads", json={}).json()["thread_id"]
        first = http.post(f"/threads/{thread}/runs/wait",
                          json={"assistant_id": "agent", "input": {}}).json()
        assert first == {"answer": "v1"}
        waiting = http.post("/threads", json={}).json()["thread_id"]
        run = http.post(f"/threads/{waiting}/runs",
                        json={"assistant_id": "slow", "input": {}}).json()["run_id"]
        _wait_for(lambda: http.get(f"/threads/{waiting}/runs/{run}").json()["status"]
                  == "running", "the slow run never started")

        graph.write_text(GRAPHS.replace('"v1"', '"v2"'))
        _wait_for(lambda: _answer(http) == str({"answer": "v2"}), "never reloaded")
        server.wait_for(r"(graphrun dev: reloaded)")

        history = http.get(f"/threads/{thread}/history").json()
        assert history and history[0]["values"] == {"answer": "v1"}  # made before the edit
        assert http.get(f"/threads/{thread}").json()["values"] == {"answer": "v1"}
        (project / "go").write_text("")
        joined = http.get(f"/threads/{waiting}/runs/{run}/join").json()
        assert joined == {"answer": "waited"}
        record = http.get(f"/threads/{waiting}/runs/{run}").json()
        assert record["status"] == "success"
        assert record["kwargs"]["config"]["metadata"]["run_attempt"] == 2  # resumed once

        config = project / "langgraph.json"  # the config saved: a graph added
        config.write_text(config.read_text().replace('"slow":', '"again": "./graphs.py:agent", "slow":'))

        def served() -> set[str]:
            try:
                found = http.post("/assistants/search", json={"limit": 100}).json()
            except httpx.TransportError:
                return set()
            return {a["graph_id"] for a in found}

        _wait_for(lambda: "again" in served(), "the new config was never loaded")
        assert http.get(f"/threads/{waiting}/runs/{run}").json()["status"] == "success"
    with httpx.Client(base_url=fixed.url, timeout=30) as http:
        assert _answer(http) == str({"answer": "v1"})  # saw the same save, did not reload
    assert server.stop() == 0
    assert fixed.stop() == 0
    out = "".join(server.output)
    assert "graphrun dev: graphs.py changed: reloading" in out
    assert "graphrun dev: langgraph.json changed: reloading" in out
    assert "Reload:  on" in out and "Reload:  off" in "".join(fixed.output)


def test_what_a_reload_watches(tmp_path: Path) -> None:
    """.py files and the config (and its env file) of the project, its dependencies and its
    graphs' directories; not .venv, __pycache__, .git or the data directory."""
    from watchfiles import Change

    from http_adapter._reload import _filter, watched

    project, lib, elsewhere = tmp_path / "p", tmp_path / "lib", tmp_path / "g"
    for directory in (project / "sub", lib, elsewhere):
        directory.mkdir(parents=True)
    config = project / "langgraph.json"
    config.write_text(json.dumps({"dependencies": [".", "../lib", "./sub"], "env": ".env",
                                  "graphs": {"a": "../g/graph.py:graph", "b": {"path": "m:g"}}}))
    dirs, files = watched(config)
    assert sorted(dirs) == sorted([project.resolve(), lib.resolve(), elsewhere.resolve()])
    keep = _filter(files, project.resolve() / "data")
    kept = [name for name in ("graph.py", "sub/x.py", "langgraph.json", ".env", "notes.txt",
                              ".venv/lib/site.py", "__pycache__/graph.py", ".git/hook.py",
                              "data/x.py", "graph.pyc")
            if keep(Change.modified, str(project.resolve() / name))]
    assert kept == ["graph.py", "sub/x.py", "langgraph.json", ".env"]


def test_the_server_stops_when_graphrun_dev_is_killed(tmp_path: Path,
                                                      running: list[Running]) -> None:
    """SIGKILL leaves the supervisor no time to stop its server: the server stops by itself
    rather than serve on, orphaned, holding the port and the database."""
    project = tmp_path / "p"
    project.mkdir()
    (project / "graphs.py").write_text(GRAPHS)
    (project / "langgraph.json").write_text(json.dumps({"graphs": {"agent": "./graphs.py:agent"}}))
    server = Running(["dev", "--port", "0"], project)
    running.append(server)
    children = Path(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children").read_text().split()
    assert len(children) == 1
    server.proc.kill()
    server.proc.wait(10)


    def gone() -> bool:  # ended (or a zombie: its parent, gone, will not reap it)
        try:
            return "State:\tZ" in Path(f"/proc/{children[0]}/status").read_text()
        except FileNotFoundError:
            return True

    _wait_for(gone, "the server outlived graphrun dev")
