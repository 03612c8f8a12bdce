"""Threads (SPEC §3): CRUD, search, count, copy, prune, state and history.

Records, status codes and `detail` texts follow what the LangGraph Agent Server
(langgraph-api 0.16.7) answers, see shared_notes/server_facts.md: creates answer 200; a thread
no run has touched has no `error`/`interrupts` keys and `config: {}`; `Thread.interrupts` is a
dict by task id; a copy has no `values` key; ThreadState interrupts are `{"id", "value"}`; the
state at a checkpoint echoes the checkpoint as asked for. Where the real server answers 500
(a `values` search while some thread has no values, `history` with `before` given as a
checkpoint dict, which is what langgraph-sdk sends) we answer what the caller meant.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from checkpoints.base import new_checkpoint_id
from engine import Command, InvalidUpdateError, StateSnapshot

from ..authz import authorize, owned, visible
from ..configurable_headers import picked_headers
from ..encode import dumps
from ..errors import BadRequest, Conflict, NotFound, UnprocessableEntity
from ..records import now, page, sort_records
from ..schemas import Thread, ThreadCreate, ThreadPatch, ThreadSearch, ThreadStateUpdate
from ..saver import copy_thread as copy_checkpoints
from ..state import ServerState
from ..thread_values import by_reference, matching, values_of
from ._common import as_uuid, authorized_record, body, json_response, paginated, server

__all__ = ["routes", "state_json", "thread_json"]

_SORT_FIELDS = ("thread_id", "status", "created_at", "updated_at", "state_updated_at")
_SELECT_FIELDS = ("thread_id", "created_at", "updated_at", "metadata", "config", "context",
                  "status", "values", "interrupts")
_MAX_LIMIT = 1000
_UPDATE_ERRORS = (InvalidUpdateError, ValueError, TypeError, KeyError)


class _HistoryQuery(msgspec.Struct, kw_only=True):
    limit: int = 10
    before: str | dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    checkpoint: dict[str, Any] | None = None
    select: list[str] | None = None


class _CheckpointQuery(msgspec.Struct, kw_only=True):
    checkpoint: dict[str, Any] = {}
    subgraphs: bool = False
    select: list[str] | None = None


class _Prune(msgspec.Struct, kw_only=True):
    thread_ids: list[str]
    strategy: Literal["delete", "keep_latest"] = "delete"
    keep_last: int = 1


class _Update(msgspec.Struct, kw_only=True):
    values: Any = None
    command: dict[str, Any] | None = None
    as_node: str | None = None


class _Superstep(msgspec.Struct, kw_only=True):
    updates: list[_Update]


def _no_graph(thread_id: str) -> str:
    return (
        f"Thread '{thread_id}' has no assigned graph ID. This usually occurs when no runs have "
        "been made on this particular thread. This operation requires a graph ID. Please ensure "
        "a run has been made for the thread or manually update the thread metadata (by setting "
        "the 'graph_id' field) before running this operation."
    )


def _plain(value: Any) -> Any:
    """`value` as plain JSON data, fit to be stored in a record."""
    return msgspec.json.decode(dumps(value))


# -- lookups and checks ------------------------------------------------------------------------------



async def _thread(st: ServerState, request: Request, action: str,
                  missing: str = "Thread with ID {id} not found") -> Thread:
    """The path's thread, authorized for `action` (custom auth): 422 for a non-UUID id, 404
    `missing` (formatted with the id) when it is absent or outside the user's filter."""
    return (await _authorized(st, request, action, missing, {}))[0]


async def _authorized(st: ServerState, request: Request, action: str, missing: str,
                      value: dict[str, Any]) -> tuple[Thread, dict[str, Any] | None]:
    """`_thread` with the handler's `value` (the path's id added) and filter."""
    return await authorized_record(request, "thread", st.records.get_thread, action, missing,
                                   value)


