"""Redis 6.2+ or any Valkey (issue 19 §9): the version parsing, the check against a real Redis,
and `graphrun serve` refusing an old one with one line (a fake server that answers INFO as
Redis 6.0 would: no such package to install here)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from http_adapter.agent_server.cluster.redis_version import (
    RedisVersionError,
    check_redis,
    check_server,
    describe,
)


@pytest.mark.parametrize(("info", "expected"), [
    ({"redis_version": "7.0.15"}, ("redis", (7, 0, 15))),
    ({"redis_version": "6.2.0"}, ("redis", (6, 2, 0))),
    ({"redis_version": "255.255.255"}, ("redis", (255, 255, 255))),  # an unstable build
    ({"redis_version": "7.2.4", "server_name": "valkey", "valkey_version": "8.0.1"},
     ("valkey", (8, 0, 1))),
    ({"redis_version": "7.2.4", "server_name": "Valkey"}, ("valkey", (7, 2, 4))),
    ({"redis_version": "7.2.4", "valkey_version": "7.2.5"}, ("valkey", (7, 2, 5))),
    ({"redis_version": 7}, ("redis", (7,))),  # a client that parsed it as a number
    ({}, ("redis", None)),
])
def test_describe(info: dict[str, object], expected: tuple[str, object]) -> None:
    assert describe(info) == expected


@pytest.mark.parametrize("info", [
    {"redis_version": "6.2.0"}, {"redis_version": "6.2.14"}, {"redis_version": "7.4.1"},
    {"redis_version": "10.0.0"},
    {"redis_version": "7.2.4", "server_name": "valkey", "valkey_version": "8.1.0"},
])
def test_supported_servers_pass(info: dict[str, str]) -> None:
    assert check_server(info).split()[0] in ("redis", "valkey")


@pytest.mark.parametrize("version", ["6.0.16", "6.1.9", "5.0.14", "2.8.0", "", "unknown"])
def test_older_or_unknown_redis_is_refused_in_one_line(version: str) -> None:
    with pytest.raises(RedisVersionError) as error:
        check_server({"redis_version": version})
    message = str(error.value)
    assert "\n" not in message and "needs Redis 6.2 or newer" in message
    assert (version or "an unknown version") in message


def test_a_real_redis_passes(redis_url: str) -> None:
    found = anyio.run(check_redis, redis_url)
    assert found is not None and found.startswith(("redis ", "valkey "))


def test_a_redis_that_does_not_answer_is_not_an_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: connection refused
        assert anyio.run(check_redis, f"redis://127.0.0.1:{port}/0", 1.0) is None


@pytest.fixture
def old_redis() -> Iterator[str]:
    """A TCP server answering like Redis 6.0.9: INFO with its version, +OK to the rest."""
    listener = socket.create_server(("127.0.0.1", 0))
    info = b"# Server\r\nredis_version:6.0.9\r\nredis_mode:standalone\r\n"
    reply = b"$%d\r\n%s\r\n" % (len(info), info)

    def answer(conn: socket.socket) -> None:
        with conn:
            while chunk := conn.recv(65536):
                for command in chunk.split(b"*")[1:]:  # one RESP array a command
                    conn.sendall(reply if b"INFO" in command.upper() else b"+OK\r\n")

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield f"redis://127.0.0.1:{listener.getsockname()[1]}/0"
    listener.close()


def test_old_redis_is_refused(old_redis: str) -> None:
    with pytest.raises(RedisVersionError, match="runs 6.0.9"):
        anyio.run(check_redis, old_redis)


def test_serve_refuses_an_old_redis_with_one_line(tmp_path: Path, old_redis: str) -> None:
    """Before anything else starts: no database is reached (none is at this URL)."""
    (tmp_path / "graph.py").write_text(
        "from engine import StateGraph, START\n"
        "from typing import TypedDict\n"
        "class S(TypedDict):\n    x: int\n"
        "b = StateGraph(S)\nb.add_node('n', lambda s: s)\nb.add_edge(START, 'n')\n"
        "graph = b.compile()\n")
    (tmp_path / "langgraph.json").write_text('{"graphs": {"g": "./graph.py:graph"}}')
    done = subprocess.run(
        [sys.executable, "-m", "http_adapter.cli", "serve", "--config",
         str(tmp_path / "langgraph.json"), "--port", "0",
         "--database-url", "postgresql://nobody@127.0.0.1:9/none",
         "--redis-url", old_redis], capture_output=True, text=True, timeout=30,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines() == [
        "graphrun: error: graphrun needs Redis 6.2 or newer (or Valkey); the server runs 6.0.9"
    ]
