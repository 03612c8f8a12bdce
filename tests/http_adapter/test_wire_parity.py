"""Issue 31, items 6, 8 and 15: where `langgraph dev` differed on the wire in ways the parity replay
cannot pin down (they depend on how long the reference takes), through real servers and the real
`langgraph-sdk` client, on both back ends.
"""

from __future__ import annotations

import json
import queue
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph_sdk import get_sync_client

from engine import START, Command, MessagesState, StateGraph

from .conftest import wait_for
from .graphs import GRAPHS, Gate, gated, shout_graph

pytestmark = pytest.mark.backends("sqlite", "postgres")


@pytest.fixture
def gate() -> Iterator[type[Gate]]:
    for event in (Gate.opened, Gate.entered, Gate.left):
        event.clear()
    Gate.ran.clear()
    yield Gate
    Gate.opened.set()  # never leave a node blocked


def _chunks(http: httpx.Client, method: str, path: str, body: dict[str, Any] | None
            ) -> queue.Queue[Any]:
    """The response's raw chunks as they arrive (read in a thread), then its status, then None."""
    arrived: queue.Queue[Any] = queue.Queue()

    def read() -> None:
        with http.stream(method, path, json=body) as response:
            for chunk in response.iter_raw():
                arrived.put(chunk)
            arrived.put(response.status_code)
        arrived.put(None)

    threading.Thread(target=read, daemon=True).start()
    return arrived


def _rest(arrived: queue.Queue[Any]) -> tuple[bytes, int]:
    body, status = b"", 0
    while (item := arrived.get(timeout=30)) is not None:
        if isinstance(item, int):
            status = item
        else:
            body += item
    return body, status


@pytest.mark.parametrize("how", ["wait", "join"])
def test_wait_and_join_send_newlines_until_the_result(serve_app: Any, gate: type[Gate],
                                                      how: str) -> None:
    """Item 6: while the run blocks, the answer is already flowing (newlines, as the
    reference's every 5 s, here every 0.05 s); the whole body still parses as the result."""
    served = serve_app(graphs={**GRAPHS, "gated": gated}, wait_keepalive=0.05)
    with httpx.Client(base_url=served.url, timeout=30) as http:
        tid = http.post("/threads", json={}).json()["thread_id"]
        run = {"assistant_id": "gated", "input": {"x": 1}}
        if how == "wait":
            arrived = _chunks(http, "POST", f"/threads/{tid}/runs/wait", run)
        else:
            rid = http.post(f"/threads/{tid}/runs", json=run).json()["run_id"]
            arrived = _chunks(http, "GET", f"/threads/{tid}/runs/{rid}/join", None)
        assert gate.entered.wait(10), "the slow node never started"
        try:
            first = arrived.get(timeout=10)  # before the run can end: the gate is shut
        except queue.Empty:
            pytest.fail("nothing sent while the run was still running")
        assert isinstance(first, bytes) and first and not first.strip(), first
        assert not gate.left.is_set()
        gate.opened.set()
        rest, status = _rest(arrived)
    body = first + rest
    assert status == 200
    expected = {"x": 1, "log": ["first", "slow", "after"]}
    assert orjson.loads(body) == expected  # what langgraph-sdk's runs.wait/join decode with
    assert json.loads(body) == expected


def _unread(url: str, method: str, path: str, body: dict[str, Any] | None) -> socket.socket:
    """A request on a raw socket whose answer nobody reads: closing the socket leaves."""
    host, port = httpx.URL(url).host, httpx.URL(url).port
    data = json.dumps(body).encode() if body is not None else b""
    sock = socket.create_connection((host, port))
    sock.sendall(f"{method} {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json"
                 f"\r\ncontent-length: {len(data)}\r\n\r\n".encode() + data)
    return sock


@pytest.mark.parametrize("keepalive", [0.05, 30.0])
@pytest.mark.parametrize("how", ["wait", "join"])
def test_a_client_leaving_a_wait_or_join_cancels_the_run_when_asked(
        serve_app: Any, how: str, keepalive: float) -> None:
    """As the reference's: `runs.wait(..., on_disconnect="cancel")` and a join with
    `?cancel_on_disconnect=true` cancel the run when the client leaves before its result,
    while the newlines flow (0.05) or before the first (30)."""
    served = serve_app(graphs={**GRAPHS, "shout": shout_graph}, wait_keepalive=keepalive)
    slow = {"assistant_id": "shout", "input": {"messages": [{"type": "human", "content": "slow"}]}}
    with httpx.Client(base_url=served.url, timeout=30) as http:
        tid = http.post("/threads", json={}).json()["thread_id"]
        if how == "wait":
            sock = _unread(served.url, "POST", f"/threads/{tid}/runs/wait",
                           {**slow, "on_disconnect": "cancel"})
        else:
            rid = http.post(f"/threads/{tid}/runs", json=slow).json()["run_id"]
            sock = _unread(served.url, "GET",
                           f"/threads/{tid}/runs/{rid}/join?cancel_on_disconnect=true", None)
        (run,) = wait_for(lambda: [r for r in http.get(f"/threads/{tid}/runs").json()
                                   if r["status"] == "running"])
        if keepalive < 1:  # the answer has begun: its headers and a newline
            assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        sock.close()
        path = f"/threads/{tid}/runs/{run['run_id']}"
        assert wait_for(lambda: http.get(path).json()["status"] == "interrupted")


