"""A2A (Agent2Agent protocol v0.3, JSON-RPC 2.0) at `POST /a2a/{assistant_id}` (SPEC §3).

- `message/send` runs the assistant on the thread named by the message's `contextId` (a new
  thread when absent) with the message's text as one human message (data parts become other
  input keys), waits (unless `configuration.blocking` is false) and answers a Task whose id
  is `{contextId}:{run_id}` and whose artifact is the graph's last AI message.
- `message/stream`: SSE of JSON-RPC responses: Task (submitted) -> status-update working ->
  artifact-update -> status-update completed|failed|canceled|input-required, `final: true`.
- `tasks/get`, `tasks/cancel`, `tasks/resubscribe`; a message naming an `input-required`
  task by `taskId` resumes that thread's interrupt with its text (a new run: a new task id).
- Agent cards at `/.well-known/agent-card.json?assistant_id=` and
  `/a2a/{assistant_id}/.well-known/agent-card.json`: v0.3 cards (`url`, `protocolVersion`
  0.3.0, `preferredTransport` JSONRPC), which a2a-sdk 1.x clients answer with their v0.3
  transport (the method names above).

With custom auth (`http_adapter.auth`), runs and tasks follow their thread as on the run
endpoints: `threads.create_run` authorizes a message, and another user's context or task is as
absent.

JSON-RPC errors always travel with HTTP 200, codes per A2A: -32700 parse, -32600 invalid
request, -32601 unknown method, -32602 bad params (also an unknown assistant), -32001 task not
found, -32002 task not cancelable, -32003 push notifications, -32004 unsupported operation
(an assistant whose graph input has no `messages`), -32005 file parts.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..encode import dumps, plain, to_jsonable
from ..errors import BadRequest, NotFound, ServerError
from ..executor import Outcome
from ..records import now
from ..schemas import Assistant, Command, Run, RunCreate
from ..state import ServerState
from . import _jsonrpc as rpc
from ._a2a_shapes import (
    TERMINAL,
    A2AMessage,
    CancelParams,
    GetParams,
    SendConfiguration,
    SendParams,
    TaskFacts,
    agent_card,
    artifact_update,
    input_of,
    state_of,
    status_update,
    task,
)
from ._common import json_response, server, sse_response
from .assistants import _hints
from .runs import _authorize, _create, _readable

__all__ = ["routes"]

TASK_NOT_FOUND = -32001
TASK_NOT_CANCELABLE = -32002
PUSH_NOT_SUPPORTED = -32003
UNSUPPORTED_OPERATION = -32004
_ACTIVE = ("pending", "running")

Handler = Callable[[Request, ServerState, Assistant, rpc.Call], Awaitable[Response]]


# -- assistants, threads, tasks -------------------------------------------------------------------


async def _assistant(st: ServerState, assistant_id: str) -> Assistant:
    try:
        return await st.assistant(assistant_id)
    except NotFound:
        raise rpc.RpcError(rpc.INVALID_PARAMS, f"Assistant '{assistant_id}' not found") from None


async def _takes_messages(st: ServerState, assistant: Assistant) -> bool:
    graph = await st.graph(assistant.graph_id)
    return "messages" in _hints(graph.builder.input_schema)


async def _require_messages(st: ServerState, assistant: Assistant) -> None:
    """SPEC §3: A2A needs a graph whose input has `messages`."""
    if not await _takes_messages(st, assistant):
        raise rpc.RpcError(
            UNSUPPORTED_OPERATION,
            f"Assistant '{assistant.assistant_id}' (graph '{assistant.graph_id}') cannot take "
            "A2A messages: its graph's input has no 'messages' key",
        )


def _task_id(run: Run) -> str:
    return f"{run.thread_id}:{run.run_id}"


async def _find(request: Request, st: ServerState, assistant: Assistant, task_id: str,
                operation: str = "read") -> Run:
    """The run a task id names (`{contextId}:{run_id}`), of this assistant; with custom auth,
    only on a thread the user may `operation` (read, update), as the run endpoints check."""
    context_id, _, run_id = task_id.partition(":")
    run = await st.records.get_run(run_id)
    if (run is None or run.thread_id != context_id or run.assistant_id != assistant.assistant_id
            or not await _readable(request, st, operation, run.thread_id, run_id=run_id)):
        raise rpc.RpcError(TASK_NOT_FOUND, f"Task not found: {task_id}")
    return run


def _context(message: A2AMessage) -> str:
    """The thread id a message names (`contextId`), or a new one."""
    if message.context_id is None:
        return str(uuid.uuid4())
    try:
        return str(uuid.UUID(message.context_id))
    except ValueError:
        raise rpc.RpcError(
            rpc.INVALID_PARAMS, "contextId must be a UUID: it is the conversation's thread id"
        ) from None


async def _saved(st: ServerState, run: Run) -> tuple[Any, list[Any]]:
    """Values and interrupts at the run's last checkpoint (a run this process did not see end)."""
    config = {"configurable": {"thread_id": run.thread_id, "checkpoint_ns": ""}}
    async for saved in st.saver.alist(config):
        if saved.metadata.get("run_id") == run.run_id:
            graph = await st.graph((await st.assistant(run.assistant_id)).graph_id)
            snapshot = await graph.aget_state({"configurable": {
                "thread_id": run.thread_id, "checkpoint_id": saved.checkpoint["id"],
            }})
            return snapshot.values, [i for t in snapshot.tasks for i in t.interrupts]
    return None, []


