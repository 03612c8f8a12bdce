"""Thread runs and stateless runs (SPEC §3 "Runs"): create, stream, wait, join, cancel."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from checkpoints.base import new_checkpoint_id

from ..encode import dumps, to_jsonable
from ..errors import BadRequest, Conflict, NotFound
from ..executor import Outcome
from ..records import now
from ..schemas import Run, RunCreate, Thread
from ..state import ServerState
from ._common import body, json_response, path_uuid, query_int, server, sse_response

__all__ = ["routes"]


class _CancelMany(msgspec.Struct, kw_only=True):
    run_ids: list[str] | None = None
    thread_id: str | None = None
    status: str | None = None


def _kwargs(payload: RunCreate) -> dict[str, Any]:
    kwargs = msgspec.structs.asdict(payload)
    kwargs.pop("assistant_id")
    kwargs.pop("metadata")
    kwargs.pop("multitask_strategy")
    if payload.command is not None:
        kwargs["command"] = msgspec.structs.asdict(payload.command)
    return kwargs


def _check(payload: RunCreate) -> None:
    if payload.context and (payload.config or {}).get("configurable"):
        raise BadRequest(
            "Cannot specify both configurable and context. Prefer setting context alone. "
            "Context was introduced in LangGraph 0.6.0 and is the long term planned replacement "
            "for configurable."
        )


async def _thread_for(st: ServerState, thread_id: str, payload: RunCreate, graph_id: str,
                      assistant_id: str) -> Thread:
    thread = st.records.threads.get(thread_id)
    if thread is None:
        if payload.if_not_exists != "create":
            raise NotFound(f"Thread {thread_id} not found")
        stamp = now()
        thread = Thread(thread_id=thread_id, created_at=stamp, updated_at=stamp,
                        state_updated_at=stamp, metadata={}, status="idle")
    metadata = thread.metadata or {}
    if metadata.get("graph_id") != graph_id or metadata.get("assistant_id") != assistant_id:
        thread = msgspec.structs.replace(
            thread, metadata={**metadata, "graph_id": graph_id, "assistant_id": assistant_id}
        )
    return thread


async def _create(st: ServerState, payload: RunCreate, thread_id: str | None,
                  subscribe: bool = False) -> Any:
    """A run on a thread, or a stateless one (`thread_id` None) on a temporary thread.

    With `subscribe`, returns (run, subscription) taken before the run can start.
    """
    _check(payload)
    assistant = st.assistant(payload.assistant_id)
    stamp = now()
    keep = thread_id is None and payload.on_completion == "keep"
    if keep:
        thread_id = new_checkpoint_id()
        payload = msgspec.structs.replace(payload, if_not_exists="create")
    run = Run(
        run_id=new_checkpoint_id(),
        thread_id=thread_id or new_checkpoint_id(),
        assistant_id=assistant.assistant_id,
        created_at=stamp,
        updated_at=stamp,
        metadata=payload.metadata or {},
        status="pending",
        kwargs=_kwargs(payload),
        multitask_strategy=payload.multitask_strategy,
    )
    thread = None
    if thread_id is not None:
        thread = await _thread_for(st, thread_id, payload, assistant.graph_id,
                                   assistant.assistant_id)
    return await st.queue.create(run, thread, subscribe=subscribe)


def _locations(run: Run, stateless: bool) -> dict[str, str]:
    if stateless:
        return {"Content-Location": f"/runs/{run.run_id}"}
    return {"Content-Location": f"/threads/{run.thread_id}/runs/{run.run_id}"}


def _wait_body(outcome: Outcome | None, fallback: Any) -> Any:
    if outcome is None:
        return fallback
    if outcome.status in ("error", "timeout"):
        return {"__error__": outcome.error}
    values = outcome.values
    if outcome.interrupts:
        values = {**(values or {}), "__interrupt__": to_jsonable(outcome.interrupts)}
    return values


def _events(st: ServerState, run: Run, subscription: Any, resumable: bool
            ) -> AsyncIterator[tuple[str, bytes, int | None]]:
    async def generate() -> AsyncIterator[tuple[str, bytes, int | None]]:
        attempt = st.queue.attempt(run.run_id)
        yield "metadata", dumps({"run_id": run.run_id, "attempt": attempt}), None
        async for event_id, name, data in subscription:
            yield name, data, event_id if resumable else None

    return generate()


def _stream(request: Request, st: ServerState, run: Run, subscription: Any, *,
            headers: dict[str, str], on_disconnect: str) -> Response:
    resumable = bool(run.kwargs.get("stream_resumable"))

    async def on_close() -> None:
        subscription.close()
        if on_disconnect == "cancel" and st.queue.outcome(run.run_id) is None:
            await st.queue.cancel(run.run_id, "interrupt")

    return sse_response(request, _events(st, run, subscription, resumable), headers=headers,
                        on_close=on_close)


async def _create_and_attach(st: ServerState, payload: RunCreate, thread_id: str | None
                             ) -> tuple[Run, Any]:
    """Queue a run with a subscription taken before it can publish anything."""
    return await _create(st, payload, thread_id, subscribe=True)


# -- thread runs ----------------------------------------------------------------------------------


async def create_thread_run(request: Request) -> Response:
    thread_id = path_uuid(request, "thread_id", "thread")
    st = server(request)
    run = await _create(st, await body(request, RunCreate), thread_id)
    return json_response(run, headers=_locations(run, False))


async def stream_thread_run(request: Request) -> Response:
    thread_id = path_uuid(request, "thread_id", "thread")
    st = server(request)
    payload = await body(request, RunCreate)
    run, subscription = await _create_and_attach(st, payload, thread_id)
    headers = {
        "Location": f"/threads/{thread_id}/runs/{run.run_id}/stream",
        "Content-Location": f"/threads/{thread_id}/runs/{run.run_id}",
    }
    return _stream(request, st, run, subscription, headers=headers,
                   on_disconnect=payload.on_disconnect)


async def wait_thread_run(request: Request) -> Response:
    thread_id = path_uuid(request, "thread_id", "thread")
    st = server(request)
    run = await _create(st, await body(request, RunCreate), thread_id)
    outcome = await st.queue.wait(run.run_id)
    return json_response(_wait_body(outcome, None), headers=_locations(run, False))


def _run_of(st: ServerState, thread_id: str, run_id: str) -> Run:
    run = st.records.runs.get(run_id)
    if run is None or run.thread_id != thread_id:
        raise NotFound(f"Run {run_id} not found")
    return run


async def list_thread_runs(request: Request) -> Response:
    thread_id = path_uuid(request, "thread_id", "thread")
    st = server(request)
    if thread_id not in st.records.threads:
        raise NotFound(f"Thread {thread_id} not found")
    limit = query_int(request, "limit", 10)
    offset = query_int(request, "offset", 0)
    status = request.query_params.get("status")
    runs = sorted(st.records.runs_of(thread_id, status), key=lambda r: r.created_at, reverse=True)
    return json_response(runs[offset : offset + limit])


async def get_thread_run(request: Request) -> Response:
    st = server(request)
    thread_id = path_uuid(request, "thread_id", "thread")
    run_id = path_uuid(request, "run_id", "run")
    return json_response(_run_of(st, thread_id, run_id))


async def delete_thread_run(request: Request) -> Response:
    st = server(request)
    thread_id = path_uuid(request, "thread_id", "thread")
    run = _run_of(st, thread_id, path_uuid(request, "run_id", "run"))
    if run.status in ("pending", "running"):
        raise Conflict("Cannot delete a run that is pending or running; cancel it first")
    await st.records.delete_run(run.run_id)
    return Response(status_code=204)


async def join_thread_run(request: Request) -> Response:
    st = server(request)
    thread_id = path_uuid(request, "thread_id", "thread")
    run = _run_of(st, thread_id, path_uuid(request, "run_id", "run"))
    outcome = await st.queue.wait(run.run_id)
    thread = st.records.threads.get(thread_id)
    fallback = thread.values if thread is not None else None
    return json_response(_wait_body(outcome, fallback))


async def join_thread_run_stream(request: Request) -> Response:
    st = server(request)
    thread_id = path_uuid(request, "thread_id", "thread")
    run = _run_of(st, thread_id, path_uuid(request, "run_id", "run"))
    return _join_stream(request, st, run)


def _join_stream(request: Request, st: ServerState, run: Run) -> Response:
    last = request.headers.get("last-event-id")
    last_id = int(last) if last is not None and last.lstrip("-").isdigit() else None
    subscription = st.broker.attach(run.run_id, last_event_id=last_id)
    on_disconnect = request.query_params.get("cancel_on_disconnect") in ("true", "1")
    return _stream(request, st, run, subscription, headers={},
                   on_disconnect="cancel" if on_disconnect else "continue")


async def cancel_thread_run(request: Request) -> Response:
    st = server(request)
    thread_id = path_uuid(request, "thread_id", "thread")
    run = _run_of(st, thread_id, path_uuid(request, "run_id", "run"))
    action = request.query_params.get("action", "interrupt")
    if action not in ("interrupt", "rollback"):
        raise BadRequest("action must be 'interrupt' or 'rollback'")
    await st.queue.cancel(run.run_id, action)
    if request.query_params.get("wait") in ("1", "true"):
        await st.queue.wait(run.run_id)
        return Response(status_code=204)
    return Response(status_code=202)


# -- stateless runs -------------------------------------------------------------------------------


async def create_stateless_run(request: Request) -> Response:
    st = server(request)
    run = await _create(st, await body(request, RunCreate), None)
    return json_response(run, headers=_locations(run, True))


async def stream_stateless_run(request: Request) -> Response:
    st = server(request)
    payload = await body(request, RunCreate)
    run, subscription = await _create_and_attach(st, payload, None)
    return _stream(request, st, run, subscription, headers=_locations(run, True),
                   on_disconnect=payload.on_disconnect)


async def wait_stateless_run(request: Request) -> Response:
    st = server(request)
    run = await _create(st, await body(request, RunCreate), None)
    outcome = await st.queue.wait(run.run_id)
    return json_response(_wait_body(outcome, None), headers=_locations(run, True))


async def batch_stateless_runs(request: Request) -> Response:
    st = server(request)
    payloads = await body(request, list[RunCreate])
    runs = [await _create(st, payload, None) for payload in payloads]
    return json_response(runs)


async def cancel_runs(request: Request) -> Response:
    st = server(request)
    spec = await body(request, _CancelMany)
    action = request.query_params.get("action", "interrupt")
    run_ids = list(spec.run_ids or [])
    if spec.thread_id is not None:
        wanted = ("pending", "running") if spec.status in (None, "all") else (spec.status,)
        run_ids += [r.run_id for r in st.records.runs_of(spec.thread_id) if r.status in wanted]
    for run_id in run_ids:
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
