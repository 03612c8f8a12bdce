"""Thread runs and stateless runs (SPEC §3 "Runs"): create, stream, wait, join, cancel.

Status codes, bodies and headers follow what the LangGraph Agent Server (langgraph-api 0.16)
was observed to send (shared_notes/server_facts.md): creates answer 200 with
`Content-Location`, `/wait` and `/join` add `Location: .../join` (the SDK re-GETs it when a
body is cut off), streams add `Location: .../stream` (the SDK reconnects there with
`Last-Event-ID`), cancel answers 202 (or 200 `{}` with `wait=1`).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Iterable
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from checkpoints.base import new_checkpoint_id

from ..encode import dumps, sse_frame
from ..errors import BadRequest, Conflict, NotFound, UnprocessableEntity
from ..executor import STREAM_MODES, Outcome
from ..records import now
from ..schemas import Assistant, Run, RunCreate, Thread
from ..state import ServerState, assistant_id_for
from ._common import body, json_response, path_uuid, server, sse_response

__all__ = ["routes"]

_NOT_FOUND = "Thread or assistant not found."
_NO_RUNS = "No runs found to cancel."
_NO_MATCH = (
    "No matching runs to cancel. Please verify the thread ID and run IDs are correct, and the "
    "runs haven't been deleted or completed."
)
_ACTIVE = ("pending", "running")


class _CancelMany(msgspec.Struct, kw_only=True):
    run_ids: list[str] | None = None
    thread_id: str | None = None
    status: str | None = None


# -- creating ------------------------------------------------------------------------------------


def _check(payload: RunCreate) -> list[str]:
    """Reject what the engine cannot run; the stream modes, as a list."""
    if payload.context and (payload.config or {}).get("configurable"):
        raise BadRequest(
            "Cannot specify both configurable and context. Prefer setting context alone. "
            "Context was introduced in LangGraph 0.6.0 and is the long term planned replacement "
            "for configurable."
        )
    given = payload.stream_mode
    modes = [given] if isinstance(given, str) else list(given)
    if not all(mode in STREAM_MODES for mode in modes):
        shown = dumps(given).decode()
        raise UnprocessableEntity(
            f"{shown} is not valid under any of the schemas listed in the 'anyOf' keyword\n\n"
            f"Failed validating \"anyOf\" in schema[\"properties\"][\"stream_mode\"]\n\n"
            f"On instance[\"stream_mode\"]:\n    {shown}"
        )
    return modes or ["values"]


def _assistant(st: ServerState, assistant_id: str) -> Assistant:
    """A run's assistant: an assistant id, or a graph name for its built-in assistant."""
    found = st.records.assistants.get(assistant_id)
    if found is None and assistant_id in st.settings.graphs:
        found = st.records.assistants.get(assistant_id_for(assistant_id))
    if found is not None:
        return found
    try:
        uuid.UUID(assistant_id)
    except ValueError:
        graphs = ", ".join(st.settings.graphs)
        raise UnprocessableEntity(
            f"Invalid assistant: '{assistant_id}'. Must be either:\n- A valid assistant UUID, "
            f"or\n- One of the registered graphs: {graphs}"
        ) from None
    raise NotFound(_NOT_FOUND)


def _run_kwargs(payload: RunCreate, modes: list[str], run: dict[str, str], metadata: dict[str, Any],
                temporary: bool) -> dict[str, Any]:
    """The run's `kwargs`, in the LangGraph server's shape (server_facts "Run record")."""
    config = dict(payload.config or {})
    configurable = {
        **(config.get("configurable") or {}),
        "langgraph_auth_user": None,
        "langgraph_auth_user_id": "",
        "langgraph_auth_permissions": [],
        "langgraph_request_id": str(uuid.uuid4()),
        "__request_start_time_ms__": time.time_ns() // 1_000_000,
        "__after_seconds__": payload.after_seconds or 0,
        **run,
        "user_id": "",
    }
    checkpoint = {k: v for k, v in (payload.checkpoint or {}).items() if k != "thread_id"}
    configurable.update({k: v for k, v in checkpoint.items() if v is not None})
    if payload.checkpoint_id:
        configurable["checkpoint_id"] = payload.checkpoint_id
    config["configurable"] = configurable
    config["metadata"] = {**(config.get("metadata") or {}), **metadata}
    command = msgspec.structs.asdict(payload.command) if payload.command is not None else None
    return {
        "input": payload.input,
        "command": command,
        "config": config,
        "context": payload.context or {},
        "stream_mode": modes,
        "interrupt_before": payload.interrupt_before,
        "interrupt_after": payload.interrupt_after,
        "webhook": payload.webhook,
        "feedback_keys": payload.feedback_keys,
        "temporary": temporary,
        "subgraphs": payload.stream_subgraphs,
        "resumable": payload.stream_resumable,
        "checkpoint_during": True if payload.checkpoint_during is None else payload.checkpoint_during,
        "durability": payload.durability or "async",
    }


