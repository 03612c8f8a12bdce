"""The run queue against a real server: multitask strategies, cancellation, delays, timeouts,
webhooks, thread status in every path, API keys, and recovery after a restart."""

from __future__ import annotations

import http.server as http_server
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client

from .conftest import Served, wait_for

# Issue 19 §11: every test here runs on SQLite and on PostgreSQL + Redis (conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgres")




def _run_status(client: httpx.Client, thread_id: str, run_id: str) -> str:
    return client.get(f"/threads/{thread_id}/runs/{run_id}").json()["status"]


@pytest.fixture
def http(server: Served) -> httpx.Client:
    with httpx.Client(base_url=server.url, timeout=20) as client:
        yield client


def _thread(http: httpx.Client) -> str:
    return http.post("/threads", json={}).json()["thread_id"]


def _start(http: httpx.Client, thread_id: str, **body: Any) -> dict[str, Any]:
    body.setdefault("assistant_id", "agent")
    response = http.post(f"/threads/{thread_id}/runs", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_thread_is_busy_while_a_run_is_pending_or_running_then_idle(http: httpx.Client) -> None:
    thread_id = _thread(http)
    run = _start(http, thread_id, input={"x": 1, "sleep": 0.3})
    assert http.get(f"/threads/{thread_id}").json()["status"] == "busy"
    wait_for(lambda: _run_status(http, thread_id, run["run_id"]) == "success")
    thread = http.get(f"/threads/{thread_id}").json()
    assert thread["status"] == "idle"
    assert thread["values"]["log"][:3] == ["a", "b", "c"]


def test_runs_of_one_thread_run_in_order_one_at_a_time(http: httpx.Client) -> None:
    thread_id = _thread(http)
    first = _start(http, thread_id, input={"x": 1, "sleep": 0.2})
    second = _start(http, thread_id, input={"x": 10})
    assert _run_status(http, thread_id, second["run_id"]) == "pending"
    joined = http.get(f"/threads/{thread_id}/runs/{second['run_id']}/join").json()
    assert _run_status(http, thread_id, first["run_id"]) == "success"
    assert joined["x"] == 11  # the second run saw the first's state and added to it


def test_reject_strategy_is_409_and_creates_nothing(http: httpx.Client) -> None:
    thread_id = _thread(http)
    _start(http, thread_id, input={"x": 1, "sleep": 0.3})
    response = http.post(f"/threads/{thread_id}/runs", json={
        "assistant_id": "agent", "input": {"x": 1}, "multitask_strategy": "reject",
    })
    assert response.status_code == 409
    assert "already running" in response.json()["detail"]
    assert len(http.get(f"/threads/{thread_id}/runs").json()) == 1


def test_interrupt_strategy_interrupts_the_running_run(http: httpx.Client) -> None:
    thread_id = _thread(http)
    first = _start(http, thread_id, input={"x": 1, "sleep": 2.0})
    wait_for(lambda: _run_status(http, thread_id, first["run_id"]) == "running")
    second = _start(http, thread_id, input={"x": 5}, multitask_strategy="interrupt")
    http.get(f"/threads/{thread_id}/runs/{second['run_id']}/join")
    assert _run_status(http, thread_id, first["run_id"]) == "interrupted"
    assert _run_status(http, thread_id, second["run_id"]) == "success"


def test_a_run_names_its_thread_after_its_graph_when_it_ends(http: httpx.Client) -> None:
    """Issue 28 (multitask_interrupt): a run created on a busy thread leaves the thread's name
    as it is, but when it ends the thread is named after its graph, and read through it, as
    the reference's `set_joint_status` does (the interrupted `agent` run's pending node is not
    the thread's next step any more)."""
    thread_id = _thread(http)
    first = _start(http, thread_id, input={"x": 1, "sleep": 2.0})
    wait_for(lambda: _run_status(http, thread_id, first["run_id"]) == "running")
    second = _start(http, thread_id, assistant_id="chat", multitask_strategy="interrupt",
                    input={"messages": [{"type": "human", "content": "hi"}]})
    assert http.get(f"/threads/{thread_id}").json()["metadata"]["graph_id"] == "agent"
    http.get(f"/threads/{thread_id}/runs/{second['run_id']}/join")
    thread = http.get(f"/threads/{thread_id}").json()
    assert thread["metadata"]["graph_id"] == "chat"
    assert thread["status"] == "idle"
    assert http.get(f"/threads/{thread_id}/state").json()["next"] == []


def test_rollback_strategy_deletes_the_running_run_and_its_checkpoints(http: httpx.Client) -> None:
    thread_id = _thread(http)
    done = _start(http, thread_id, input={"x": 1})
    http.get(f"/threads/{thread_id}/runs/{done['run_id']}/join")
    before = http.get(f"/threads/{thread_id}/state").json()["values"]
    slow = _start(http, thread_id, input={"x": 100, "sleep": 2.0})
    wait_for(lambda: _run_status(http, thread_id, slow["run_id"]) == "running")
    rolled = http.post(f"/threads/{thread_id}/runs/{slow['run_id']}/cancel?action=rollback&wait=1")
    assert rolled.status_code in (200, 204)
    assert http.get(f"/threads/{thread_id}/runs/{slow['run_id']}").status_code == 404
    assert http.get(f"/threads/{thread_id}/state").json()["values"] == before
    thread = http.get(f"/threads/{thread_id}").json()
    assert thread["status"] == "idle"
    assert thread["error"]["error"] == "UserRollback"


def test_cancel_interrupt_leaves_run_and_thread_interrupted(http: httpx.Client) -> None:
    thread_id = _thread(http)
    run = _start(http, thread_id, input={"x": 1, "sleep": 2.0})
    wait_for(lambda: _run_status(http, thread_id, run["run_id"]) == "running")
    # and its input saved: the cancel does not wait for the sync node `a`, so one landing
    # before that has no checkpoint to keep and leaves the thread idle (as test_runs.py)
    wait_for(lambda: "sleep" in (http.get(f"/threads/{thread_id}/state").json()["values"] or {}))
    response = http.post(f"/threads/{thread_id}/runs/{run['run_id']}/cancel")
    assert response.status_code == 202
    wait_for(lambda: _run_status(http, thread_id, run["run_id"]) == "interrupted")
    thread = wait_for(lambda: (t := http.get(f"/threads/{thread_id}").json())["status"] != "busy" and t)
    assert thread["status"] == "interrupted"
    assert thread["error"]["error"] == "UserInterrupt"


def test_cancelling_a_pending_run_means_it_never_starts(http: httpx.Client) -> None:
    thread_id = _thread(http)
    first = _start(http, thread_id, input={"x": 1, "sleep": 0.3})
    second = _start(http, thread_id, input={"x": 1000})
    http.post(f"/threads/{thread_id}/runs/{second['run_id']}/cancel")
    http.get(f"/threads/{thread_id}/runs/{first['run_id']}/join")
    assert _run_status(http, thread_id, second["run_id"]) == "interrupted"
    assert http.get(f"/threads/{thread_id}/state").json()["values"]["x"] == 2


def test_after_seconds_delays_the_start(http: httpx.Client) -> None:
    thread_id = _thread(http)
    started = time.monotonic()
    run = _start(http, thread_id, input={"x": 1}, after_seconds=0.5)
    assert _run_status(http, thread_id, run["run_id"]) == "pending"
    http.get(f"/threads/{thread_id}/runs/{run['run_id']}/join")
    assert time.monotonic() - started >= 0.45


def test_failing_run_marks_run_and_thread_error(http: httpx.Client) -> None:
    thread_id = _thread(http)
    run = _start(http, thread_id, input={"x": 1, "fail": True})
    result = http.get(f"/threads/{thread_id}/runs/{run['run_id']}/join").json()
    assert result["__error__"] == {"error": "ValueError", "message": "boom from c"}
    assert _run_status(http, thread_id, run["run_id"]) == "error"
    thread = http.get(f"/threads/{thread_id}").json()
    assert thread["status"] == "error"
    assert thread["error"] == {"error": "ValueError", "message": "boom from c"}


def test_interrupted_graph_run_is_success_and_thread_interrupted(http: httpx.Client) -> None:
    thread_id = _thread(http)
    run = _start(http, thread_id, input={"x": 1, "ask": True})
    result = http.get(f"/threads/{thread_id}/runs/{run['run_id']}/join").json()
    assert result["__interrupt__"][0]["value"] == {"question": "continue?"}
    assert _run_status(http, thread_id, run["run_id"]) == "success"
    thread = http.get(f"/threads/{thread_id}").json()
    assert thread["status"] == "interrupted"
    assert list(thread["interrupts"].values())[0][0]["value"] == {"question": "continue?"}


def test_run_timeout(serve_app: Callable[..., Served]) -> None:
    served = serve_app(run_timeout=0.2)
    with httpx.Client(base_url=served.url, timeout=20) as http:
        thread_id = _thread(http)
        run = _start(http, thread_id, input={"x": 1, "sleep": 1.0})
        http.get(f"/threads/{thread_id}/runs/{run['run_id']}/join")
        assert _run_status(http, thread_id, run["run_id"]) == "timeout"
        assert http.get(f"/threads/{thread_id}").json()["status"] == "error"


def test_webhook_is_called_with_the_finished_run(serve_app: Callable[..., Served]) -> None:
    # Loopback hosts are refused by default (issue 26): langgraph.json allowlists the hook's.
    served = serve_app(extra={"webhooks": {"url": {"allowed_domains": ["127.0.0.1"]}}})
    http = httpx.Client(base_url=served.url, timeout=20)
    received: list[dict[str, Any]] = []

    class Hook(http_server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = int(self.headers["Content-Length"])
            received.append(json.loads(self.rfile.read(length)))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return None

    hook = http_server.HTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=hook.serve_forever, daemon=True)
    thread.start()
    try:
        thread_id = _thread(http)
        url = f"http://127.0.0.1:{hook.server_address[1]}/done"
        run = _start(http, thread_id, input={"x": 1}, webhook=url)
        wait_for(lambda: received)
        assert received[0]["run_id"] == run["run_id"]
        assert received[0]["status"] == "success"
    finally:
        hook.shutdown()
        http.close()


def test_api_keys_guard_every_route_but_the_public_ones(serve_app: Callable[..., Served]) -> None:
    served = serve_app(api_keys=frozenset({"k1"}))
    with httpx.Client(base_url=served.url) as http:
        assert http.get("/ok").status_code == 200
        denied = http.post("/assistants/search", json={})
        assert denied.status_code == 401 and denied.json()["detail"]
        assert http.post("/assistants/search", json={}, headers={"x-api-key": "nope"}).status_code == 401
        assert http.post("/assistants/search", json={}, headers={"X-API-KEY": "k1"}).status_code == 200
    client = get_sync_client(url=served.url, api_key="k1")
    assert client.assistants.search()


def test_restart_runs_pending_runs_and_retries_running_ones(serve_app: Callable[..., Served]) -> None:
    first = serve_app()
    with httpx.Client(base_url=first.url, timeout=20) as http:
        thread_id = _thread(http)
        running = _start(http, thread_id, input={"x": 1, "sleep": 1.5})
        queued = _start(http, thread_id, input={"x": 100})
        wait_for(lambda: _run_status(http, thread_id, running["run_id"]) == "running")
    first.stop()  # the process goes away mid-run
    second = serve_app(settings=first.settings)
    with httpx.Client(base_url=second.url, timeout=30) as http:
        done = http.get(f"/threads/{thread_id}/runs/{queued['run_id']}/join").json()
        assert _run_status(http, thread_id, running["run_id"]) == "success"
        assert _run_status(http, thread_id, queued["run_id"]) == "success"
        assert done["x"] == 101  # its input overwrote x, then node a added one
        assert http.get(f"/threads/{thread_id}").json()["status"] == "idle"
        runs = http.get(f"/threads/{thread_id}/runs").json()
        assert {r["status"] for r in runs} == {"success"}


def test_records_survive_a_restart(serve_app: Callable[..., Served]) -> None:
    first = serve_app()
    client = get_sync_client(url=first.url)
    assistant = client.assistants.create("agent", name="kept", metadata={"k": 1})
    thread = client.threads.create(metadata={"t": 1})
    client.runs.wait(thread["thread_id"], assistant["assistant_id"], input={"x": 3})
    first.stop()
    second = serve_app(settings=first.settings)
    client = get_sync_client(url=second.url)
    assert client.assistants.get(assistant["assistant_id"])["name"] == "kept"
    kept = client.threads.get(thread["thread_id"])
    assert kept["metadata"]["t"] == 1 and kept["values"]["x"] == 4
    assert client.threads.get_state(thread["thread_id"])["values"]["x"] == 4


def test_cancelling_a_run_inside_a_long_sync_node_returns_at_once(serve_app: Any) -> None:
    """A graph of sync nodes runs in a worker thread; a cancel does not wait for its node (as
    LangGraph): `cancel?wait=true` answers while the node still blocks, the run ends
    interrupted, the node's result is dropped and `after` never runs, even once it returns."""
    from .graphs import GRAPHS, Gate, gated

    for event in (Gate.opened, Gate.entered, Gate.left):
        event.clear()
    Gate.ran.clear()
    served = serve_app(graphs={**GRAPHS, "gated": gated})
    with httpx.Client(base_url=served.url, timeout=20) as http:
        thread_id = _thread(http)
        run = _start(http, thread_id, assistant_id="gated", input={"log": []})
        path = f"/threads/{thread_id}/runs/{run['run_id']}"
        assert Gate.entered.wait(10), "the slow node never started"
        began = time.monotonic()
        response = http.post(f"{path}/cancel", params={"wait": "true"})
        took = time.monotonic() - began
        assert response.status_code == 200, response.text
        assert took < 5, f"the cancel waited {took:.1f} s for the node"
        assert not Gate.left.is_set()  # answered while the node still blocks
        assert _run_status(http, thread_id, run["run_id"]) == "interrupted"
        saved = http.get(f"/threads/{thread_id}/state").json()
        history = http.post(f"/threads/{thread_id}/history", json={"limit": 20}).json()
        Gate.opened.set()
        assert Gate.left.wait(10)
        time.sleep(0.5)  # time for a run that was not really stopped to save or go on
        assert Gate.ran == ["slow"]
        assert saved["values"]["log"] == ["first"] and saved["next"] == ["slow"]
        assert http.get(f"/threads/{thread_id}/state").json() == saved
        assert http.post(f"/threads/{thread_id}/history", json={"limit": 20}).json() == history
        assert http.get(f"/threads/{thread_id}").json()["status"] == "interrupted"