async def _facts(st: ServerState, run: Run, outcome: Outcome | None, *,
                 latest: bool = True) -> TaskFacts:
    """Everything a Task shows about `run` (its `latest` record), ended or not."""
    if latest:
        run = await st.records.get_run(run.run_id) or run
    status = outcome.status if outcome is not None else run.status
    values, interrupts, error = None, [], None
    if outcome is not None:
        values, interrupts, error = outcome.values, outcome.interrupts, outcome.error
    elif status in _ACTIVE:
        values = (run.kwargs or {}).get("input")  # the turn so far: the input message
    else:
        values, interrupts = await _saved(st, run)
        thread = await st.records.get_thread(run.thread_id)
        error = thread.error if thread is not None else None
    return TaskFacts(
        task_id=_task_id(run),
        context_id=run.thread_id,
        run_id=run.run_id,
        state=state_of(status, bool(interrupts)),
        timestamp=run.updated_at or now(),
        values=plain(values),
        interrupts=to_jsonable(list(interrupts)),
        error=error if status in ("error", "timeout") else None,
        input_message_id=(run.metadata or {}).get("a2a_message_id"),
        metadata={"assistant_id": run.assistant_id, "thread_id": run.thread_id,
                  "run_id": run.run_id},
    )


# -- starting runs --------------------------------------------------------------------------------


async def _resume(request: Request, st: ServerState, assistant: Assistant, message: A2AMessage,
                  text: str, data: dict[str, Any]) -> tuple[str, RunCreate]:
    """A reply to an `input-required` task: resume the thread's interrupt with the text."""
    assert message.task_id is not None
    run = await _find(request, st, assistant, message.task_id)
    if message.context_id is not None and _context(message) != run.thread_id:
        raise rpc.RpcError(rpc.INVALID_PARAMS, "contextId does not match the task's contextId")
    facts = await _facts(st, run, await st.queue.outcome(run.run_id))
    latest = max(await st.records.runs_of(run.thread_id), key=lambda r: r.run_id)
    if facts.state != "input-required" or latest.run_id != run.run_id:
        raise rpc.RpcError(
            rpc.INVALID_PARAMS, f"Task {message.task_id} is not waiting for input ({facts.state})"
        )
    payload = RunCreate(assistant_id=assistant.assistant_id,
                        command=Command(resume=text if text else data),
                        metadata={"a2a_message_id": message.message_id})
    return run.thread_id, payload


