"""A long thread over HTTP (issue 32): a turn writes what is new, not the thread's history.

The Thread record names the checkpoint holding its values instead of a copy of them
(`thread_values.py`), so a record stays the same size however long its thread grows, on SQLite
and on PostgreSQL, while `GET /threads/{id}`, the search and `/wait` show the same values; a
`/runs/wait` turn does not encode `values` events nobody can receive; and a data file written
before (records holding values) is served the same.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis import Redis

from http_adapter.agent_server.broker import Broker
from http_adapter.agent_server.schemas import Thread
from http_adapter.agent_server.thread_values import matching

from . import graphs
from .conftest import Served
from .old_records import NAME, TURNS, answers, message

pytestmark = pytest.mark.backends("sqlite", "postgres")

FIXTURES = Path(__file__).parent / "fixtures"
BIG = 3000  # characters of each turn's message: the history grows by this a turn


_clients: list[httpx.Client] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    """Each test's clients are closed after it (an unclosed socket's ResourceWarning, raised
    when it is collected, fails whatever test runs then)."""
    yield
    while _clients:
        _clients.pop().close()


def _http(server: Served) -> httpx.Client:
    client = httpx.Client(base_url=server.url, timeout=30)
    _clients.append(client)
    return client


def _turn(http: httpx.Client, thread_id: str, turn: int) -> Any:
    content = f"marker-{turn} " + "y" * BIG
    response = http.post(f"/threads/{thread_id}/runs/wait", json={
        "assistant_id": "chat", "input": {"messages": [{"type": "human", "content": content}]}})
    assert response.status_code == 200, response.text
    return response.json()


def _stored(server: Served, table: str, key: str, value: str) -> list[bytes]:
    """The stored JSON bodies of one kind of record (`thread`/`run`) whose `key` is `value`:
    what the record costs on disk, read from the database itself."""
    settings = server.settings
    if settings.database_url is None:
        with sqlite3.connect(settings.db_path) as conn:
            rows = conn.execute("SELECT body FROM server_records WHERE kind = ?",
                                (table,)).fetchall()
        bodies = [bytes(b) if not isinstance(b, str) else b.encode() for b, in rows]
        return [b for b in bodies if json.loads(b).get(key) == value]
    return asyncio.run(_pg_bodies(settings.database_url, table, key, value))


async def _pg_bodies(url: str, table: str, key: str, value: str) -> list[bytes]:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        if table == "thread":
            rows = await conn.fetch(
                "SELECT body::text FROM server_threads WHERE thread_id = $1", value)
        else:  # a run's record is its body and the outcome the queue stored beside it
            rows = await conn.fetch(
                "SELECT body::text || coalesce(outcome::text, '') FROM server_runs "
                "WHERE thread_id = $1", value)
        return [r[0].encode() for r in rows]
    finally:
        await conn.close()


def test_a_thread_record_stays_small_however_long_its_thread(server: Served) -> None:
    """The record names its values' checkpoint: no message of the history is in it, and its
    size does not grow with the thread; every way of reading the thread still shows them all.
    Before: the record held every message (~3 KB more a turn), as did each run's stored
    outcome on PostgreSQL."""
    http = _http(server)
    thread_id = http.post("/threads", json={}).json()["thread_id"]
    sizes = []
    for turn in range(4):
        answer = _turn(http, thread_id, turn)
        (body,) = _stored(server, "thread", "thread_id", thread_id)
        assert b"marker-" not in body, body[:200]
        sizes.append(len(body))
    assert max(sizes) < 2000 and max(sizes) - min(sizes) < 100, sizes
    for body in _stored(server, "run", "thread_id", thread_id):  # its own input, no more
        assert body.count(b"marker-") <= 1 and len(body) < BIG + 4000, body[:300]
    state = http.get(f"/threads/{thread_id}/state").json()
    contents = [m["content"][:8] for m in state["values"]["messages"] if m["type"] == "human"]
    assert contents == ["marker-0", "marker-1", "marker-2", "marker-3"]
    assert answer == state["values"]
    thread = http.get(f"/threads/{thread_id}").json()
    assert thread["values"] == state["values"] and thread["status"] == "idle"
    (found,) = http.post("/threads/search", json={"ids": [thread_id]}).json()
    assert found == thread
    (picked,) = http.post("/threads/search",
                          json={"ids": [thread_id], "select": ["thread_id", "status"]}).json()
    assert picked == {"thread_id": thread_id, "status": "idle"}


def test_a_long_threads_state_arrives_whole_from_its_kept_list(server: Served) -> None:
    """Past 63 messages the encoder keeps the list's JSON and the answers write it as its own
    part (`/wait` streamed, `/state` with one Content-Length): each arrives whole and the same."""
    http = _http(server)
    thread_id = http.post("/threads", json={}).json()["thread_id"]
    history = [{"type": "human", "content": f"old-{n} " + "z" * 100} for n in range(70)]
    first = http.post(f"/threads/{thread_id}/runs/wait", json={
        "assistant_id": "chat", "input": {"messages": history}})
    assert first.status_code == 200, first.text
    assert int(first.headers["content-length"]) == len(first.content)  # ended before a newline
    answer = _turn(http, thread_id, 1)
    state = http.get(f"/threads/{thread_id}/state")
    assert int(state.headers["content-length"]) == len(state.content)
    assert state.json()["values"] == answer and len(answer["messages"]) == 72
    assert answer["messages"][0]["content"].startswith("old-0 ")
    assert answer["messages"][70]["id"] == "reply-1"  # replaced by id in place: encoded anew
    assert answer["messages"][71]["content"].startswith("marker-1 ")


def test_a_values_search_reads_each_threads_values(server: Served) -> None:
    http = _http(server)
    ids = []
    for x in (1, 5):
        thread_id = http.post("/threads", json={}).json()["thread_id"]
        http.post(f"/threads/{thread_id}/runs/wait",
                  json={"assistant_id": "agent", "input": {"x": x}}).raise_for_status()
        ids.append(thread_id)
    fresh = http.post("/threads", json={}).json()["thread_id"]

    def search(**body: Any) -> list[str]:
        found = http.post("/threads/search", json={"ids": [*ids, fresh], **body}).json()
        return sorted(t["thread_id"] for t in found)

    assert search(values={"x": 2}) == [ids[0]]
    assert search(values={"x": 6, "log": ["a", "b", "c", "a", "b", "c", "sub1", "sub2"]}) == [
        ids[1]]
    assert search(values={"x": 3}) == []
    assert search(values={}) == sorted([*ids, fresh])
    assert int(http.post("/threads/count", json={"values": {"x": 6}}).text) >= 1
    # a state update moves the values the record names
    http.post(f"/threads/{ids[0]}/state", json={"values": {"x": 40}}).raise_for_status()
    assert search(values={"x": 40}) == [ids[0]]
    assert http.get(f"/threads/{ids[0]}").json()["values"]["x"] == 40


@pytest.mark.anyio
async def test_values_filter_is_python_containment() -> None:
    """As `records.matches` (it was the stores' job before issue 32): Python equality, values
    that are not an object never match a key, a thread without values never matches."""

    def thread(name: str, values: Any) -> Thread:
        return Thread(thread_id=name, created_at="", updated_at="", state_updated_at="",
                      values=values)

    threads = [thread("t0", {"messages": ["hi"], "n": 0}), thread("t1", ["not", "an", "object"]),
               thread("t2", None)]

    async def ids(subset: Any) -> list[str]:
        return [t.thread_id for t in await matching(None, threads, subset)]

    assert await ids({"n": False}) == ["t0"]  # Python: False == 0
    assert await ids({"messages": ["hi"]}) == ["t0"]
    assert await ids({"0": "not"}) == []
    assert await ids({}) == ["t0", "t1", "t2"]
    assert await ids(None) == ["t0", "t1", "t2"]


@pytest.mark.sqlite_only("the embedded broker; Redis streams are read from other hosts")
def test_a_wait_turn_encodes_no_values_event_nobody_receives(server: Served) -> None:
    """Before issue 32 each `/runs/wait` turn encoded the whole state into two `values` events
    that no one subscribed to; a streamed run still gets all of them."""
    broker = server.app.state.server.broker
    assert isinstance(broker, Broker)
    published: list[str] = []
    publish = broker.publish

    def counted(run_id: str, name: str, data: bytes) -> None:
        published.append(name)
        publish(run_id, name, data)

    broker.publish = counted  # type: ignore[method-assign]
    http = _http(server)
    thread_id = http.post("/threads", json={}).json()["thread_id"]
    _turn(http, thread_id, 0)
    assert "values" not in published and published.count("metadata") == 1, published
    published.clear()
    with http.stream("POST", f"/threads/{thread_id}/runs/stream", json={
            "assistant_id": "chat", "stream_mode": "values",
            "input": {"messages": [{"type": "human", "content": "again"}]}}) as stream:
        events = [line for line in stream.iter_lines() if line.startswith("event:")]
    assert events.count("event: values") == 2 and published.count("values") == 2, published


@pytest.mark.backends("postgres")
def test_a_wait_turn_sends_redis_no_values_event_nobody_reads(server: Served) -> None:
    """On PostgreSQL + Redis a `/runs/wait` turn's `values` events went to Redis, where
    they stayed a minute: 2.2 GB after a 1,000-turn thread. Now its stream holds its
    `metadata` and end marker only; a Redis new to the producer has it send every event for a
    few seconds (readers of before a restart register again meanwhile)."""
    assert server.settings.redis_url is not None
    redis = Redis.from_url(server.settings.redis_url)
    _clients.append(redis)  # type: ignore[arg-type]  # closed the same way
    http = _http(server)
    thread_id = http.post("/threads", json={}).json()["thread_id"]
    deadline = time.monotonic() + 30
    for turn in itertools.count():
        _turn(http, thread_id, turn)
        run_id = http.get(f"/threads/{thread_id}/runs").json()[0]["run_id"]
        names = _stream_names(redis, run_id)
        if "values" not in names or time.monotonic() > deadline:
            break
    assert names == ["metadata", "end"], names
    with http.stream("POST", f"/threads/{thread_id}/runs/stream", json={
            "assistant_id": "chat", "stream_mode": "values",
            "input": {"messages": [{"type": "human", "content": "again"}]}}) as stream:
        events = [line for line in stream.iter_lines() if line.startswith("event:")]
    assert events.count("event: values") == 2


def _stream_names(redis: Redis, run_id: str) -> list[str]:
    """The events in a run's Redis stream, once its end marker is there (an unwatched run's
    events are flushed up to 50 ms after it ended)."""
    deadline = time.monotonic() + 10
    while True:
        names = [f.get(b"e", b"end").decode() for _, f in redis.xrange(f"graphrun:run:{run_id}")]
        if names[-1:] == ["end"] or time.monotonic() > deadline:
            return names
        time.sleep(0.01)


def test_broker_reaches_subscribers_and_replays_only() -> None:
    broker = Broker()
    broker.open("r1")
    assert not broker.reaches("r1") and not broker.reaches("unknown")
    subscription = broker.attach("r1")
    assert broker.reaches("r1")
    subscription.close()
    assert not broker.reaches("r1")
    broker.open("r2", resumable=True)
    assert broker.reaches("r2")
    asked: list[str] = []

    def events() -> list[tuple[str, bytes]]:
        asked.append("r")
        return [("values", b"{}")]

    broker.publish_lazy("r1", events)  # nobody: never encoded
    assert asked == []
    broker.publish_lazy("r2", events)  # a later replay may want it
    replay = broker.attach("r2", last_event_id="-1")
    assert asked == ["r"] and replay._replay
    replay.close()


@pytest.mark.sqlite_only("a SQLite data file written by the server before issue 32")
def test_a_data_file_written_before_issue_32_is_served_the_same(
    serve_app: Callable[..., Served], tmp_path: Path,
) -> None:
    """`fixtures/server_before_issue_32.sqlite` (old_records.py, main at eb53874): its
    records hold copies of their values. Served now they read the same; the next turn's
    record names its checkpoint instead, and the thread shows the old turns and the new."""
    data = tmp_path / "old"
    data.mkdir()
    shutil.copyfile(FIXTURES / f"{NAME}.sqlite", data / "graphrun.sqlite")
    expected = json.loads((FIXTURES / f"{NAME}.json").read_text())
    server = serve_app(data_dir=data, graphs=graphs.GRAPHS)
    http = _http(server)
    ids = [t["thread_id"] for t in expected["threads"]]
    assert answers(http, ids) == expected
    chat = ids[0]
    http.post(f"/threads/{chat}/runs/wait", json={
        "assistant_id": "chat", "input": {"messages": [message(TURNS)]}}).raise_for_status()
    (body,) = _stored(server, "thread", "thread_id", chat)
    assert b"turn 0" not in body and json.loads(body)["values_checkpoint"]
    shown = http.get(f"/threads/{chat}").json()["values"]["messages"]
    assert [m["id"] for m in shown if m["type"] == "human"] == [
        f"human-{t}" for t in range(TURNS + 1)]
    assert shown[:-1] == expected["threads"][0]["values"]["messages"]


def test_the_encoders_kept_json_follows_a_field_assigned_anew() -> None:
    """The hook's first look (`encode._known`, issue 32) serves a message's kept JSON only
    while every field is the same object: a field assigned anew is encoded again."""
    from langchain_core.messages import AIMessage

    from http_adapter.agent_server.encode import dumps

    message = AIMessage("first", id="m1")
    assert json.loads(dumps([message]))[0]["content"] == "first"
    assert dumps({"m": message}) == dumps({"m": message})
    message.content = "second"
    assert json.loads(dumps([message]))[0]["content"] == "second"
    other = AIMessage("third", id="m1")  # equal id, another object
    assert json.loads(dumps([other, message]))[0]["content"] == "third"


def test_the_encoders_kept_json_follows_a_field_changed_in_place() -> None:
    """A node may change a message's dicts and lists in place (`additional_kwargs`, a tool
    call's `args`): the same field objects, so identity cannot tell; the kept JSON must not be
    served stale (it was, before the contents were compared)."""
    from langchain_core.messages import AIMessage

    from http_adapter.agent_server.encode import dumps

    message = AIMessage("hi", id="m2")
    assert json.loads(dumps([message]))[0]["additional_kwargs"] == {}
    message.additional_kwargs["seen"] = True
    assert json.loads(dumps([message]))[0]["additional_kwargs"] == {"seen": True}
    message.tool_calls.append({"name": "t", "args": {}, "id": "c1", "type": "tool_call"})
    message.tool_calls[0]["args"]["q"] = 2
    assert json.loads(dumps([message]))[0]["tool_calls"][0]["args"] == {"q": 2}
