"""Crons (SPEC §3 "Other groups"): create (stateless or on a thread), get, patch, delete,
search, count. The scheduler that fires them is `..crons.CronScheduler`.

Bodies follow what langgraph-sdk's `client.crons` sends: the run fields (input, config,
context, metadata, stream settings, ...) become the cron's `payload`; `schedule`, `timezone`,
`end_time`, `enabled` and `on_run_completed` are the cron's own. A schedule croniter cannot
read, or an unknown timezone, is a 422 with the reason in `detail`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from checkpoints.base import new_checkpoint_id

from ..authz import auth_user, authorize, owned, visible
from ..crons import (
    KIND,
    Cron,
    CronScheduler,
    all_crons,
    cron_of,
    check_timezone,
    iso,
    next_run,
    parse_time,
)
from ..errors import NotFound, UnprocessableEntity
from ..records import matches, now, page, sort_records
from ..schemas import RunCreate
from ..state import ServerState, assistant_id_for
from ._common import body, json_response, paginated, path_uuid, server

__all__ = ["routes"]

OnCompletion = Literal["delete", "keep"]
_RUN_FIELDS = (
    "input", "metadata", "config", "context", "checkpoint_during", "interrupt_before",
    "interrupt_after", "webhook", "multitask_strategy", "stream_mode", "stream_subgraphs",
    "stream_resumable", "durability",
)
_SORT_FIELDS = ("cron_id", "assistant_id", "thread_id", "created_at", "updated_at",
                "next_run_date", "end_time")
_SELECT_FIELDS = ("cron_id", "assistant_id", "thread_id", "end_time", "schedule", "timezone",
                  "created_at", "updated_at", "user_id", "payload", "next_run_date", "metadata",
                  "now", "on_run_completed", "enabled")
_MAX_LIMIT = 1000


class _RunFields(msgspec.Struct, kw_only=True):
    """What a cron's runs are made with (its `payload`); None: not given."""

    input: Any = None
    metadata: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    checkpoint_during: bool | None = None
    interrupt_before: Literal["*"] | list[str] | None = None
    interrupt_after: Literal["*"] | list[str] | None = None
    webhook: str | None = None
    multitask_strategy: Literal["reject", "rollback", "interrupt", "enqueue"] | None = None
    stream_mode: str | list[str] | None = None
    stream_subgraphs: bool | None = None
    stream_resumable: bool | None = None
    durability: Literal["sync", "async", "exit"] | None = None


class CronCreate(_RunFields, kw_only=True):
    assistant_id: str
    schedule: str
    timezone: str | None = None
    end_time: str | None = None
    enabled: bool | None = None
    on_run_completed: OnCompletion | None = None


class CronPatch(_RunFields, kw_only=True):
    schedule: str | None = None
    timezone: str | None = None
    end_time: str | None | msgspec.UnsetType = msgspec.UNSET  # null clears it
    enabled: bool | None = None
    on_run_completed: OnCompletion | None = None


class CronSearch(msgspec.Struct, kw_only=True):
    assistant_id: str | None = None
    thread_id: str | None = None
    enabled: bool | None = None
    metadata: dict[str, Any] | None = None
    limit: int = 10
    offset: int = 0
    sort_by: str | None = None
    sort_order: Literal["asc", "desc"] | None = None
    select: list[str] | None = None


def _scheduler(request: Request) -> CronScheduler:
    return request.app.state.crons  # type: ignore[no-any-return]


def _run_fields(spec: _RunFields) -> dict[str, Any]:
    return {f: v for f in _RUN_FIELDS if (v := getattr(spec, f)) is not None}


def _check_payload(payload: dict[str, Any]) -> None:
    """422/400 now for a payload its runs would be refused with (as a run create would be)."""
    from .runs import _check  # the run endpoints' own checks (stream modes, context)

    _check(msgspec.convert(payload, RunCreate))


def _next_date(cron: Cron, at: datetime) -> str | None:
    """The cron's next run date after `at`; null once past its `end_time`."""
    found = next_run(cron.schedule, cron.timezone, at)
    if cron.end_time is not None and found > datetime.fromisoformat(cron.end_time):
        return None
    return iso(found)


