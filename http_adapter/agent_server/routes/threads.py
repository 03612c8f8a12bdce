"""Threads (SPEC §3): CRUD, search, count, copy, prune, state and history."""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from checkpoints.base import new_checkpoint_id
from engine import Command, StateSnapshot

from ..encode import interrupts_json, to_jsonable
from ..errors import Conflict, NotFound
from ..records import now, page, sort_records
from ..schemas import Thread, ThreadCreate, ThreadPatch, ThreadSearch, ThreadStateUpdate
from ..state import ServerState
from ._common import body, json_response, paginated, path_uuid, query_int, server

__all__ = ["routes", "state_json"]


class _HistoryQuery(msgspec.Struct, kw_only=True):
    limit: int = 10
    before: dict[str, Any] | str | None = None
    metadata: dict[str, Any] | None = None
    checkpoint: dict[str, Any] | None = None


class _CheckpointQuery(msgspec.Struct, kw_only=True):
    checkpoint: dict[str, Any] = {}
    subgraphs: bool = False


class _Prune(msgspec.Struct, kw_only=True):
    thread_ids: list[str]
    strategy: str = "delete"
    keep_last: int = 1


def _thread(st: ServerState, thread_id: str) -> Thread:
    thread = st.records.threads.get(thread_id)
    if thread is None:
        raise NotFound(f"Thread {thread_id} not found")
    return thread


# -- records ---------------------------------------------------------------------------------------


async def create_thread(request: Request) -> Response:
    st = server(request)
    spec = await body(request, ThreadCreate, default=True)
    thread_id = spec.thread_id or new_checkpoint_id()
    existing = st.records.threads.get(thread_id)
    if existing is not None:
        if spec.if_exists == "do_nothing":
            return json_response(existing)
        raise Conflict(f"Thread {thread_id} already exists")
    stamp = now()
    thread = Thread(thread_id=thread_id, created_at=stamp, updated_at=stamp,
                    state_updated_at=stamp, metadata=spec.metadata or {}, status="idle")
    await st.records.put_thread(thread)
    return json_response(thread)


async def get_thread(request: Request) -> Response:
    st = server(request)
    return json_response(_thread(st, path_uuid(request, "thread_id", "thread")))


async def patch_thread(request: Request) -> Response:
    st = server(request)
    thread = _thread(st, path_uuid(request, "thread_id", "thread"))
    spec = await body(request, ThreadPatch, default=True)
    metadata = {**(thread.metadata or {}), **(spec.metadata or {})}
    updated = msgspec.structs.replace(thread, metadata=metadata, updated_at=now())
    await st.records.put_thread(updated)
    return json_response(updated)


async def delete_thread(request: Request) -> Response:
    st = server(request)
    thread = _thread(st, path_uuid(request, "thread_id", "thread"))
    for run in st.records.runs_of(thread.thread_id):
        if run.status in ("pending", "running"):
            await st.queue.cancel(run.run_id, "interrupt")
    await st.saver.adelete_thread(thread.thread_id)
    await st.records.delete_thread(thread.thread_id)
    return Response(status_code=204)


async def search_threads(request: Request) -> Response:
    st = server(request)
    spec = await body(request, ThreadSearch, default=True)
    found = st.records.search_threads(metadata=spec.metadata, values=spec.values,
                                      status=spec.status, ids=spec.ids)
    found = sort_records(found, spec.sort_by, spec.sort_order, "created_at")
    return paginated(page(found, spec.limit, spec.offset), len(found), spec.offset, spec.limit,
                     spec.select)


async def count_threads(request: Request) -> Response:
    st = server(request)
    spec = await body(request, ThreadSearch, default=True)
    found = st.records.search_threads(metadata=spec.metadata, values=spec.values,
                                      status=spec.status, ids=spec.ids)
    return json_response(len(found))


async def copy_thread(request: Request) -> Response:
    st = server(request)
    source = _thread(st, path_uuid(request, "thread_id", "thread"))
    stamp = now()
    copy = msgspec.structs.replace(source, thread_id=new_checkpoint_id(), created_at=stamp,
                                   updated_at=stamp)
    await st.saver.acopy_thread(source.thread_id, copy.thread_id)
    await st.records.put_thread(copy)
    return json_response(copy)


