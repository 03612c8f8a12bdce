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
from typing import Any, NamedTuple

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from checkpoints.base import new_checkpoint_id

from ..auth import AuthUser
from ..authz import auth_user, authorize, owned, visible
from ..configurable_headers import picked_headers
from ..encode import dumps, sse_frame
from ..errors import BadRequest, Conflict, NotFound, UnprocessableEntity
from ..executor import STREAM_MODES, Outcome
from ..records import now
from ..schemas import Assistant, Run, RunCreate, Thread
from ..state import ServerState, assistant_id_for
from ..thread_values import values_of
from ._common import body, json_response, path_uuid, server, sse_response
from ._waited import Waited

__all__ = ["routes"]

_NOT_FOUND = "Thread or assistant not found."
_NO_RUNS = "No runs found to cancel."
_NO_MATCH = (
    "No matching runs to cancel. Please verify the thread ID and run IDs are correct, and the "
    "runs haven't been deleted or completed."
)
_ACTIVE = ("pending", "running")


class RunAuth(NamedTuple):
    """Custom auth's verdict on a run create: who asks, and the thread filter to apply."""

    user: AuthUser
    filters: dict[str, Any] | None


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
    bad = [mode for mode in modes if mode not in STREAM_MODES]
    if bad:  # one sentence (issue 30 item 9), not the reference's jsonschema report
        shown = ", ".join(dumps(mode).decode() for mode in bad)
        raise UnprocessableEntity(
            f"Invalid stream_mode {shown}: expected one of {', '.join(sorted(STREAM_MODES))}"
        )
    return modes or ["values"]


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


async def _assistant(st: ServerState, assistant_id: str) -> Assistant:
    """A run's assistant: an assistant id, or a graph name for its built-in assistant.
    Assistant ids are UUIDs, so a graph name that is not one is looked up once, as its
    built-in assistant (one round trip on PostgreSQL, not two)."""
    is_id = _is_uuid(assistant_id)
    found = await st.records.get_assistant(assistant_id) if is_id else None
    if found is None and assistant_id in st.settings.graphs:
        found = await st.records.get_assistant(assistant_id_for(assistant_id))
    if found is not None:
        return found
    if not is_id:
        graphs = ", ".join(st.settings.graphs)
        raise UnprocessableEntity(
            f"Invalid assistant: '{assistant_id}'. Must be either:\n- A valid assistant UUID, "
            f"or\n- One of the registered graphs: {graphs}"
        )
    raise NotFound(_NOT_FOUND)


