"""Request limits (issue 26, findings 6 and 7), against real servers: the body size (413, with
and without Content-Length), the request head's size and header count (431), the time a
request's head and body may take (408, then closed), idle keep-alive connections closed, a
flood of idle connections that no longer locks new clients out, JSON too deep or not UTF-8
answered 422 (was 500), and an abandoned upload logged without a traceback.

Timeouts are set small for the test servers; each test waits for the server to close the
socket (a blocking read with a generous deadline), never for a fixed time.
"""

from __future__ import annotations

import json
import logging
import shutil
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from http_adapter._http_protocol import ConnectionLimits, limited_protocol
from http_adapter.agent_server import create_app
from http_adapter.agent_server.settings import Settings
from http_adapter.config import load_settings

from . import graphs as test_graphs
from .conftest import Served
from .test_cli import EXAMPLE, Running
from .test_custom_auth import _project as auth_project

DEADLINE = 30.0  # seconds a test waits for the server to act; far above the limits set here
FAST = ConnectionLimits(header_timeout=0.5, request_timeout=1.0, keep_alive_timeout=0.5)


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=DEADLINE)


def _until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    data = b""
    while chunk := _recv(sock):
        data += chunk
    return data


def _recv(sock: socket.socket) -> bytes:
    try:
        return sock.recv(65536)
    except ConnectionResetError:
        return b""


def _status_and_detail(answer: bytes) -> tuple[int, str]:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"connection: close" in head.lower(), head
    return int(head.split(b" ", 2)[1]), json.loads(body)["detail"]


def _send_all(sock: socket.socket, data: bytes) -> None:
    """Send `data`, or as much as the server reads before it answers and closes."""
    try:
        sock.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """`limited(limits, **settings)`: a real server on the protocol `graphrun dev|serve` uses."""
    started: list[Served] = []

    def start(limits: ConnectionLimits = ConnectionLimits(), **overrides: Any) -> Served:
        settings = Settings(**{"graphs": test_graphs.GRAPHS, "data_dir": tmp_path / ".graphrun",
                               "drain_grace": 0.0, **overrides})
        served = Served(create_app(settings), settings, http=limited_protocol(limits),
                        timeout_keep_alive=limits.keep_alive_timeout)
        started.append(served)
        return served

    yield start
    for served in started:
        served.stop()


# -- body size ------------------------------------------------------------------------------------


def test_a_body_declared_over_the_default_limit_is_413_before_it_is_sent(server: Served) -> None:
    with _connect(server.url) as sock:
        sock.sendall(b"POST /threads HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 500000000\r\n\r\n{")  # 500 MB announced, 1 byte sent
        status, detail = _status_and_detail(_until_closed(sock))
    assert status == 413
    assert detail == "Request body is larger than the limit of 67108864 bytes"


def test_a_body_over_the_limit_is_413_with_or_without_content_length(
    serve_app: Callable[..., Served]
) -> None:
    served = serve_app(max_body_size=1000)
    body = json.dumps({"metadata": {"pad": "x" * 2000}}).encode()
    with httpx.Client(base_url=served.url, timeout=DEADLINE) as http:
        declared = http.post("/threads", content=body, headers={"content-type": "application/json"})
        chunked = http.post("/threads", content=iter([body[:600], body[600:]]))
        small = http.post("/threads", json={"metadata": {"pad": "x" * 900}})
    for answer in (declared, chunked):
        assert answer.status_code == 413
        assert answer.json() == {"detail": "Request body is larger than the limit of 1000 bytes"}
        assert answer.headers["connection"] == "close"
    assert chunked.request.headers["transfer-encoding"] == "chunked"
    assert small.status_code == 200
    assert httpx.post(f"{served.url}/threads/search", json={}).json() == [small.json()]