async def _start(request: Request, st: ServerState, assistant: Assistant, message: A2AMessage
                 ) -> Run:
    await _require_messages(st, assistant)
    text, data = input_of(message)
    if message.task_id is not None:
        thread_id, payload = await _resume(request, st, assistant, message, text, data)
    else:
        thread_id = _context(message)
        human = {"type": "human", "content": text, "id": message.message_id}
        payload = RunCreate(assistant_id=assistant.assistant_id,
                            input={**data, "messages": [human]}, if_not_exists="create",
                            metadata={"a2a_message_id": message.message_id})
    try:  # custom auth: the create_run handler; another user's thread is as absent
        payload, auth = await _authorize(request, payload, thread_id)
        run: Run = await _create(st, payload, thread_id, auth=auth)
    except ServerError as exc:
        raise rpc.RpcError(rpc.INTERNAL_ERROR, str(exc.detail)) from None
    return run


# -- methods --------------------------------------------------------------------------------------


def _ok(call: rpc.Call, value: Any) -> Response:
    return json_response(rpc.result(call.id, value))


def _send_params(call: rpc.Call) -> SendParams:
    params = rpc.params(call, SendParams)
    if params.configuration and params.configuration.push_notification_config:
        raise rpc.RpcError(PUSH_NOT_SUPPORTED, "Push notifications are not supported")
    return params


async def message_send(request: Request, st: ServerState, assistant: Assistant,
                       call: rpc.Call) -> Response:
    params = _send_params(call)
    config = params.configuration or SendConfiguration()
    run = await _start(request, st, assistant, params.message)
    if config.blocking is False:  # answer at once; the caller polls `tasks/get`
        return _ok(call, task(await _facts(st, run, None), config.history_length))
    outcome = await st.queue.wait(run.run_id)
    return _ok(call, task(await _facts(st, run, outcome), config.history_length))


def _frame(call: rpc.Call, value: Any) -> bytes:
    return b"data: " + dumps(rpc.result(call.id, value)) + b"\r\n\r\n"


async def _events(st: ServerState, run: Run, call: rpc.Call, history_length: int | None,
                  *, started: bool) -> AsyncIterator[bytes]:
    """A task's stream: the Task, `working` (for a run just started), then once it ends its
    artifact and final status; a task already ended gets its final status at once. A run just
    started shows as created (`submitted`) whatever a worker did meanwhile: one on PostgreSQL
    may have claimed it in the statement that created it."""
    if started:
        facts = await _facts(st, run, None, latest=False)
    else:
        facts = await _facts(st, run, await st.queue.outcome(run.run_id))
    yield _frame(call, task(facts, history_length))
    if facts.state not in TERMINAL and facts.state != "input-required":
        if started:
            working = msgspec.structs.replace(facts, state="working", timestamp=now())
            yield _frame(call, status_update(working, final=False))
        facts = await _facts(st, run, await st.queue.wait(run.run_id))
        update = artifact_update(facts)
        if update is not None:
            yield _frame(call, update)
    yield _frame(call, status_update(facts, final=True))


async def message_stream(request: Request, st: ServerState, assistant: Assistant,
                         call: rpc.Call) -> Response:
    params = _send_params(call)
    run = await _start(request, st, assistant, params.message)
    config = params.configuration or SendConfiguration()
    return sse_response(request, _events(st, run, call, config.history_length, started=True))


async def tasks_get(request: Request, st: ServerState, assistant: Assistant,
                    call: rpc.Call) -> Response:
    params = rpc.params(call, GetParams)
    run = await _find(request, st, assistant, params.id)
    facts = await _facts(st, run, await st.queue.outcome(run.run_id))
    return _ok(call, task(facts, params.history_length))