def _run_kwargs(payload: RunCreate, modes: list[str], run: dict[str, str], metadata: dict[str, Any],
                temporary: bool, user: AuthUser | None = None, request_id: str | None = None,
                headers: dict[str, str] | None = None) -> dict[str, Any]:
    """The run's `kwargs`, in the LangGraph server's shape (server_facts "Run record"); with
    custom auth the graph finds the user in `configurable` as LangGraph puts it there."""
    config = dict(payload.config or {})
    context, given = _mirrored_context(payload.context, config.get("configurable"))
    configurable = {
        **given,
        "langgraph_auth_user": user.to_json() if user is not None else None,
        "langgraph_auth_user_id": user.identity if user is not None else "",
        "langgraph_auth_permissions": list(user.permissions) if user is not None else [],
        "langgraph_request_id": request_id or str(uuid.uuid4()),
        "__request_start_time_ms__": time.time_ns() // 1_000_000,
        "__after_seconds__": payload.after_seconds or 0,
        **run,
        # without auth a caller's own `user_id` stays (as observed; it reaches checkpoints),
        # from `context` too (issue 31: the memory-agent template's `Context.user_id`)
        "user_id": user.identity if user is not None else given.get("user_id", ""),
    }
    checkpoint = {k: v for k, v in (payload.checkpoint or {}).items() if k != "thread_id"}
    configurable.update({k: v for k, v in checkpoint.items() if v is not None})
    if payload.checkpoint_id:
        configurable["checkpoint_id"] = payload.checkpoint_id
    configurable.update(headers or {})  # http.configurable_headers, with or without context
    config["configurable"] = configurable
    config["metadata"] = {**(config.get("metadata") or {}), **metadata}
    command = msgspec.structs.asdict(payload.command) if payload.command is not None else None
    return {
        "input": payload.input,
        "command": command,
        "config": config,
        "context": context,
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


def _mirrored_context(context: dict[str, Any] | None, configurable: dict[str, Any] | None
                      ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(context, configurable) of a run as the reference stores them (issue 31): a given
    context is mirrored into `configurable`, else the caller's `configurable` is the context
    (`_check` refused both at once)."""
    if context:
        return dict(context), dict(context)
    return dict(configurable or {}), dict(configurable or {})


async def _thread_for(st: ServerState, thread_id: str, payload: RunCreate, assistant: Assistant,
                filters: dict[str, Any] | None = None) -> Thread:
    """The run's thread (created with `if_not_exists: create`, owned by whoever `filters`
    name), tagged with the graph of this run; a thread outside `filters` is as absent."""
    thread = await st.records.get_thread(thread_id)
    if thread is not None and not visible(thread.metadata, filters):
        raise NotFound(_NOT_FOUND)
    if thread is None:
        if payload.if_not_exists != "create":
            raise NotFound(_NOT_FOUND)
        stamp = now()
        thread = Thread(thread_id=thread_id, created_at=stamp, updated_at=stamp,
                        state_updated_at=stamp, metadata=owned({}, filters), status="idle")
    metadata = thread.metadata or {}
    named = {"graph_id": assistant.graph_id, "assistant_id": assistant.assistant_id}
    if thread.status != "busy" and any(metadata.get(k) != v for k, v in named.items()):
        # as the reference: a run created on a thread that is not busy names the thread after
        # its own graph (issue 31 item 10); one queued behind another leaves it as it is. Saved
        # now: the PostgreSQL enqueue keeps the stored metadata's keys over the route's.
        thread = msgspec.structs.replace(thread, metadata={**metadata, **named})
        if "graph_id" in metadata:  # a stored thread a run of another graph named
            await st.records.put_thread(thread)
    return thread


def _run_metadata(payload: RunCreate, assistant: Assistant, thread: Thread | None
                  ) -> dict[str, Any]:
    """A run's metadata: the assistant's, then its thread's (so every run on a thread created
    with metadata carries it into its checkpoints, issue 18), the config's, the payload's.

    As observed: a stateless run's has no graph_id, and a thread run's has its thread's graph
    (its own, unless it was queued behind a run of another graph: `_thread_for`).
    """
    metadata: dict[str, Any] = {**(assistant.metadata or {})}
    if thread is not None:
        metadata.update(thread.metadata or {})
        metadata.setdefault("graph_id", assistant.graph_id)
    metadata["assistant_id"] = assistant.assistant_id
    metadata.update((payload.config or {}).get("metadata") or {})
    metadata.update(payload.metadata or {})
    return metadata


async def _create(st: ServerState, payload: RunCreate, thread_id: str | None, *,
                  subscribe: bool = False, auth: RunAuth | None = None,
                  request_id: str | None = None, headers: dict[str, str] | None = None) -> Any:
    """A run on a thread, or a stateless one (`thread_id` None) on a temporary thread.

    With `subscribe`, returns (run, subscription), the subscription taken before the run
    can publish anything. `auth` (from `_authorize`) scopes the thread to the user.
    """
    stateless = thread_id is None
    modes = _check(payload)
    await st.webhooks.admit(payload.webhook)  # 422 for a refused URL (issue 26 §5)
    assistant = await _assistant(st, payload.assistant_id)
    keep = stateless and payload.on_completion == "keep"
    if stateless:
        thread_id = new_checkpoint_id()
        if keep:
            payload = msgspec.structs.replace(payload, if_not_exists="create")
    assert thread_id is not None
    filters = auth.filters if auth is not None else None
    thread = (None if stateless and not keep
              else await _thread_for(st, thread_id, payload, assistant, filters))
    metadata = _run_metadata(payload, assistant, None if stateless else thread)
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
        kwargs=_run_kwargs(payload, modes, ids, metadata, temporary=stateless and not keep,
                           user=auth.user if auth is not None else None, request_id=request_id,
                           headers=headers),
        multitask_strategy=payload.multitask_strategy,
    )
    return await st.queue.create(run, thread, subscribe=subscribe)


async def _authorize(request: Request, payload: RunCreate, thread_id: str | None
                     ) -> tuple[RunCreate, RunAuth | None]:
    """Custom auth's `threads.create_run` handler on a run create: the payload (with the
    `metadata` the handler may have changed) and the verdict for `_create`."""
    user = auth_user(request)
    if user is None:
        return payload, None
    value = {"thread_id": thread_id, "assistant_id": payload.assistant_id, "run_id": None,
             "status": "pending", "metadata": dict(payload.metadata or {}),
             "prevent_insert_if_inflight": True, "multitask_strategy": payload.multitask_strategy,
             "if_not_exists": payload.if_not_exists, "after_seconds": payload.after_seconds or 0,
             "kwargs": msgspec.to_builtins(payload)}
    filters = await authorize(request, "threads", "create_run", value)
    if value["metadata"] != (payload.metadata or {}):
        payload = msgspec.structs.replace(payload, metadata=value["metadata"])
    return payload, RunAuth(user, filters)


async def _readable(request: Request, st: ServerState, operation: str, thread_id: str,
                    **value: Any) -> bool:
    """Whether custom auth lets the user `operation` (read, update, delete) the thread's runs:
    false for a thread outside the user's filter (as if it did not exist)."""
    filters = await authorize(request, "threads", operation, {"thread_id": thread_id, **value})
    if not filters:
        return True
    thread = await st.records.get_thread(thread_id)
    return thread is not None and visible(thread.metadata, filters)