def _thread_for(st: ServerState, thread_id: str, payload: RunCreate, assistant: Assistant) -> Thread:
    """The run's thread (created with `if_not_exists: create`), tagged with its graph."""
    thread = st.records.threads.get(thread_id)
    if thread is None:
        if payload.if_not_exists != "create":
            raise NotFound(_NOT_FOUND)
        stamp = now()
        thread = Thread(thread_id=thread_id, created_at=stamp, updated_at=stamp,
                        state_updated_at=stamp, metadata={}, status="idle")
    metadata = thread.metadata or {}
    if (metadata.get("graph_id"), metadata.get("assistant_id")) != (
        assistant.graph_id, assistant.assistant_id
    ):
        metadata = {**metadata, "graph_id": assistant.graph_id,
                    "assistant_id": assistant.assistant_id}
        thread = msgspec.structs.replace(thread, metadata=metadata)
    return thread


async def _create(st: ServerState, payload: RunCreate, thread_id: str | None, *,
                  subscribe: bool = False) -> Any:
    """A run on a thread, or a stateless one (`thread_id` None) on a temporary thread.

    With `subscribe`, returns (run, subscription), the subscription taken before the run
    can publish anything.
    """
    modes = _check(payload)
    assistant = _assistant(st, payload.assistant_id)
    stateless = thread_id is None
    keep = stateless and payload.on_completion == "keep"
    if stateless:
        thread_id = new_checkpoint_id()
        if keep:
            payload = msgspec.structs.replace(payload, if_not_exists="create")
    assert thread_id is not None
    metadata: dict[str, Any] = {**(assistant.metadata or {})}
    if not stateless:  # as observed: a stateless run's metadata has no graph_id
        metadata["graph_id"] = assistant.graph_id
    metadata["assistant_id"] = assistant.assistant_id
    metadata.update(payload.metadata or {})
    run_id = new_checkpoint_id()
    ids = {"run_id": run_id, "thread_id": thread_id, "graph_id": assistant.graph_id,
           "assistant_id": assistant.assistant_id}
    stamp = now()
    run = Run(
        run_id=run_id,
        thread_id=thread_id,
        assistant_id=assistant.assistant_id,
        created_at=stamp,
        updated_at=stamp,
        metadata=metadata,
        status="pending",
        kwargs=_run_kwargs(payload, modes, ids, metadata, temporary=stateless and not keep),
        multitask_strategy=payload.multitask_strategy,
    )
    thread = None if stateless and not keep else _thread_for(st, thread_id, payload, assistant)
    return await st.queue.create(run, thread, subscribe=subscribe)


# -- responses -----------------------------------------------------------------------------------


def _run_path(run: Run) -> str:
    return f"/threads/{run.thread_id}/runs/{run.run_id}"


def _join_headers(thread_id: str, run_id: str) -> dict[str, str]:
    path = f"/threads/{thread_id}/runs/{run_id}"
    return {"Location": f"{path}/join", "Content-Location": path}


