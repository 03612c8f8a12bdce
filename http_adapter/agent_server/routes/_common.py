"""What every route module shares: body decoding, id checks, JSON and SSE responses."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import anyio
import msgspec
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import Response

from ..encode import dumps, dumps_parts, sse_frame
from ..errors import NotFound, UnprocessableEntity
from ..state import ServerState
from ._parts import JSONParts

__all__ = [
    "body",
    "json_response",
    "paginated",
    "path_uuid",
    "query_int",
    "server",
    "sse_response",
]

T = TypeVar("T")
logger = logging.getLogger(__name__)


def server(request: Request) -> ServerState:
    return request.app.state.server  # type: ignore[no-any-return]


async def body(request: Request, struct: type[T], *, default: bool = False) -> T:
    """Decode and validate a JSON body; an empty body is `struct()` when `default`."""
    raw = await request.body()
    if not raw.strip():
        if default:
            return struct()
        raise UnprocessableEntity("Invalid JSON in request body")
    try:
        return msgspec.json.decode(raw, type=struct)
    except msgspec.ValidationError as error:
        _valid_json(raw)  # msgspec validates as it parses: bad JSON can fail as a wrong type
        raise UnprocessableEntity(str(error)) from None
    except _UNREADABLE as error:
        raise UnprocessableEntity(_unreadable(error)) from None


# What msgspec raises for a body it cannot read: bad JSON, nesting deeper than the interpreter's
# recursion limit, bytes that are not UTF-8 (issue 26: the last two answered 500).
_UNREADABLE = (msgspec.DecodeError, RecursionError, UnicodeDecodeError)


def _unreadable(error: Exception) -> str:
    if isinstance(error, RecursionError):
        return "Invalid JSON in request body: nested too deeply"
    if isinstance(error, UnicodeDecodeError):
        return "Invalid JSON in request body: not UTF-8"
    return "Invalid JSON in request body"


def _valid_json(raw: bytes) -> None:
    try:
        msgspec.json.decode(raw)
    except _UNREADABLE as error:
        raise UnprocessableEntity(_unreadable(error)) from None


def as_uuid(value: Any, label: str) -> str:
    """A canonical UUID string, or 422 "Invalid <label> ID: must be a UUID"."""
    try:
        return str(uuid.UUID(value))
    except (ValueError, AttributeError, TypeError):
        raise UnprocessableEntity(f"Invalid {label} ID: must be a UUID") from None


def path_uuid(request: Request, name: str, label: str) -> str:
    return as_uuid(request.path_params[name], label)


async def authorized_record(
    request: Request, kind: str, get: Callable[[str], Awaitable[Any]], action: str,
    missing: str, value: dict[str, Any],
) -> tuple[Any, dict[str, Any] | None]:
    """The path's `<kind>_id` record, authorized for `action` (custom auth): 422 for a
    non-UUID id, 404 `missing` (formatted with the id) when absent or outside the filter.
    `get` is the record store's getter for the kind (`records.get_thread`...)."""
    from ..authz import authorize, visible

    record_id = path_uuid(request, f"{kind}_id", kind)
    value[f"{kind}_id"] = record_id
    filters = await authorize(request, f"{kind}s", action, value)
    found = await get(record_id)
    if found is None or not visible(found.metadata, filters):
        raise NotFound(missing.format(id=record_id))
    return found, filters


def query_int(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise UnprocessableEntity(f"Query parameter '{name}' must be an integer") from None


def json_response(
    value: Any, status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    """Compact JSON, `application/json` (no charset), as the LangGraph server answers; a
    long thread's kept message list written as it is kept (issue 32)."""
    parts = dumps_parts(value)
    if len(parts) > 1:
        return JSONParts(parts, status, headers)
    return Response(parts[0], status_code=status, media_type="application/json",
                    headers=headers)


def paginated(items: list[Any], total: int, offset: int, limit: int,
              select: list[str] | None = None) -> Response:
    """One search page (`items`, of `total` matches) with the LangGraph server's headers.

    As observed on the real server, `X-Pagination-Total` is not the match count: it is
    `offset + len(page)` on the last page and `offset + limit + 1` while more remain, and then
    `X-Pagination-Next` is `offset + limit` (the offset of the next page).
    """
    if select:
        items = [{k: v for k, v in msgspec.structs.asdict(i).items() if k in select}
                 if isinstance(i, msgspec.Struct) else {k: i[k] for k in select if k in i}
                 for i in items]
    more = offset + limit < total if limit >= 0 else False
    headers = {"X-Pagination-Total": str(offset + limit + 1 if more else offset + len(items))}
    if more:
        headers["X-Pagination-Next"] = str(offset + limit)
    return json_response(items, headers=headers)


def sse_response(
    request: Request,
    frames: AsyncIterator[bytes],
    *,
    headers: dict[str, str] | None = None,
    on_close: Callable[[], Awaitable[None]] | None = None,
) -> Response:
    """A run's SSE stream (SPEC §3): pre-framed events (`encode.sse_frame`, CRLF) sent as they
    come, `: heartbeat` comments while idle, `text/event-stream; charset=utf-8` with the
    LangGraph server's `Cache-Control: no-store`, `Connection: keep-alive` and
    `X-Accel-Buffering: no`. `on_close` runs once the stream ends or the client goes away,
    shielded so a disconnect cannot cut it short."""

    async def body() -> AsyncIterator[bytes]:
        try:
            async for frame in frames:
                yield frame
        except Exception as error:  # noqa: BLE001 - the stream ends with an error event, not a
            # connection cut mid-chunk (which clients report as a protocol error); logged whole
            logger.exception("a run's event stream failed")
            yield sse_frame("error", dumps({"error": type(error).__name__, "message": str(error)}))
        finally:
            if on_close is not None:
                with anyio.CancelScope(shield=True):
                    await on_close()

    return EventSourceResponse(
        body(),
        headers=headers,
        ping=server(request).settings.heartbeat,
        sep="\r\n",
        ping_message_factory=_heartbeat,
    )


def _heartbeat() -> ServerSentEvent:
    return ServerSentEvent(comment="heartbeat", sep="\r\n")
