"""Thread runs and stateless runs over HTTP, driven by the official langgraph-sdk client.

Statuses, bodies and headers are the ones the LangGraph Agent Server was observed to send
(shared_notes/server_facts.md); raw httpx checks the wire details the SDK hides.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client, get_sync_client

from http_adapter.agent_server.state import assistant_id_for

from . import graphs as test_graphs
from .conftest import Served

# Issue 19 §11: every test here runs on SQLite and on PostgreSQL + Redis (conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgres")

AGENT_ID = assistant_id_for("agent")
FINAL = {"x": 2, "log": ["a", "b", "c", "a", "b", "c", "sub1", "sub2"]}
KWARGS_KEYS = [
    "input", "command", "config", "context", "stream_mode", "interrupt_before", "interrupt_after",
    "webhook", "feedback_keys", "temporary", "subgraphs", "resumable", "checkpoint_during",
    "durability",
]
NO_MATCH = (
    "No matching runs to cancel. Please verify the thread ID and run IDs are correct, and the "
    "runs haven't been deleted or completed."
)


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


def wait_status(http: httpx.Client, thread_id: str, run_id: str, *statuses: str) -> dict[str, Any]:
    deadline = time.monotonic() + 5
    while True:
        run = http.get(f"/threads/{thread_id}/runs/{run_id}").json()
        if run.get("status") in statuses or time.monotonic() > deadline:
            return run  # type: ignore[no-any-return]
        time.sleep(0.01)


# -- create / get / list / delete ---------------------------------------------------------------


@pytest.mark.anyio
async def test_create_run_record_and_join(client: Any, http: httpx.Client) -> None:
    thread = await client.threads.create(metadata={"owner": "me"})
    run = await client.runs.create(thread["thread_id"], "agent", input={"x": 1},
                                   metadata={"rm": 1})
    assert run["status"] in ("pending", "running")
    assert run["assistant_id"] == AGENT_ID and run["thread_id"] == thread["thread_id"]
    assert run["multitask_strategy"] == "enqueue"
    # metadata: the assistant's (created_by), the thread's, graph and assistant ids, then the
    # caller's (langgraph-api merges the thread's in too, issue 18)
    assert run["metadata"] == {"created_by": "system", "owner": "me", "graph_id": "agent",
                               "assistant_id": AGENT_ID, "rm": 1}
    kwargs = run["kwargs"]
    assert list(kwargs) == KWARGS_KEYS
    assert kwargs["input"] == {"x": 1} and kwargs["command"] is None
    assert kwargs["stream_mode"] == ["values"] and kwargs["context"] == {}
    assert (kwargs["temporary"], kwargs["subgraphs"], kwargs["resumable"]) == (False, False, False)
    assert (kwargs["checkpoint_during"], kwargs["durability"]) == (True, "async")
    configurable = kwargs["config"]["configurable"]
    assert {k: configurable[k] for k in ("run_id", "thread_id", "graph_id", "assistant_id")} == {
        "run_id": run["run_id"], "thread_id": thread["thread_id"], "graph_id": "agent",
        "assistant_id": AGENT_ID,
    }
    assert configurable["__after_seconds__"] == 0 and configurable["user_id"] == ""
    assert kwargs["config"]["metadata"] == run["metadata"]
    assert await client.runs.join(thread["thread_id"], run["run_id"]) == FINAL
    done = await client.runs.get(thread["thread_id"], run["run_id"])
    assert done["status"] == "success"
    after = await client.threads.get(thread["thread_id"])
    assert after["metadata"] == {"owner": "me", "graph_id": "agent", "assistant_id": AGENT_ID}
    assert after["status"] == "idle" and after["values"] == FINAL


def test_create_run_wire(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    response = http.post(f"/threads/{thread_id}/runs", json={"assistant_id": AGENT_ID})
    assert response.status_code == 200  # not 201, as observed
    run = response.json()
    assert response.headers["content-location"] == f"/threads/{thread_id}/runs/{run['run_id']}"
    assert "location" not in response.headers
    assert response.headers["content-type"] == "application/json"
    assert response.content.startswith(b'{"run_id":"')  # compact JSON
    uuid.UUID(run["run_id"])


@pytest.mark.anyio
async def test_list_get_delete(client: Any, http: httpx.Client) -> None:
    thread_id = new_thread(http)
    ids = [(await client.runs.create(thread_id, "agent", input={"x": i}))["run_id"]
           for i in range(3)]
    for run_id in ids:
        await client.runs.join(thread_id, run_id)
    runs = await client.runs.list(thread_id)
    assert [r["run_id"] for r in runs] == ids[::-1]  # newest first
    assert [r["run_id"] for r in await client.runs.list(thread_id, limit=1, offset=1)] == [ids[1]]
    assert len(await client.runs.list(thread_id, status="success")) == 3
    assert await client.runs.list(thread_id, status="error") == []
    listed = http.get(f"/threads/{thread_id}/runs", params={"select": "run_id"})
    assert listed.json() == [{"run_id": r} for r in ids[::-1]]
    assert "x-pagination-total" not in listed.headers
    assert (await client.runs.get(thread_id, ids[0]))["kwargs"]["input"] == {"x": 0}
    await client.runs.delete(thread_id, ids[0])
    assert [r["run_id"] for r in await client.runs.list(thread_id)] == ids[:0:-1]
    gone = http.get(f"/threads/{thread_id}/runs/{ids[0]}")
    assert (gone.status_code, gone.json()) == (404, {"detail": "Not Found"})
    again = http.delete(f"/threads/{thread_id}/runs/{ids[0]}")
    assert (again.status_code, again.json()) == (404, {"detail": "Run not found"})


def test_list_errors(http: httpx.Client) -> None:
    unknown = str(uuid.uuid4())
    response = http.get(f"/threads/{unknown}/runs")
    assert response.status_code == 404
    assert response.json() == {"detail": f"Thread with ID {unknown} not found"}
    thread_id = new_thread(http)
    bad = http.get(f"/threads/{thread_id}/runs", params={"limit": "x"})
    assert bad.status_code == 400  # as observed (Python's int() message)
    assert bad.json() == {"detail": "invalid literal for int() with base 10: 'x'"}


def test_delete_active_run_conflicts(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    run = http.post(f"/threads/{thread_id}/runs",
                    json={"assistant_id": "agent", "input": {"sleep": 0.3}}).json()
    response = http.delete(f"/threads/{thread_id}/runs/{run['run_id']}")
    assert response.status_code == 409  # deliberate: never delete a run a worker still runs
    assert wait_status(http, thread_id, run["run_id"], "success")["status"] == "success"


# -- wait / join ----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_wait_success_error_interrupt_resume(client: Any, http: httpx.Client) -> None:
    thread_id = new_thread(http)
    assert await client.runs.wait(thread_id, "agent", input={"x": 1}) == FINAL

    failing = new_thread(http)
    with pytest.raises(Exception, match="ValueError: boom from c"):
        await client.runs.wait(failing, "agent", input={"fail": True})
    result = await client.runs.wait(failing, "agent", input={"fail": True}, raise_error=False)
    assert result == {"__error__": {"error": "ValueError", "message": "boom from c"}}
    assert (await client.threads.get(failing))["status"] == "error"

    asking = new_thread(http)
    paused = await client.runs.wait(asking, "agent", input={"x": 1, "ask": True})
    [interrupt] = paused.pop("__interrupt__")
    assert paused == {"x": 2, "log": ["a"], "ask": True}
    assert list(interrupt) == ["value", "id", "response_schema"]
    assert interrupt["value"] == {"question": "continue?"} and interrupt["response_schema"] is None
    assert (await client.threads.get(asking))["status"] == "interrupted"
    resumed = await client.runs.wait(asking, "agent", command={"resume": "yes"})
    assert resumed["answer"] == "yes" and "__interrupt__" not in resumed
    assert resumed["log"][:3] == ["a", "b:yes", "c"]


def test_wait_wire(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    response = http.post(f"/threads/{thread_id}/runs/wait",
                         json={"assistant_id": "agent", "input": {"x": 1}})
    assert response.status_code == 200 and response.json() == FINAL
    [run] = http.get(f"/threads/{thread_id}/runs").json()
    path = f"/threads/{thread_id}/runs/{run['run_id']}"
    assert response.headers["location"] == f"{path}/join"
    assert response.headers["content-location"] == path
    assert response.headers["content-type"] == "application/json"


@pytest.mark.anyio
async def test_static_interrupt_then_continue(client: Any, http: httpx.Client) -> None:
    thread_id = new_thread(http)
    paused = await client.runs.wait(thread_id, "agent", input={"x": 1}, interrupt_before=["c"])
    assert paused == {"x": 2, "log": ["a", "b"]}  # no __interrupt__ for a static interrupt
    assert (await client.threads.get(thread_id))["status"] == "interrupted"
    assert await client.runs.wait(thread_id, "agent", input=None) == FINAL


def test_join_wire(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    run = http.post(f"/threads/{thread_id}/runs",
                    json={"assistant_id": "agent", "input": {"ask": True}}).json()
    path = f"/threads/{thread_id}/runs/{run['run_id']}"
    joined = http.get(f"{path}/join")
    assert joined.status_code == 200
    assert joined.headers["location"] == f"{path}/join"
    assert joined.headers["content-location"] == path
    body = joined.json()
    assert body["__interrupt__"][0]["value"] == {"question": "continue?"}
    assert http.get(f"{path}/join").json() == body  # a finished run joins at once

    unknown = f"/threads/{thread_id}/runs/{uuid.uuid4()}"
    missing = http.get(f"{unknown}/join")
    assert missing.status_code == 200  # as observed: the 404 travels in the body
    assert missing.json() == {"__error__": {"error": "HTTPException",
                                            "message": "404: Run not found"}}


# -- cancel ---------------------------------------------------------------------------------------


def _sleeping_run(http: httpx.Client, thread_id: str, seconds: float = 0.3) -> dict[str, Any]:
    run = http.post(f"/threads/{thread_id}/runs",
                    json={"assistant_id": "agent", "input": {"x": 1, "sleep": seconds}}).json()
    wait_status(http, thread_id, run["run_id"], "running")
    # and its input saved: a cancel that lands before that has no checkpoint to keep, so the
    # thread would end idle rather than interrupted (a race under load)
    deadline = time.monotonic() + 10
    while "sleep" not in (http.get(f"/threads/{thread_id}/state").json()["values"] or {}):
        assert time.monotonic() < deadline, "the run's input was never saved"
        time.sleep(0.005)
    return run  # type: ignore[no-any-return]


def test_cancel_interrupt_no_wait(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    run = _sleeping_run(http, thread_id)
    response = http.post(f"/threads/{thread_id}/runs/{run['run_id']}/cancel")
    assert response.status_code == 202 and response.content == b""
    assert response.headers["content-length"] == "0"
    assert "content-type" not in response.headers
    assert wait_status(http, thread_id, run["run_id"], "interrupted")["status"] == "interrupted"
    # the run reads `interrupted` at once (issue 31); its thread is busy until it has ended
    http.get(f"/threads/{thread_id}/runs/{run['run_id']}/join")
    thread = http.get(f"/threads/{thread_id}").json()
    assert thread["status"] == "interrupted"  # the last checkpoint still has `next`
    assert http.get(f"/threads/{thread_id}/state").json()["next"]


def test_cancel_wait_returns_empty_object(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    run = _sleeping_run(http, thread_id)
    path = f"/threads/{thread_id}/runs/{run['run_id']}"
    response = http.post(f"{path}/cancel", params={"wait": "true", "action": "bogus"})
    assert (response.status_code, response.json()) == (200, {})
    assert response.headers["location"] == f"{path}/join"
    assert response.headers["content-location"] == path
    assert http.get(path).json()["status"] == "interrupted"  # unknown action -> interrupt
    # wait/join of a cancelled run answer its last values, no __error__ (as observed)
    joined = http.get(f"{path}/join").json()
    assert joined == http.get(f"/threads/{thread_id}").json()["values"]
    assert joined["sleep"] == 0.3 and "__error__" not in joined


@pytest.mark.anyio
async def test_cancel_rollback_with_sdk(client: Any, http: httpx.Client) -> None:
    thread_id = new_thread(http)
    await client.runs.wait(thread_id, "agent", input={"x": 5})
    before = (await client.threads.get(thread_id))["values"]
    run = _sleeping_run(http, thread_id)
    assert await client.runs.cancel(thread_id, run["run_id"], wait=True, action="rollback") == {}
    gone = http.get(f"/threads/{thread_id}/runs/{run['run_id']}")
    assert (gone.status_code, gone.json()) == (404, {"detail": "Not Found"})
    thread = await client.threads.get(thread_id)
    assert thread["values"] == before and thread["status"] == "idle"


@pytest.mark.anyio
async def test_cancel_with_sdk_returns_none(client: Any, http: httpx.Client) -> None:
    thread_id = new_thread(http)
    run = _sleeping_run(http, thread_id)
    assert await client.runs.cancel(thread_id, run["run_id"]) is None
    await client.runs.join(thread_id, run["run_id"])
    assert (await client.runs.get(thread_id, run["run_id"]))["status"] == "interrupted"


def test_cancel_finished_unknown_and_pending(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    done = http.post(f"/threads/{thread_id}/runs/wait",
                     json={"assistant_id": "agent", "input": {"x": 0}})
    [finished] = http.get(f"/threads/{thread_id}/runs").json()
    assert done.status_code == 200
    response = http.post(f"/threads/{thread_id}/runs/{finished['run_id']}/cancel")
    assert (response.status_code, response.json()) == (404, {"detail": NO_MATCH})
    response = http.post(f"/threads/{thread_id}/runs/{uuid.uuid4()}/cancel")
    assert (response.status_code, response.json()) == (404, {"detail": "No runs found to cancel."})

    first = _sleeping_run(http, thread_id)
    queued = http.post(f"/threads/{thread_id}/runs",
                       json={"assistant_id": "agent", "input": {"x": 100}}).json()
    assert queued["status"] == "pending"
    response = http.post(f"/threads/{thread_id}/runs/{queued['run_id']}/cancel")
    assert response.status_code == 202
    assert wait_status(http, thread_id, queued["run_id"], "interrupted")["status"] == "interrupted"
    assert wait_status(http, thread_id, first["run_id"], "success")["status"] == "success"
    assert http.get(f"/threads/{thread_id}/state").json()["values"]["x"] == 2  # never ran


# -- options ----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_if_not_exists_create(client: Any, http: httpx.Client) -> None:
    thread_id = str(uuid.uuid4())
    unknown = http.post(f"/threads/{thread_id}/runs/wait", json={"assistant_id": "agent"})
    assert (unknown.status_code, unknown.json()) == (404, {"detail": "Thread or assistant not found."})
    assert http.get(f"/threads/{thread_id}").status_code == 404  # nothing half-created
    result = await client.runs.wait(thread_id, "agent", input={"x": 1}, if_not_exists="create")
    assert result == FINAL
    thread = await client.threads.get(thread_id)
    assert thread["metadata"] == {"graph_id": "agent", "assistant_id": AGENT_ID}


def test_after_seconds_delays_the_start(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    started = time.monotonic()
    run = http.post(f"/threads/{thread_id}/runs",
                    json={"assistant_id": "agent", "after_seconds": 0.3}).json()
    assert run["kwargs"]["config"]["configurable"]["__after_seconds__"] == 0.3
    time.sleep(0.1)
    assert http.get(f"/threads/{thread_id}/runs/{run['run_id']}").json()["status"] == "pending"
    assert http.get(f"/threads/{thread_id}").json()["status"] == "busy"
    http.get(f"/threads/{thread_id}/runs/{run['run_id']}/join")
    assert time.monotonic() - started >= 0.3


@pytest.mark.anyio
async def test_config_context_and_assistant_by_uuid(client: Any, http: httpx.Client) -> None:
    thread_id = new_thread(http)
    run = await client.runs.create(thread_id, AGENT_ID, input={"x": 1}, config={"tags": ["t"]},
                                   context={"user": "u"})
    assert run["kwargs"]["context"] == {"user": "u"}
    assert run["kwargs"]["config"]["tags"] == ["t"]
    assert await client.runs.join(thread_id, run["run_id"]) == FINAL


@pytest.mark.anyio
async def test_run_from_a_checkpoint_and_command_update(client: Any, http: httpx.Client) -> None:
    thread_id = new_thread(http)
    assert await client.runs.wait(thread_id, "agent", input={"x": 1}) == FINAL
    history = await client.threads.get_history(thread_id, limit=10)
    before_c = next(h for h in history if h["next"] == ["c"])
    forked = await client.runs.wait(thread_id, "agent", input=None,
                                    checkpoint_id=before_c["checkpoint"]["checkpoint_id"])
    assert forked == FINAL  # re-ran c and sub from that checkpoint
    run = (await client.runs.list(thread_id, limit=1))[0]
    configurable = run["kwargs"]["config"]["configurable"]
    assert configurable["checkpoint_id"] == before_c["checkpoint"]["checkpoint_id"]
    paused = new_thread(http)
    await client.runs.wait(paused, "agent", input={"x": 1}, interrupt_before=["b"])
    updated = await client.runs.wait(paused, "agent", command={"update": {"x": 10}})
    assert updated["x"] == 10 and updated["log"][-1] == "sub2"
    run = (await client.runs.list(paused, limit=1))[0]
    assert run["kwargs"]["command"] == {"update": {"x": 10}, "resume": None, "goto": None}


def test_reject_on_busy_thread(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    first = _sleeping_run(http, thread_id)
    expected = {"detail": "Thread is already running a task. Wait for it to finish or choose a "
                          "different multitask strategy."}
    for path in ("runs", "runs/wait", "runs/stream"):
        response = http.post(f"/threads/{thread_id}/{path}",
                             json={"assistant_id": "agent", "multitask_strategy": "reject"})
        assert (response.status_code, response.json()) == (409, expected)
        assert response.headers["content-type"] == "application/json"
    assert [r["run_id"] for r in http.get(f"/threads/{thread_id}/runs").json()] == [first["run_id"]]


# -- stateless runs ---------------------------------------------------------------------------


def test_stateless_create_and_headers(http: httpx.Client) -> None:
    response = http.post("/runs", json={"assistant_id": "agent", "input": {"x": 1}})
    assert response.status_code == 200
    run = response.json()
    assert response.headers["content-location"] == f"/runs/{run['run_id']}"
    assert run["metadata"] == {"created_by": "system", "assistant_id": AGENT_ID}  # no graph_id
    assert run["kwargs"]["temporary"] is True
    assert run["thread_id"] != run["run_id"]
    waited = http.post("/runs/wait", json={"assistant_id": "agent", "input": {"x": 1}})
    assert waited.json() == FINAL
    location = waited.headers["location"]
    assert location.startswith("/threads/") and location.endswith("/join")
    assert waited.headers["content-location"] == location.removesuffix("/join")
    temp_thread = location.split("/")[2]
    assert http.get(f"/threads/{temp_thread}").status_code == 404  # nothing persisted


@pytest.mark.anyio
async def test_stateless_with_sdk(client: Any) -> None:
    assert await client.runs.wait(None, "agent", input={"x": 1}) == FINAL
    result = await client.runs.wait(None, "agent", input={"fail": True}, raise_error=False)
    assert result == {"__error__": {"error": "ValueError", "message": "boom from c"}}
    paused = await client.runs.wait(None, "agent", input={"ask": True})
    assert paused["__interrupt__"][0]["value"] == {"question": "continue?"}
    run = await client.runs.create(None, "agent", input={"x": 1})
    assert run["kwargs"]["temporary"] is True
    batch = await client.runs.create_batch([
        {"assistant_id": "agent", "input": {"x": 1}},
        {"assistant_id": "chat", "input": {"messages": []}},
    ])
    assert [r["assistant_id"] for r in batch] == [AGENT_ID, assistant_id_for("chat")]
    assert len({r["thread_id"] for r in batch}) == 2


def test_stateless_keep_thread(http: httpx.Client) -> None:
    run = http.post("/runs", json={"assistant_id": "agent", "input": {"x": 1},
                                   "on_completion": "keep"}).json()
    thread_id = run["thread_id"]
    assert run["kwargs"]["temporary"] is False
    joined = http.get(f"/threads/{thread_id}/runs/{run['run_id']}/join").json()
    assert joined == FINAL
    thread = http.get(f"/threads/{thread_id}").json()
    assert thread["values"] == FINAL
    assert thread["metadata"] == {"graph_id": "agent", "assistant_id": AGENT_ID}


def test_batch_errors(http: httpx.Client) -> None:
    response = http.post("/runs/batch", json=[])
    assert response.status_code == 422 and response.json()["detail"].startswith(
        "[] has less than 1 item")
    assert http.post("/runs/batch", json={"assistant_id": "agent"}).status_code == 422
    bad = http.post("/runs/batch", json=[{"assistant_id": "agent"}, {"assistant_id": "nograph"}])
    assert bad.status_code == 422  # nothing queued for a batch with a bad item


def test_stateless_cancel(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    run = _sleeping_run(http, thread_id)
    body = {"thread_id": thread_id, "run_ids": [run["run_id"]]}
    response = http.post("/runs/cancel", json=body, params={"action": "interrupt"})
    assert (response.status_code, response.content) == (204, b"")
    assert wait_status(http, thread_id, run["run_id"], "interrupted")["status"] == "interrupted"
    again = http.post("/runs/cancel", json=body)
    assert (again.status_code, again.json()) == (404, {"detail": NO_MATCH})
    nothing = http.post("/runs/cancel", json={"status": "all"})
    assert (nothing.status_code, nothing.json()) == (404, {"detail": "No runs found to cancel."})
    assert http.post("/runs/cancel", json={"status": "bogus"}).status_code == 422
    both = http.post("/runs/cancel", json={"status": "all", "thread_id": thread_id})
    assert both.status_code == 422 and both.json()["detail"].startswith(
        "When providing a 'status', 'thread_id' and 'run_ids' must be omitted.")
    assert http.post("/runs/cancel", json={}).status_code == 422


@pytest.mark.anyio
async def test_cancel_many_with_sdk(client: Any, http: httpx.Client) -> None:
    thread_id = new_thread(http)
    run = _sleeping_run(http, thread_id)
    await client.runs.cancel_many(status="running")
    assert wait_status(http, thread_id, run["run_id"], "interrupted")["status"] == "interrupted"


# -- bad input: 4xx with a detail, never a 500 -------------------------------------------------


BOTH = ("Cannot specify both configurable and context. Prefer setting context alone. Context was "
        "introduced in LangGraph 0.6.0 and is the long term planned replacement for configurable.")


@pytest.mark.parametrize("path", ["runs", "runs/wait", "runs/stream"])
def test_bad_run_bodies(http: httpx.Client, path: str) -> None:
    thread_id = new_thread(http)
    for prefix in (f"/threads/{thread_id}/", "/"):
        url = prefix + path

        def post(payload: Any, url: str = url) -> httpx.Response:
            return http.post(url, json=payload)

        response = post({"assistant_id": "agent", "context": {"a": 1},
                         "config": {"configurable": {"b": 2}}})
        assert (response.status_code, response.json()) == (400, {"detail": BOTH})
        for payload in (
            {"assistant_id": "agent", "stream_mode": "bogus"},
            {"assistant_id": "agent", "stream_mode": ["values", "bogus"]},
            {"assistant_id": "agent", "multitask_strategy": "bogus"},
            {"assistant_id": "agent", "if_not_exists": "bogus"},
            {"assistant_id": "agent", "after_seconds": "soon"},
            {"input": {"x": 1}},
            {"assistant_id": 5},
            None,
            [1, 2],
        ):
            response = post(payload)
            assert response.status_code == 422, payload
            assert isinstance(response.json()["detail"], str)
        response = post({"assistant_id": str(uuid.uuid4())})
        assert (response.status_code, response.json()) == (
            404, {"detail": "Thread or assistant not found."})
        response = post({"assistant_id": "nograph"})
        assert response.status_code == 422
        assert response.json() == {"detail": "Invalid assistant: 'nograph'. Must be either:\n- A "
                                             "valid assistant UUID, or\n- One of the registered "
                                             "graphs: agent, chat"}
        invalid = http.post(url, content=b"{not json", headers={"content-type": "application/json"})
        assert invalid.status_code == 422
    assert http.get(f"/threads/{thread_id}/runs").json() == []  # nothing half-created


def test_bad_path_ids(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    run_id = str(uuid.uuid4())
    for method, path in (
        ("POST", "/threads/abc/runs"), ("POST", "/threads/abc/runs/wait"),
        ("POST", "/threads/abc/runs/stream"), ("GET", "/threads/abc/runs"),
        ("GET", f"/threads/abc/runs/{run_id}"),
    ):
        response = http.request(method, path, json={"assistant_id": "agent"})
        assert response.status_code == 422, path
        assert response.json() == {"detail": "Invalid thread ID: must be a UUID"}
    for method, path in (
        ("GET", "abc"), ("DELETE", "abc"), ("GET", "abc/join"), ("GET", "abc/stream"),
        ("POST", "abc/cancel"),
    ):
        response = http.request(method, f"/threads/{thread_id}/runs/{path}")
        assert response.status_code == 422, path
        assert response.json() == {"detail": "Invalid run ID: must be a UUID"}


def test_input_of_wrong_type_fails_the_run(http: httpx.Client) -> None:
    thread_id = new_thread(http)
    response = http.post(f"/threads/{thread_id}/runs/wait", json={"assistant_id": "agent",
                                                                   "input": 5})
    assert response.status_code == 200  # as observed: the run runs and fails
    assert response.json()["__error__"]["error"] == "InvalidUpdateError"


# -- the sync client ------------------------------------------------------------------------------


def test_sync_client(server: Served) -> None:
    with get_sync_client(url=server.url) as sdk:
        thread = sdk.threads.create()
        assert sdk.runs.wait(thread["thread_id"], "agent", input={"x": 1}) == FINAL
        run = sdk.runs.create(thread["thread_id"], "agent", input={"x": 1, "sleep": 0.2})
        # running, with its input saved (a cancel before that leaves no `sleep` in the state)
        while sdk.threads.get_state(thread["thread_id"])["values"].get("sleep") is None:
            time.sleep(0.005)
        assert sdk.runs.cancel(thread["thread_id"], run["run_id"], wait=True) == {}
        assert sdk.runs.get(thread["thread_id"], run["run_id"])["status"] == "interrupted"
        assert [r["status"] for r in sdk.runs.list(thread["thread_id"])] == [
            "interrupted", "success"]
        assert sdk.runs.wait(None, "agent", input={"x": 1}) == FINAL
        joined = sdk.runs.join(thread["thread_id"], run["run_id"])
        assert joined == sdk.threads.get(thread["thread_id"])["values"]
        assert joined["sleep"] == 0.2


# -- a NUL character (issue 19 §11: PostgreSQL's text and jsonb refuse it) ----------------------

NUL = "a\x00b"


def _kept_or_refused(response: httpx.Response, backend: str) -> bool:
    """SQLite keeps a NUL; PostgreSQL cannot, and the request is a 422 saying so, never a 500.
    Returns whether it was kept."""
    if backend == "sqlite":
        assert response.status_code in (200, 204), response.text
        return True
    assert response.status_code == 422, response.text
    assert "NUL character" in response.json()["detail"]
    return False


def test_a_nul_in_a_request_is_kept_or_a_422_with_nothing_written(
    http: httpx.Client, backend: str
) -> None:
    thread_id = new_thread(http)
    kept = _kept_or_refused(http.post("/threads", json={"metadata": {"k": NUL}}), backend)
    assert len(http.post("/threads/search", json={}).json()) == (2 if kept else 1)
    _kept_or_refused(http.patch(f"/threads/{thread_id}", json={"metadata": {NUL: 1}}), backend)
    _kept_or_refused(http.post("/assistants", json={"graph_id": "agent", "name": NUL}), backend)
    for body in ({"input": {"x": 1, "answer": NUL}}, {"input": {"x": 1}, "metadata": {"k": NUL}}):
        response = http.post(f"/threads/{thread_id}/runs/wait", json={"assistant_id": "agent", **body})
        _kept_or_refused(response, backend)
    runs = http.get(f"/threads/{thread_id}/runs").json()
    assert len(runs) == (2 if kept else 0)  # a refused run left no record behind
    assert http.get(f"/threads/{thread_id}").json()["status"] == "idle"  # and no busy thread
    put = {"namespace": ["n"], "key": NUL, "value": {"v": 1}}
    _kept_or_refused(http.put("/store/items", json=put), backend)
    found = http.post("/store/items/search", json={"namespace_prefix": ["n"]}).json()["items"]
    assert len(found) == (1 if kept else 0)
    assert http.post("/assistants/search", json={"graph_id": NUL}).json() == []


def test_a_nul_in_a_runs_output_is_stored_on_both_back_ends(
    serve_app: Callable[..., Served], backend: str
) -> None:
    """PostgreSQL's jsonb refuses a NUL character; since issue 32 neither the thread record nor
    the run's stored outcome copies the values (they name the checkpoint, whose blobs store a
    NUL), so the run succeeds there too, as on SQLite. (It ended in error before.)"""
    served = serve_app(graphs={**test_graphs.GRAPHS, "nul": test_graphs.nul_output})
    with httpx.Client(base_url=served.url, timeout=20) as http:
        thread_id = new_thread(http)
        result = http.post(f"/threads/{thread_id}/runs/wait",
                           json={"assistant_id": "nul", "input": {"x": 1}}).json()
        thread = http.get(f"/threads/{thread_id}").json()
        [run] = http.get(f"/threads/{thread_id}/runs").json()
    assert result["answer"] == NUL and run["status"] == "success"
    assert thread["status"] == "idle" and thread["values"]["answer"] == NUL