def test_custom_auth_reading_the_body_is_limited_too(tmp_path: Path,
                                                      serve_app: Callable[..., Served]) -> None:
    settings = load_settings(auth_project(tmp_path), in_memory=True)
    settings.max_body_size = 1000
    served = serve_app(settings)
    answer = httpx.post(f"{served.url}/threads", headers={"Authorization": "Bearer token-alice"},
                        content=iter([b'{"metadata": {"pad": "', b"x" * 2000, b'"}}']))
    assert answer.status_code == 413
    assert answer.json()["detail"] == "Request body is larger than the limit of 1000 bytes"


# -- JSON that cannot be read ---------------------------------------------------------------------

DEEP_ARRAY = b"[" * 100_000 + b"]" * 100_000
DEEP_OBJECT = b'{"a":' * 5_000 + b"1" + b"}" * 5_000
NOT_UTF8 = b'"\xff\xfe"'


@pytest.mark.parametrize("value", [DEEP_ARRAY, DEEP_OBJECT, NOT_UTF8],
                         ids=["100k-deep", "5k-deep", "not-utf8"])
def test_json_too_deep_or_not_utf8_is_422(server: Served, tmp_path: Path,
                                          serve_app: Callable[..., Served], value: bytes) -> None:
    bodies = {
        "/threads": b'{"metadata": {"a": ' + value + b"}}",
        "/threads/search": b'{"metadata": ' + value + b"}",
        "/runs/wait": b'{"assistant_id": "agent", "input": ' + value + b"}",
        "/assistants": value,
    }
    with httpx.Client(base_url=server.url, timeout=DEADLINE) as http:
        for path, body in bodies.items():
            answer = http.post(path, content=body, headers={"content-type": "application/json"})
            assert answer.status_code == 422, (path, answer.text[:200])
            assert answer.json()["detail"].startswith("Invalid JSON in request body"), path
        mcp = http.post("/mcp", content=value, headers={
            "content-type": "application/json", "accept": "application/json, text/event-stream"})
        assert mcp.status_code == 400 and mcp.json()["error"]["code"] == -32700  # parse error
    # custom auth parses the body too (its handlers get it as `body`)
    auth = serve_app(load_settings(auth_project(tmp_path), in_memory=True))
    answer = httpx.post(f"{auth.url}/threads", content=bodies["/threads"],
                        headers={"Authorization": "Bearer token-alice"}, timeout=DEADLINE)
    assert answer.status_code == 422 and answer.json()["detail"].startswith("Invalid JSON")


# -- abandoned uploads ----------------------------------------------------------------------------


