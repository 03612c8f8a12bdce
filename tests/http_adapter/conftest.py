"""Real servers for the HTTP tests: uvicorn on 127.0.0.1, an ephemeral port, per test."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from http_adapter.agent_server import create_app
from http_adapter.agent_server.settings import Settings

from . import graphs as test_graphs


class Served:
    """A running server: its base URL, settings, and a way to stop it (for restart tests)."""

    def __init__(self, app: Any, settings: Settings) -> None:
        self.settings = settings
        # IPPROTO_TCP explicitly: asyncio enables TCP_NODELAY on accepted connections only
        # for such sockets; without it every response waits ~40 ms for a delayed ACK.
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test server did not start")
            time.sleep(0.005)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()


@pytest.fixture
def serve_app(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """`serve_app(graphs=..., **settings) -> Served`: start a real server; stopped after the test.

    Defaults: the graphs of tests/http_adapter/graphs.py and a SQLite file in tmp_path.
    """
    started: list[Served] = []

    def start(settings: Settings | None = None, **overrides: Any) -> Served:
        if settings is None:
            overrides.setdefault("graphs", test_graphs.GRAPHS)
            overrides.setdefault("data_dir", tmp_path / ".graphrun")
            overrides.setdefault("heartbeat", 1.0)
            # A test that ends with a run in flight stops at once (test_drain sets its own).
            overrides.setdefault("drain_grace", 0.0)
            settings = Settings(**overrides)
        served = Served(create_app(settings), settings)
        started.append(served)
        return served

    yield start
    for served in started:
        served.stop()


@pytest.fixture
def server(serve_app: Callable[..., Served]) -> Served:
    """The default test server (test graphs, SQLite in tmp_path)."""
    return serve_app()