# -- responses -----------------------------------------------------------------------------------


def _run_path(run: Run) -> str:
    return f"/threads/{run.thread_id}/runs/{run.run_id}"


def _join_headers(thread_id: str, run_id: str) -> dict[str, str]:
    path = f"/threads/{thread_id}/runs/{run_id}"
    return {"Location": f"{path}/join", "Content-Location": path}


async def _final_body(st: ServerState, run: Run, outcome: Outcome | None) -> Any:
    """What `/wait` and `/join` answer: the values, `__error__` for a failed run, plus
    `__interrupt__` for one that stopped on `interrupt()`; a cancelled or timed-out run
    answers its last values (as observed). The thread is read only when the answer needs it
    (not for a run that succeeded or failed: a round trip on PostgreSQL, issue 19)."""
    if outcome is not None and outcome.status in ("error", "success"):
        if outcome.status == "error":
            return {"__error__": outcome.error}
        return _with_interrupts(outcome.values, outcome.interrupts)
    thread = await st.records.get_thread(run.thread_id)
    if outcome is None:  # finished before this process knew it (e.g. a restart)
        if thread is None:
            return None
        if run.status == "error" and thread.error:
            return {"__error__": thread.error}
        return _with_interrupts(await values_of(st, thread), [
            {"value": i.get("value"), "id": i.get("id"), "response_schema": None}
            for items in (thread.interrupts or {}).values() for i in items
        ])
    if outcome.values is not None or thread is None:
        return outcome.values
    return await values_of(st, thread)