def _check_page(limit: int, offset: int) -> None:
    if limit < 1:
        raise UnprocessableEntity(f"limit: {limit} is less than the minimum of 1")
    if limit > _MAX_LIMIT:
        raise UnprocessableEntity(f"limit: {limit} is greater than the maximum of {_MAX_LIMIT}")
    if offset < 0:
        raise UnprocessableEntity(f"offset: {offset} is less than the minimum of 0")


def _one_of(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise UnprocessableEntity(
            f"{name}: {value!r} is not one of " + ", ".join(repr(a) for a in allowed)
        )


# -- the Thread record on the wire -----------------------------------------------------------------


def _changed(thread: Thread) -> bool:
    """Has a state update or a finished run left a trace on the thread record itself?"""
    return bool(
        thread.state_updated_at != thread.created_at
        or thread.error is not None
        or thread.interrupts
        or thread.config
    )


async def thread_json(st: ServerState, thread: Thread, values: bool = True) -> dict[str, Any]:
    """A Thread as the real server shows it, keys in its order; `values=False` leaves its
    values null (a search page that does not select them need not read them, issue 32)."""
    out: dict[str, Any] = {
        "thread_id": thread.thread_id, "created_at": thread.created_at,
        "updated_at": thread.updated_at, "state_updated_at": thread.state_updated_at,
        "metadata": thread.metadata, "status": thread.status, "config": thread.config,
        "values": await values_of(st, thread) if values else None,
    }
    if thread.copied and thread.values is None and thread.values_checkpoint is None:
        del out["values"]  # as observed (issue 31 item 13)
    changed = _changed(thread)
    # Has a run touched it? Until then (and no trace on the record) the real server's record
    # has no `error`/`interrupts` keys. Asked only when the record cannot tell.
    ran = (not changed or not thread.config) and bool(await st.records.runs_of(thread.thread_id))
    if changed or ran:
        # as observed: `configurable` shows once a run touched it (supersteps alone leave {})
        out["config"] = thread.config or ({"configurable": {}} if ran else {})
        out["error"] = thread.error
        out["interrupts"] = {
            task_id: [
                {"id": i.get("id"), "value": i.get("value")} if isinstance(i, dict) else i
                for i in items
            ]
            for task_id, items in (thread.interrupts or {}).items()
        }
    return out


# -- records ---------------------------------------------------------------------------------------


async def create_thread(request: Request) -> Response:
    st = server(request)
    spec = await body(request, ThreadCreate, default=True)
    thread_id = (
        as_uuid(spec.thread_id, "thread") if spec.thread_id is not None else new_checkpoint_id()
    )
    supersteps = None
    if spec.supersteps:
        try:
            supersteps = msgspec.convert(spec.supersteps, list[_Superstep])
        except msgspec.ValidationError as error:
            raise UnprocessableEntity(f"supersteps: {error}") from None
    value: dict[str, Any] = {"thread_id": thread_id, "metadata": dict(spec.metadata or {}),
                             "if_exists": spec.if_exists}
    filters = await authorize(request, "threads", "create", value)
    existing = await st.records.get_thread(thread_id)
    if existing is not None:
        if not visible(existing.metadata, filters):  # another user's: as GET answers (issue 26)
            raise NotFound(f"Thread with ID {thread_id} not found")
        if spec.if_exists == "do_nothing":
            return json_response(await thread_json(st, existing))
        raise Conflict(f"Thread with ID {thread_id} already exists")
    stamp = now()
    thread = Thread(thread_id=thread_id, created_at=stamp, updated_at=stamp,
                    state_updated_at=stamp, metadata=owned(value["metadata"], filters),
                    status="idle")
    await st.records.put_thread(thread)
    if supersteps:
        problem = await _apply_supersteps(st, thread, supersteps)
        if problem is not None:  # the real server keeps the thread and answers 201
            return json_response({"detail": f"Thread {thread_id} was created, but there were "
                                            f"problems updating the state: {problem}"},
                                 status=201)
        thread = await st.records.get_thread(thread_id) or thread
    return json_response(await thread_json(st, thread))


async def _apply_supersteps(st: ServerState, thread: Thread, supersteps: list[_Superstep]
                            ) -> str | None:
    """Apply each superstep's updates in order (one `update_state` per update); the problem
    that stopped it, or None."""
    graph = await _graph_of(st, thread)
    if graph is None:
        return _no_graph(thread.thread_id)
    config = _update_config(thread)
    try:
        for step in supersteps:
            for update in step.updates:
                value = Command(**update.command) if update.command else update.values
                config = await graph.aupdate_state(config, value, update.as_node)
    except _UPDATE_ERRORS as error:
        return str(error)
    finally:
        await _refresh(st, thread.thread_id, graph)
    return None


async def get_thread(request: Request) -> Response:
    st = server(request)
    return json_response(await thread_json(st, await _thread(st, request, "read")))


async def patch_thread(request: Request) -> Response:
    st = server(request)
    if await st.records.get_thread(as_uuid(request.path_params["thread_id"], "thread")) is None:
        raise NotFound("Not Found")  # before the body is read, as without custom auth
    spec = await body(request, ThreadPatch, default=True)
    value: dict[str, Any] = {"metadata": dict(spec.metadata or {})}
    thread, filters = await _authorized(st, request, "update", "Not Found", value)
    metadata = {**(thread.metadata or {}), **owned(value["metadata"], filters)}
    updated = msgspec.structs.replace(thread, metadata=metadata, updated_at=now())
    await st.records.put_thread(updated)
    return json_response(await thread_json(st, updated))


async def _delete(st: ServerState, thread_id: str) -> None:
    for run in await st.records.runs_of(thread_id):
        if run.status in ("pending", "running"):
            await st.queue.cancel(run.run_id, "delete")  # its end must not revive the thread
    await st.saver.adelete_thread(thread_id)
    await st.records.delete_thread(thread_id)


async def delete_thread(request: Request) -> Response:
    st = server(request)
    thread = await _thread(st, request, "delete")
    await _delete(st, thread.thread_id)
    return Response(status_code=204)


async def _search(request: Request, st: ServerState, spec: ThreadSearch) -> list[Thread]:
    """The threads `spec` asks for that the user may see (custom auth's search filter; the
    handler may also change the query's `metadata`)."""
    value: dict[str, Any] = {"metadata": dict(spec.metadata or {}), "values": spec.values,
             "status": spec.status, "limit": spec.limit, "offset": spec.offset, "ids": spec.ids}
    filters = await authorize(request, "threads", "search", value)
    ids = [as_uuid(i, "thread") for i in spec.ids] if spec.ids is not None else None
    found = await st.records.search_threads(metadata=value["metadata"] or None,
                                            status=spec.status, ids=ids)
    if filters:
        found = [t for t in found if visible(t.metadata, filters)]
    return await matching(st, found, spec.values)  # values are read, not stored (issue 32)


async def search_threads(request: Request) -> Response:
    st = server(request)
    spec = await body(request, ThreadSearch, default=True)
    _check_page(spec.limit, spec.offset)
    if spec.sort_by is not None:
        _one_of("sort_by", spec.sort_by, _SORT_FIELDS)
    for field in spec.select or ():
        _one_of("select", field, _SELECT_FIELDS)
    found = sort_records(await _search(request, st, spec), spec.sort_by, spec.sort_order,
                         "created_at")
    shown = not spec.select or "values" in spec.select
    items = [await thread_json(st, t, shown) for t in page(found, spec.limit, spec.offset)]
    return paginated(items, len(found), spec.offset, spec.limit, spec.select)


async def count_threads(request: Request) -> Response:
    st = server(request)
    spec = await body(request, ThreadSearch, default=True)
    return json_response(len(await _search(request, st, spec)))


async def copy_thread(request: Request) -> Response:
    """A new idle thread with the source's metadata and checkpoints. As on the real server the
    copy's record starts like a fresh one (`config: {}`) and the answer has no `values`."""
    st = server(request)
    source_id = as_uuid(request.path_params["thread_id"], "thread")
    readable = await authorize(request, "threads", "read", {"thread_id": source_id})
    source = await st.records.get_thread(source_id)
    if source is None or not visible(source.metadata, readable):
        raise Conflict("Conflict")
    value: dict[str, Any] = {"thread_id": new_checkpoint_id(),
                             "metadata": dict(source.metadata or {})}
    filters = await authorize(request, "threads", "create", value)  # the copier owns the copy
    stamp = now()
    copy = Thread(thread_id=value["thread_id"], created_at=stamp, updated_at=stamp,
                  state_updated_at=stamp, metadata=owned(value["metadata"], filters),
                  status="idle", copied=True)
    await copy_checkpoints(st.saver, source.thread_id, copy.thread_id)
    await st.records.put_thread(copy)
    out = await thread_json(st, copy)
    out.pop("values", None)
    return json_response(out)


async def prune_threads(request: Request) -> Response:
    st = server(request)
    spec = await body(request, _Prune)
    ids = list(dict.fromkeys(as_uuid(i, "thread") for i in spec.thread_ids))
    found = []
    for thread_id in ids:  # a thread outside the user's filter is as absent
        filters = await authorize(request, "threads", "delete", {"thread_id": thread_id})
        thread = await st.records.get_thread(thread_id)
        if thread is not None and visible(thread.metadata, filters):
            found.append(thread_id)
    if spec.strategy == "delete":
        for thread_id in found:
            await _delete(st, thread_id)
    elif found:
        await st.saver.aprune(found, strategy="keep_latest", keep_last=max(spec.keep_last, 1))
    return json_response({"pruned_count": len(found)})


# -- state ------------------------------------------------------------------------------------------


def _checkpoint_json(config: dict[str, Any] | None) -> dict[str, Any] | None:
    if not config:
        return None
    conf = config.get("configurable") or {}
    out = {"checkpoint_id": conf.get("checkpoint_id"), "thread_id": conf.get("thread_id"),
           "checkpoint_ns": conf.get("checkpoint_ns", "")}
    if conf.get("checkpoint_map"):
        out["checkpoint_map"] = conf["checkpoint_map"]
    return out


def _interrupts(interrupts: Any) -> list[dict[str, Any]]:
    return [{"id": i.id, "value": i.value} for i in interrupts]


def _task_error(error: Any) -> str | None:
    if error is None:
        return None
    return repr(error) if isinstance(error, BaseException) else str(error)


def state_json(snapshot: StateSnapshot, checkpoint: dict[str, Any] | None = None
               ) -> dict[str, Any]:
    """A `StateSnapshot` in the wire's ThreadState shape (SPEC §3); `checkpoint` replaces the
    snapshot's own checkpoint object (the real server echoes the one asked for)."""
    own = _checkpoint_json(snapshot.config)
    parent = _checkpoint_json(snapshot.parent_config)
    tasks = []
    for task in snapshot.tasks:
        state = task.state
        sub_checkpoint = None
        if isinstance(state, StateSnapshot):
            state = state_json(state)
        elif isinstance(state, dict) and "configurable" in state:
            sub_checkpoint, state = dict(state["configurable"]), None
        tasks.append({
            "id": task.id, "name": task.name, "path": list(task.path),
            "error": _task_error(task.error), "interrupts": _interrupts(task.interrupts),
            "checkpoint": sub_checkpoint, "state": state, "result": task.result,
        })
    return {
        "values": snapshot.values,
        "next": list(snapshot.next),
        "tasks": tasks,
        "metadata": snapshot.metadata,
        "created_at": snapshot.created_at,
        "checkpoint": checkpoint if checkpoint is not None else own,
        "parent_checkpoint": parent,
        "interrupts": _interrupts(snapshot.interrupts),
        "checkpoint_id": own["checkpoint_id"] if own else None,
        "parent_checkpoint_id": parent["checkpoint_id"] if parent else None,
    }


def _empty_state(checkpoint: dict[str, Any] | None = None) -> dict[str, Any]:
    """A thread without checkpoints (or an unknown checkpoint of it): the real server's shape."""
    return {"values": {}, "next": [], "tasks": [], "metadata": None, "created_at": None,
            "checkpoint": checkpoint, "parent_checkpoint": None, "interrupts": [],
            "checkpoint_id": (checkpoint or {}).get("checkpoint_id"),
            "parent_checkpoint_id": None}


def _select(state: dict[str, Any], select: list[str] | None) -> dict[str, Any]:
    """Only the `select`ed ThreadState fields; `values.<key>` keeps one key of the values."""
    if not select:
        return state
    keys = [s.partition(".")[2] for s in select if s.startswith("values.")]
    out = {k: v for k, v in state.items() if k in select}
    if keys and "values" not in select:
        values = state.get("values") or {}
        out["values"] = {k: values[k] for k in keys if isinstance(values, dict) and k in values}
    return out


async def _graph_of(st: ServerState, thread: Thread) -> Any:
    graph_id = (thread.metadata or {}).get("graph_id")
    if graph_id is None or graph_id not in st.settings.graphs:
        return None
    return await st.graph(graph_id)


def _config(thread_id: str, checkpoint: dict[str, Any] | None = None) -> dict[str, Any]:
    conf: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ""}
    for key, value in (checkpoint or {}).items():
        if value is not None and key in ("checkpoint_id", "checkpoint_ns", "checkpoint_map"):
            conf[key] = value
    return {"configurable": conf}


