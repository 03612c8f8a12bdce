"""Split brain (issue 26, finding 2): a host paused past its lease (SIGSTOP, as a VM stall or a
partition) resumes while another host owns its runs. Its stale attempts must write nothing (no
checkpoint of theirs becomes a thread's latest: no rollback) and start no step (no step of a run
executes on two hosts at once); every run ends `success` with each of its steps in its state.

Two real `graphrun serve` hosts on one PostgreSQL and Redis. The project's `steps` graph runs one
async node `STEPS` times, each adding (step, pid) to the state, and logs each start and end
(tag, what, step, pid) to `steps.log`, one appended line each: the file's order is the order they happened in, across processes. A node
waits while a `hold-<step>` or `hold-<tag>-<step>` file exists, so the test decides where each
run stands when a host is stopped, resumed, or taken over.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import asyncpg
import httpx
import pytest

from .hosts import Host, Hosts, wait_until

STEPS = 6
FAST = ["--lease-seconds", "2", "--reaper-seconds", "0.5", "--drain-grace", "1"]
STEPS_GRAPH = f'''
import asyncio, operator, os
from pathlib import Path
from typing import Annotated, TypedDict
from engine import StateGraph, START, END

HERE = Path(__file__).parent

class State(TypedDict, total=False):
    tag: str
    done: Annotated[list, operator.add]

def _note(tag, what, n):
    with (HERE / "steps.log").open("a") as f:
        f.write(f"{{tag}} {{what}} {{n}} {{os.getpid()}}\\n")

async def step(state):
    tag, n = state["tag"], len(state.get("done") or [])
    _note(tag, "start", n)
    while (HERE / f"hold-{{n}}").exists() or (HERE / f"hold-{{tag}}-{{n}}").exists():
        await asyncio.sleep(0.02)
    _note(tag, "end", n)
    return {{"done": [[n, os.getpid()]]}}  # which host's attempt wrote it

def more(state):
    return "step" if len(state["done"]) < {STEPS} else END

builder = StateGraph(State)
builder.add_node("step", step)
builder.add_edge(START, "step")
builder.add_conditional_edges("step", more, ["step", END])
graph = builder.compile()
'''
SHORT, LONG = ("s0", "s1"), ("l0", "l1")  # end before the stale host resumes / still running


@pytest.fixture
def hosts(tmp_path: Path, pg_url: str, redis_url: str) -> Iterator[Hosts]:
    made = Hosts(tmp_path, pg_url, redis_url, FAST)
    (tmp_path / "steps.py").write_text(STEPS_GRAPH)
    config = json.loads((tmp_path / "langgraph.json").read_text())
    config["graphs"]["steps"] = "./steps.py:graph"
    (tmp_path / "langgraph.json").write_text(json.dumps(config))
    yield made
    for host in made.started:  # a stopped host must be able to die
        if host.proc.poll() is None:
            os.killpg(host.proc.pid, signal.SIGCONT)
    made.close()


def _log(project: Path) -> list[tuple[str, str, int, int]]:
    path = project / "steps.log"
    lines = path.read_text().splitlines() if path.exists() else []
    return [(tag, what, int(n), int(pid)) for tag, what, n, pid in map(str.split, lines)]


def _runs(url: str) -> list[dict[str, Any]]:
    async def read() -> list[dict[str, Any]]:
        conn = await asyncpg.connect(url)
        try:
            rows = await conn.fetch("SELECT run_id, status, attempt, owner FROM server_runs")
        finally:
            await conn.close()
        return [dict(row) for row in rows]

    return anyio.run(read)


def _busy(host: Host) -> int:
    figures = httpx.get(f"{host.url}/metrics", params={"format": "json"}, timeout=10).json()
    return int(figures["workers"]["active"])


def _hold(project: Path, name: str, on: bool) -> None:
    path = project / f"hold-{name}"
    if on:
        path.write_text("")
    else:
        path.unlink()


def test_a_host_paused_past_its_lease_writes_nothing_and_runs_no_step_again(
    hosts: Hosts, pg_url: str
) -> None:
    project = hosts.project
    a, b = hosts.start(2)
    started: dict[str, dict[str, Any]] = {}
    _hold(project, "1", True)  # every run stops in its second step
    for tag in LONG:
        _hold(project, f"{tag}-4", True)  # the long ones, later, in their fifth
    with a.client() as on_a:
        for tag in (*SHORT, *LONG):
            thread_id = on_a.post("/threads", json={}).json()["thread_id"]
            response = on_a.post(f"/threads/{thread_id}/runs",
                                 json={"assistant_id": "steps", "input": {"tag": tag}})
            assert response.status_code == 200, response.text
            started[tag] = response.json()
    tags = set(started)

    def reached(step: int, pid: int, among: set[str]) -> bool:
        return among <= {t for t, what, n, p in _log(project)
                         if what == "start" and n == step and p == pid}

    wait_until(lambda: reached(1, a.proc.pid, tags), what="every run in its second step on A")
    assert {run["owner"].split(":")[1] for run in _runs(pg_url)} == {str(a.proc.pid)}

    os.killpg(a.proc.pid, signal.SIGSTOP)  # A stalls past its lease, mid-step
    _hold(project, "1", False)
    wait_until(lambda: all(r["attempt"] == 2 for r in _runs(pg_url)), timeout=30,
               what="B taking every run over")
    with b.client() as on_b:

        def status(tag: str) -> str:
            run = started[tag]
            return str(on_b.get(f"/threads/{run['thread_id']}/runs/{run['run_id']}")
                       .json()["status"])

        wait_until(lambda: all(status(t) == "success" for t in SHORT), timeout=30,
                   what="the short runs ending on B")
        wait_until(lambda: reached(4, b.proc.pid, set(LONG)), what="the long runs held on B")

        os.killpg(a.proc.pid, signal.SIGCONT)  # A resumes: its attempts are stale
        wait_until(lambda: _busy(a) == 0, timeout=30, what="A's stale attempts stopping")
        for tag in LONG:
            _hold(project, f"{tag}-4", False)
        wait_until(lambda: all(status(t) == "success" for t in tags), timeout=30,
                   what="every run ending")

        # No rollback: each thread's latest checkpoint is B's last, on A's first step.
        done = [[0, a.proc.pid]] + [[n, b.proc.pid] for n in range(1, STEPS)]
        for tag, run in started.items():
            state = on_b.get(f"/threads/{run['thread_id']}/state").json()
            assert state["values"]["done"] == done, (tag, state["values"])

    log = _log(project)
    assert {pid for *_, pid in log} == {a.proc.pid, b.proc.pid}
    for tag in tags:
        mine = [(i, what, n, pid) for i, (t, what, n, pid) in enumerate(log) if t == tag]
        taken = min(i for i, what, _, pid in mine if pid == b.proc.pid)
        # A's step that the stall caught may finish after B took over; A starts no other
        late = [(what, n) for i, what, n, pid in mine if pid == a.proc.pid and i > taken]
        assert late in ([], [("end", 1)]), (tag, late)
        # every step ran to its end once on B, from the one A's stall interrupted
        assert [(what, n) for _, what, n, pid in mine if pid == b.proc.pid] == [
            (what, n) for n in range(1, STEPS) for what in ("start", "end")
        ], tag