def test_sdk_wait_and_join_read_a_body_with_newlines(serve_app: Any, gate: type[Gate]) -> None:
    """Item 6 through the SDK: `runs.wait` returns the values although newlines came first."""
    served = serve_app(graphs={**GRAPHS, "gated": gated}, wait_keepalive=0.05)
    client = get_sync_client(url=served.url, api_key=None)
    tid = client.threads.create()["thread_id"]
    result: queue.Queue[Any] = queue.Queue()
    threading.Thread(target=lambda: result.put(client.runs.wait(tid, "gated", input={"x": 1})),
                     daemon=True).start()
    assert gate.entered.wait(10)
    gate.opened.set()
    assert result.get(timeout=30) == {"x": 1, "log": ["first", "slow", "after"]}


def test_join_a_stateless_run_that_already_ended(serve_app: Any) -> None:
    """Item 8: `runs.create(None, ...)` then `runs.join` answers the run's result even when the
    run ended before the join came (here it always has: one worker ran a later run after it);
    a second join answers 404, as the reference's once the temporary thread is gone."""
    served = serve_app(workers=1)
    client = get_sync_client(url=served.url, api_key=None)
    run = client.runs.create(None, "agent", input={"x": 1})
    expected = client.runs.wait(None, "agent", input={"x": 1})  # after `run`, on the one worker
    assert expected["x"] == 2
    assert client.runs.join(run["thread_id"], run["run_id"]) == expected
    again = client.runs.join(run["thread_id"], run["run_id"])
    assert again == {"__error__": {"error": "HTTPException", "message": "404: Run not found"}}


# -- item 15: a handoff's ToolMessage keeps the id its reducer gives it -----------------------


class _Handoff:
    """`handoff` runs `transfer` and `sibling` in one step; the step (and so `add_messages`,
    which gives `transfer`'s id-less ToolMessage its id) ends only when `sibling` returns."""

    transferred = threading.Event()
    release = threading.Event()


def _transfer(state: MessagesState) -> Any:
    _Handoff.transferred.set()
    return Command(update={"messages": [ToolMessage("Transferred", tool_call_id="call-1")]})


def _sibling(state: MessagesState) -> dict[str, Any]:
    assert _Handoff.transferred.wait(10)
    # Released by the test once `transfer`'s update reached the client (what the old code
    # did while the step was still open); else, with the update held as it must be, after a
    # while: the verdict does not depend on that wait, only the test's duration.
    _Handoff.release.wait(2)
    return {"messages": [AIMessage("sibling", id="sibling-1")]}


def _handoff_graph() -> Any:
    graph = StateGraph(MessagesState)
    graph.add_node("transfer", _transfer)
    graph.add_node("sibling", _sibling)
    graph.add_edge(START, "transfer")
    graph.add_edge(START, "sibling")
    return graph.compile()


def test_handoff_tool_message_id_in_updates(serve_app: Any) -> None:
    """Item 15: the `updates` event of a node that returned an id-less message object shows
    the id `add_messages` gave it (the one in the thread's state), never null."""
    _Handoff.transferred.clear()
    _Handoff.release.clear()
    served = serve_app(graphs={"handoff": _handoff_graph()})
    client = get_sync_client(url=served.url, api_key=None)
    tid = client.threads.create()["thread_id"]
    updates = []
    try:
        for part in client.runs.stream(tid, "handoff", input={"messages": []},
                                       stream_mode="updates"):
            if part.event == "updates" and "transfer" in part.data:
                updates.append(part.data["transfer"]["messages"][0])
                _Handoff.release.set()
    finally:
        _Handoff.release.set()
    state = client.threads.get_state(tid)["values"]["messages"]
    tool_ids = [m["id"] for m in state if m["type"] == "tool"]
    assert len(updates) == 1 and len(tool_ids) == 1
    assert updates[0]["id"] is not None
    assert updates[0]["id"] == tool_ids[0]