def _update_config(thread: Thread, checkpoint: dict[str, Any] | None = None) -> dict[str, Any]:
    """An update's config: its checkpoint's metadata names the thread and its graph, as the
    reference server's do (issue 18)."""
    config = _config(thread.thread_id, checkpoint)
    metadata = {"thread_id": thread.thread_id}
    if (thread.metadata or {}).get("graph_id"):
        metadata["graph_id"] = thread.metadata["graph_id"]
    return {**config, "metadata": metadata}


async def _state(request: Request, asked: dict[str, Any] | None, subgraphs: bool,
                 select: list[str] | None = None) -> Response:
    """The thread's state, at the checkpoint `asked` for when given (echoed back as the
    state's `checkpoint`, as the real server does)."""
    st = server(request)
    thread = await _thread(st, request, "read")
    echo = None
    if asked and asked.get("checkpoint_id"):
        echo = {"checkpoint_id": asked["checkpoint_id"], "thread_id": thread.thread_id}
        for key in ("checkpoint_ns", "checkpoint_map"):
            if key in asked:
                echo[key] = asked[key]
    graph = await _graph_of(st, thread)
    if graph is None:
        return json_response(_select(_empty_state(echo), select))
    snapshot = await graph.aget_state(_config(thread.thread_id, asked), subgraphs=subgraphs)
    if snapshot.created_at is None:
        return json_response(_select(_empty_state(echo), select))
    return json_response(_select(state_json(snapshot, echo), select))


