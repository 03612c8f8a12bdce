"""A2A at `/a2a/{assistant_id}` (SPEC §3) through the official a2a-sdk client, plus raw JSON-RPC.

The a2a-sdk 1.x client reads our v0.3 agent card and talks to us with its v0.3 JSON-RPC
transport (`message/send`, `message/stream`, `tasks/get`, `tasks/cancel`); the raw tests pin
the wire: SSE event order and the JSON-RPC error codes (always HTTP 200).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx
import pytest
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.client.card_resolver import parse_agent_card
from a2a.compat.v0_3 import types as v03
from a2a.helpers.proto_helpers import (
    get_artifact_text,
    get_message_text,
    new_text_message,
)
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import (
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from http_adapter.agent_server.state import assistant_id_for

from .conftest import Served
from .graphs import GRAPHS, shout_graph

# Issue 19 §11: every test here runs on SQLite and on PostgreSQL + Redis (conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgres")

SHOUT = assistant_id_for("shout")
AGENT = assistant_id_for("agent")


@pytest.fixture
def served(serve_app: Callable[..., Served]) -> Served:
    return serve_app(graphs={**GRAPHS, "shout": shout_graph})


@pytest.fixture
async def http(served: Served) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=served.url, timeout=10) as client:
        yield client


def _base(http: httpx.AsyncClient) -> str:
    return str(http.base_url).rstrip("/")


async def _client(http: httpx.AsyncClient, **config: Any) -> Client:
    card = await A2ACardResolver(http, f"{_base(http)}/a2a/{SHOUT}").get_agent_card()
    return ClientFactory(ClientConfig(httpx_client=http, **config)).create(card)


def _say(text: str, context_id: str | None = None, task_id: str | None = None
         ) -> SendMessageRequest:
    message = new_text_message(text, context_id=context_id, task_id=task_id, role=Role.ROLE_USER)
    return SendMessageRequest(message=message)


async def _send(client: Client, request: SendMessageRequest) -> list[StreamResponse]:
    return [event async for event in client.send_message(request)]


async def _task(client: Client, text: str, **ids: Any) -> Task:
    (event,) = await _send(client, _say(text, **ids))
    return event.task


def _reply(task: Task) -> str:
    (artifact,) = task.artifacts
    return get_artifact_text(artifact)


# -- agent cards ----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_agent_card_at_both_paths_is_valid_for_the_sdk(http: httpx.AsyncClient) -> None:
    by_path = (await http.get(f"/a2a/{SHOUT}/.well-known/agent-card.json")).json()
    by_query = (await http.get("/.well-known/agent-card.json",
                               params={"assistant_id": "shout"})).json()
    assert by_path == by_query
    card = v03.AgentCard.model_validate(by_path)  # the v0.3 model, strictly
    assert card.url == f"{_base(http)}/a2a/{SHOUT}"
    assert card.name == "shout" and card.description and card.version
    assert card.capabilities.streaming is True and card.protocol_version == "0.3.0"
    assert card.default_input_modes and card.default_output_modes and card.skills
    assert card.security is None  # no API keys configured

    parsed = parse_agent_card(dict(by_path))  # what the 1.x client makes of it
    (interface,) = parsed.supported_interfaces
    assert (interface.url, interface.protocol_binding, interface.protocol_version) == (
        card.url, "JSONRPC", "0.3.0")
    resolved = await A2ACardResolver(http, _base(http)).get_agent_card(
        relative_card_path=f"/.well-known/agent-card.json?assistant_id={SHOUT}")
    assert resolved.name == "shout" and resolved.capabilities.streaming


@pytest.mark.anyio
async def test_agent_card_errors(http: httpx.AsyncClient) -> None:
    missing = await http.get("/.well-known/agent-card.json")
    assert missing.status_code == 400 and "assistant_id" in missing.json()["detail"]
    unknown = await http.get(f"/a2a/{uuid.uuid4()}/.well-known/agent-card.json")
    assert unknown.status_code == 404
    no_messages = await http.get("/.well-known/agent-card.json", params={"assistant_id": AGENT})
    assert no_messages.status_code == 400 and "messages" in no_messages.json()["detail"]


@pytest.mark.anyio
async def test_agent_card_declares_the_api_key(serve_app: Callable[..., Served]) -> None:
    served = serve_app(graphs={"shout": shout_graph}, api_keys=frozenset({"k"}))
    async with httpx.AsyncClient(base_url=served.url, headers={"X-Api-Key": "k"}) as http:
        card = v03.AgentCard.model_validate(
            (await http.get(f"/a2a/{SHOUT}/.well-known/agent-card.json")).json())
        assert card.security == [{"apiKey": []}]
        client = await _client(http, streaming=False)
        assert _reply(await _task(client, "keyed")) == "KEYED (#1)"
        unkeyed = await http.post("/a2a/shout", json={}, headers={"X-Api-Key": ""})
        assert unkeyed.status_code == 401


# -- messages and tasks ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_send_runs_the_assistant_on_a_new_thread(http: httpx.AsyncClient) -> None:
    client = await _client(http, streaming=False)
    task = await _task(client, "hello there")
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert _reply(task) == "HELLO THERE (#1)"
    context_id, run_id = task.id.split(":")
    assert task.context_id == context_id == str(uuid.UUID(context_id))
    thread = (await http.get(f"/threads/{context_id}")).json()
    assert thread["status"] == "idle" and thread["metadata"]["graph_id"] == "shout"
    run = (await http.get(f"/threads/{context_id}/runs/{run_id}")).json()
    assert run["status"] == "success" and run["assistant_id"] == SHOUT
    assert [(m.role, get_message_text(m)) for m in task.history] == [
        (Role.ROLE_USER, "hello there"), (Role.ROLE_AGENT, "HELLO THERE (#1)")]

    fetched = await client.get_task(GetTaskRequest(id=task.id))
    assert fetched.status.state == TaskState.TASK_STATE_COMPLETED
    assert _reply(fetched) == "HELLO THERE (#1)" and len(fetched.history) == 2
    latest = await client.get_task(GetTaskRequest(id=task.id, history_length=1))
    assert [get_message_text(m) for m in latest.history] == ["HELLO THERE (#1)"]
    with pytest.raises(TaskNotFoundError):
        await client.get_task(GetTaskRequest(id=f"{context_id}:{uuid.uuid4()}"))


@pytest.mark.anyio
async def test_context_id_continues_the_same_thread(http: httpx.AsyncClient) -> None:
    client = await _client(http, streaming=False)
    first = await _task(client, "one")
    second = await _task(client, "two", context_id=first.context_id)
    assert second.context_id == first.context_id and second.id != first.id
    assert (_reply(first), _reply(second)) == ("ONE (#1)", "TWO (#2)")
    state = (await http.get(f"/threads/{first.context_id}/state")).json()
    assert [m["content"] for m in state["values"]["messages"]] == [
        "one", "ONE (#1)", "two", "TWO (#2)"]
    own = str(uuid.uuid4())  # a client may name a new conversation itself
    third = await _task(client, "three", context_id=own)
    assert third.context_id == own and _reply(third) == "THREE (#1)"


@pytest.mark.anyio
async def test_stream_sends_task_working_artifact_completed(http: httpx.AsyncClient) -> None:
    client = await _client(http)  # streaming: the card says it can
    events = await _send(client, _say("stream me"))
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds == ["task", "status_update", "artifact_update", "status_update"]
    task, working, artifact, done = events
    assert task.task.status.state == TaskState.TASK_STATE_SUBMITTED
    assert working.status_update.status.state == TaskState.TASK_STATE_WORKING
    assert get_artifact_text(artifact.artifact_update.artifact) == "STREAM ME (#1)"
    assert done.status_update.status.state == TaskState.TASK_STATE_COMPLETED
    assert {e.task.id or e.status_update.task_id or e.artifact_update.task_id
            for e in events} == {task.task.id}
    fetched = await client.get_task(GetTaskRequest(id=task.task.id))
    assert _reply(fetched) == "STREAM ME (#1)"


@pytest.mark.anyio
async def test_stream_wire_is_jsonrpc_responses_over_sse(http: httpx.AsyncClient) -> None:
    request = {"jsonrpc": "2.0", "id": "s1", "method": "message/stream", "params": {"message": {
        "kind": "message", "messageId": "m1", "role": "user",
        "parts": [{"kind": "text", "text": "wire"}]}}}
    async with http.stream("POST", "/a2a/shout", json=request) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        body = (await response.aread()).decode()
    frames = [json.loads(line[len("data: "):]) for line in body.splitlines()
              if line.startswith("data: ")]
    assert {(f["jsonrpc"], f["id"]) for f in frames} == {("2.0", "s1")}
    results = [f["result"] for f in frames]
    assert [r["kind"] for r in results] == ["task", "status-update", "artifact-update",
                                            "status-update"]
    assert [r.get("final") for r in results] == [None, False, None, True]
    assert [r["status"]["state"] for r in results if "status" in r] == [
        "submitted", "working", "completed"]
    assert results[2]["artifact"]["parts"] == [{"kind": "text", "text": "WIRE (#1)"}]
    v03.Task.model_validate(results[0])
    v03.TaskStatusUpdateEvent.model_validate(results[1])
    v03.TaskArtifactUpdateEvent.model_validate(results[2])


@pytest.mark.anyio
async def test_cancel_a_running_task(http: httpx.AsyncClient) -> None:
    client = await _client(http, streaming=False, polling=True)  # blocking: false
    task = await _task(client, "slow down")
    assert task.status.state in (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING)
    canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
    assert canceled.id == task.id and canceled.status.state == TaskState.TASK_STATE_CANCELED
    fetched = await client.get_task(GetTaskRequest(id=task.id))
    assert fetched.status.state == TaskState.TASK_STATE_CANCELED
    with pytest.raises(TaskNotCancelableError):
        await client.cancel_task(CancelTaskRequest(id=task.id))
    thread = (await http.get(f"/threads/{task.context_id}")).json()
    assert thread["status"] != "busy"  # idle, or interrupted when it stopped mid-step


@pytest.mark.anyio
async def test_failed_and_input_required_tasks(http: httpx.AsyncClient) -> None:
    client = await _client(http, streaming=False)
    failed = await _task(client, "fail now")
    assert failed.status.state == TaskState.TASK_STATE_FAILED
    assert "shout failed on 'fail now'" in get_message_text(failed.status.message)
    assert not failed.artifacts

    asking = await _task(client, "ask me")
    assert asking.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert get_message_text(asking.status.message) == "what next?"
    answered = await _task(client, "yes", context_id=asking.context_id, task_id=asking.id)
    assert answered.context_id == asking.context_id and answered.id != asking.id
    assert _reply(answered) == "ASK ME -> YES (#1)"
    with pytest.raises(Exception, match="not waiting for input"):
        await _task(client, "again", task_id=asking.id)


@pytest.mark.anyio
async def test_resubscribe_follows_a_task_to_its_end(http: httpx.AsyncClient) -> None:
    client = await _client(http)
    sender = await _client(http, streaming=False, polling=True)
    task_id = (await _task(sender, "slow again")).id
    seen: list[StreamResponse] = []
    async with anyio.create_task_group() as tg:

        async def follow() -> None:
            async for event in client.subscribe(SubscribeToTaskRequest(id=task_id)):
                seen.append(event)

        tg.start_soon(follow)
        while not seen:  # subscribed: the task as it is now came first
            await anyio.sleep(0.01)
        assert seen[0].task.status.state in (TaskState.TASK_STATE_SUBMITTED,
                                             TaskState.TASK_STATE_WORKING)
        await client.cancel_task(CancelTaskRequest(id=task_id))
    assert [e.WhichOneof("payload") for e in seen] == ["task", "status_update"]
    assert seen[-1].status_update.status.state == TaskState.TASK_STATE_CANCELED
    done = [e async for e in client.subscribe(SubscribeToTaskRequest(id=task_id))]
    assert [e.WhichOneof("payload") for e in done] == ["task", "status_update"]
    assert done[0].task.status.state == TaskState.TASK_STATE_CANCELED


@pytest.mark.anyio
async def test_tasks_survive_a_restart(serve_app: Callable[..., Served]) -> None:
    first = serve_app(graphs={"shout": shout_graph})
    async with httpx.AsyncClient(base_url=first.url, timeout=10) as http:
        client = await _client(http, streaming=False)
        done = await _task(client, "remember")
        failed = await _task(client, "fail later")
    first.stop()
    second = serve_app(graphs={"shout": shout_graph})  # same data dir: records and checkpoints
    async with httpx.AsyncClient(base_url=second.url, timeout=10) as http:
        client = await _client(http, streaming=False)
        again = await client.get_task(GetTaskRequest(id=done.id))
        assert again.status.state == TaskState.TASK_STATE_COMPLETED
        assert _reply(again) == "REMEMBER (#1)" and len(again.history) == 2
        lost = await client.get_task(GetTaskRequest(id=failed.id))
        assert lost.status.state == TaskState.TASK_STATE_FAILED
        assert "shout failed" in get_message_text(lost.status.message)


@pytest.mark.anyio
async def test_graph_without_messages_is_a_clear_error(http: httpx.AsyncClient) -> None:
    card = await A2ACardResolver(http, f"{_base(http)}/a2a/{SHOUT}").get_agent_card()
    card.supported_interfaces[0].url = f"{_base(http)}/a2a/agent"  # aim at the `agent` graph
    client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
    with pytest.raises(UnsupportedOperationError, match="no 'messages' key"):
        await _task(client, "hi")


# -- raw JSON-RPC errors (HTTP 200 each) -----------------------------------------------------------


# No assistant has this id. Fixed, not uuid4(): it names a test, and pytest-xdist's workers must
# collect the same names.
UNKNOWN_ASSISTANT = "0b9d5c52-3a1e-4c6f-9d2e-7f3a8e1c4b60"


def _message(**fields: Any) -> dict[str, Any]:
    return {"kind": "message", "messageId": str(uuid.uuid4()), "role": "user",
            "parts": [{"kind": "text", "text": "hi"}], **fields}


@pytest.mark.anyio
@pytest.mark.parametrize(("path", "body", "code", "words"), [
    ("shout", b"{not json", -32700, "Parse error"),
    ("shout", {"id": 1, "method": "message/send"}, -32600, "Invalid Request"),
    ("shout", {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}}, -32601,
     "SendMessage"),
    ("shout", {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {}}, -32602,
     "message"),
    ("shout", {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": []}, -32602,
     "expected an object"),
    ("shout", {"jsonrpc": "2.0", "id": 1, "method": "message/send",
               "params": {"message": _message(contextId="not-a-uuid")}}, -32602, "UUID"),
    ("shout", {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {
        "message": _message(parts=[{"kind": "file", "file": {"uri": "http://x/y"}}])}},
     -32005, "File parts"),
    ("shout", {"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
               "params": {"id": f"{uuid.uuid4()}:{uuid.uuid4()}"}}, -32001, "Task not found"),
    ("shout", {"jsonrpc": "2.0", "id": 1, "method": "tasks/cancel", "params": {"id": "nope"}},
     -32001, "Task not found"),
    ("agent", {"jsonrpc": "2.0", "id": 1, "method": "message/send",
               "params": {"message": _message()}}, -32004, "no 'messages' key"),
    (UNKNOWN_ASSISTANT, {"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
                         "params": {"id": "x"}}, -32602, "not found"),
    ("shout", {"jsonrpc": "2.0", "id": 1, "method": "tasks/pushNotificationConfig/set",
               "params": {}}, -32003, "Push notifications"),
])
async def test_jsonrpc_errors(http: httpx.AsyncClient, path: str, body: Any, code: int,
                              words: str) -> None:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    response = await http.post(f"/a2a/{path}", content=content,
                               headers={"Content-Type": "application/json"})
    assert response.status_code == 200
    answer = response.json()
    assert answer["jsonrpc"] == "2.0"
    assert answer["id"] == (None if code in (-32700, -32600) else 1)
    assert answer["error"]["code"] == code and words in answer["error"]["message"]
    v03.JSONRPCErrorResponse.model_validate(answer)