def _final_body(st: ServerState, run: Run, outcome: Outcome | None) -> Any:
    """What `/wait` and `/join` answer: the values, `__error__` for a failed run, plus
    `__interrupt__` for one that stopped on `interrupt()`; a cancelled or timed-out run
    answers its last values (as observed)."""
    thread = st.records.threads.get(run.thread_id)
    if outcome is None:  # finished before this process knew it (e.g. a restart)
        if thread is None:
            return None
        if run.status == "error" and thread.error:
            return {"__error__": thread.error}
        return _with_interrupts(thread.values, [
            {"value": i.get("value"), "id": i.get("id"), "response_schema": None}
            for items in (thread.interrupts or {}).values() for i in items
        ])
    if outcome.status == "error":
        return {"__error__": outcome.error}
    if outcome.status == "success":
        return _with_interrupts(outcome.values, outcome.interrupts)
    if outcome.values is not None or thread is None:
        return outcome.values
    return thread.values


def _with_interrupts(values: Any, interrupts: list[Any]) -> Any:
    if not interrupts:
        return values
    return {**(values if isinstance(values, dict) else {}), "__interrupt__": interrupts}


def _frames(events: AsyncIterator[tuple[Any, str, bytes]], modes: Iterable[str] = ()
            ) -> AsyncIterator[bytes]:
    """The SSE frames of a subscription; with `modes` (a join's `?stream_mode=`), only those
    modes' events (and errors), without the metadata event (as observed)."""
    wanted = {"messages" if m == "messages-tuple" else m for m in modes}

    async def generate() -> AsyncIterator[bytes]:
        async for _key, name, frame in events:
            if wanted:
                mode = name.partition("|")[0].partition("/")[0]
                if mode not in wanted and mode != "error":
                    continue
            yield frame

    return generate()


def _stream(request: Request, st: ServerState, run_id: str, subscription: Any, *,
            headers: dict[str, str], cancel_on_disconnect: bool, modes: Iterable[str] = ()
            ) -> Response:
    async def on_close() -> None:
        subscription.close()
        if cancel_on_disconnect and st.queue.outcome(run_id) is None:
            await st.queue.cancel(run_id, "interrupt")

    return sse_response(request, _frames(subscription, modes), headers=headers, on_close=on_close)


async def _one_frame(frame: bytes) -> AsyncIterator[bytes]:
    yield frame


def _truthy(value: str | None) -> bool:
    return (value or "").lower() in ("1", "true", "yes")


# -- thread runs ----------------------------------------------------------------------------------


async def create_thread_run(request: Request) -> Response:
    thread_id = path_uuid(request, "thread_id", "thread")
    run = await _create(server(request), await body(request, RunCreate), thread_id)
    return json_response(run, headers={"Content-Location": _run_path(run)})


async def stream_thread_run(request: Request) -> Response:
    thread_id = path_uuid(request, "thread_id", "thread")
    st = server(request)
    payload = await body(request, RunCreate)
    run, subscription = await _create(st, payload, thread_id, subscribe=True)
    path = _run_path(run)
    return _stream(request, st, run.run_id, subscription,
                   headers={"Location": f"{path}/stream", "Content-Location": path},
                   cancel_on_disconnect=payload.on_disconnect == "cancel")


async def wait_thread_run(request: Request) -> Response:
    thread_id = path_uuid(request, "thread_id", "thread")
    st = server(request)
    run = await _create(st, await body(request, RunCreate), thread_id)
    outcome = await st.queue.wait(run.run_id)
    return json_response(_final_body(st, run, outcome),
                         headers=_join_headers(run.thread_id, run.run_id))