def _flag(request: Request, name: str) -> bool:
    return request.query_params.get(name, "false").lower() in ("true", "1", "yes")


async def get_state(request: Request) -> Response:
    select = request.query_params.getlist("select") or None
    return await _state(request, None, _flag(request, "subgraphs"), select)


async def get_state_at(request: Request) -> Response:
    select = request.query_params.getlist("select") or None
    asked = {"checkpoint_id": request.path_params["checkpoint_id"]}
    return await _state(request, asked, _flag(request, "subgraphs"), select)


async def post_state_checkpoint(request: Request) -> Response:
    spec = await body(request, _CheckpointQuery, default=True)
    return await _state(request, spec.checkpoint, spec.subgraphs, spec.select)


async def _refresh(st: ServerState, thread_id: str, graph: Any) -> None:
    """After a state update: the thread record's values, interrupts and status follow the
    latest checkpoint (a busy or errored thread keeps its status)."""
    thread = await st.records.get_thread(thread_id)
    if thread is None:
        return
    snapshot = await graph.aget_state(_config(thread_id))
    interrupts = {
        t.id: [{"id": i.id, "value": _plain(i.value)} for i in t.interrupts]
        for t in snapshot.tasks if t.interrupts
    }
    status = thread.status
    if status not in ("busy", "error"):
        status = "interrupted" if snapshot.next or interrupts else "idle"
    stamp = now()
    held_at = snapshot.config["configurable"]["checkpoint_id"] if snapshot.metadata else None
    values = None if held_at else _plain(snapshot.values)  # issue 32: named, not copied
    await st.records.put_thread(by_reference(
        thread, values, held_at, interrupts=interrupts, status=status, updated_at=stamp,
        state_updated_at=stamp,
    ))