def _waited(st: ServerState, run: Run, *, cancel_on_disconnect: bool = False) -> Response:
    """What `/wait` and `/join` answer once the run ends, newlines until then (issue 31 item 6);
    with `cancel_on_disconnect`, a client that leaves first cancels the run."""

    async def result() -> Any:
        outcome = await st.queue.wait(run.run_id)
        if run.kwargs.get("temporary"):  # answered here: a later join finds it gone (item 8)
            st.queue.ended_stateless.take(run.thread_id, run.run_id)
        return await _final_body(st, run, outcome)

    async def cancel() -> None:
        await _cancel_unless_ended(st, run.run_id)

    return Waited(result, st.settings.wait_keepalive,
                  headers=_join_headers(run.thread_id, run.run_id),
                  on_disconnect=cancel if cancel_on_disconnect else None)


async def _cancel_unless_ended(st: ServerState, run_id: str) -> None:
    """A client that asked for it left before the run ended: cancel the run."""
    if await st.queue.outcome(run_id) is None:
        await st.queue.cancel(run_id, "interrupt")


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
        if cancel_on_disconnect:
            await _cancel_unless_ended(st, run_id)

    return sse_response(request, _frames(subscription, modes), headers=headers, on_close=on_close)


async def _one_frame(frame: bytes) -> AsyncIterator[bytes]:
    yield frame


def _truthy(value: str | None) -> bool:
    return (value or "").lower() in ("1", "true", "yes")


# -- thread runs ----------------------------------------------------------------------------------


async def create_thread_run(request: Request) -> Response:
    thread_id = path_uuid(request, "thread_id", "thread")
    payload, auth = await _authorize(request, await body(request, RunCreate), thread_id)
    run = await _create(server(request), payload, thread_id, auth=auth,
                        headers=picked_headers(request))
    return json_response(run, headers={"Content-Location": _run_path(run)})


async def stream_thread_run(request: Request) -> Response:
    thread_id = path_uuid(request, "thread_id", "thread")
    st = server(request)
    payload, auth = await _authorize(request, await body(request, RunCreate), thread_id)
    run, subscription = await _create(st, payload, thread_id, subscribe=True, auth=auth,
                                      headers=picked_headers(request))
    path = _run_path(run)
    return _stream(request, st, run.run_id, subscription,
                   headers={"Location": f"{path}/stream", "Content-Location": path},
                   cancel_on_disconnect=payload.on_disconnect == "cancel")


async def wait_thread_run(request: Request) -> Response:
    thread_id = path_uuid(request, "thread_id", "thread")
    st = server(request)
    payload, auth = await _authorize(request, await body(request, RunCreate), thread_id)
    run = await _create(st, payload, thread_id, auth=auth,
                        headers=picked_headers(request))
    return _waited(st, run, cancel_on_disconnect=payload.on_disconnect == "cancel")


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
    if (await st.records.get_thread(thread_id) is None
            or not await _readable(request, st, "read", thread_id)):
        raise NotFound(f"Thread with ID {thread_id} not found")
    limit = _query_int(request, "limit", 10)
    offset = _query_int(request, "offset", 0)
    status = request.query_params.get("status") or None
    runs = sorted(await st.records.runs_of(thread_id, status), key=lambda r: r.run_id, reverse=True)
    page: list[Any] = runs[offset : offset + limit]
    select = [s for s in request.query_params.getlist("select") if s]
    if select:
        page = [{k: v for k, v in msgspec.structs.asdict(r).items() if k in select} for r in page]
    return json_response(page)


async def _run_of(st: ServerState, thread_id: str, run_id: str) -> Run | None:
    run = await st.records.get_run(run_id)
    return run if run is not None and run.thread_id == thread_id else None


async def _joinable(st: ServerState, thread_id: str, run_id: str) -> Run | None:
    """A thread run, or a stateless run still in flight on its temporary thread (issue 18:
    the reference lets a client join a background stateless run by the ids `POST /runs` gave)."""
    run = st.queue.stateless(run_id)
    if run is not None and run.thread_id == thread_id:
        return run
    return await _run_of(st, thread_id, run_id)


