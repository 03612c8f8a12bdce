"""Run streams over SSE: the exact wire (raw httpx) and what the official SDK makes of it.

Expected bytes, headers and event orders are the LangGraph Agent Server's as observed
(shared_notes/server_facts.md, "SSE"): CRLF framing, `metadata` first, one event per mode,
`mode|ns` for subgraphs, resumable ids `<ms>-<seq>`, joins that see only later output.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client, get_sync_client

from .conftest import Served
from .graphs import GRAPHS, echo, team

# Issue 19 §11: every test here runs on SQLite and on PostgreSQL + Redis (conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgres")

FINAL = {"x": 2, "log": ["a", "b", "c", "a", "b", "c", "sub1", "sub2"]}
VALUES = [
    {"x": 1, "log": []},
    {"x": 2, "log": ["a"]},
    {"x": 2, "log": ["a", "b"]},
    {"x": 2, "log": ["a", "b", "c"]},
    FINAL,
]
UPDATES = [
    {"a": {"x": 2, "log": ["a"]}},
    {"b": {"log": ["b"]}},
    {"c": {"log": ["c"]}},
    {"sub": {"x": 2, "log": ["a", "b", "c", "sub1", "sub2"]}},
]
SSE_HEADERS = {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    "connection": "keep-alive",
    "x-accel-buffering": "no",
}
EVENT_ID = re.compile(r"^\d{13}-\d+$")


@pytest.fixture
async def client(server: Served) -> AsyncIterator[Any]:
    async with get_client(url=server.url) as sdk:
        yield sdk


@pytest.fixture
def http(server: Served) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10) as raw:
        yield raw


def new_thread(http: httpx.Client) -> str:
    return str(http.post("/threads", json={}).json()["thread_id"])


def parse(raw: bytes) -> list[dict[str, Any]]:
    """SSE blocks, checking the framing: CRLF line ends only, `event:` then `data:` then `id:`."""
    assert raw.endswith(b"\r\n\r\n") or raw == b""
    blocks = []
    for block in raw.split(b"\r\n\r\n")[:-1]:
        lines = block.split(b"\r\n")
        assert all(b"\n" not in line and b"\r" not in line for line in lines), block
        if lines[0].startswith(b":"):
            assert lines == [b": heartbeat"]
            blocks.append({"comment": "heartbeat"})
            continue
        fields = [line.split(b": ", 1) for line in lines]
        names = [name for name, _ in fields]
        assert names in ([b"event", b"data"], [b"event", b"data", b"id"]), block
        parsed: dict[str, Any] = {"event": fields[0][1].decode(), "data": json.loads(fields[1][1])}
        if len(fields) == 3:
            parsed["id"] = fields[2][1].decode()
        blocks.append(parsed)
    return blocks


def events(raw: bytes) -> list[dict[str, Any]]:
    return [e for e in parse(raw) if "event" in e]


def stream(http: httpx.Client, path: str, body: Any = None, *, method: str = "POST",
           headers: dict[str, str] | None = None) -> tuple[httpx.Response, bytes]:
    with http.stream(method, path, json=body, headers=headers) as response:
        raw = response.read()
    return response, raw


def start_run(http: httpx.Client, thread_id: str, **body: Any) -> dict[str, Any]:
    run = http.post(f"/threads/{thread_id}/runs", json={"assistant_id": "agent", **body})
    assert run.status_code == 200, run.text
    return run.json()  # type: ignore[no-any-return]


def wait_running(http: httpx.Client, thread_id: str, run_id: str) -> None:
    deadline = time.monotonic() + 5
    while http.get(f"/threads/{thread_id}/runs/{run_id}").json()["status"] == "pending":
        assert time.monotonic() < deadline
        time.sleep(0.005)


# -- the wire ------------------------------------------------------------------------------------


def test_values_stream_wire(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    response, raw = stream(http, f"/threads/{thread_id}/runs/stream",
                           {"assistant_id": "agent", "input": {"x": 1}})
    assert response.status_code == 200
    for name, value in SSE_HEADERS.items():
        assert response.headers[name] == value
    assert response.headers["transfer-encoding"] == "chunked"
    [run] = http.get(f"/threads/{thread_id}/runs").json()
    path = f"/threads/{thread_id}/runs/{run['run_id']}"
    assert response.headers["location"] == f"{path}/stream"
    assert response.headers["content-location"] == path
    metadata = b'event: metadata\r\ndata: {"run_id":"' + run["run_id"].encode()
    assert raw.startswith(metadata + b'","attempt":1}\r\n\r\n')
    assert raw.endswith(b'event: values\r\ndata: ' + json.dumps(FINAL, separators=(",", ":")).encode()
                        + b"\r\n\r\n")  # the body just ends: no `end` event
    assert [e["event"] for e in events(raw)] == ["metadata"] + ["values"] * 5
    assert [e["data"] for e in events(raw)][1:] == VALUES
    assert run["status"] == "success"  # final before the stream ended (the SDK checks it)


def test_modes_and_event_names(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    modes = ["updates", "custom", "tasks", "checkpoints", "debug"]
    _, raw = stream(http, f"/threads/{thread_id}/runs/stream",
                    {"assistant_id": "agent", "input": {"x": 1}, "stream_mode": modes})
    got = events(raw)
    assert got[0]["event"] == "metadata"
    assert {e["event"] for e in got[1:]} == set(modes)
    assert [e["data"] for e in got if e["event"] == "updates"] == UPDATES
    assert [e["data"] for e in got if e["event"] == "custom"] == [{"progress": "a"}]
    tasks = [e["data"] for e in got if e["event"] == "tasks"]
    assert [(t["name"], "input" in t) for t in tasks[:2]] == [("a", True), ("a", False)]
    assert tasks[1]["result"] == {"x": 2, "log": ["a"]} and tasks[1]["interrupts"] == []
    checkpoints = [e["data"] for e in got if e["event"] == "checkpoints"]
    assert [c["metadata"]["step"] for c in checkpoints] == [-1, 0, 1, 2, 3, 4]
    assert checkpoints[-1]["values"] == FINAL and checkpoints[-1]["next"] == []
    debug = [e["data"]["type"] for e in got if e["event"] == "debug"]
    assert set(debug) == {"checkpoint", "task", "task_result"}


def test_subgraph_event_names(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    _, raw = stream(http, f"/threads/{thread_id}/runs/stream", {
        "assistant_id": "agent", "input": {"x": 1}, "stream_mode": ["values", "updates"],
        "stream_subgraphs": True,
    })
    names = [e["event"] for e in events(raw)]
    sub = [n for n in names if "|" in n]
    assert sub and all(re.fullmatch(r"(values|updates)\|sub:[0-9a-f-]{36}", n) for n in sub)
    assert len({n.split("|")[1] for n in sub}) == 1
    inner = [e["data"] for e in events(raw) if e["event"].startswith("updates|")]
    assert inner == [{"sub1": {"log": ["sub1"]}}, {"sub2": {"log": ["sub2"]}}]
    outer = [e["data"] for e in events(raw) if e["event"] == "updates"]
    assert outer == UPDATES
    assert names.index(sub[-1]) < names.index("updates", names.index(sub[0]))  # sub first


def test_error_event(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    _, raw = stream(http, f"/threads/{thread_id}/runs/stream", {
        "assistant_id": "agent", "input": {"x": 1, "fail": True},
        "stream_mode": ["values", "updates"],
    })
    assert raw.endswith(b'event: error\r\ndata: {"error":"ValueError","message":"boom from c"}'
                        b"\r\n\r\n")
    [run] = http.get(f"/threads/{thread_id}/runs").json()
    assert run["status"] == "error"


def test_interrupt_events(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    _, raw = stream(http, f"/threads/{thread_id}/runs/stream", {
        "assistant_id": "agent", "input": {"x": 1, "ask": True},
        "stream_mode": ["values", "updates"],
    })
    got = events(raw)
    [update] = [e["data"] for e in got if e["event"] == "updates" and "__interrupt__" in e["data"]]
    [interrupt] = update["__interrupt__"]
    assert list(interrupt) == ["value", "id", "response_schema"]
    assert interrupt["value"] == {"question": "continue?"} and interrupt["response_schema"] is None
    assert got[-1] == {"event": "values", "data": {"x": 2, "log": ["a"], "ask": True,
                                                   "__interrupt__": [interrupt]}}
    _, raw = stream(http, f"/threads/{thread_id}/runs/stream", {
        "assistant_id": "agent", "command": {"resume": "ok"}, "stream_mode": ["updates"],
    })
    assert [e["data"] for e in events(raw)][1] == {"b": {"log": ["b:ok"], "answer": "ok"}}

    static = new_thread(http)
    _, raw = stream(http, f"/threads/{static}/runs/stream", {
        "assistant_id": "agent", "input": {"x": 1}, "stream_mode": ["updates"],
        "interrupt_after": ["a"],
    })
    assert [e["data"] for e in events(raw)][1:] == [UPDATES[0], {"__interrupt__": []}]


def test_heartbeats(serve_app: Any) -> None:
    served = serve_app(heartbeat=0.05)
    with httpx.Client(base_url=served.url, timeout=10) as http:
        thread_id = new_thread(http)
        _, raw = stream(http, f"/threads/{thread_id}/runs/stream",
                        {"assistant_id": "agent", "input": {"x": 1, "sleep": 0.25}})
    assert b": heartbeat\r\n\r\n" in raw
    assert len(events(raw)) == 6 and {"comment": "heartbeat"} in parse(raw)


# -- messages -------------------------------------------------------------------------------------


CHAT_INPUT = {"messages": [{"role": "user", "content": "hi"}]}
AI_KEYS = ["content", "additional_kwargs", "response_metadata", "type", "name", "id",
           "tool_calls", "invalid_tool_calls", "usage_metadata"]


def test_messages_tuple(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    _, raw = stream(http, f"/threads/{thread_id}/runs/stream", {
        "assistant_id": "chat", "input": CHAT_INPUT, "stream_mode": "messages-tuple",
    })
    got = events(raw)[1:]
    assert [e["event"] for e in got] == ["messages"] * 3
    chunks = [e["data"][0] for e in got]
    assert [c["content"] for c in chunks] == ["hello", " there", " friend"]
    assert list(chunks[0]) == [*AI_KEYS, "tool_call_chunks", "chunk_position"]
    assert chunks[0]["type"] == "AIMessageChunk" and chunks[0]["id"] == "reply-1"
    meta = got[0]["data"][1]
    [run] = http.get(f"/threads/{thread_id}/runs").json()
    assert meta["run_id"] == run["run_id"] and meta["thread_id"] == thread_id
    assert (meta["graph_id"], meta["created_by"], meta["run_attempt"]) == ("chat", "system", 1)
    assert meta["langgraph_node"] == "call"
    assert meta["langgraph_checkpoint_ns"].startswith("call:")


def test_messages_partial_accumulates(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    _, raw = stream(http, f"/threads/{thread_id}/runs/stream", {
        "assistant_id": "chat", "input": CHAT_INPUT, "stream_mode": ["messages", "updates"],
    })
    got = events(raw)[1:]
    assert [e["event"] for e in got] == [
        "messages/metadata", "messages/partial", "messages/partial", "messages/partial", "updates",
    ]  # no messages/complete for a streamed reply (as observed)
    assert list(got[0]["data"]) == ["reply-1"]
    assert got[0]["data"]["reply-1"]["metadata"]["langgraph_node"] == "call"
    partials = [e["data"] for e in got[1:4]]
    assert [p[0]["content"] for p in partials] == ["hello", "hello there", "hello there friend"]
    assert all(len(p) == 1 and list(p[0]) == AI_KEYS and p[0]["type"] == "ai" for p in partials)
    [reply] = got[-1]["data"]["call"]["messages"]
    assert (reply["type"], reply["content"]) == ("ai", "hello there friend")


def test_messages_complete_for_a_whole_message(serve_app: Any) -> None:
    served = serve_app(graphs={**GRAPHS, "echo": echo})
    with httpx.Client(base_url=served.url, timeout=10) as http:
        _, raw = stream(http, "/runs/stream", {
            "assistant_id": "echo", "input": CHAT_INPUT, "stream_mode": ["messages", "values"],
        })
        got = events(raw)
        assert [e["event"] for e in got] == [
            "metadata", "values", "messages/metadata", "messages/complete", "values",
        ]
        assert got[1]["data"]["messages"][0]["type"] == "human"
        assert got[3]["data"] == [{
            "content": "direct reply", "additional_kwargs": {}, "response_metadata": {},
            "type": "ai", "name": None, "id": "ai-fixed-1", "tool_calls": [],
            "invalid_tool_calls": [], "usage_metadata": None,
        }]
        _, raw = stream(http, "/runs/stream", {
            "assistant_id": "echo", "input": CHAT_INPUT, "stream_mode": "messages-tuple",
        })
        [message] = events(raw)[1:]
        assert list(message["data"][0]) == AI_KEYS and message["data"][1]["langgraph_node"] == "reply"


@pytest.mark.parametrize("subgraphs", [False, True])
def test_subgraph_parallel_sync_nodes_stream_whole_run(serve_app: Any, subgraphs: bool) -> None:
    # with custom/messages modes the stream ended once the subgraph's first task did (issue 17)
    served = serve_app(graphs={**GRAPHS, "team": team})
    with httpx.Client(base_url=served.url, timeout=10) as http:
        thread_id = new_thread(http)
        for path in ("/runs/stream", f"/threads/{thread_id}/runs/stream"):
            _, raw = stream(http, path, {
                "assistant_id": "team", "input": {"log": []}, "stream_subgraphs": subgraphs,
                "stream_mode": ["updates", "custom", "messages-tuple"],
            })
            got = events(raw)
            outer = [e["data"] for e in got if e["event"] == "updates"]
            assert outer == [{"team": {"log": ["long", "quick"]}}, {"after": {"log": ["after"]}}]
            custom = sorted(e["data"]["done"] for e in got if e["event"].startswith("custom|"))
            assert custom == (["long", "quick"] if subgraphs else [])
        state = http.get(f"/threads/{thread_id}/state").json()
        assert state["values"]["log"] == ["long", "quick", "after"]


def test_chat_values_are_message_dicts(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    _, raw = stream(http, f"/threads/{thread_id}/runs/stream",
                    {"assistant_id": "chat", "input": CHAT_INPUT})
    last = events(raw)[-1]["data"]["messages"]
    assert [(m["type"], m["content"]) for m in last] == [("human", "hi"),
                                                         ("ai", "hello there friend")]
    assert http.get(f"/threads/{thread_id}").json()["status"] == "idle"


def test_events_mode(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    _, raw = stream(http, f"/threads/{thread_id}/runs/stream",
                    {"assistant_id": "agent", "input": {"x": 1}, "stream_mode": "events"})
    got = events(raw)[1:]
    assert {e["event"] for e in got} == {"events"}
    assert got[0]["data"]["event"] == "on_chain_start"
    assert got[-1]["data"]["event"] == "on_chain_end"


# -- resumable streams ----------------------------------------------------------------------------


def test_resumable_ids_and_replay(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    response, raw = stream(http, f"/threads/{thread_id}/runs/stream", {
        "assistant_id": "agent", "input": {"x": 1}, "stream_mode": ["values", "updates"],
        "stream_resumable": True, "stream_subgraphs": True,
    })
    got = events(raw)
    assert all("id" in e and EVENT_ID.match(e["id"]) for e in got)
    keys = [tuple(map(int, e["id"].split("-"))) for e in got]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)  # unique and growing
    assert raw.startswith(b"event: metadata\r\ndata: {")
    assert b"\r\nid: " + got[0]["id"].encode() + b"\r\n\r\n" in raw  # `id:` after `data:`
    join = response.headers["location"]

    _, everything = stream(http, join, method="GET", headers={"Last-Event-ID": "-1"})
    assert everything == raw  # the whole stream again, byte for byte, metadata included
    cut = 6
    _, rest = stream(http, join, method="GET", headers={"Last-Event-ID": got[cut]["id"]})
    assert events(rest) == got[cut + 1:]  # strictly after, subgraph events included
    assert any("|sub:" in e["event"] for e in events(rest))
    _, nothing = stream(http, join, method="GET")
    assert nothing == b""  # a finished run without Last-Event-ID: empty 200


def test_resumable_background_run_joined_mid_run(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    run = start_run(http, thread_id, input={"x": 1, "sleep": 0.2}, stream_mode=["updates"],
                    stream_resumable=True)
    wait_running(http, thread_id, run["run_id"])
    path = f"/threads/{thread_id}/runs/{run['run_id']}/stream"
    _, raw = stream(http, path, method="GET", headers={"Last-Event-ID": "-1"})
    got = events(raw)
    assert [e["event"] for e in got] == ["metadata"] + ["updates"] * 4  # replay + live
    assert got[0]["data"] == {"run_id": run["run_id"], "attempt": 1}
    assert [e["data"] for e in got[1:]] == UPDATES


def test_join_non_resumable_gets_only_later_events(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    run = start_run(http, thread_id, input={"x": 1, "sleep": 0.2},
                    stream_mode=["values", "updates"])
    deadline = time.monotonic() + 5  # past the metadata and the input's values event:
    while http.get(f"/threads/{thread_id}/state").json()["next"] != ["a"]:
        assert time.monotonic() < deadline
        time.sleep(0.005)
    time.sleep(0.02)
    path = f"/threads/{thread_id}/runs/{run['run_id']}"
    response, raw = stream(http, f"{path}/stream", method="GET")
    assert response.headers["location"] == f"{path}/stream"
    assert response.headers["content-location"] == path
    got = events(raw)
    assert [e["event"] for e in got] == ["updates", "values"] * 4  # no metadata, no input values
    assert "id" not in got[0]
    response, raw = stream(http, f"{path}/stream", method="GET")
    assert (response.status_code, raw) == (200, b"")  # finished: empty body
    assert response.headers["content-type"] == SSE_HEADERS["content-type"]


def test_join_before_start_sees_metadata_and_filters_modes(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    run = start_run(http, thread_id, input={"x": 1}, stream_mode=["values", "updates"],
                    after_seconds=0.2)
    path = f"/threads/{thread_id}/runs/{run['run_id']}/stream"
    _, raw = stream(http, path, method="GET")
    assert [e["event"] for e in events(raw)] == [
        "metadata", "values", *["updates", "values"] * 4]

    other_thread = new_thread(http)
    other = start_run(http, other_thread, input={"x": 1}, stream_mode=["values", "updates"],
                      after_seconds=0.2)
    other_path = f"/threads/{other_thread}/runs/{other['run_id']}/stream"
    _, raw = stream(http, f"{other_path}?stream_mode=updates", method="GET")
    assert [e["data"] for e in events(raw)] == UPDATES  # filtered, metadata dropped too


def test_join_unknown_run(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    response, raw = stream(http, f"/threads/{thread_id}/runs/{uuid.uuid4()}/stream", method="GET")
    assert response.status_code == 200
    assert raw == (b'event: error\r\ndata: {"error":"HTTPException","message":"404: Run not found"}'
                   b"\r\n\r\n")


def test_cancelled_run_stream_just_ends(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    run = start_run(http, thread_id, input={"x": 1, "sleep": 0.2})
    wait_running(http, thread_id, run["run_id"])
    result: dict[str, bytes] = {}

    def join() -> None:
        with httpx.Client(base_url=str(http.base_url), timeout=10) as other:
            result["raw"] = stream(other, f"/threads/{thread_id}/runs/{run['run_id']}/stream",
                                   method="GET")[1]

    joiner = threading.Thread(target=join)
    joiner.start()
    time.sleep(0.05)
    http.post(f"/threads/{thread_id}/runs/{run['run_id']}/cancel")
    joiner.join(5)
    assert b"event: error" not in result["raw"]


# -- disconnects ----------------------------------------------------------------------------------


@pytest.mark.parametrize("on_disconnect", ["cancel", "continue"])
def test_client_disconnect(http: httpx.Client, on_disconnect: str) -> None:
    thread_id = new_thread(http)
    with http.stream("POST", f"/threads/{thread_id}/runs/stream", json={
        "assistant_id": "agent", "input": {"x": 1, "sleep": 0.2}, "on_disconnect": on_disconnect,
    }) as response:
        first = next(response.iter_raw())
        assert first.startswith(b"event: metadata")
    [run] = http.get(f"/threads/{thread_id}/runs").json()
    path = f"/threads/{thread_id}/runs/{run['run_id']}"
    http.get(f"{path}/join")
    expected = "interrupted" if on_disconnect == "cancel" else "success"
    assert http.get(path).json()["status"] == expected


# -- stateless streams ----------------------------------------------------------------------------


def test_stateless_stream(http: httpx.Client) -> None:
    response, raw = stream(http, "/runs/stream", {"assistant_id": "agent", "input": {"x": 1},
                                                  "stream_mode": "updates"})
    got = events(raw)
    run_id = got[0]["data"]["run_id"]
    assert response.headers["location"] == f"/runs/{run_id}/stream"
    assert response.headers["content-location"] == f"/runs/{run_id}"
    assert response.headers["content-type"] == SSE_HEADERS["content-type"]
    assert [e["data"] for e in got[1:]] == UPDATES
    _, raw = stream(http, "/runs/stream", {"assistant_id": "agent", "input": {"x": 1},
                                           "stream_resumable": True})
    assert all(EVENT_ID.match(e["id"]) for e in events(raw))


def test_stream_errors_are_json(http: httpx.Client) -> None:
    unknown = http.post(f"/threads/{uuid.uuid4()}/runs/stream", json={"assistant_id": "agent"})
    assert unknown.status_code == 404
    assert unknown.headers["content-type"] == "application/json"
    assert unknown.json() == {"detail": "Thread or assistant not found."}


# -- the SDK ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_sdk_stream_modes(client: Any, http: httpx.Client) -> None:
    thread = await client.threads.create()
    parts = [p async for p in client.runs.stream(thread["thread_id"], "agent", input={"x": 1})]
    assert [p.event for p in parts] == ["metadata"] + ["values"] * 5
    assert [p.data for p in parts[1:]] == VALUES
    parts = [p async for p in client.runs.stream(
        thread["thread_id"], "agent", input={"x": 1}, stream_mode=["updates", "custom"],
        stream_subgraphs=True,
    )]
    names = [p.event for p in parts]
    assert names[0] == "metadata" and "custom" in names
    assert sum(n.startswith("updates|sub:") for n in names) == 2
    chat = [p async for p in client.runs.stream(None, "chat", input=CHAT_INPUT,
                                                stream_mode="messages-tuple")]
    assert [p.event for p in chat] == ["metadata"] + ["messages"] * 3
    assert chat[1].data[0]["content"] == "hello"
    errors = [p async for p in client.runs.stream(thread["thread_id"], "agent",
                                                  input={"fail": True})]
    assert errors[-1].event == "error"
    assert errors[-1].data == {"error": "ValueError", "message": "boom from c"}


@pytest.mark.anyio
async def test_sdk_join_stream_and_resume(client: Any, http: httpx.Client) -> None:
    thread = await client.threads.create()
    run = await client.runs.create(thread["thread_id"], "agent", input={"x": 1, "sleep": 0.1},
                                   stream_mode=["updates"], stream_resumable=True)
    parts = [p async for p in client.runs.join_stream(thread["thread_id"], run["run_id"],
                                                      last_event_id="-1")]
    assert [p.event for p in parts] == ["metadata"] + ["updates"] * 4
    assert all(EVENT_ID.match(p.id) for p in parts)
    rest = [p async for p in client.runs.join_stream(thread["thread_id"], run["run_id"],
                                                     last_event_id=parts[2].id)]
    assert [(p.id, p.data) for p in rest] == [(p.id, p.data) for p in parts[3:]]


class _CuttingProxy:
    """A TCP proxy to the server that cuts its first connection once the server has sent an
    event with an id (a state, not a time: under load the first event can take any time)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                downstream, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            cut = threading.Event() if self.connections == 1 else None
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            for source, sink in ((downstream, upstream), (upstream, downstream)):
                threading.Thread(target=self._pipe, args=(source, sink, cut, source is upstream),
                                 daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket, cut: threading.Event | None,
              from_server: bool) -> None:
        source.settimeout(0.01)
        try:
            while cut is None or not cut.is_set():
                try:
                    data = source.recv(65536)
                except TimeoutError:
                    continue
                if not data:
                    break
                sink.sendall(data)
                if cut is not None and from_server and b"\nid: " in b"\n" + data:
                    cut.set()
        except OSError:
            pass
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def close(self) -> None:
        self.listener.close()