def _command_shaped(values: Any, graph: Any) -> bool:
    """`{"update"|"goto"|"resume": ...}` meant as a Command (unless those are state keys)."""
    keys = {"update", "goto", "resume"}
    if not isinstance(values, dict) or not values or not set(values) <= keys:
        return False
    fields = getattr(graph.builder, "fields", {})
    return not (set(values) & set(fields))


async def update_state(request: Request) -> Response:
    st = server(request)
    thread = await _thread(st, request, "update")
    spec = await body(request, ThreadStateUpdate)
    graph = await _graph_of(st, thread)
    if graph is None:
        raise BadRequest(_no_graph(thread.thread_id))
    checkpoint = dict(spec.checkpoint or {})
    if spec.checkpoint_id:
        checkpoint["checkpoint_id"] = spec.checkpoint_id
    values = spec.values
    if _command_shaped(values, graph):
        values = Command(**values)
    try:
        config = _update_config(thread, checkpoint)
        # http.configurable_headers reach the update's configurable, as in langgraph-api
        config["configurable"] = {**picked_headers(request), **config["configurable"]}
        config = await graph.aupdate_state(config, values, spec.as_node)
    except _UPDATE_ERRORS as error:
        raise BadRequest(str(error)) from None
    await _refresh(st, thread.thread_id, graph)
    conf = config["configurable"]
    saved = {"thread_id": conf.get("thread_id"), "checkpoint_ns": conf.get("checkpoint_ns", ""),
             "checkpoint_id": conf.get("checkpoint_id")}
    return json_response({"checkpoint": saved, "configurable": dict(saved),
                          "checkpoint_id": saved["checkpoint_id"]})