async def _authorized_run(request: Request, st: ServerState, operation: str, thread_id: str,
                          run_id: str, **value: Any) -> Run | None:
    """`_run_of`, None also when custom auth hides the thread from the user."""
    if not await _readable(request, st, operation, thread_id, run_id=run_id, **value):
        return None
    return await _run_of(st, thread_id, run_id)


async def _authorized_join(request: Request, st: ServerState, thread_id: str, run_id: str
                           ) -> Run | None:
    """`_joinable`, None also when custom auth hides the thread from the user."""
    if not await _readable(request, st, "read", thread_id, run_id=run_id):
        return None
    return await _joinable(st, thread_id, run_id)


def _ids(request: Request) -> tuple[str, str]:
    return path_uuid(request, "thread_id", "thread"), path_uuid(request, "run_id", "run")


async def get_thread_run(request: Request) -> Response:
    thread_id, run_id = _ids(request)
    run = await _authorized_run(request, server(request), "read", thread_id, run_id)
    if run is None:
        raise NotFound("Not Found")
    return json_response(run)


async def delete_thread_run(request: Request) -> Response:
    thread_id, run_id = _ids(request)
    st = server(request)
    run = await _authorized_run(request, st, "delete", thread_id, run_id)
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
    run = await _authorized_join(request, st, thread_id, run_id)
    ended = (st.queue.ended_stateless.take(thread_id, run_id)
             if run is None and auth_user(request) is None else None)
    if ended is not None:  # issue 31 item 8: a stateless run that ended before this join
        return json_response(await _final_body(st, *ended), headers=headers)
    if run is None:  # as observed: 200 with the error in the body
        return json_response(
            {"__error__": {"error": "HTTPException", "message": "404: Run not found"}},
            headers=headers,
        )
    finished = await st.queue.outcome(run.run_id)
    if finished is not None and finished.status == "success":
        # as observed: joining a run that had already ended answers its thread's state now
        # (a later run's values included), not what the run itself returned
        return json_response(await _final_body(st, run, None), headers=headers)
    return _waited(st, run,
                   cancel_on_disconnect=_truthy(request.query_params.get("cancel_on_disconnect")))


async def join_thread_run_stream(request: Request) -> Response:
    """Events of a run from now on; a resumable run's events after `Last-Event-ID` first."""
    thread_id, run_id = _ids(request)
    st = server(request)
    path = f"/threads/{thread_id}/runs/{run_id}"
    headers = {"Location": f"{path}/stream", "Content-Location": path}
    if await _authorized_join(request, st, thread_id, run_id) is None:
        # as observed: an SSE error event, 200
        error = dumps({"error": "HTTPException", "message": "404: Run not found"})
        return sse_response(request, _one_frame(sse_frame("error", error)), headers=headers)
    subscription = st.broker.attach(run_id, last_event_id=request.headers.get("last-event-id"))
    modes = [m for m in request.query_params.getlist("stream_mode") if m]
    return _stream(request, st, run_id, subscription, headers=headers, modes=modes,
                   cancel_on_disconnect=_truthy(request.query_params.get("cancel_on_disconnect")))


async def cancel_thread_run(request: Request) -> Response:
    thread_id, run_id = _ids(request)
    st = server(request)
    action = "rollback" if request.query_params.get("action") == "rollback" else "interrupt"
    run = await _authorized_run(request, st, "update", thread_id, run_id, action=action)
    if run is None:
        raise NotFound(_NO_RUNS)
    if run.status not in _ACTIVE:
        raise NotFound(_NO_MATCH)
    await st.queue.cancel(run.run_id, action)
    if _truthy(request.query_params.get("wait")):
        await st.queue.wait(run.run_id)
        return json_response({}, headers=_join_headers(thread_id, run_id))
    return Response(status_code=202)


# -- stateless runs -------------------------------------------------------------------------------


async def create_stateless_run(request: Request) -> Response:
    payload, auth = await _authorize(request, await body(request, RunCreate), None)
    run = await _create(server(request), payload, None, auth=auth,
                        headers=picked_headers(request))
    return json_response(run, headers={"Content-Location": f"/runs/{run.run_id}"})