async def tasks_cancel(request: Request, st: ServerState, assistant: Assistant,
                       call: rpc.Call) -> Response:
    params = rpc.params(call, CancelParams)
    run = await _find(request, st, assistant, params.id, "update")
    if run.status not in _ACTIVE:
        state = state_of(run.status, False)
        raise rpc.RpcError(TASK_NOT_CANCELABLE, f"Task {params.id} cannot be canceled: {state}")
    await st.queue.cancel(run.run_id, "interrupt")
    outcome = await st.queue.wait(run.run_id)
    return _ok(call, task(await _facts(st, run, outcome)))


async def tasks_resubscribe(request: Request, st: ServerState, assistant: Assistant,
                            call: rpc.Call) -> Response:
    params = rpc.params(call, CancelParams)
    run = await _find(request, st, assistant, params.id)
    return sse_response(request, _events(st, run, call, None, started=False))


async def push_config(request: Request, st: ServerState, assistant: Assistant,
                      call: rpc.Call) -> Response:
    raise rpc.RpcError(PUSH_NOT_SUPPORTED, "Push notifications are not supported")


_METHODS: dict[str, Handler] = {
    "message/send": message_send,
    "message/stream": message_stream,
    "tasks/get": tasks_get,
    "tasks/cancel": tasks_cancel,
    "tasks/resubscribe": tasks_resubscribe,
    "tasks/pushNotificationConfig/set": push_config,
    "tasks/pushNotificationConfig/get": push_config,
    "tasks/pushNotificationConfig/list": push_config,
    "tasks/pushNotificationConfig/delete": push_config,
}


async def post_a2a(request: Request) -> Response:
    """One JSON-RPC call; every answer, error or not, is HTTP 200 (A2A's JSON-RPC binding)."""
    st = server(request)
    call: rpc.Call | None = None
    try:
        call = rpc.call_of(rpc.decode(await request.body()))
        handler = _METHODS.get(call.method)
        if handler is None:
            raise rpc.RpcError(rpc.METHOD_NOT_FOUND, f"Method not found: {call.method}")
        assistant = await _assistant(st, request.path_params["assistant_id"])
        return await handler(request, st, assistant, call)
    except rpc.RpcError as exc:
        return json_response(rpc.error(call.id if call is not None else None, exc))
    except ServerError as exc:  # e.g. the assistant's graph is gone from the config
        error = rpc.RpcError(rpc.INTERNAL_ERROR, str(exc.detail))
        return json_response(rpc.error(call.id if call is not None else None, error))


# -- agent cards ----------------------------------------------------------------------------------


async def _card(request: Request, assistant_id: str) -> Response:
    st = server(request)
    assistant = await st.assistant(assistant_id)
    if not await _takes_messages(st, assistant):
        raise BadRequest(
            f"Assistant '{assistant.assistant_id}' (graph '{assistant.graph_id}') has no A2A "
            "agent card: its graph's input has no 'messages' key"
        )
    name = assistant.name or assistant.graph_id
    base = str(request.base_url).rstrip("/")
    return json_response(agent_card(
        name=name,
        description=assistant.description
        or f"Assistant '{name}' (graph '{assistant.graph_id}') served by graphrun",
        url=f"{base}/a2a/{assistant.assistant_id}",
        version=str(assistant.version),
        graph_id=assistant.graph_id,
        api_key=bool(st.settings.api_keys),
    ))


async def card_by_query(request: Request) -> Response:
    assistant_id = request.query_params.get("assistant_id")
    if not assistant_id:
        raise BadRequest("Missing required query parameter: assistant_id")
    return await _card(request, assistant_id)


async def card_by_path(request: Request) -> Response:
    return await _card(request, request.path_params["assistant_id"])


routes = [
    Route("/a2a/{assistant_id}", post_a2a, methods=["POST"]),
    Route("/a2a/{assistant_id}/.well-known/agent-card.json", card_by_path, methods=["GET"]),
    Route("/.well-known/agent-card.json", card_by_query, methods=["GET"]),
]