async def _cron(st: ServerState, request: Request, action: str,
                value: dict[str, Any] | None = None) -> tuple[Cron, dict[str, Any] | None]:
    """The path's cron, authorized for `action` (custom auth; `value` is what the handler
    sees besides the id), and the handler's filter: 404 when absent or outside the filter."""
    cron_id = path_uuid(request, "cron_id", "cron")
    value = value if value is not None else {}
    value["cron_id"] = cron_id
    filters = await authorize(request, "crons", action, value)
    found = await cron_of(st.records, cron_id)
    if found is None or not visible(found.metadata, filters):
        raise NotFound(f"Cron {cron_id} not found")
    return found, filters


async def _save(request: Request, cron: Cron) -> Response:
    await server(request).records.put_extra(KIND, cron.cron_id, cron)
    _scheduler(request).wake()
    return json_response(cron)


# -- create ---------------------------------------------------------------------------------------


async def _create(request: Request, thread_id: str | None) -> Response:
    st = server(request)
    spec = await body(request, CronCreate)
    assistant = await st.assistant(spec.assistant_id)
    if thread_id is not None:
        await _runnable(request, st, thread_id, assistant.assistant_id)
    check_timezone(spec.timezone)
    cron_id = new_checkpoint_id()
    payload = _with_cron({"assistant_id": assistant.assistant_id, **_run_fields(spec)}, cron_id)
    payload["schedule"] = spec.schedule
    _check_payload(payload)
    await st.webhooks.admit(payload.get("webhook"))  # 422 for a refused URL (issue 26 §5)
    user = auth_user(request)
    value: dict[str, Any] = {"payload": payload, "schedule": spec.schedule, "cron_id": None,
             "thread_id": thread_id, "user_id": user.identity if user is not None else "",
             "end_time": spec.end_time, "metadata": dict(spec.metadata or {})}
    filters = await authorize(request, "crons", "create", value)
    stamp = now()
    cron = Cron(
        cron_id=cron_id,
        assistant_id=assistant.assistant_id,
        thread_id=thread_id,
        user_id=value["user_id"],
        schedule=spec.schedule,
        timezone=spec.timezone,
        end_time=iso(parse_time(spec.end_time, "end_time")) if spec.end_time else None,
        payload=payload,
        metadata=owned(value["metadata"], filters),
        on_run_completed=(spec.on_run_completed or "delete") if thread_id is None else None,
        enabled=True if spec.enabled is None else spec.enabled,
        created_at=stamp,
        updated_at=stamp,
    )
    cron.next_run_date = _next_date(cron, _scheduler(request).now())
    return await _save(request, cron)


def _with_cron(payload: dict[str, Any], cron_id: str) -> dict[str, Any]:
    """The payload as the reference stores it: its runs' config names the cron (issue 18)."""
    config = dict(payload.get("config") or {})
    config["configurable"] = {**(config.get("configurable") or {}), "cron_id": cron_id}
    return {**payload, "config": config}


async def _runnable(request: Request, st: ServerState, thread_id: str, assistant_id: str
                    ) -> None:
    """404 unless the thread exists and custom auth lets the user run on it (the cron's runs
    go there): the `threads.create_run` handler, its filter applied to the thread."""
    filters = await authorize(request, "threads", "create_run", {
        "thread_id": thread_id, "assistant_id": assistant_id, "metadata": {},
    })
    thread = await st.records.get_thread(thread_id)
    if thread is None or not visible(thread.metadata, filters):
        raise NotFound(f"Thread with ID '{thread_id}' not found. Please verify the ID is correct "
                       "and the thread hasn't been deleted or expired.")


async def create_cron(request: Request) -> Response:
    return await _create(request, None)


async def create_thread_cron(request: Request) -> Response:
    return await _create(request, path_uuid(request, "thread_id", "thread"))


# -- one cron -------------------------------------------------------------------------------------


async def get_cron(request: Request) -> Response:
    return json_response((await _cron(server(request), request, "read"))[0])


async def delete_cron(request: Request) -> Response:
    st = server(request)
    try:
        cron, _ = await _cron(st, request, "delete")
    except NotFound:  # as observed: the bare message of a missing route
        raise NotFound("Not Found") from None
    await st.records.delete_extra(KIND, cron.cron_id)
    _scheduler(request).wake()
    return Response(status_code=204)