def test_an_abandoned_upload_logs_no_traceback(server: Served,
                                               caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        with _connect(server.url) as sock:
            sock.sendall(b"POST /threads HTTP/1.1\r\nHost: t\r\nContent-Type: application/json"
                         b"\r\nContent-Length: 100000\r\n\r\n" + b'{"metadata": {"a": "' +
                         b"x" * 1000)
        deadline = time.monotonic() + DEADLINE
        while not [r for r in caplog.records if "went away" in r.getMessage()
                   or r.exc_info is not None]:
            assert time.monotonic() < deadline, "the server never noticed the client leaving"
            time.sleep(0.01)
    assert [r for r in caplog.records if r.exc_info is not None] == []
    gone = [r for r in caplog.records if "went away" in r.getMessage()]
    assert len(gone) == 1 and gone[0].levelno == logging.DEBUG
    assert httpx.get(f"{server.url}/ok").status_code == 200


# -- the request head -----------------------------------------------------------------------------


def _head(headers: list[tuple[str, str]]) -> bytes:
    lines = "".join(f"{name}: {value}\r\n" for name, value in headers)
    return f"GET /ok HTTP/1.1\r\nHost: t\r\n{lines}\r\n".encode()


@pytest.mark.parametrize("headers, detail", [
    ([("X-Big", "x" * 8_000_000)], "Request headers are larger than 32768 bytes"),
    ([(f"X-H{i}", "1") for i in range(100_000)], "More than 100 request headers"),
], ids=["8MB-header", "100k-headers"])
def test_a_head_too_large_is_431(limited: Callable[..., Served],
                                 headers: list[tuple[str, str]], detail: str) -> None:
    served = limited()
    with _connect(served.url) as sock:
        _send_all(sock, _head(headers))
        assert _status_and_detail(_until_closed(sock)) == (431, detail)
    fine = [("Authorization", "Bearer " + "t" * 8000)] + [(f"X-H{i}", "1") for i in range(97)]
    with _connect(served.url) as sock:
        sock.sendall(_head(fine).replace(b"HTTP/1.1\r\n", b"HTTP/1.1\r\nConnection: close\r\n"))
        assert _until_closed(sock).startswith(b"HTTP/1.1 200 OK")


# -- time limits ----------------------------------------------------------------------------------


@pytest.mark.parametrize("sent", [
    b"",  # connected, nothing sent
    b"POST /threads HTTP/1.1\r\nHost: t\r\n",  # half a head
    b"POST /threads HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n{\"meta",  # half a body
], ids=["silent", "half-head", "half-body"])
def test_a_request_that_stops_is_408_and_closed(limited: Callable[..., Served],
                                                caplog: pytest.LogCaptureFixture,
                                                sent: bytes) -> None:
    served = limited(FAST)
    with _connect(served.url) as sock, caplog.at_level(logging.INFO):
        sock.sendall(sent)
        status, detail = _status_and_detail(_until_closed(sock))
    assert (status, detail) == (408, "The request did not arrive in time")
    assert [r for r in caplog.records if r.exc_info is not None] == []


@pytest.mark.parametrize("head, drip", [
    (b"POST /threads HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n", b"x"),  # the body
    (b"GET /ok HTTP/1.1\r\nHost: t\r\nX-A: ", b"a"),  # a header, a byte at a time
    (b"GET /ok HTTP/1.1\r\nHost: t\r\n\r\n", b"\r\n"),  # blank lines after a request
    (b"GET /ok HTTP/1.1\r\nHost: t\r\n\r\nGET /ok HTTP/1.1\r\nX-A: ", b"a"),  # a 2nd head
], ids=["body", "header", "blank-lines", "second-head"])
def test_a_dribbling_request_is_closed(limited: Callable[..., Served], head: bytes,
                                       drip: bytes) -> None:
    served = limited(FAST)
    with _connect(served.url) as sock:
        sock.sendall(head)
        sock.settimeout(0.05)
        deadline = time.monotonic() + DEADLINE
        while True:  # a byte every 50 ms, far quicker than any timeout, until the server closes
            assert time.monotonic() < deadline, "the server kept the dribbling request open"
            try:
                sock.sendall(drip)
                got = sock.recv(65536)
            except TimeoutError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                break
            if got == b"" or got.startswith(b"HTTP/1.1 408"):
                break  # (the blank-lines case first gets its request's 200)


def test_an_idle_keep_alive_connection_is_closed(limited: Callable[..., Served]) -> None:
    served = limited(FAST)
    with _connect(served.url) as sock:
        sock.sendall(b"GET /ok HTTP/1.1\r\nHost: t\r\n\r\n")
        answer = _until_closed(sock)  # the answer, then nothing: closed without a 408
    assert answer.startswith(b"HTTP/1.1 200 OK") and answer.count(b"HTTP/1.1") == 1


def test_a_slow_answer_is_not_cut_by_the_request_timeouts(limited: Callable[..., Served]) -> None:
    served = limited(FAST)
    answer = httpx.post(f"{served.url}/runs/wait", timeout=DEADLINE,
                        json={"assistant_id": "agent", "input": {"sleep": 1.5}})
    assert answer.status_code == 200 and answer.json()["sleep"] == 1.5


# -- many connections -----------------------------------------------------------------------------


def test_idle_connections_make_room_for_new_clients(limited: Callable[..., Served]) -> None:
    served = limited(ConnectionLimits(max_connections=50))
    idle = [_connect(served.url) for _ in range(120)]
    try:
        with httpx.Client(base_url=served.url, timeout=DEADLINE) as http:
            assert http.get("/ok").status_code == 200
        for sock in idle[:60]:  # the oldest were closed to make room (without an answer)
            assert _until_closed(sock) == b""
    finally:
        for sock in idle:
            sock.close()


def test_serve_applies_the_limit_flags(tmp_path: Path) -> None:
    server = Running(["serve", "--port", "0", "--in-memory", "--config",
                      str(EXAMPLE / "langgraph.json"), "--max-body-size", "1K",
                      "--max-header-size", "2k", "--max-headers", "10",
                      "--header-timeout", "0.5"], cwd=tmp_path)
    try:
        big = httpx.post(f"{server.url}/threads", json={"metadata": {"a": "x" * 2000}})
        assert big.status_code == 413
        long_header = httpx.get(f"{server.url}/ok", headers={"X-A": "x" * 3000})
        assert long_header.status_code == 431
        many = httpx.get(f"{server.url}/ok", headers={f"X-{i}": "1" for i in range(11)})
        assert many.status_code == 431
        with _connect(server.url) as sock:
            assert _status_and_detail(_until_closed(sock))[0] == 408
        with _connect(server.url) as sock:  # an abandoned upload, seen in the server's output
            sock.sendall(b"POST /threads HTTP/1.1\r\nHost: t\r\nContent-Length: 900\r\n\r\n{")
        assert httpx.post(f"{server.url}/threads", json={}).status_code == 200
    finally:
        server.stop()  # the output is complete once it has exited
    assert "Traceback" not in "".join(server.output)


def test_bad_limit_values_exit_1(tmp_path: Path) -> None:
    import subprocess

    from .test_cli import graphrun_command

    done = subprocess.run([*graphrun_command(), "serve", "--port", "0", "--config",
                           str(EXAMPLE / "langgraph.json"), "--max-body-size", "lots"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip() == ("graphrun: error: --max-body-size='lots': expected a size in "
                                   "bytes, such as 65536 or 64K")


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="needs util-linux's prlimit")
def test_a_flood_of_idle_connections_does_not_lock_clients_out(tmp_path: Path) -> None:
    """With the open-files limit at 256 (the report's host had 20,000 for 20,000 sockets), 300
    idle sockets used every file the server could open: new clients were never answered."""
    server = Running(["serve", "--port", "0", "--in-memory", "--config",
                      str(EXAMPLE / "langgraph.json")], cwd=tmp_path,
                     wrapper=["prlimit", "--nofile=256:256"])
    idle: list[socket.socket] = []
    try:
        idle = [_connect(server.url) for _ in range(300)]
        assert httpx.get(f"{server.url}/ok", timeout=DEADLINE).status_code == 200
    finally:
        for sock in idle:
            sock.close()
        server.stop()


def test_limit_flags_and_variables() -> None:
    from http_adapter._limit_options import limit_options
    from http_adapter.cli import build_parser

    def parsed(*flags: str, **env: str) -> tuple[ConnectionLimits, dict[str, Any]]:
        return limit_options(build_parser().parse_args(["serve", *flags]), env)

    assert parsed() == (ConnectionLimits(), {})
    assert Settings(graphs={}).max_body_size == 64 << 20
    limits, fields = parsed("--max-body-size", "2M", "--header-timeout", "1.5",
                            GRAPHRUN_MAX_BODY_SIZE="1G", GRAPHRUN_MAX_HEADERS="7",
                            GRAPHRUN_KEEP_ALIVE_TIMEOUT="2", GRAPHRUN_MAX_CONNECTIONS="300")
    assert fields == {"max_body_size": 2 << 20}  # the flag wins over its variable
    assert limits == ConnectionLimits(max_headers=7, header_timeout=1.5, keep_alive_timeout=2.0,
                                      max_connections=300)
    assert parsed(GRAPHRUN_MAX_BODY_SIZE="0")[1] == {"max_body_size": None}  # no limit
    assert parsed("--max-header-size", "64KiB")[0].max_header_size == 64 << 10