async def prune_threads(request: Request) -> Response:
    st = server(request)
    spec = await body(request, _Prune)
    if spec.strategy == "delete":
        for thread_id in spec.thread_ids:
            if thread_id in st.records.threads:
                await st.saver.adelete_thread(thread_id)
                await st.records.delete_thread(thread_id)
    else:
        await st.saver.aprune(spec.thread_ids, strategy="keep_latest", keep_last=spec.keep_last)
    return json_response({"pruned_count": len(spec.thread_ids)})


# -- state ------------------------------------------------------------------------------------------


def _checkpoint_json(config: dict[str, Any] | None) -> dict[str, Any] | None:
    if not config:
        return None
    conf = config["configurable"]
    out = {"thread_id": conf.get("thread_id"), "checkpoint_ns": conf.get("checkpoint_ns", ""),
           "checkpoint_id": conf.get("checkpoint_id")}
    if conf.get("checkpoint_map"):
        out["checkpoint_map"] = conf["checkpoint_map"]
    return out


def state_json(snapshot: StateSnapshot) -> dict[str, Any]:
    """A `StateSnapshot` in the wire's ThreadState shape (SPEC §3)."""
    checkpoint = _checkpoint_json(snapshot.config)
    parent = _checkpoint_json(snapshot.parent_config)
    tasks = []
    for task in snapshot.tasks:
        state = task.state
        if isinstance(state, StateSnapshot):
            state = state_json(state)
        elif isinstance(state, dict) and "configurable" in state:
            state = {"configurable": state["configurable"]}
        tasks.append({
            "id": task.id, "name": task.name, "path": list(task.path),
            "error": task.error if task.error is None else str(task.error),
            "interrupts": interrupts_json(task.interrupts),
            "checkpoint": (state or {}).get("configurable") if isinstance(state, dict)
            and "configurable" in state else None,
            "state": state if not (isinstance(state, dict) and "configurable" in state) else None,
            "result": to_jsonable(task.result),
        })
    return {
        "values": to_jsonable(snapshot.values),
        "next": list(snapshot.next),
        "tasks": tasks,
        "metadata": snapshot.metadata,
        "created_at": snapshot.created_at,
        "checkpoint": checkpoint,
        "parent_checkpoint": parent,
        "interrupts": interrupts_json(snapshot.interrupts),
        "checkpoint_id": checkpoint["checkpoint_id"] if checkpoint else None,
        "parent_checkpoint_id": parent["checkpoint_id"] if parent else None,
    }


async def _graph_of(st: ServerState, thread: Thread) -> Any:
    graph_id = (thread.metadata or {}).get("graph_id")
    if graph_id is None or graph_id not in st.settings.graphs:
        return None
    return await st.graph(graph_id)


def _empty_state(thread: Thread) -> dict[str, Any]:
    return {"values": {}, "next": [], "tasks": [], "metadata": None, "created_at": None,
            "checkpoint": None, "parent_checkpoint": None, "interrupts": [],
            "checkpoint_id": None, "parent_checkpoint_id": None}


def _config(thread_id: str, checkpoint: dict[str, Any] | None = None) -> dict[str, Any]:
    conf = {"thread_id": thread_id, "checkpoint_ns": ""}
    for key, value in (checkpoint or {}).items():
        if value is not None and key in ("checkpoint_id", "checkpoint_ns", "checkpoint_map"):
            conf[key] = value
    return {"configurable": conf}


async def _state(request: Request, checkpoint: dict[str, Any] | None, subgraphs: bool) -> Response:
    st = server(request)
    thread = _thread(st, path_uuid(request, "thread_id", "thread"))
    graph = await _graph_of(st, thread)
    if graph is None:
        return json_response(_empty_state(thread))
    snapshot = await graph.aget_state(_config(thread.thread_id, checkpoint), subgraphs=subgraphs)
    if snapshot.created_at is None:
        return json_response(_empty_state(thread))
    return json_response(state_json(snapshot))