async def patch_cron(request: Request) -> Response:
    st = server(request)
    cron_id = path_uuid(request, "cron_id", "cron")
    if await cron_of(st.records, cron_id) is None:  # 404 before the body is read
        raise NotFound(f"Cron '{cron_id}' not found")
    spec = await body(request, CronPatch, default=True)
    check_timezone(spec.timezone)
    fields = _run_fields(spec)
    value: dict[str, Any] = {"payload": fields, "schedule": spec.schedule,
             "metadata": dict(spec.metadata) if spec.metadata is not None else {}}
    cron, filters = await _cron(st, request, "update", value)
    payload = {**cron.payload, **fields}
    for field in ("schedule", "enabled"):  # as observed: the payload keeps what a patch set
        if getattr(spec, field) is not None:
            payload[field] = getattr(spec, field)
    _check_payload(payload)
    await st.webhooks.admit(payload.get("webhook"))
    changes: dict[str, Any] = {"payload": payload, "updated_at": now()}
    if spec.metadata is not None:  # replaces it, keeping the user's ownership
        changes["metadata"] = owned(value["metadata"], filters)
    elif value["metadata"]:  # only the handler added some
        changes["metadata"] = {**cron.metadata, **value["metadata"]}
    for field in ("schedule", "timezone", "enabled"):
        if getattr(spec, field) is not None:
            changes[field] = getattr(spec, field)
    if spec.end_time is not msgspec.UNSET:
        changes["end_time"] = iso(parse_time(spec.end_time, "end_time")) if spec.end_time else None
    if spec.on_run_completed is not None and cron.thread_id is None:
        changes["on_run_completed"] = spec.on_run_completed
    updated = msgspec.structs.replace(cron, **changes)
    if {"schedule", "timezone", "enabled", "end_time"} & changes.keys():
        # A new timetable starts from now: a re-enabled cron does not fire for the past.
        updated.next_run_date = _next_date(updated, _scheduler(request).now())
    return await _save(request, updated)


# -- search ---------------------------------------------------------------------------------------


def _check_search(spec: CronSearch) -> None:
    if not 1 <= spec.limit <= _MAX_LIMIT:
        raise UnprocessableEntity(f"limit: {spec.limit} is not between 1 and {_MAX_LIMIT}")
    if spec.offset < 0:
        raise UnprocessableEntity(f"offset: {spec.offset} is less than the minimum of 0")
    if spec.sort_by is not None and spec.sort_by not in _SORT_FIELDS:
        raise UnprocessableEntity(f"sort_by: {spec.sort_by!r} is not one of {_SORT_FIELDS}")
    for field in spec.select or ():
        if field not in _SELECT_FIELDS:
            raise UnprocessableEntity(f"select: {field!r} is not one of {_SELECT_FIELDS}")


async def _search(request: Request, st: ServerState, spec: CronSearch) -> list[Cron]:
    """The crons `spec` asks for that the user may see (custom auth's search filter; the
    handler may also change the query's `metadata`)."""
    value: dict[str, Any] = {"assistant_id": spec.assistant_id, "thread_id": spec.thread_id,
             "limit": spec.limit, "offset": spec.offset, "metadata": dict(spec.metadata or {})}
    filters = await authorize(request, "crons", "search", value)
    assistant_id = spec.assistant_id
    if assistant_id is not None and assistant_id in st.settings.graphs:
        assistant_id = assistant_id_for(assistant_id)  # a graph name: its built-in assistant
    return [
        c for c in (await all_crons(st.records)).values()
        if (assistant_id is None or c.assistant_id == assistant_id)
        and (spec.thread_id is None or c.thread_id == spec.thread_id)
        and (spec.enabled is None or c.enabled == spec.enabled)
        and matches(c.metadata, value["metadata"]) and visible(c.metadata, filters)
    ]


async def search_crons(request: Request) -> Response:
    st = server(request)
    spec = await body(request, CronSearch, default=True)
    _check_search(spec)
    found = sort_records(await _search(request, st, spec), spec.sort_by, spec.sort_order, "created_at")
    return paginated(page(found, spec.limit, spec.offset), len(found), spec.offset, spec.limit,
                     spec.select)


async def count_crons(request: Request) -> Response:
    st = server(request)
    return json_response(len(await _search(request, st, await body(request, CronSearch,
                                                                    default=True))))


routes = [
    Route("/runs/crons", create_cron, methods=["POST"]),
    Route("/runs/crons/search", search_crons, methods=["POST"]),
    Route("/runs/crons/count", count_crons, methods=["POST"]),
    Route("/runs/crons/{cron_id}", get_cron, methods=["GET"]),
    Route("/runs/crons/{cron_id}", patch_cron, methods=["PATCH"]),
    Route("/runs/crons/{cron_id}", delete_cron, methods=["DELETE"]),
    Route("/threads/{thread_id}/runs/crons", create_thread_cron, methods=["POST"]),
]
