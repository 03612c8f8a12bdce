"""The `graphrun` console script: the real command in a subprocess, driven over HTTP."""

from __future__ import annotations

import os
import queue
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx
import pytest

from http_adapter import cli

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples"


def graphrun_command() -> list[str]:
    """The installed console script next to this interpreter (it is what users run)."""
    script = shutil.which("graphrun", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "http_adapter.cli"]


class Running:
    """`graphrun ...` in a subprocess; `url` is read from the banner it prints."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str] | None = None,
                 wrapper: Sequence[str] = ()) -> None:
        self.proc = subprocess.Popen(
            [*wrapper, *graphrun_command(), *args], cwd=cwd, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, env={**os.environ, **(env or {})},
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.output: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.url = self.wait_for(r"(http://127\.0\.0\.1:\d+)")
        self._wait_ok()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def wait_for(self, pattern: str, timeout: float = 20) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            self.output.append(line)
            if found := re.search(pattern, line):
                return found.group(1)
        raise AssertionError(f"no {pattern!r} in the output:\n{''.join(self.output)}")

    def _wait_ok(self) -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/ok", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        raise AssertionError("the server never answered /ok")

    def stop(self) -> int:
        """SIGTERM, as a process manager sends it; returns the exit status."""
        self.proc.terminate()
        try:
            code = self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("graphrun did not stop on SIGTERM") from None
        time.sleep(0.05)  # let the reader thread take the last lines
        while not self.lines.empty():
            self.output.append(self.lines.get())
        return code


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the bundled example project."""
    root = tmp_path / "project"
    root.mkdir()
    for path in [EXAMPLE / "langgraph.json", *EXAMPLE.glob("*.py")]:
        shutil.copy(path, root / path.name)
    return root


@pytest.fixture
def running() -> Iterator[list[Running]]:
    """Servers a test started, stopped (and their output pipes closed) when it ends; the
    other CLI test files import this fixture."""
    started: list[Running] = []
    yield started
    for server in started:
        if server.proc.poll() is None:
            server.stop()
        if server.proc.stdout is not None:
            server.proc.stdout.close()


def test_dev_serves_the_example_on_sqlite(project: Path, running: list[Running]) -> None:
    server = Running(["dev", "--port", "0"], cwd=project)
    running.append(server)
    server.wait_for(r"(Graphs:.*)")
    banner = "".join(server.output)
    assert f"Docs:    {server.url}/docs" in banner
    assert "Graphs:  agent, chat, approval" in banner
    assert f"Studio:  {server.url}/" in banner
    info = httpx.get(f"{server.url}/info").json()
    assert info["version"]
    assistants = httpx.post(f"{server.url}/assistants/search", json={}).json()
    assert sorted(a["graph_id"] for a in assistants) == ["agent", "approval", "chat"]
    result = httpx.post(f"{server.url}/runs/wait", timeout=10,
                        json={"assistant_id": "agent", "input": {"topic": "otters"}}).json()
    assert result["revision"] == 2 and result["approved"] is True
    assert len(result["notes"]) == 6  # research 2 + (write, review) x 2: the reducer and the loop
    # uvicorn shuts down gracefully, then re-raises the signal it caught (exit by SIGTERM)
    assert server.stop() in (0, -signal.SIGTERM)
    assert "Application shutdown complete" in "".join(server.output)
    assert (project / ".graphrun" / "graphrun.sqlite").is_file()


def test_in_memory_leaves_nothing_on_disk(project: Path, running: list[Running]) -> None:
    config = project / "langgraph.json"
    elsewhere = project.parent / "cwd"
    elsewhere.mkdir()
    server = Running(["serve", "--config", str(config), "--port", "0", "--in-memory",
                      "--workers", "2"], cwd=elsewhere)
    running.append(server)
    assert httpx.get(f"{server.url}/metrics", params={"format": "json"}).json()["workers"]["max"] == 2
    thread = httpx.post(f"{server.url}/threads", json={}).json()["thread_id"]
    done = httpx.post(f"{server.url}/threads/{thread}/runs/wait", timeout=10,
                      json={"assistant_id": "agent", "input": {"topic": "x"}})
    assert done.status_code == 200
    server.stop()
    assert not (project / ".graphrun").exists() and not (elsewhere / ".graphrun").exists()


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="util-linux's prlimit is missing")
def test_serve_raises_its_open_files_limit(project: Path, running: list[Running]) -> None:
    """Each open stream holds a socket (on Redis, a connection too): a soft limit of 256 is
    raised to the hard one, so the host does not stop at ~120 streams with EMFILE."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    server = Running(["serve", "--port", "0", "--in-memory"], cwd=project,
                     wrapper=["prlimit", "--nofile=256:"])
    running.append(server)
    limits = Path(f"/proc/{server.proc.pid}/limits").read_text().splitlines()
    soft_now, hard_now = next(x for x in limits if x.startswith("Max open files")).split()[3:5]
    assert hard_now == ("unlimited" if hard == resource.RLIM_INFINITY else str(hard))
    assert soft_now == (str(1 << 20) if hard == resource.RLIM_INFINITY else str(hard))


def test_api_keys_from_the_environment(project: Path, running: list[Running]) -> None:
    server = Running(["dev", "--port", "0", "--in-memory"], cwd=project,
                     env={"GRAPHRUN_API_KEYS": "alpha,beta"})
    running.append(server)
    assert httpx.get(f"{server.url}/ok").status_code == 200
    denied = httpx.post(f"{server.url}/assistants/search", json={})
    assert denied.status_code == 401 and "detail" in denied.json()
    allowed = httpx.post(f"{server.url}/assistants/search", json={}, headers={"X-Api-Key": "beta"})
    assert allowed.status_code == 200


def test_config_errors_exit_1_with_the_message(tmp_path: Path,
                                               capfd: pytest.CaptureFixture[str]) -> None:
    # capfd: with reload on, `dev` loads the config in the server process it starts (issue 30)
    (tmp_path / "langgraph.json").write_text('{"graphs": {"agent": "./missing.py:graph"}}')
    assert cli.main(["dev", "--port", "0", "--config", str(tmp_path / "langgraph.json")]) == 1
    assert "graphs.agent: graph file not found" in capfd.readouterr().err
    assert cli.main(["serve", "--config", str(tmp_path / "nope.json")]) == 1
    assert "config file not found" in capfd.readouterr().err


def test_control_plane_flags() -> None:
    # Serving it is tested in tests/control_plane/test_system.py.
    args = cli.build_parser().parse_args(["control-plane", "--port", "0"])
    assert (args.command, args.host, args.port) == ("control-plane", "127.0.0.1", 0)
    assert args.data_dir == ".graphrun-control" and args.stop_servers_on_exit is False


def test_defaults_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    parser = cli.build_parser()
    dev = parser.parse_args(["dev"])
    serve = parser.parse_args(["serve"])
    assert (dev.host, dev.port, serve.port) == ("127.0.0.1", 2024, 8000)
    assert dev.config is None and dev.in_memory is False and dev.data_dir is None
    with pytest.raises(SystemExit) as exited:
        parser.parse_args(["--help"])
    assert exited.value.code == 0
    assert "control-plane" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exited:
        parser.parse_args([])
    assert exited.value.code == 2
