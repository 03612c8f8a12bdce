"""The server's last line of defence (issue 16): an unexpected error in a route answers a JSON
500 without a traceback, is logged once, and the client's keep-alive connection stays usable.

Before, Starlette's server-error middleware answered and then re-raised: uvicorn logged the
traceback again and closed the connection, and the official SDK's next call on that connection
failed with a read error.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest

from http_adapter.agent_server.routes import system


def local_port(response: httpx.Response) -> Any:
    """The client side of the TCP connection a response came on."""
    return response.extensions["network_stream"].get_extra_info("client_addr")


def test_an_unexpected_error_answers_json_500_and_keeps_the_connection(
    server: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken() -> str:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(system, "package_version", broken)
    with httpx.Client(base_url=server.url) as client, caplog.at_level(logging.INFO):
        first = client.get("/ok")
        failed = client.get("/info")
        after = client.get("/ok")
        ports = {local_port(first), local_port(failed), local_port(after)}

    assert failed.status_code == 500
    assert failed.json() == {"detail": "Internal server error"}
    assert "secret" not in failed.text and "Traceback" not in failed.text
    assert after.status_code == 200 and after.json() == {"ok": True, "services": {}}
    assert len(ports) == 1  # one connection for all three requests: the 500 did not close it
    tracebacks = [r for r in caplog.records if r.exc_info is not None]
    assert len(tracebacks) == 1 and tracebacks[0].name == "http_adapter"
    assert "Exception in ASGI application" not in caplog.text


def test_an_error_inside_middleware_is_answered_the_same_way(
    server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API-key middleware sits inside the last resort: its failures are covered too."""
    from http_adapter.agent_server import auth

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("boom")

    monkeypatch.setattr(auth.ApiKeyMiddleware, "__call__", broken)
    with httpx.Client(base_url=server.url) as client:
        failed = client.get("/ok")
        monkeypatch.undo()
        after = client.get("/ok")
        assert local_port(failed) == local_port(after)
    assert failed.status_code == 500 and failed.json() == {"detail": "Internal server error"}
    assert after.status_code == 200


def test_a_damaged_checkpoint_is_named_and_the_history_still_reads(server: Any) -> None:
    """A checkpoint row edited by hand in the server's own SQLite file: the history leaves it
    out (200), the state of that checkpoint answers a JSON 500 naming thread and checkpoint."""
    import sqlite3

    with httpx.Client(base_url=server.url) as client:
        thread = client.post("/threads", json={}).json()["thread_id"]
        ran = client.post(f"/threads/{thread}/runs/wait",
                          json={"assistant_id": "agent", "input": {"x": 1}})
        assert ran.status_code == 200
        history = client.post(f"/threads/{thread}/history", json={"limit": 100}).json()
        victim = history[2]["checkpoint_id"]
        with sqlite3.connect(server.settings.db_path) as conn:
            conn.execute("UPDATE checkpoints SET checkpoint = x'c1c1' WHERE checkpoint_id = ?",
                         (victim,))
        conn.close()

        after = client.post(f"/threads/{thread}/history", json={"limit": 100})
        damaged = client.get(f"/threads/{thread}/state/{victim}")
        latest = client.get(f"/threads/{thread}/state")
    assert after.status_code == 200
    assert [h["checkpoint_id"] for h in after.json()] == [
        h["checkpoint_id"] for h in history if h["checkpoint_id"] != victim
    ]
    assert damaged.status_code == 500
    assert damaged.json() == {"detail": damaged.json()["detail"]}
    assert f"checkpoint {victim} of thread {thread} cannot be read" in damaged.json()["detail"]
    assert latest.status_code == 200


def test_a_stream_that_fails_midway_ends_with_an_error_event_not_a_cut_connection(
    server: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, an exception after the SSE head was sent made uvicorn drop the connection
    mid-chunk: clients read `RemoteProtocolError: incomplete chunked read` (CI, issue 26's
    chaos test) and nothing said why. Now the stream ends with an `error` event and the
    traceback is logged once."""
    from http_adapter.agent_server.routes import runs

    def failing(events: Any, modes: Any = ()) -> Any:
        async def frames() -> Any:
            async for _key, _name, frame in events:
                yield frame
                raise RuntimeError("reader broke")

        return frames()

    monkeypatch.setattr(runs, "_frames", failing)
    body = {"assistant_id": "agent", "input": {"messages": []}, "stream_mode": ["values"]}
    with httpx.Client(base_url=server.url) as client, caplog.at_level(logging.INFO):
        with client.stream("POST", "/runs/stream", json=body) as response:
            lines = list(response.iter_lines())  # raised RemoteProtocolError before
    events = [line[7:] for line in lines if line.startswith("event: ")]
    assert events == ["metadata", "error"], lines
    assert '"message":"reader broke"' in lines[lines.index("event: error") + 1]
    assert [r.getMessage() for r in caplog.records if r.exc_info] == ["a run's event stream failed"]
