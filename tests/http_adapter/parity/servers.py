"""Start `graphrun dev` or `langgraph dev` on a copy of the parity app; reset between scenarios."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from tests.services import free_port

__all__ = ["APP", "Server", "reset"]

APP = Path(__file__).resolve().parent / "app"
_ROOT = APP.parents[3]


def _storage(database_url: str | None, redis_url: str | None, in_memory: bool) -> list[str]:
    """Nothing on disk (or the SQLite file beside the copy), or PostgreSQL + Redis (issue 19
    §11: the replay runs on both back ends)."""
    if database_url is None:
        return ["--in-memory"] if in_memory else []
    argv = ["--database-url", database_url, "--drain-grace", "1"]
    return argv + (["--redis-url", redis_url] if redis_url else [])


class Server:
    """A server subprocess serving a fresh copy of the app on a free loopback port.

    `langgraph` is the path of a `langgraph` executable (langgraph-cli[inmem] in its own venv):
    then it is the reference; otherwise `graphrun dev --in-memory` from this interpreter, or
    `graphrun dev --database-url ... --redis-url ...` when given those. `lib="langgraph"`:
    graphrun dev serves the app built with the real LangGraph (issue 28). `project` is the
    directory of the langgraph.json to serve (the parity app unless given), `extra` files
    copied beside it. Issue 28: `engine` is graphrun's `--engine`, `command` `dev` or `serve`,
    and `in_memory=False` keeps the SQLite file (in the copy).
    """

    def __init__(self, langgraph: str | None = None, *, database_url: str | None = None,
                 redis_url: str | None = None, lib: str = "engine", project: Path = APP,
                 extra: tuple[Path, ...] = (), engine: str | None = None,
                 command: str = "dev", in_memory: bool = True) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="parity-"))
        app = self.work / "app"
        shutil.copytree(project, app,
                        ignore=shutil.ignore_patterns("__pycache__", ".langgraph_api"))
        for path in extra:  # files a project is served with, beside its own (issue 31)
            shutil.copy(path, app / path.name)
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1"}
        if langgraph:
            env["PARITY_LIB"] = "langgraph"
            argv = [langgraph, "dev", "--no-browser", "--no-reload", "--allow-blocking",
                    "--port", str(port)]
        else:
            env["PARITY_LIB"] = lib
            env["PYTHONPATH"] = str(_ROOT)
            argv = [sys.executable, "-m", "http_adapter.cli", command, "--port", str(port),
                    "--log-level", "warning", *_storage(database_url, redis_url, in_memory)]
            argv += ["--engine", engine] if engine else []
            argv += ["--no-reload"] if command == "dev" else []  # as the reference's
        self.log = open(self.work / "server.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(argv, cwd=app, env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self._wait()

    def _wait(self) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {(self.work / 'server.log').read_text()}")
            try:
                if httpx.get(f"{self.url}/ok", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError("server did not start in time")

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(15)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
        self.log.close()
        shutil.rmtree(self.work, ignore_errors=True)


def reset(url: str) -> None:
    """Delete what earlier scenarios left (threads, own assistants, crons, store items)."""
    with httpx.Client(base_url=url, timeout=30) as http:
        for thread in http.post("/threads/search", json={"limit": 1000}).json():
            http.delete(f"/threads/{thread['thread_id']}")
        for assistant in http.post("/assistants/search", json={"limit": 1000}).json():
            if assistant["metadata"].get("created_by") != "system":
                http.delete(f"/assistants/{assistant['assistant_id']}")
        for cron in http.post("/runs/crons/search", json={"limit": 1000}).json():
            http.delete(f"/runs/crons/{cron['cron_id']}")
        for namespace in http.post("/store/namespaces", json={"limit": 1000}).json()["namespaces"]:
            found = http.post("/store/items/search", json={"namespace_prefix": namespace,
                                                           "limit": 1000}).json()["items"]
            for item in found:
                http.request("DELETE", "/store/items",
                             json={"namespace": item["namespace"], "key": item["key"]})
