"""Real control planes for the tests: uvicorn on 127.0.0.1 (an ephemeral port) in a thread, with
its deployer starting real `graphrun serve` processes. Every agent server a test starts is
stopped by the fixtures, whatever the test did (no orphans)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from cryptography.fernet import Fernet

from http_adapter.control_plane import ControlPlaneSettings, create_app
from http_adapter.control_plane._processes import pid_alive, runs_from

KEY = "org-key-0123456789"
SECRET_KEY = Fernet.generate_key().decode()
TENANT = "11111111-1111-4111-8111-111111111111"
OTHER_TENANT = "22222222-2222-4222-8222-222222222222"

GRAPH = '''\
import os
from typing import TypedDict

from engine import END, START, StateGraph


class State(TypedDict, total=False):
    text: str
    version: str
    secret: str


def answer(state: State) -> dict:
    return {{"text": state.get("text", "") + "{suffix}", "version": "{version}",
            "secret": os.environ.get("MY_SECRET", "")}}


builder = StateGraph(State)
builder.add_node("answer", answer)
builder.add_edge(START, "answer")
builder.add_edge("answer", END)
graph = builder.compile()
'''


def write_project(directory: Path, version: str = "v1", *, broken: bool = False) -> Path:
    """A tiny langgraph.json project whose graph `agent` answers with `version`."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "langgraph.json").write_text('{"dependencies": ["."], "graphs": {"agent": "./agent.py:graph"}}')
    code = GRAPH.format(version=version, suffix="!" if version == "v1" else "?")
    if broken:  # a StateGraph the server would compile: the edge to a missing node fails then
        code = code.replace('builder.add_edge("answer", END)', 'builder.add_edge("answer", "nowhere")')
        code = code.replace("graph = builder.compile()", "graph = builder")
    (directory / "agent.py").write_text(code)
    return directory


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def git_project(repo: Path, version: str = "v1") -> Path:
    """A git repository (branch main) holding the project; a new commit per call."""
    first = not (repo / ".git").exists()
    write_project(repo, version)
    if first:
        git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", version)
    return repo


class ControlPlaneServer:
    """A running control plane: URL, settings, an httpx client with the org's key, and stop()."""

    def __init__(self, settings: ControlPlaneSettings) -> None:
        self.settings = settings
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on such sockets (no 40 ms waits).
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._server = uvicorn.Server(uvicorn.Config(create_app(settings), log_level="warning",
                                                     lifespan="on"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the control plane did not start")
            time.sleep(0.005)
        self.http = httpx.Client(base_url=self.url, headers={"X-Api-Key": KEY, "X-Tenant-Id": TENANT},
                                 timeout=30)
        self.stopped = False

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        self.http.close()
        self._server.should_exit = True
        self._thread.join(30)
        self._sock.close()

    # -- helpers for the tests -----------------------------------------------------------------

    def create(self, project: Path | str, name: str = "agent", *, source: str = "local",
               secrets: list[dict[str, str]] | None = None, **revision: Any) -> dict[str, Any]:
        response = self.http.post("/v2/deployments", json={
            "name": name, "source": source, "source_config": {"repo_url": str(project)},
            "source_revision_config": {"langgraph_config_path": "langgraph.json", **revision},
            "secrets": secrets or [],
        })
        assert response.status_code == 201, response.text
        return response.json()  # type: ignore[no-any-return]

    def wait(self, deployment_id: str, revision_id: str, timeout: float = 30) -> dict[str, Any]:
        """Poll the revision until DEPLOYED or *_FAILED (as the quick start does)."""
        deadline = time.monotonic() + timeout
        while True:
            revision = self.http.get(f"/v2/deployments/{deployment_id}/revisions/{revision_id}").json()
            if revision["status"] == "DEPLOYED" or "FAILED" in revision["status"]:
                return revision  # type: ignore[no-any-return]
            assert time.monotonic() < deadline, revision
            time.sleep(0.05)

    def deployment(self, deployment_id: str) -> dict[str, Any]:
        response = self.http.get(f"/v2/deployments/{deployment_id}")
        assert response.status_code == 200, response.text
        return response.json()  # type: ignore[no-any-return]


@pytest.fixture
def start_control_plane(tmp_path: Path) -> Iterator[Callable[..., ControlPlaneServer]]:
    """`start(**settings) -> ControlPlaneServer`; defaults: state in tmp_path/control, the org key
    KEY, fast supervision, servers stopped on exit. Teardown stops every control plane, then
    kills any agent server still running from a deployment directory."""
    started: list[ControlPlaneServer] = []

    def start(**overrides: Any) -> ControlPlaneServer:
        values: dict[str, Any] = {
            "data_dir": tmp_path / "control", "api_keys": frozenset({KEY}),
            "secret_key": SECRET_KEY, "monitor_interval": 0.1, "restart_delay": 0.1,
            "stop_timeout": 5.0, "stop_servers_on_exit": True, "server_log_level": "warning",
        }
        values.update(overrides)
        server = ControlPlaneServer(ControlPlaneSettings(**values))
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.stop()
        _kill_strays(tmp_path)


def _kill_strays(root: Path) -> None:
    for pid_file in root.glob("**/deployments/*/revisions/*/server.pid"):
        try:
            pid = int(pid_file.read_text())
        except (OSError, ValueError):
            continue
        if pid_alive(pid) and runs_from(pid, str(pid_file.parent)):
            os.killpg(pid, signal.SIGKILL)


@pytest.fixture
def control_plane(start_control_plane: Callable[..., ControlPlaneServer]) -> ControlPlaneServer:
    return start_control_plane()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "project")


def stored_bytes(cp: ControlPlaneServer) -> bytes:
    """Everything the control plane's SQLite file (and its WAL) holds, as raw bytes."""
    return b"".join(p.read_bytes() for p in cp.settings.data_dir.glob("control.sqlite*"))