async def get_state(request: Request) -> Response:
    subgraphs = request.query_params.get("subgraphs") in ("true", "1")
    return await _state(request, None, subgraphs)


async def get_state_at(request: Request) -> Response:
    checkpoint_id = request.path_params["checkpoint_id"]
    subgraphs = request.query_params.get("subgraphs") in ("true", "1")
    return await _state(request, {"checkpoint_id": checkpoint_id}, subgraphs)


async def post_state_checkpoint(request: Request) -> Response:
    spec = await body(request, _CheckpointQuery, default=True)
    return await _state(request, spec.checkpoint, spec.subgraphs)


async def update_state(request: Request) -> Response:
    st = server(request)
    thread = _thread(st, path_uuid(request, "thread_id", "thread"))
    spec = await body(request, ThreadStateUpdate, default=True)
    graph = await _graph_of(st, thread)
    if graph is None:
        raise Conflict(f"Thread {thread.thread_id} has no graph yet: run it once first")
    checkpoint = dict(spec.checkpoint or {})
    if spec.checkpoint_id:
        checkpoint["checkpoint_id"] = spec.checkpoint_id
    values = spec.values
    if isinstance(values, dict) and set(values) <= {"update", "goto", "resume"} and values:
        values = Command(**values)
    config = await graph.aupdate_state(_config(thread.thread_id, checkpoint), values, spec.as_node)
    snapshot = await graph.aget_state({"configurable": {"thread_id": thread.thread_id}})
    stamp = now()
    status = "interrupted" if snapshot.next else "idle"
    if thread.status == "busy":
        status = "busy"
    await st.records.put_thread(msgspec.structs.replace(
        thread, values=to_jsonable(snapshot.values), status=status, updated_at=stamp,
        state_updated_at=stamp,
    ))
    return json_response({"checkpoint": _checkpoint_json(config)})


async def _history(request: Request, spec: _HistoryQuery) -> Response:
    st = server(request)
    thread = _thread(st, path_uuid(request, "thread_id", "thread"))
    graph = await _graph_of(st, thread)
    if graph is None:
        return json_response([])
    before = spec.before
    if isinstance(before, str):
        before = {"checkpoint_id": before}
    before_config = _config(thread.thread_id, before) if before else None
    states = [
        state_json(s) async for s in graph.aget_state_history(
            _config(thread.thread_id, spec.checkpoint), filter=spec.metadata,
            before=before_config, limit=spec.limit,
        )
    ]
    return json_response(states)


async def get_history(request: Request) -> Response:
    spec = _HistoryQuery(limit=query_int(request, "limit", 10),
                         before=request.query_params.get("before"))
    return await _history(request, spec)


async def post_history(request: Request) -> Response:
    return await _history(request, await body(request, _HistoryQuery, default=True))


routes = [
    Route("/threads", create_thread, methods=["POST"]),
    Route("/threads/search", search_threads, methods=["POST"]),
    Route("/threads/count", count_threads, methods=["POST"]),
    Route("/threads/prune", prune_threads, methods=["POST"]),
    Route("/threads/{thread_id}", get_thread, methods=["GET"]),
    Route("/threads/{thread_id}", patch_thread, methods=["PATCH"]),
    Route("/threads/{thread_id}", delete_thread, methods=["DELETE"]),
    Route("/threads/{thread_id}/copy", copy_thread, methods=["POST"]),
    Route("/threads/{thread_id}/state", get_state, methods=["GET"]),
    Route("/threads/{thread_id}/state", update_state, methods=["POST"]),
    Route("/threads/{thread_id}/state/checkpoint", post_state_checkpoint, methods=["POST"]),
    Route("/threads/{thread_id}/state/{checkpoint_id}", get_state_at, methods=["GET"]),
    Route("/threads/{thread_id}/history", get_history, methods=["GET"]),
    Route("/threads/{thread_id}/history", post_history, methods=["POST"]),
]
