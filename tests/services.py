"""Real PostgreSQL, PgBouncer and Redis for tests and benchmarks (issue 19), nothing global.

Each server runs from Debian's packages (``postgresql``, ``pgbouncer``, ``redis-server``) in a
temporary directory on a free loopback port and is stopped at the end. PostgreSQL and PgBouncer
refuse to run as root, so when we are root they run as the ``postgres`` user (``runuser``) on
directories that user owns.

tests/conftest.py imports the fixtures, so every test may ask for them. `pg_cluster` is one
cluster per test session; `pg_url` an empty database for one test (copied from an empty
template, or a used one emptied: ~25 ms instead of ~250). `pgbouncer` is PgBouncer in
transaction mode in front of that cluster. `redis_url` is the session's Redis, flushed after
each test. In CI (``CI=true``) a missing binary fails the test instead of skipping it.
Benchmarks use `PostgresServer` directly.
"""

from __future__ import annotations

import collections
import contextlib
import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Self
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = [
    "PgBouncer",
    "PostgresServer",
    "RedisServer",
    "ServiceMissing",
    "free_port",
    "pg_cluster",
    "pg_url",
    "pgbouncer",
    "postgres_bin",
    "redis_server",
    "redis_url",
]

_START_TIMEOUT = 30.0


class ServiceMissing(RuntimeError):
    """The server's binaries are not installed."""


_GIVEN: collections.deque[int] = collections.deque(maxlen=256)  # this process's latest ports


def free_port() -> int:
    """A loopback port free now, for a server about to bind it.

    Between our release and the server's bind the kernel may hand the port out again, and under
    pytest-xdist (``-n 2``) that would be to the other worker: its server would fail to bind, or
    worse, our readiness check would reach the other worker's server. So each worker takes only
    its own share of the kernel's picks (by ``port // 2``: Linux's bind(0) favours odd ports,
    leaving even ones to connect()), and no port this process handed out recently."""
    worker, workers = _xdist_slot()
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if (port // 2) % workers == worker and port not in _GIVEN:
            _GIVEN.append(port)
            return port


def _xdist_slot() -> tuple[int, int]:
    """(this worker's index, the number of workers); (0, 1) outside pytest-xdist."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
    index = int(name[2:]) if name.startswith("gw") and name[2:].isdigit() else 0
    return index % count, count


def postgres_bin() -> Path:
    """The newest installed PostgreSQL's bin directory (Debian keeps them per version)."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb is None:
        raise ServiceMissing("PostgreSQL is not installed (apt-get install postgresql)")
    return Path(initdb).parent


def _as_postgres() -> list[str]:
    """The prefix that runs a command as the `postgres` user when we are root."""
    if os.geteuid() != 0:
        return []
    return ["runuser", "-u", "postgres", "--"]


class _Service:
    """A throwaway server used as a context manager: started on entry, stopped on exit, and
    stopped too when `start` fails half-way (its temporary directory goes either way)."""

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class PostgresServer(_Service):
    """A throwaway PostgreSQL cluster: trust auth, no fsync, socket and data in a temp dir."""

    def __init__(self) -> None:
        self.bin = postgres_bin()
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="graphrun-pg-"))
        self.data = self.root / "data"
        self.socket_dir = self.root / "sock"
        self._names = itertools.count()
        self._free: list[str] = []
        self._started = False

    @property
    def dsn(self) -> str:
        return self.url("postgres")

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str) -> None:
        subprocess.run(
            [*_as_postgres(), *args], check=True, capture_output=True, timeout=_START_TIMEOUT
        )

    def start(self) -> PostgresServer:
        os.chmod(self.root, 0o755)
        self.socket_dir.mkdir()
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres")
            shutil.chown(self.socket_dir, "postgres")
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U",
                  "postgres", "--no-sync", "-E", "UTF8", "--locale", "C")
        options = (
            f"-p {self.port} -k {self.socket_dir} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._options = options
        self.resume()
        # The template every test database is copied from (`new_database`).
        self.sql("CREATE DATABASE graphrun_template")
        return self

    def halt(self) -> None:
        """Stop the server (fast shutdown: sessions ended, connections refused from now on),
        keeping its data for `resume` (issue 26: an outage)."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")
        self._started = False

    def resume(self) -> None:
        """Start the server on its data (again after a `halt`: same port, same databases)."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", self._options, "-w",
                  "-l", str(self.root / "log"), "start")
        self._started = True

    def sql(self, statement: str, database: str = "postgres") -> None:
        """Run one statement through psql on the Unix socket."""
        self._run(str(self.bin / "psql"), "-h", str(self.socket_dir), "-p", str(self.port),
                  "-U", "postgres", "-d", database, "-v", "ON_ERROR_STOP=1", "-qc", statement)

    def new_database(self) -> str:
        """A fresh empty database; returns its URL."""
        name = f"t{os.getpid()}_{next(self._names)}"
        self.sql(f"CREATE DATABASE {name} TEMPLATE graphrun_template")
        return self.url(name)

    def lend_database(self) -> str:
        """An empty database nobody else uses: a returned one (`give_back`) or a new one.

        CREATE DATABASE takes ~250 ms here (it copies the template's files), emptying a used
        one ~20 ms, so tests reuse them."""
        return self._free.pop() if self._free else self.new_database()

    def give_back(self, url: str) -> None:
        """Empty a lent database (its connections ended, schema dropped) for the next test."""
        name = url.rsplit("/", 1)[1]
        try:
            self.sql(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                f"WHERE datname = '{name}' AND pid <> pg_backend_pid()"
            )
            self.sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public", database=name)
        except subprocess.SubprocessError:
            return  # not reused
        self._free.append(url)

    def stop(self) -> None:
        if self._started:
            with contextlib.suppress(subprocess.SubprocessError):
                self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate",
                          "-w", "stop")
            self._started = False
        shutil.rmtree(self.root, ignore_errors=True)


