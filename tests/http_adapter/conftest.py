"""Real servers for the HTTP tests: uvicorn on 127.0.0.1, an ephemeral port, per test.

Back ends (issue 19 §11: both pass the same agent server test suite): every server a test starts
through `serve_app` / `server` uses the test's `backend`: "sqlite" (the embedded default) or
"postgres" (every record in a fresh PostgreSQL database of `pg_url`, streams and signals in
`redis_url`). A module runs on both with ``pytestmark = pytest.mark.backends("sqlite",
"postgres")``; without the mark, on SQLite only. One test of such a module stays on SQLite with
``@pytest.mark.sqlite_only("why")``: its PostgreSQL case is reported as skipped with that reason.
"""

from __future__ import annotations

import dataclasses
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

BACKENDS = ("sqlite", "postgres")

# PostgreSQL mode's timings, short so a test that stops a server mid-run (restart tests) sees its
# runs handed back at once and a lapsed lease re-queued within a second or two.
CLUSTER_SETTINGS: dict[str, Any] = {
    "lease": 3.0,
    "lease_heartbeat": 0.5,
    "reaper_interval": 0.5,
    "drain_grace": 0.5,
    "pool_max": 5,
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize `backend` (asked for by `serve_app`) by the `backends` mark, module-scoped so
    a module-scoped server (the parity replay) serves one back end's tests in a row."""
    mark = metafunc.definition.get_closest_marker("backends")
    if "backend" not in metafunc.fixturenames or mark is None:
        return  # SQLite (the fixture below), under the test's own name
    names = mark.args
    assert set(names) <= set(BACKENDS), names
    only = metafunc.definition.get_closest_marker("sqlite_only")
    if only is not None:
        assert only.args and only.args[0], "sqlite_only needs a reason"
    params = [
        pytest.param(name, id=name, marks=(
            [pytest.mark.skip(reason=f"sqlite only: {only.args[0]}")]
            if only is not None and name != "sqlite" else []
        ))
        for name in names
    ]
    metafunc.parametrize("backend", params, scope="module")


@pytest.fixture(scope="module")
def backend() -> str:
    """A module without the `backends` mark: SQLite (else the parametrization above)."""
    return "sqlite"


def cluster_settings(request: pytest.FixtureRequest, backend: str) -> dict[str, Any]:
    """The Settings fields that put a server on `backend` (none for SQLite)."""
    if backend == "sqlite":
        return {}
    return {
        "database_url": request.getfixturevalue("pg_url"),
        "redis_url": request.getfixturevalue("redis_url"),
        **CLUSTER_SETTINGS,
    }


class Served:
    """A running server: its base URL, settings, and a way to stop it (for restart tests)."""

    def __init__(self, app: Any, settings: Settings, **uvicorn_options: Any) -> None:
        self.settings = settings
        self.app = app  # its `state.server` once started, for tests that look inside
        # IPPROTO_TCP explicitly: asyncio enables TCP_NODELAY on accepted connections only
        # for such sockets; without it every response waits ~40 ms for a delayed ACK.
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on",
                                                     **uvicorn_options))
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
def serve_app(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Served]]:
    """`serve_app(graphs=..., **settings) -> Served`: start a real server; stopped after the test.

    Defaults: the graphs of tests/http_adapter/graphs.py and a SQLite file in tmp_path, or, on
    the "postgres" back end, one PostgreSQL database and Redis for every server of the test
    (a restart finds its records). Given `settings` without a database_url get it too.
    """
    started: list[Served] = []
    cluster = cluster_settings(request, backend)

    def start(settings: Settings | None = None, **overrides: Any) -> Served:
        if settings is None:
            overrides.setdefault("graphs", test_graphs.GRAPHS)
            overrides.setdefault("data_dir", tmp_path / ".graphrun")
            overrides.setdefault("heartbeat", 1.0)
            # A test that ends with a run in flight stops at once (test_drain sets its own).
            overrides.setdefault("drain_grace", 0.0)
            settings = Settings(**{**cluster, **overrides})
        elif cluster and settings.database_url is None:
            settings = dataclasses.replace(settings, **cluster)
        served = Served(create_app(settings), settings)
        started.append(served)
        return served

    yield start
    for served in started:
        served.stop()


@pytest.fixture
def server(serve_app: Callable[..., Served]) -> Served:
    """The default test server (test graphs, the test's back end)."""
    return serve_app()


def wait_for(predicate: Callable[[], Any], timeout: float = 20.0) -> Any:
    """Poll `predicate` until it returns something truthy (a state, never a sleep's guess)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("condition not met in time")
