"""Authorization: the custom `Auth`'s `@auth.on...` handlers, as the routes apply them.

A route calls `authorize(request, resource, action, value)` where it knows the value (a
create: the body; read/update/delete: the record's id; search: the query). The most specific
handler runs (`(resource, action)`, `(resource, *)`, `(*, action)`, the global one, as
LangGraph picks it) with `ctx` (user, permissions, resource, action) and `value`, a dict it may
change in place (routes read `metadata` and, for the store, `namespace` back from it). Its
answer:

- None or True: allowed, no filter (`authorize` returns None);
- False: 403 `{"detail": "Forbidden"}`; an `HTTPException` it raises: that status and detail;
- a dict: a metadata filter (`{"owner": "alice"}`, `{"k": {"$eq": v}}`,
  `{"k": {"$contains": v}}`) that `authorize` returns. A record whose metadata does not match
  (`visible`) is as absent: 404 on get/update/delete, left out of searches and counts. On
  create and update the filter's values are written into the record's metadata (`owned`),
  so the creator owns what they create, as LangGraph scopes threads to owners.

Store handlers scope by rewriting or checking `value["namespace"]`; a filter they return is
ignored, as LangGraph ignores it. Without a configured `Auth` every call is a no-op.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from starlette.requests import Request

from ..auth.types import AuthContext
from .auth import ANONYMOUS, AuthUser
from .errors import ServerError

__all__ = ["Refused", "auth_user", "authorize", "handler_for", "owned", "visible"]

Filters = dict[str, Any]


class Refused(ServerError):
    """An authorization handler said no: 403, or the status its HTTPException carries."""

    status = 403

    def __init__(self, detail: Any = "Forbidden", status: int = 403,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.headers = dict(headers) if headers else None


def _auth(request: Request) -> Any:
    return request.app.state.server.settings.auth


def auth_user(request: Request) -> AuthUser | None:
    """The authenticated user, when custom auth is configured (else None)."""
    if _auth(request) is None:
        return None
    user = request.scope.get("user")
    return user if isinstance(user, AuthUser) else ANONYMOUS


def handler_for(auth: Any, resource: str, action: str) -> Callable[..., Any] | None:
    """The most specific handler for `resource`/`action`, as LangGraph resolves it."""
    handlers = auth._handlers
    for key in ((resource, action), (resource, "*"), ("*", action), ("*", "*")):
        found = handlers.get(key)
        if found:
            return found[-1]  # type: ignore[no-any-return]
    return auth._global_handlers[-1] if auth._global_handlers else None


async def authorize(request: Request, resource: str, action: str, value: dict[str, Any]
                    ) -> Filters | None:
    """Run the handler for `resource`/`action` on `value` (changed in place): the filter to
    apply, or None for none. Raises `Refused` when the handler denies."""
    auth = _auth(request)
    if auth is None:
        return None
    handler = handler_for(auth, resource, action)
    if handler is None:
        return None
    user = auth_user(request) or ANONYMOUS
    ctx = AuthContext(permissions=list(user.permissions), user=user, resource=resource,  # type: ignore[arg-type]
                      action=action)  # type: ignore[arg-type]
    try:
        result = handler(ctx=ctx, value=value)
        if inspect.isawaitable(result):
            result = await result
    except AssertionError as error:
        raise Refused(str(error) or "Forbidden") from None
    except ServerError:
        raise
    except Exception as error:
        status = getattr(error, "status_code", None)
        if isinstance(status, int) and hasattr(error, "detail"):  # HTTPException, any flavour
            raise Refused(error.detail, status, getattr(error, "headers", None)) from None
        raise
    if result is None or result is True:
        return None
    if result is False:
        raise Refused("Forbidden")
    if isinstance(result, dict):
        return result or None
    raise ServerError(
        f"Auth handler for {resource}.{action} returned {type(result).__name__}; expected "
        "None, a bool or a filter dict"
    )


def visible(metadata: Mapping[str, Any] | None, filters: Filters | None) -> bool:
    """Whether a record with `metadata` matches `filters` (equality, `$eq`, `$contains`)."""
    if not filters:
        return True
    metadata = metadata or {}
    for key, wanted in filters.items():
        if key not in metadata:
            return False
        have = metadata[key]
        if isinstance(wanted, dict) and len(wanted) == 1 and next(iter(wanted)) in _OPERATORS:
            op, operand = next(iter(wanted.items()))
            if op == "$eq":
                if have != operand:
                    return False
            elif not isinstance(have, list) or not all(
                item in have for item in (operand if isinstance(operand, list) else [operand])
            ):
                return False
        elif have != wanted:
            return False
    return True


_OPERATORS = ("$eq", "$contains")


def owned(metadata: Mapping[str, Any] | None, filters: Filters | None) -> dict[str, Any]:
    """`metadata` with `filters` written in, so the record matches them (its creator owns it):
    `{"owner": v}`/`{"$eq": v}` set the key, `{"$contains": v}` adds to the key's list."""
    out = dict(metadata or {})
    for key, wanted in (filters or {}).items():
        if isinstance(wanted, dict) and len(wanted) == 1 and next(iter(wanted)) in _OPERATORS:
            op, operand = next(iter(wanted.items()))
            if op == "$eq":
                out[key] = operand
                continue
            have = out.get(key)
            items = list(have) if isinstance(have, list) else []
            for item in operand if isinstance(operand, list) else [operand]:
                if item not in items:
                    items.append(item)
            out[key] = items
        else:
            out[key] = wanted
    return out