async def stream_stateless_run(request: Request) -> Response:
    st = server(request)
    payload, auth = await _authorize(request, await body(request, RunCreate), None)
    run, subscription = await _create(st, payload, None, subscribe=True, auth=auth,
                                      headers=picked_headers(request))
    headers = {"Location": f"/runs/{run.run_id}/stream", "Content-Location": f"/runs/{run.run_id}"}
    return _stream(request, st, run.run_id, subscription, headers=headers,
                   cancel_on_disconnect=payload.on_disconnect == "cancel")


async def wait_stateless_run(request: Request) -> Response:
    st = server(request)
    payload, auth = await _authorize(request, await body(request, RunCreate), None)
    run = await _create(st, payload, None, auth=auth,
                        headers=picked_headers(request))
    return _waited(st, run, cancel_on_disconnect=payload.on_disconnect == "cancel")


async def batch_stateless_runs(request: Request) -> Response:
    st = server(request)
    payloads = await body(request, list[RunCreate])
    if not payloads:
        raise UnprocessableEntity(
            "[] has less than 1 item\n\nFailed validating \"minItems\" in schema\n\n"
            "On instance:\n    []"
        )
    authorized = []
    for payload in payloads:  # all valid and allowed before any is queued: no half batch
        _check(payload)
        await st.webhooks.admit(payload.webhook)
        await _assistant(st, payload.assistant_id)
        authorized.append(await _authorize(request, payload, None))
    request_id = str(uuid.uuid4())  # one request: its runs share the id (as observed)
    return json_response([await _create(st, payload, None, auth=auth, request_id=request_id,
                                        headers=picked_headers(request))
                          for payload, auth in authorized])


async def _mine(st: ServerState, run: Run, filters: dict[str, Any] | None) -> bool:
    """Whether `run` is within custom auth's `filters` (its thread's metadata, or the run's
    own for a stateless run)."""
    if not filters:
        return True
    thread = await st.records.get_thread(run.thread_id)
    return visible(thread.metadata if thread is not None else run.metadata, filters)


async def _cancel_targets(st: ServerState, spec: _CancelMany, filters: dict[str, Any] | None = None
                    ) -> list[str]:
    """The runs `/runs/cancel` names (404/422 as observed when none or both forms); with
    custom auth's `filters`, only the user's."""
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
        found = [r.run_id for r in await st.records.runs_with_status(*wanted)
                 if not filters or await _mine(st, r, filters)]
        if not found:
            raise NotFound(_NO_RUNS)
        return found
    if not spec.run_ids:
        raise UnprocessableEntity(
            f"{dumps(msgspec.structs.asdict(spec)).decode()} is not valid under any of the "
            "schemas listed in the 'oneOf' keyword"
        )
    known = [await st.records.get_run(r) for r in spec.run_ids]
    runs = [r for r in known if r is not None and (not filters or await _mine(st, r, filters))
            and (spec.thread_id is None or r.thread_id == spec.thread_id)]
    # Unknown ids may be stateless runs (only in the queue); with filters they cannot be
    # checked, so they are left alone.
    stateless = [r for r, k in zip(spec.run_ids, known) if k is None and not filters]
    active = [r.run_id for r in runs if r.status in _ACTIVE]
    if not active and not stateless:
        raise NotFound(_NO_MATCH if runs else _NO_RUNS)
    return active + stateless  # a stateless run is only in the queue: it ignores unknown ids


async def cancel_runs(request: Request) -> Response:
    st = server(request)
    spec = await body(request, _CancelMany)
    action = "rollback" if request.query_params.get("action") == "rollback" else "interrupt"
    filters = await authorize(request, "threads", "update", {
        "thread_id": spec.thread_id, "run_ids": spec.run_ids, "status": spec.status,
        "action": action,
    })
    for run_id in await _cancel_targets(st, spec, filters):
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
