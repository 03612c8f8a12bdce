"""Threads over HTTP: the official langgraph-sdk client against a real server, plus raw httpx
for the wire details observed on the LangGraph Agent Server (shared_notes/server_facts.md)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client, get_sync_client
from langgraph_sdk.errors import ConflictError, NotFoundError

from .conftest import Served

# Issue 19 §11: every test here runs on SQLite and on PostgreSQL + Redis (conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgres")

AGENT_ID = "fe096781-5601-53d2-b2f6-0d3403f7e9ca"
FRESH_KEYS = ["thread_id", "created_at", "updated_at", "state_updated_at", "metadata", "status",
              "config", "values"]
RUN_KEYS = FRESH_KEYS + ["error", "interrupts"]
STATE_KEYS = ["values", "next", "tasks", "metadata", "created_at", "checkpoint",
              "parent_checkpoint", "interrupts", "checkpoint_id", "parent_checkpoint_id"]
TASK_KEYS = ["id", "name", "path", "error", "interrupts", "checkpoint", "state", "result"]
FINAL = {"x": 2, "log": ["a", "b", "c", "a", "b", "c", "sub1", "sub2"]}
EMPTY_STATE = {"values": {}, "next": [], "tasks": [], "metadata": None, "created_at": None,
               "checkpoint": None, "parent_checkpoint": None, "interrupts": [],
               "checkpoint_id": None, "parent_checkpoint_id": None}


def _http(server: Served) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=10)


def _wait(http: httpx.Client, thread_id: str, **payload: Any) -> Any:
    payload.setdefault("assistant_id", "agent")
    response = http.post(f"/threads/{thread_id}/runs/wait", json=payload)
    assert response.status_code == 200, response.text
    return response.json()


def _new(http: httpx.Client, **payload: Any) -> dict[str, Any]:
    response = http.post("/threads", json=payload)
    assert response.status_code == 200, response.text
    return response.json()


def _ran(http: httpx.Client, **inputs: Any) -> str:
    """A thread that ran `agent` once (default input x=1)."""
    thread_id = _new(http)["thread_id"]
    _wait(http, thread_id, input=inputs or {"x": 1})
    return thread_id


def _count(http: httpx.Client) -> int:
    return int(http.post("/threads/count", json={}).json())


# -- the Thread record ------------------------------------------------------------------------------


def test_fresh_thread_record(server: Served) -> None:
    client = get_sync_client(url=server.url)
    created = client.threads.create(metadata={"owner": "me"})
    assert list(created) == FRESH_KEYS  # no error/interrupts before a run
    assert uuid.UUID(created["thread_id"])
    assert created["metadata"] == {"owner": "me"}
    assert (created["status"], created["config"], created["values"]) == ("idle", {}, None)
    assert created["created_at"] == created["updated_at"] == created["state_updated_at"]
    assert client.threads.get(created["thread_id"]) == created
    with _http(server) as http:
        raw = http.post("/threads", json={})
        assert raw.status_code == 200 and raw.headers["content-type"] == "application/json"
        assert raw.json()["metadata"] == {}
        own = str(uuid.uuid4())
        assert _new(http, thread_id=own.upper())["thread_id"] == own  # normalized


def test_thread_after_runs(server: Served) -> None:
    with _http(server) as http:
        thread_id = _new(http, metadata={"owner": "me"})["thread_id"]
        assert _wait(http, thread_id, input={"x": 1}) == FINAL
        thread = http.get(f"/threads/{thread_id}").json()
        assert list(thread) == RUN_KEYS
        assert thread["metadata"] == {"owner": "me", "graph_id": "agent",
                                      "assistant_id": AGENT_ID}
        assert thread["status"] == "idle" and thread["values"] == FINAL
        assert thread["config"] == {"configurable": {}}
        assert thread["error"] is None and thread["interrupts"] == {}
        assert thread["state_updated_at"] > thread["created_at"]

        asked = _new(http)["thread_id"]
        out = _wait(http, asked, input={"x": 1, "ask": True})
        assert out["__interrupt__"][0]["value"] == {"question": "continue?"}
        thread = http.get(f"/threads/{asked}").json()
        assert thread["status"] == "interrupted"
        [(task_id, items)] = thread["interrupts"].items()
        assert [list(i) for i in items] == [["id", "value"]]  # id first, no response_schema
        assert items[0]["value"] == {"question": "continue?"}
        state = http.get(f"/threads/{asked}/state").json()
        assert state["next"] == ["b"] and state["tasks"][0]["id"] == task_id
        assert state["interrupts"] == items and state["tasks"][0]["interrupts"] == items
        resumed = _wait(http, asked, command={"resume": "yes"})
        assert resumed["answer"] == "yes"
        thread = http.get(f"/threads/{asked}").json()
        assert thread["status"] == "idle" and thread["interrupts"] == {}

        failed = _ran(http, x=1, fail=True)
        thread = http.get(f"/threads/{failed}").json()
        assert thread["status"] == "error"
        assert thread["error"] == {"error": "ValueError", "message": "boom from c"}
        state = http.get(f"/threads/{failed}/state").json()
        assert state["next"] == ["c"]
        assert state["tasks"][0]["error"] == "ValueError('boom from c')"


@pytest.mark.anyio
async def test_create_conflict_if_exists_and_bad_input(server: Served) -> None:
    client = get_client(url=server.url)
    thread_id = str(uuid.uuid4())
    first = await client.threads.create(thread_id=thread_id, metadata={"k": "v"})
    with pytest.raises(ConflictError):
        await client.threads.create(thread_id=thread_id)
    same = await client.threads.create(thread_id=thread_id, if_exists="do_nothing",
                                       metadata={"other": 1})
    assert same == first
    with _http(server) as http:
        conflict = http.post("/threads", json={"thread_id": thread_id})
        assert conflict.status_code == 409
        assert conflict.json() == {"detail": f"Thread with ID {thread_id} already exists"}
        cases: list[tuple[Any, str | None]] = [
            ({"thread_id": "abc"}, "Invalid thread ID: must be a UUID"),
            ({"thread_id": 5}, None), ({"metadata": "x"}, None), ({"metadata": [1]}, None),
            ({"if_exists": "bogus"}, None), ([1, 2], None),
            ({"supersteps": [{"nope": 1}]}, None), ({"supersteps": "x"}, None),
        ]
        for payload, detail in cases:
            response = http.post("/threads", json=payload)
            assert response.status_code == 422, (payload, response.text)
            assert response.json()["detail"]
            if detail is not None:
                assert response.json() == {"detail": detail}
        for raw in (b"{not json", b"null", b"[]", b"5"):
            malformed = http.post("/threads", content=raw,
                                  headers={"content-type": "application/json"})
            assert malformed.status_code == 422 and malformed.json()["detail"], raw
        assert _count(http) == 1


@pytest.mark.anyio
async def test_patch_and_delete(server: Served) -> None:
    client = get_client(url=server.url)
    created = await client.threads.create(metadata={"owner": "me"})
    thread_id = created["thread_id"]
    patched = await client.threads.update(thread_id, metadata={"extra": 1})
    assert patched["metadata"] == {"owner": "me", "extra": 1}
    assert patched["updated_at"] > created["updated_at"]
    assert patched["state_updated_at"] == created["state_updated_at"]
    assert list(patched) == FRESH_KEYS
    with _http(server) as http:
        unknown = str(uuid.uuid4())
        missing = http.patch(f"/threads/{unknown}", json={"metadata": {}})
        assert missing.status_code == 404 and missing.json() == {"detail": "Not Found"}
        assert http.patch(f"/threads/{thread_id}", json={"metadata": 5}).status_code == 422
        assert http.get(f"/threads/{thread_id}").json()["metadata"] == patched["metadata"]

        ran = _ran(http)
    assert await client.threads.delete(ran) is None
    with pytest.raises(NotFoundError):
        await client.threads.get(ran)
    with _http(server) as http:
        gone = {"detail": f"Thread with ID {ran} not found"}
        for response in (http.get(f"/threads/{ran}"), http.delete(f"/threads/{ran}"),
                         http.get(f"/threads/{ran}/state"), http.get(f"/threads/{ran}/history"),
                         http.post(f"/threads/{ran}/history", json={}),
                         http.post(f"/threads/{ran}/state", json={"values": {"x": 1}}),
                         http.post(f"/threads/{ran}/state/checkpoint",
                                   json={"checkpoint": {"checkpoint_id": "x"}}),
                         http.get(f"/threads/{ran}/state/{uuid.uuid4()}")):
            assert response.status_code == 404, response.request.url
            assert response.json() == gone
        assert http.get(f"/threads/{ran}/runs").status_code == 404
        assert _count(http) == 1


def test_non_uuid_thread_ids_are_422(server: Served) -> None:
    expected = {"detail": "Invalid thread ID: must be a UUID"}
    with _http(server) as http:
        for method, path in [("GET", "/threads/abc"), ("DELETE", "/threads/abc"),
                             ("PATCH", "/threads/abc"), ("GET", "/threads/abc/state"),
                             ("POST", "/threads/abc/state"), ("GET", "/threads/abc/history"),
                             ("POST", "/threads/abc/history"), ("POST", "/threads/abc/copy"),
                             ("GET", "/threads/abc/state/1"),
                             ("POST", "/threads/abc/state/checkpoint")]:
            response = http.request(method, path, json={} if method != "GET" else None)
            assert response.status_code == 422, (method, path)
            assert response.json() == expected
        assert http.get("/threads").status_code == 405
        assert http.put(f"/threads/{uuid.uuid4()}", json={}).status_code == 405


# -- search and count ------------------------------------------------------------------------------


def test_search_filters_sort_select(server: Served) -> None:
    client = get_sync_client(url=server.url)
    with _http(server) as http:
        plain = _new(http, metadata={"owner": "me", "n": 1})["thread_id"]
        ran = _ran(http)
        asked = _ran(http, x=1, ask=True)
        http.patch(f"/threads/{ran}", json={"metadata": {"owner": "me", "n": 2}})
    ids = lambda found: [t["thread_id"] for t in found]
    assert ids(client.threads.search()) == [asked, ran, plain]  # newest first
    assert ids(client.threads.search(metadata={"owner": "me"})) == [ran, plain]
    assert ids(client.threads.search(metadata={"graph_id": "agent", "n": 2})) == [ran]
    assert ids(client.threads.search(status="interrupted")) == [asked]
    assert ids(client.threads.search(status="idle")) == [ran, plain]
    assert ids(client.threads.search(ids=[plain, asked])) == [asked, plain]
    # a `values` filter while some thread has no values: the real server answers 500
    assert ids(client.threads.search(values={"x": 2, "ask": True})) == [asked]
    assert ids(client.threads.search(values={"log": FINAL["log"]})) == [ran]
    assert ids(client.threads.search(sort_by="thread_id", sort_order="asc")) == sorted(
        [asked, ran, plain]
    )
    assert ids(client.threads.search(sort_by="created_at", sort_order="asc")) == [
        plain, ran, asked
    ]
    assert ids(client.threads.search(sort_by="status", sort_order="desc")) == [asked, ran, plain]
    by_update = client.threads.search(sort_by="updated_at", sort_order="desc", limit=1)
    assert ids(by_update) == [ran]  # the patch came last
    selected = client.threads.search(select=["thread_id", "status"])
    assert [list(t) for t in selected] == [["thread_id", "status"]] * 3
    assert client.threads.search(select=["values"], ids=[plain]) == [{"values": None}]
    fresh = client.threads.search(ids=[plain])[0]
    assert list(fresh) == FRESH_KEYS
    assert list(client.threads.search(ids=[ran])[0]) == RUN_KEYS
    assert client.threads.count() == 3
    assert client.threads.count(metadata={"owner": "me"}) == 2
    assert client.threads.count(status="interrupted") == 1
    assert client.threads.count(values={"x": 2}) == 2


def test_search_pagination_headers_and_bad_input(server: Served) -> None:
    with _http(server) as http:
        for _ in range(4):
            _new(http)

        def headers(**payload: Any) -> tuple[str | None, str | None, int]:
            response = http.post("/threads/search", json=payload)
            assert response.status_code == 200
            return (response.headers.get("x-pagination-total"),
                    response.headers.get("x-pagination-next"), len(response.json()))

        assert headers() == ("4", None, 4)
        assert headers(limit=1) == ("2", "1", 1)
        assert headers(status="idle", limit=2, offset=1) == ("4", "3", 2)
        assert headers(limit=2, offset=2) == ("4", None, 2)
        assert headers(limit=3, offset=2) == ("4", None, 2)
        assert headers(ids=[str(uuid.uuid4())]) == ("0", None, 0)
        for payload in [{"limit": "x"}, {"limit": 0}, {"limit": 1001}, {"offset": -1},
                        {"status": "bogus"}, {"sort_by": "bogus"}, {"sort_order": "up"},
                        {"select": ["bogus"]}, {"ids": ["abc"]}, {"metadata": 1}, [1, 2]]:
            response = http.post("/threads/search", json=payload)
            assert response.status_code == 422, payload
            assert response.json()["detail"]
        assert http.post("/threads/count", json={"status": "bogus"}).status_code == 422
    paged = get_sync_client(url=server.url).threads.search(limit=1)
    assert len(paged) == 1


# -- copy and prune -----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_copy(server: Served) -> None:
    client = get_client(url=server.url)
    with _http(server) as http:
        source = _ran(http)
        http.patch(f"/threads/{source}", json={"metadata": {"owner": "me"}})
        raw = http.post(f"/threads/{source}/copy")
        assert raw.status_code == 200
        copy = raw.json()
        assert list(copy) == FRESH_KEYS[:-1]  # the real server's copy has no `values`
        assert copy["metadata"] == {"graph_id": "agent", "assistant_id": AGENT_ID,
                                    "owner": "me"}
        assert (copy["status"], copy["config"]) == ("idle", {})
        unknown = http.post(f"/threads/{uuid.uuid4()}/copy")
        assert unknown.status_code == 409 and unknown.json() == {"detail": "Conflict"}
    copied = copy["thread_id"]
    assert copied != source
    state = await client.threads.get_state(copied)
    original = await client.threads.get_state(source)
    assert state["values"] == original["values"] == FINAL
    assert state["checkpoint"]["thread_id"] == copied
    history = await client.threads.get_history(copied, limit=100)
    assert len(history) == len(await client.threads.get_history(source, limit=100))
    # the copy's checkpoints name the copy, as the reference's do (issue 18)
    assert {h["metadata"]["thread_id"] for h in history} == {copied}
    assert [h["parent_checkpoint"] is None for h in history].count(True) == 1
    again = await client.threads.copy(source)
    assert again["thread_id"] not in (source, copied)
    # the copy runs on independently
    await client.runs.wait(copied, "agent", input={"x": 5})
    assert (await client.threads.get_state(source))["values"] == FINAL


def test_prune(server: Served) -> None:
    client = get_sync_client(url=server.url)
    with _http(server) as http:
        doomed = [_new(http)["thread_id"], _ran(http)]
        kept = _ran(http)
        before = len(http.get(f"/threads/{kept}/history", params={"limit": 100}).json())
        assert before > 1
        pruned = http.post("/threads/prune", json={"thread_ids": doomed + [str(uuid.uuid4())],
                                                   "strategy": "delete"})
        assert pruned.status_code == 200 and pruned.json() == {"pruned_count": 2}
        for thread_id in doomed:
            assert http.get(f"/threads/{thread_id}").status_code == 404
        assert _count(http) == 1
        result = client.threads.prune([kept], strategy="keep_latest")
        assert result == {"pruned_count": 1}
        history = http.get(f"/threads/{kept}/history", params={"limit": 100}).json()
        assert len(history) == 1 and history[0]["values"] == FINAL
        assert http.get(f"/threads/{kept}/state").json()["values"] == FINAL
        for payload in [{}, {"thread_ids": "x"}, {"thread_ids": [kept], "strategy": "bogus"},
                        {"thread_ids": ["abc"]}]:
            response = http.post("/threads/prune", json=payload)
            assert response.status_code == 422, payload
        assert _count(http) == 1


# -- state ----------------------------------------------------------------------------------------


def test_state_of_a_fresh_thread(server: Served) -> None:
    client = get_sync_client(url=server.url)
    thread_id = client.threads.create()["thread_id"]
    assert client.threads.get_state(thread_id) == EMPTY_STATE
    assert client.threads.get_history(thread_id) == []
    with _http(server) as http:
        assert http.get(f"/threads/{thread_id}/history").json() == []
        no_graph = http.post(f"/threads/{thread_id}/state", json={"values": {"x": 1}})
        assert no_graph.status_code == 400
        assert no_graph.json()["detail"].startswith(
            f"Thread '{thread_id}' has no assigned graph ID. This usually occurs when no runs "
        )


@pytest.mark.anyio
async def test_state_shapes_and_state_at_checkpoint(server: Served) -> None:
    client = get_client(url=server.url)
    with _http(server) as http:
        thread_id = _ran(http)
    state = await client.threads.get_state(thread_id)
    assert list(state) == STATE_KEYS
    assert state["values"] == FINAL and state["next"] == [] and state["tasks"] == []
    assert list(state["checkpoint"]) == ["checkpoint_id", "thread_id", "checkpoint_ns"]
    assert state["checkpoint"]["thread_id"] == thread_id
    assert state["checkpoint"]["checkpoint_ns"] == ""
    assert state["checkpoint_id"] == state["checkpoint"]["checkpoint_id"]
    assert state["parent_checkpoint_id"] == state["parent_checkpoint"]["checkpoint_id"]
    assert state["metadata"]["source"] == "loop" and state["metadata"]["step"] == 4
    assert await client.threads.get_state(thread_id, subgraphs=True) == state

    parent = state["parent_checkpoint"]
    at_id = await client.threads.get_state(thread_id, checkpoint_id=parent["checkpoint_id"])
    assert at_id["next"] == ["sub"]
    assert at_id["checkpoint"] == {"checkpoint_id": parent["checkpoint_id"],
                                   "thread_id": thread_id}  # no checkpoint_ns, as observed
    assert at_id["checkpoint_id"] == parent["checkpoint_id"]
    [task] = at_id["tasks"]
    assert list(task) == TASK_KEYS and task["name"] == "sub"
    assert task["checkpoint"] == {"thread_id": thread_id,
                                  "checkpoint_ns": f"sub:{task['id']}"}
    assert task["state"] is None

    at_cp = await client.threads.get_state(thread_id, checkpoint=parent)
    assert at_cp["checkpoint"] == parent  # echoed with its checkpoint_ns
    assert {k: v for k, v in at_cp.items() if k != "checkpoint"} == {
        k: v for k, v in at_id.items() if k != "checkpoint"
    }
    nested = await client.threads.get_state(thread_id, checkpoint=parent, subgraphs=True)
    [task] = nested["tasks"]
    assert task["checkpoint"] is None
    assert set(task["state"]) == set(STATE_KEYS)
    assert task["state"]["values"]["log"][-2:] == ["sub1", "sub2"]
    assert task["state"]["checkpoint"]["checkpoint_ns"] == f"sub:{task['id']}"
    assert "checkpoint_map" in task["state"]["checkpoint"]

    unknown = str(uuid.uuid4())
    with _http(server) as http:
        missing = http.get(f"/threads/{thread_id}/state/{unknown}").json()
        assert missing == {**EMPTY_STATE, "checkpoint": {"checkpoint_id": unknown,
                                                          "thread_id": thread_id},
                           "checkpoint_id": unknown}
        posted = http.post(f"/threads/{thread_id}/state/checkpoint",
                           json={"checkpoint": {"checkpoint_id": unknown}}).json()
        assert posted == missing
        only = http.get(f"/threads/{thread_id}/state",
                        params={"select": ["values.x", "next"]}).json()
        assert only == {"next": [], "values": {"x": 2}}
        bad = http.post(f"/threads/{thread_id}/state/checkpoint", json={"checkpoint": 5})
        assert bad.status_code == 422


@pytest.mark.anyio
async def test_update_state(server: Served) -> None:
    client = get_client(url=server.url)
    with _http(server) as http:
        thread_id = _ran(http)
        parent = http.get(f"/threads/{thread_id}/state").json()["parent_checkpoint"]
        raw = http.post(f"/threads/{thread_id}/state", json={"values": {"x": 100}})
        assert raw.status_code == 200
        saved = raw.json()
        assert list(saved) == ["checkpoint", "configurable", "checkpoint_id"]
        assert list(saved["checkpoint"]) == ["thread_id", "checkpoint_ns", "checkpoint_id"]
        assert saved["checkpoint"] == saved["configurable"]
        assert saved["checkpoint"]["thread_id"] == thread_id
        assert saved["checkpoint_id"] == saved["checkpoint"]["checkpoint_id"]
    state = await client.threads.get_state(thread_id)
    assert state["values"]["x"] == 100 and state["checkpoint_id"] == saved["checkpoint_id"]
    assert state["metadata"]["source"] == "update"
    thread = await client.threads.get(thread_id)
    assert thread["values"]["x"] == 100
    assert thread["state_updated_at"] > thread["created_at"]

    as_b = await client.threads.update_state(thread_id, {"x": 7, "log": ["manual"]},
                                             as_node="b")
    after = await client.threads.get_state(thread_id)
    assert after["checkpoint_id"] == as_b["checkpoint_id"]
    assert after["values"]["log"][-1] == "manual" and after["next"] == ["c"]
    assert (await client.threads.get(thread_id))["status"] == "interrupted"

    forked = await client.threads.update_state(thread_id, {"x": 8},
                                               checkpoint_id=parent["checkpoint_id"])
    fork = await client.threads.get_state(thread_id)
    assert fork["checkpoint_id"] == forked["checkpoint_id"]
    assert fork["parent_checkpoint_id"] == parent["checkpoint_id"]
    assert fork["values"] == {"x": 8, "log": ["a", "b", "c"]} and fork["next"] == ["sub"]

    by_dict = await client.threads.update_state(thread_id, {"x": 11}, checkpoint=parent)
    fork2 = await client.threads.get_state(thread_id)
    assert fork2["checkpoint_id"] == by_dict["checkpoint_id"] != forked["checkpoint_id"]
    assert fork2["parent_checkpoint_id"] == parent["checkpoint_id"]
    assert fork2["values"]["x"] == 11

    # Command-shaped values: an update plus where to go next
    await client.threads.update_state(thread_id, {"update": {"x": 9}, "goto": "c"})
    commanded = await client.threads.get_state(thread_id)
    assert commanded["values"]["x"] == 9 and "c" in commanded["next"]

    with _http(server) as http:
        unknown_node = http.post(f"/threads/{thread_id}/state",
                                 json={"values": {"x": 8}, "as_node": "nope"})
        assert unknown_node.status_code == 400
        assert unknown_node.json() == {"detail": "Node nope does not exist"}
        not_a_dict = http.post(f"/threads/{thread_id}/state", json={"values": 5,
                                                                     "as_node": "a"})
        assert not_a_dict.status_code == 400 and not_a_dict.json()["detail"]
        assert http.post(f"/threads/{thread_id}/state", json={"as_node": 5}).status_code == 422
        bad = http.post(f"/threads/{thread_id}/state", content=b"{x",
                        headers={"content-type": "application/json"})
        assert bad.status_code == 422
        history = http.get(f"/threads/{thread_id}/history", params={"limit": 100}).json()
        assert [h["metadata"]["source"] for h in history[:5]] == ["update"] * 5


@pytest.mark.anyio
async def test_create_with_supersteps(server: Served) -> None:
    client = get_client(url=server.url)
    created = await client.threads.create(
        graph_id="agent",
        supersteps=[{"updates": [{"values": {"x": 5, "log": ["seed"]}, "as_node": "a"}]},
                    {"updates": [{"values": {"log": ["more"]}, "as_node": "b"}]}],
    )
    assert created["metadata"] == {"graph_id": "agent"}
    assert created["values"] == {"x": 5, "log": ["seed", "more"]}
    state = await client.threads.get_state(created["thread_id"])
    assert state["values"] == created["values"] and state["next"] == ["c"]
    with _http(server) as http:
        thread_id = str(uuid.uuid4())
        no_graph = http.post("/threads", json={
            "thread_id": thread_id,
            "supersteps": [{"updates": [{"values": {"x": 5}, "as_node": "a"}]}],
        })
        assert no_graph.status_code == 201  # as the real server: created, with a problem
        assert no_graph.json()["detail"].startswith(
            f"Thread {thread_id} was created, but there were problems updating the state: "
            f"Thread '{thread_id}' has no assigned graph ID."
        )
        assert http.get(f"/threads/{thread_id}").status_code == 200
        bad_node = http.post("/threads", json={
            "metadata": {"graph_id": "agent"},
            "supersteps": [{"updates": [{"values": {"x": 5}, "as_node": "nope"}]}],
        })
        assert bad_node.status_code == 201
        assert bad_node.json()["detail"].endswith("problems updating the state: "
                                                  "Node nope does not exist")


# -- history ---------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_history(server: Served) -> None:
    client = get_client(url=server.url)
    with _http(server) as http:
        thread_id = _ran(http)
        everything = http.get(f"/threads/{thread_id}/history", params={"limit": 100}).json()
        assert [h["metadata"]["step"] for h in everything] == [4, 3, 2, 1, 0, -1]
        assert all(list(h) == STATE_KEYS for h in everything)
        raw = http.get(f"/threads/{thread_id}/history")
        assert "x-pagination-total" not in raw.headers
        assert len(raw.json()) == 6
        assert len(http.get(f"/threads/{thread_id}/history", params={"limit": 2}).json()) == 2
        by_id = http.get(f"/threads/{thread_id}/history",
                         params={"before": everything[1]["checkpoint_id"], "limit": 1}).json()
        assert [h["metadata"]["step"] for h in by_id] == [2]
        invalid = http.get(f"/threads/{thread_id}/history", params={"limit": "x"})
        assert invalid.status_code == 422 and invalid.json() == {"detail": "Invalid limit x"}
        for payload in [{"limit": "x"}, {"limit": 0}, {"before": 5},
                        {"before": {"configurable": {}}}, {"metadata": 1}]:
            response = http.post(f"/threads/{thread_id}/history", json=payload)
            assert response.status_code == 422, payload
            assert response.json()["detail"]

    steps = lambda states: [s["metadata"]["step"] for s in states]
    assert steps(await client.threads.get_history(thread_id, limit=2)) == [4, 3]
    latest = everything[0]
    # `before` as the checkpoint dict the SDK sends (500 on the real server) ...
    assert steps(await client.threads.get_history(
        thread_id, limit=1, before=latest["checkpoint"])) == [3]
    # ... as the config the real server expects, and as a bare checkpoint id
    with _http(server) as http:
        as_config = http.post(f"/threads/{thread_id}/history", json={
            "limit": 1, "before": {"configurable": {"checkpoint_id": latest["checkpoint_id"]}},
        }).json()
        assert steps(as_config) == [3]
    assert steps(await client.threads.get_history(
        thread_id, before=latest["checkpoint_id"])) == [3, 2, 1, 0, -1]
    assert steps(await client.threads.get_history(thread_id, metadata={"step": 1})) == [1]
    assert steps(await client.threads.get_history(
        thread_id, metadata={"source": "loop"}, limit=100)) == [4, 3, 2, 1, 0]
    picked = await client.threads.get_history(thread_id, limit=1,
                                              checkpoint=everything[2]["checkpoint"])
    assert steps(picked) == [2]
    selected = await client.threads.get_history(thread_id, limit=2, select=["next"])
    assert selected == [{"next": []}, {"next": ["sub"]}]
    [sub_task] = everything[1]["tasks"]
    assert sub_task["checkpoint"]["checkpoint_ns"] == f"sub:{sub_task['id']}"


# -- restart ------------------------------------------------------------------------------------------


def test_everything_survives_a_restart(serve_app: Callable[..., Served]) -> None:
    first = serve_app()
    client = get_sync_client(url=first.url)
    assistant = client.assistants.create("agent", context={"k": 1}, name="mine")
    aid = assistant["assistant_id"]
    client.assistants.update(aid, metadata={"v": 2}, name="mine2")
    client.assistants.update(aid, config={"tags": ["t"]})
    latest = client.assistants.set_latest(aid, 2)
    with _http(first) as http:
        done = _new(http, metadata={"owner": "me"})["thread_id"]
        _wait(http, done, input={"x": 1}, assistant_id=aid)
        asked = _ran(http, x=1, ask=True)
        failed = _ran(http, x=1, fail=True)
        fresh = _new(http)["thread_id"]
        client.threads.update_state(done, {"x": 50})
        before = {
            "assistants": http.post("/assistants/search", json={}).json(),
            "versions": http.post(f"/assistants/{aid}/versions", json={}).json(),
            "threads": http.post("/threads/search", json={}).json(),
            "states": {t: http.get(f"/threads/{t}/state").json()
                       for t in (done, asked, failed, fresh)},
            "history": {t: http.get(f"/threads/{t}/history", params={"limit": 100}).json()
                        for t in (done, asked, failed, fresh)},
        }
    first.stop()

    second = serve_app()  # the same data dir
    client = get_sync_client(url=second.url)
    with _http(second) as http:
        after = {
            "assistants": http.post("/assistants/search", json={}).json(),
            "versions": http.post(f"/assistants/{aid}/versions", json={}).json(),
            "threads": http.post("/threads/search", json={}).json(),
            "states": {t: http.get(f"/threads/{t}/state").json()
                       for t in (done, asked, failed, fresh)},
            "history": {t: http.get(f"/threads/{t}/history", params={"limit": 100}).json()
                        for t in (done, asked, failed, fresh)},
        }
        assert after == before
    assert client.assistants.get(aid) == latest
    assert [v["version"] for v in after["versions"]] == [3, 2, 1]
    statuses = {t["thread_id"]: t["status"] for t in after["threads"]}
    assert statuses == {done: "idle", asked: "interrupted", failed: "error", fresh: "idle"}
    assert client.threads.get(done)["values"]["x"] == 50
    assert client.threads.get(failed)["error"] == {"error": "ValueError",
                                                   "message": "boom from c"}
    assert list(client.threads.get(fresh)) == FRESH_KEYS
    # and the threads keep working: resume the interrupted one
    resumed = client.runs.wait(asked, "agent", command={"resume": "later"})
    assert resumed["answer"] == "later"
    assert client.threads.get(asked)["status"] == "idle"
