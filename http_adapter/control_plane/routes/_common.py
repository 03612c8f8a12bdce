"""What the route modules share: the request's tenant and state, parameter parsing with
422 errors in the published shape, and JSON responses encoded once by msgspec."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from ..errors import ValidationFailed
from ..validation import decode, error, fail

if TYPE_CHECKING:
    from ..app import ControlPlane

__all__ = [
    "body",
    "json_response",
    "path_uuid",
    "plane",
    "query_bool",
    "query_choices",
    "query_int",
    "query_uuids",
    "tenant",
]

T = TypeVar("T")
_encoder = msgspec.json.Encoder()


def plane(request: Request) -> ControlPlane:
    return request.app.state.control_plane  # type: ignore[no-any-return]


def tenant(request: Request) -> str:
    """The workspace every record of this request belongs to (auth middleware: X-Tenant-Id)."""
    return request.scope["state"]["tenant_id"]  # type: ignore[no-any-return]


def json_response(content: Any, status: int = 200) -> Response:
    return Response(_encoder.encode(content), status_code=status, media_type="application/json")


async def body(request: Request, struct: type[T]) -> T:
    return decode(await request.body(), struct)


def path_uuid(request: Request, name: str) -> str:
    value = request.path_params[name]
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise fail(("path", name), "Input should be a valid UUID", "uuid_parsing") from None


def query_int(request: Request, name: str, default: int, *, ge: int, le: int | None = None) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise fail(("query", name), "Input should be a valid integer, unable to parse string as "
                   "an integer", "int_parsing") from None
    if value < ge:
        raise fail(("query", name), f"Input should be greater than or equal to {ge}",
                   "greater_than_equal")
    if le is not None and value > le:
        raise fail(("query", name), f"Input should be less than or equal to {le}",
                   "less_than_equal")
    return value


def query_bool(request: Request, name: str) -> bool | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    lowered = raw.lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    raise fail(("query", name), "Input should be a valid boolean, unable to interpret input",
               "bool_parsing")


def query_choices(request: Request, name: str, allowed: Sequence[str]) -> list[str]:
    """A comma-separated (or repeated) query parameter whose values must be in `allowed`."""
    values = [v.strip() for raw in request.query_params.getlist(name) for v in raw.split(",")]
    values = [v for v in values if v]
    wrong = [error(("query", name, i), f"Input should be {_one_of(allowed)}", "enum")
             for i, v in enumerate(values) if v not in allowed]
    if wrong:
        raise ValidationFailed(wrong)
    return values


def query_uuids(request: Request, name: str, *, required: bool = False, most: int = 100) -> list[str]:
    """UUIDs given as repeated and/or comma-separated query parameters."""
    values = [v.strip() for raw in request.query_params.getlist(name) for v in raw.split(",")]
    values = [v for v in values if v]
    if required and not values:
        raise fail(("query", name), "Field required", "missing")
    if len(values) > most:
        raise fail(("query", name), f"List should have at most {most} items after validation, "
                   f"not {len(values)}", "too_long")
    found, wrong = [], []
    for i, value in enumerate(values):
        try:
            found.append(str(uuid.UUID(value)))
        except ValueError:
            wrong.append(error(("query", name, i), "Input should be a valid UUID", "uuid_parsing"))
    if wrong:
        raise ValidationFailed(wrong)
    return list(dict.fromkeys(found))


def _one_of(values: Sequence[str]) -> str:
    shown = [f"'{v}'" for v in values]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"
