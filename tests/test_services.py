"""The server fixtures of tests/services.py (issue 19): real servers, skipped or failed when
their binaries are missing."""

from __future__ import annotations

import socket

import pytest

from tests import services
from tests.services import PostgresServer, RedisServer, ServiceMissing


def test_each_test_gets_an_empty_database(pg_cluster: PostgresServer) -> None:
    url = pg_cluster.lend_database()
    pg_cluster.sql("CREATE TABLE leftover (x int)", database=url.rsplit("/", 1)[1])
    pg_cluster.give_back(url)
    again = pg_cluster.lend_database()
    assert again == url  # reused ...
    with pytest.raises(Exception):  # ... and emptied
        pg_cluster.sql("SELECT * FROM leftover", database=again.rsplit("/", 1)[1])
    pg_cluster.give_back(again)


def test_redis_answers(redis_url: str, redis_server: RedisServer) -> None:
    with socket.create_connection(("127.0.0.1", redis_server.port), timeout=5) as sock:
        sock.sendall(b"SET k v\r\nGET k\r\n")
        reply = b""
        while not reply.endswith(b"v\r\n"):
            reply += sock.recv(64)
    assert reply == b"+OK\r\n$1\r\nv\r\n"
    assert redis_url.endswith(f":{redis_server.port}/0")


def test_missing_binaries_fail_in_ci_and_skip_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(services.glob, "glob", lambda pattern: [])
    monkeypatch.setattr(services.shutil, "which", lambda name: None)
    with pytest.raises(ServiceMissing):
        services.postgres_bin()
    with pytest.raises(ServiceMissing):
        RedisServer()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must provide it"):
        services._unavailable(ServiceMissing("no postgres"))
    monkeypatch.setenv("CI", "")
    with pytest.raises(pytest.skip.Exception, match="no postgres"):
        services._unavailable(ServiceMissing("no postgres"))