def _query_int(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:  # the LangGraph server answers 400 with Python's message
        raise BadRequest(f"invalid literal for int() with base 10: '{raw}'") from None


async def list_thread_runs(request: Request) -> Response:
    thread_id = path_uuid(request, "thread_id", "thread")
    st = server(request)
    if thread_id not in st.records.threads:
        raise NotFound(f"Thread with ID {thread_id} not found")
    limit = _query_int(request, "limit", 10)
    offset = _query_int(request, "offset", 0)
    status = request.query_params.get("status") or None
    runs = sorted(st.records.runs_of(thread_id, status), key=lambda r: r.run_id, reverse=True)
    page: list[Any] = runs[offset : offset + limit]
    select = [s for s in request.query_params.getlist("select") if s]
    if select:
        page = [{k: v for k, v in msgspec.structs.asdict(r).items() if k in select} for r in page]
    return json_response(page)


def _run_of(st: ServerState, thread_id: str, run_id: str) -> Run | None:
    run = st.records.runs.get(run_id)
    return run if run is not None and run.thread_id == thread_id else None


def _ids(request: Request) -> tuple[str, str]:
    return path_uuid(request, "thread_id", "thread"), path_uuid(request, "run_id", "run")


async def get_thread_run(request: Request) -> Response:
    thread_id, run_id = _ids(request)
    run = _run_of(server(request), thread_id, run_id)
    if run is None:
        raise NotFound("Not Found")
    return json_response(run)


async def delete_thread_run(request: Request) -> Response:
    thread_id, run_id = _ids(request)
    st = server(request)
    run = _run_of(st, thread_id, run_id)
    if run is None:
        raise NotFound("Run not found")
    if run.status in _ACTIVE:  # deliberate: the LangGraph server deletes it and runs on
        raise Conflict("Cannot delete a run that is pending or running; cancel it first")
    await st.records.delete_run(run.run_id)
    return Response(status_code=204)


async def join_thread_run(request: Request) -> Response:
    thread_id, run_id = _ids(request)
    st = server(request)
    headers = _join_headers(thread_id, run_id)
    run = _run_of(st, thread_id, run_id)
    if run is None:  # as observed: 200 with the error in the body
        return json_response(
            {"__error__": {"error": "HTTPException", "message": "404: Run not found"}},
            headers=headers,
        )
    outcome = await st.queue.wait(run.run_id)
    return json_response(_final_body(st, run, outcome), headers=headers)


async def join_thread_run_stream(request: Request) -> Response:
    """Events of a run from now on; a resumable run's events after `Last-Event-ID` first."""
    thread_id, run_id = _ids(request)
    st = server(request)
    path = f"/threads/{thread_id}/runs/{run_id}"
    headers = {"Location": f"{path}/stream", "Content-Location": path}
    if _run_of(st, thread_id, run_id) is None:  # as observed: an SSE error event, 200
        error = dumps({"error": "HTTPException", "message": "404: Run not found"})
        return sse_response(request, _one_frame(sse_frame("error", error)), headers=headers)
    subscription = st.broker.attach(run_id, last_event_id=request.headers.get("last-event-id"))
    modes = [m for m in request.query_params.getlist("stream_mode") if m]
    return _stream(request, st, run_id, subscription, headers=headers, modes=modes,
                   cancel_on_disconnect=_truthy(request.query_params.get("cancel_on_disconnect")))


async def cancel_thread_run(request: Request) -> Response:
    thread_id, run_id = _ids(request)
    st = server(request)
    run = _run_of(st, thread_id, run_id)
    if run is None:
        raise NotFound(_NO_RUNS)
    if run.status not in _ACTIVE:
        raise NotFound(_NO_MATCH)
    action = "rollback" if request.query_params.get("action") == "rollback" else "interrupt"
    await st.queue.cancel(run.run_id, action)
    if _truthy(request.query_params.get("wait")):
        await st.queue.wait(run.run_id)
        return json_response({}, headers=_join_headers(thread_id, run_id))
    return Response(status_code=202)


# -- stateless runs -------------------------------------------------------------------------------


async def create_stateless_run(request: Request) -> Response:
    run = await _create(server(request), await body(request, RunCreate), None)
    return json_response(run, headers={"Content-Location": f"/runs/{run.run_id}"})


async def stream_stateless_run(request: Request) -> Response:
    st = server(request)
    payload = await body(request, RunCreate)
    run, subscription = await _create(st, payload, None, subscribe=True)
    headers = {"Location": f"/runs/{run.run_id}/stream", "Content-Location": f"/runs/{run.run_id}"}
    return _stream(request, st, run.run_id, subscription, headers=headers,
                   cancel_on_disconnect=payload.on_disconnect == "cancel")


async def wait_stateless_run(request: Request) -> Response:
    st = server(request)
    run = await _create(st, await body(request, RunCreate), None)
    outcome = await st.queue.wait(run.run_id)
    return json_response(_final_body(st, run, outcome),
                         headers=_join_headers(run.thread_id, run.run_id))


async def batch_stateless_runs(request: Request) -> Response:
    st = server(request)
    payloads = await body(request, list[RunCreate])
    if not payloads:
        raise UnprocessableEntity(
            "[] has less than 1 item\n\nFailed validating \"minItems\" in schema\n\n"
            "On instance:\n    []"
        )
    for payload in payloads:  # all valid before any is queued: no half-created batch
        _check(payload)
        _assistant(st, payload.assistant_id)
    return json_response([await _create(st, payload, None) for payload in payloads])


def _cancel_targets(st: ServerState, spec: _CancelMany) -> list[str]:
    """The runs `/runs/cancel` names (404/422 as observed when none or both forms)."""
    if spec.status is not None:
        if spec.status not in ("pending", "running", "all"):
            raise UnprocessableEntity(
                f"\"{spec.status}\" is not one of \"pending\", \"running\" or \"all\"\n\n"
                "Failed validating \"enum\" in schema[\"properties\"][\"status\"]"
            )
        if spec.thread_id is not None or spec.run_ids is not None:
            raise UnprocessableEntity(
                "When providing a 'status', 'thread_id' and 'run_ids' must be omitted. The "
                "'status' parameter cancels all runs with the given status, regardless of "
                "thread or run ID."
            )
        wanted = _ACTIVE if spec.status == "all" else (spec.status,)
        found = [r.run_id for r in st.records.runs.values() if r.status in wanted]
        if not found:
            raise NotFound(_NO_RUNS)
        return found
    if not spec.run_ids:
        raise UnprocessableEntity(
            f"{dumps(msgspec.structs.asdict(spec)).decode()} is not valid under any of the "
            "schemas listed in the 'oneOf' keyword"
        )
    known = [st.records.runs.get(r) for r in spec.run_ids]
    runs = [r for r in known if r is not None
            and (spec.thread_id is None or r.thread_id == spec.thread_id)]
    stateless = [r for r, k in zip(spec.run_ids, known) if k is None]
    active = [r.run_id for r in runs if r.status in _ACTIVE]
    if not active and not stateless:
        raise NotFound(_NO_MATCH if runs else _NO_RUNS)
    return active + stateless  # a stateless run is only in the queue: it ignores unknown ids


async def cancel_runs(request: Request) -> Response:
    st = server(request)
    spec = await body(request, _CancelMany)
    action = "rollback" if request.query_params.get("action") == "rollback" else "interrupt"
    for run_id in _cancel_targets(st, spec):
        await st.queue.cancel(run_id, action)
    return Response(status_code=204)


routes = [
    Route("/threads/{thread_id}/runs", create_thread_run, methods=["POST"]),
    Route("/threads/{thread_id}/runs", list_thread_runs, methods=["GET"]),
    Route("/threads/{thread_id}/runs/stream", stream_thread_run, methods=["POST"]),
    Route("/threads/{thread_id}/runs/wait", wait_thread_run, methods=["POST"]),
    Route("/threads/{thread_id}/runs/{run_id}", get_thread_run, methods=["GET"]),
    Route("/threads/{thread_id}/runs/{run_id}", delete_thread_run, methods=["DELETE"]),
    Route("/threads/{thread_id}/runs/{run_id}/join", join_thread_run, methods=["GET"]),
    Route("/threads/{thread_id}/runs/{run_id}/stream", join_thread_run_stream, methods=["GET"]),
    Route("/threads/{thread_id}/runs/{run_id}/cancel", cancel_thread_run, methods=["POST"]),
    Route("/runs", create_stateless_run, methods=["POST"]),
    Route("/runs/stream", stream_stateless_run, methods=["POST"]),
    Route("/runs/wait", wait_stateless_run, methods=["POST"]),
    Route("/runs/batch", batch_stateless_runs, methods=["POST"]),
    Route("/runs/cancel", cancel_runs, methods=["POST"]),
]