class PgBouncer(_Service):
    """A throwaway PgBouncer in transaction mode in front of a `PostgresServer`: every database
    of the server under the same name, all clients' transactions taking turns on ONE server
    connection, so sessions are shared as they are under load (which breaks named prepared
    statements: two clients' ``__asyncpg_stmt_1__`` collide)."""

    def __init__(self, server: PostgresServer) -> None:
        binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
        if not os.path.exists(binary):
            raise ServiceMissing("pgbouncer is not installed (apt-get install pgbouncer)")
        self.binary = binary
        self.server = server
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="graphrun-pgbouncer-"))
        self._process: subprocess.Popen[bytes] | None = None

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> PgBouncer:
        (self.root / "users.txt").write_text('"postgres" ""\n')
        (self.root / "pgbouncer.ini").write_text(
            f"[databases]\n* = host=127.0.0.1 port={self.server.port}\n[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {self.port}\nunix_socket_dir =\n"
            f"auth_type = trust\nauth_file = {self.root / 'users.txt'}\n"
            "pool_mode = transaction\ndefault_pool_size = 2\nserver_round_robin = 1\n"
            "ignore_startup_parameters = extra_float_digits,application_name\n"
        )
        os.chmod(self.root, 0o755)
        if os.geteuid() == 0:
            for path in (self.root, self.root / "users.txt", self.root / "pgbouncer.ini"):
                shutil.chown(path, "postgres")
        with open(self.root / "log", "wb") as log:  # the child keeps its own descriptor
            self._process = subprocess.Popen(
                [*_as_postgres(), self.binary, str(self.root / "pgbouncer.ini")],
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        deadline = time.monotonic() + _START_TIMEOUT
        while not _listening(self.port):
            if self._process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"pgbouncer did not start: {(self.root / 'log').read_text()}")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None
        shutil.rmtree(self.root, ignore_errors=True)


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


class RedisServer(_Service):
    """A throwaway redis-server: no persistence, loopback only, daemonized with a pid file."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise ServiceMissing("redis-server is not installed (apt-get install redis-server)")
        self.binary = binary
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="graphrun-redis-"))
        self.pidfile = self.root / "redis.pid"

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.root.mkdir(parents=True, exist_ok=True)  # again after a `stop`: same port
        subprocess.run(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--daemonize", "yes", "--pidfile", str(self.pidfile),
             "--dir", str(self.root), "--logfile", str(self.root / "log")],
            check=True, capture_output=True, timeout=_START_TIMEOUT,
        )
        deadline = time.monotonic() + _START_TIMEOUT
        while not self._answers():
            if time.monotonic() > deadline:
                raise TimeoutError(f"redis-server on port {self.port} did not start")
            time.sleep(0.02)
        return self

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def halt(self) -> None:
        """Stop the server and wait until it is gone, keeping its port and directory, so
        `start` brings it back empty on the same address (a Redis restart)."""
        with contextlib.suppress(OSError, ValueError):
            pid = int(self.pidfile.read_text().strip())
            os.kill(pid, 15)
            deadline = time.monotonic() + _START_TIMEOUT
            # Redis removes its pid file as it exits (the process may linger as a zombie)
            while (self.pidfile.exists() or self._answers()) and time.monotonic() < deadline:
                time.sleep(0.01)

    def stop(self) -> None:
        self.halt()
        shutil.rmtree(self.root, ignore_errors=True)


# --- pytest fixtures ---------------------------------------------------------------------------


def _unavailable(error: Exception) -> None:
    """In CI a missing server is a failure; locally the test is skipped with the reason."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{error} (CI must provide it)")
    pytest.skip(str(error))


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PostgresServer]:
    """One PostgreSQL cluster for the whole test session."""
    try:
        server = PostgresServer()
    except ServiceMissing as error:
        _unavailable(error)
    with server:
        yield server


@pytest.fixture
def pg_url(pg_cluster: PostgresServer) -> Iterator[str]:
    """An empty database of the session's cluster, for this test alone."""
    url = pg_cluster.lend_database()
    yield url
    pg_cluster.give_back(url)


@pytest.fixture(scope="session")
def pgbouncer(pg_cluster: PostgresServer) -> Iterator[PgBouncer]:
    """PgBouncer in transaction mode in front of the session's cluster."""
    try:
        bouncer = PgBouncer(pg_cluster)
    except ServiceMissing as error:
        _unavailable(error)
    with bouncer:
        yield bouncer


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """One redis-server for the whole test session (for the server back end, issue 19)."""
    try:
        server = RedisServer()
    except ServiceMissing as error:
        _unavailable(error)
    with server:
        yield server


@pytest.fixture
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    """The session's Redis, emptied after the test."""
    yield redis_server.url
    with socket.create_connection(("127.0.0.1", redis_server.port), timeout=5) as sock:
        sock.sendall(b"FLUSHALL\r\n")
        sock.recv(16)
