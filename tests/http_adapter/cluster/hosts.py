"""Several real `graphrun serve` processes on one PostgreSQL database and one Redis (issue 19).

`Hosts` starts each process like a user would (the CLI, `--database-url` / `--redis-url`) on a
free loopback port, in its own process group, and can SIGKILL, SIGTERM and start them again.
The project's graph writes what each node does to `ran.log`, so a test can count executions;
its `slow` node waits for a `go` file, so a test can stop a host while a run is inside it
(`agent`: a sync node, which a cancel abandons at once; `agent_async`: an async one, which a
cancel stops at once).
Set HOSTS_LOG_LEVEL=info (or debug) to see what each host did in `<tmp>/hostN.log`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx

from tests.services import free_port

__all__ = ["GRAPH", "Host", "Hosts", "log_lines", "wait_until"]

GRAPH = '''
import asyncio, operator, os, time
from pathlib import Path
from typing import Annotated, TypedDict
from engine import StateGraph, START

HERE = Path(__file__).parent
LOG = HERE / "ran.log"

class State(TypedDict, total=False):
    tag: str
    log: Annotated[list, operator.add]

def _note(state, what):
    with LOG.open("a") as f:
        f.write(f"{state.get('tag', '-')} {what} {os.getpid()}\\n")

def first(state):
    _note(state, "first")
    return {"log": ["first"]}

def slow(state):
    _note(state, "slow-start")
    deadline = time.monotonic() + 50
    while not (HERE / "go").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    _note(state, "slow-done")
    return {"log": ["slow"]}

async def aslow(state):
    _note(state, "slow-start")
    deadline = time.monotonic() + 50
    while not (HERE / "go").exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    _note(state, "slow-done")
    return {"log": ["slow"]}

def last(state):
    _note(state, "last")
    return {"log": ["last"]}

def _three_steps(middle):
    builder = StateGraph(State)
    builder.add_node("first", first)
    builder.add_node("slow", middle)
    builder.add_node("last", last)
    builder.add_edge(START, "first")
    builder.add_edge("first", "slow")
    builder.add_edge("slow", "last")
    return builder.compile()

graph = _three_steps(slow)  # a sync graph: a cancel abandons its worker thread mid-node
async_graph = _three_steps(aslow)  # its slow node stops the moment its run is cancelled

def quick(state):
    _note(state, "quick")
    return {"log": ["quick"]}

quick_builder = StateGraph(State)
quick_builder.add_node("quick", quick)
quick_builder.add_edge(START, "quick")
quick_graph = quick_builder.compile()
'''


def wait_until(check, timeout: float = 20.0, what: str = "condition") -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def log_lines(project: Path) -> list[list[str]]:
    path = project / "ran.log"
    return [line.split() for line in path.read_text().splitlines()] if path.exists() else []


class Host:
    """One `graphrun serve` process."""

    def __init__(self, name: str, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = cwd / f"{name}.log"
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child keeps its own descriptor
        try:
            self.proc = subprocess.Popen(
                [*argv, "--port", str(self.port)], cwd=cwd, env=env, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True,
            )
        finally:
            log.close()

    def wait_ready(self, timeout: float = 30.0) -> Host:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"{self.name} exited: {self.log_path.read_text()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/ok", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"{self.name} did not start: {self.log_path.read_text()[-3000:]}")

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30)

    def kill(self) -> None:
        """SIGKILL: the host dies mid-whatever, leases and all."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def signal_term(self) -> None:
        """SIGTERM, as a rolling restart does (the host drains, then exits)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)

    def terminate(self, timeout: float = 30.0) -> int:
        """SIGTERM and wait for the drain to end; the exit code."""
        self.signal_term()
        return self.proc.wait(timeout)


class Hosts:
    """The project directory and every host started on it; `close()` kills what is left."""

    def __init__(self, root: Path, database_url: str, redis_url: str | None,
                 extra: list[str] | None = None) -> None:
        self.project = root
        (root / "graph.py").write_text(textwrap.dedent(GRAPH))
        (root / "langgraph.json").write_text(json.dumps({
            "dependencies": ["."],
            "graphs": {"agent": "./graph.py:graph", "agent_async": "./graph.py:async_graph",
                       "quick": "./graph.py:quick_graph"},
        }))
        self._argv = [sys.executable, "-m", "http_adapter.cli", "serve", "--config",
                      str(root / "langgraph.json"), "--database-url", database_url,
                      "--log-level", os.environ.get("HOSTS_LOG_LEVEL", "warning"), *(extra or [])]
        if redis_url is not None:
            self._argv += ["--redis-url", redis_url]
        self._env = {k: v for k, v in os.environ.items()
                     if k not in ("DATABASE_URI", "REDIS_URI")}
        self.started: list[Host] = []

    def start(self, count: int = 1) -> list[Host]:
        """`count` more hosts, started together; returns once every one answers `/ok`."""
        hosts = [Host(f"host{len(self.started) + i}", self._argv, self.project, self._env)
                 for i in range(count)]
        self.started += hosts
        return [host.wait_ready() for host in hosts]

    def go(self) -> None:
        (self.project / "go").write_text("")

    def close(self) -> None:
        for host in self.started:
            host.kill()
