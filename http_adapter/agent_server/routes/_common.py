"""What every route module shares: body decoding, id checks, JSON and SSE responses."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import msgspec
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import Response

from ..encode import dumps
from ..errors import UnprocessableEntity
from ..state import ServerState

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


def server(request: Request) -> ServerState:
    return request.app.state.server  # type: ignore[no-any-return]


async def body(request: Request, struct: type[T], *, default: bool = False) -> T:
    """Decode and validate a JSON body; an empty body is `struct()` when `default`."""
    raw = await request.body()
    if not raw.strip():
        if default:
            return struct()
        raise UnprocessableEntity("Request body is required")
    try:
        return msgspec.json.decode(raw, type=struct)
    except msgspec.ValidationError as error:
        raise UnprocessableEntity(str(error)) from None
    except msgspec.DecodeError:
        raise UnprocessableEntity("Invalid JSON body") from None


def path_uuid(request: Request, name: str, label: str) -> str:
    value = request.path_params[name]
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise UnprocessableEntity(f"Invalid {label} ID: must be a UUID") from None


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
    return Response(dumps(value), status_code=status, media_type="application/json",
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
    events: AsyncIterator[tuple[str, bytes, int | None]],
    *,
    headers: dict[str, str] | None = None,
    on_close: Callable[[], Any] | None = None,
) -> Response:
    """SSE with CRLF framing and `: heartbeat` comments (SPEC §3)."""

    async def frames() -> AsyncIterator[ServerSentEvent]:
        try:
            async for name, data, event_id in events:
                yield ServerSentEvent(
                    data=data.decode(), event=name,
                    id=str(event_id) if event_id is not None else None, sep="\r\n",
                )
        finally:
            if on_close is not None:
                await on_close()

    heartbeat = server(request).settings.heartbeat
    return EventSourceResponse(
        frames(),
        headers=headers,
        ping=heartbeat,
        sep="\r\n",
        ping_message_factory=lambda: ServerSentEvent(comment="heartbeat", sep="\r\n"),
    )