def test_sdk_reconnects_with_last_event_id(server: Served) -> None:
    """A stream cut mid-run: the SDK asks the run, reconnects to `Location` with its last
    `Last-Event-ID`, and the replay continues without loss or duplicates."""
    with httpx.Client(base_url=server.url, timeout=10) as http:
        thread_id = new_thread(http)
    proxy = _CuttingProxy(server.port)  # node `a` sleeps: the run goes on past the cut
    try:
        with get_sync_client(url=proxy.url) as sdk:
            parts = list(sdk.runs.stream(thread_id, "agent", input={"x": 1, "sleep": 0.3},
                                         stream_mode=["updates"], stream_resumable=True))
    finally:
        proxy.close()
    assert proxy.connections >= 2  # the cut stream, then the reconnect
    assert [p.event for p in parts] == ["metadata"] + ["updates"] * 4
    assert [p.data for p in parts[1:]] == UPDATES
    ids = [p.id for p in parts]
    assert len(set(ids)) == len(ids)


def test_sync_sdk_stream(server: Served) -> None:
    with get_sync_client(url=server.url) as sdk:
        thread = sdk.threads.create()
        parts = list(sdk.runs.stream(thread["thread_id"], "agent", input={"x": 1},
                                     stream_mode="updates"))
        assert [p.data for p in parts[1:]] == UPDATES
        parts = list(sdk.runs.stream(None, "agent", input={"x": 1}, stream_mode="values"))
        assert parts[-1].data == FINAL