# -- history ----------------------------------------------------------------------------------------


def _before(thread_id: str, before: Any) -> dict[str, Any] | None:
    """`before` as a checkpoint id, a checkpoint dict (what langgraph-sdk sends) or a config
    `{"configurable": {...}}` (what the real server expects): a saver `before` config."""
    if before is None or before == "" or before == {}:
        return None
    if isinstance(before, str):
        conf: dict[str, Any] = {"checkpoint_id": before}
    elif isinstance(before, dict):
        conf = before.get("configurable", before)
        if not isinstance(conf, dict):
            raise UnprocessableEntity("before: expected a checkpoint or a config")
    else:
        raise UnprocessableEntity("before: expected a checkpoint or a config")
    if not conf.get("checkpoint_id"):
        raise UnprocessableEntity("before: a checkpoint_id is required")
    return {"configurable": {"thread_id": thread_id,
                             "checkpoint_ns": conf.get("checkpoint_ns") or "",
                             "checkpoint_id": conf["checkpoint_id"]}}


async def _history(request: Request, spec: _HistoryQuery) -> Response:
    st = server(request)
    thread = await _thread(st, request, "read")
    if spec.limit < 1:
        raise UnprocessableEntity(f"Invalid limit {spec.limit}")
    before = _before(thread.thread_id, spec.before)
    graph = await _graph_of(st, thread)
    if graph is None:
        return json_response([])
    states = [
        _select(state_json(s), spec.select) async for s in graph.aget_state_history(
            _config(thread.thread_id, spec.checkpoint), filter=spec.metadata or None,
            before=before, limit=spec.limit,
        )
    ]
    return json_response(states)


async def get_history(request: Request) -> Response:
    raw = request.query_params.get("limit", "10")
    try:
        limit = int(raw)
    except ValueError:
        raise UnprocessableEntity(f"Invalid limit {raw}") from None
    spec = _HistoryQuery(limit=limit, before=request.query_params.get("before"),
                         select=request.query_params.getlist("select") or None)
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
