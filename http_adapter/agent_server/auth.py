"""Authentication (SPEC §3 "Auth"): every route but the public ones needs `X-Api-Key` and,
with a custom `Auth` (langgraph.json `"auth"`), passes its `@auth.authenticate` handler.

Keys come from `GRAPHRUN_API_KEYS` (comma-separated) or the config file; with none configured
the server is open. Header names are case-insensitive (ASGI lowercases them). When both are
configured a request needs both: the key gates the server, the handler names the user.

The user a custom handler returns goes on the ASGI scope as `scope["user"]` (an `AuthUser`:
`request.user` in Starlette terms, `ctx.user` in authorization handlers, see `authz.py`) and
its permissions as `scope["auth"]`.
"""

from __future__ import annotations

import builtins
import hmac
import inspect
import json
import logging
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from starlette.authentication import AuthCredentials
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "ANONYMOUS",
    "PUBLIC_PATHS",
    "ApiKeyMiddleware",
    "AuthUser",
    "CustomAuthMiddleware",
    "check_auth",
]

logger = logging.getLogger("http_adapter")

PUBLIC_PATHS = frozenset(("/ok", "/info", "/docs", "/openapi.json", "/", "/studio"))


class ApiKeyMiddleware:
    """Pure ASGI, so streaming responses pass through untouched."""

    def __init__(self, app: ASGIApp, api_keys: frozenset[str]) -> None:
        self.app = app
        self.api_keys = tuple(api_keys)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.api_keys or _public(scope["path"]):
            await self.app(scope, receive, send)
            return
        given = ""
        for name, value in scope["headers"]:
            if name == b"x-api-key":
                given = value.decode("latin-1")
                break
        if any(hmac.compare_digest(given, key) for key in self.api_keys):
            await self.app(scope, receive, send)
            return
        detail = "Missing API key" if not given else "Invalid API key"
        await _refuse(send, 401, detail)


async def _refuse(send: Send, status: int, detail: Any,
                  headers: Mapping[str, str] | None = None) -> None:
    body = json.dumps({"detail": detail}).encode()
    extra = [(k.lower().encode("latin-1"), str(v).encode("latin-1"))
             for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        *extra,
    ]})
    await send({"type": "http.response.body", "body": body})


def _public(path: str) -> bool:
    # the studio's page and files (issue 20) load without a key: the page then asks for one
    return path in PUBLIC_PATHS or path.startswith(("/docs/", "/studio/"))


# -- custom auth: the user ----------------------------------------------------------------------


class AuthUser:
    """The authenticated user (langgraph-api's proxy user): `identity`, `display_name`,
    `is_authenticated` and `permissions` as attributes; every field (the extra ones an
    `authenticate` handler returned too) by item or by attribute."""

    __slots__ = ("_fields", "_source")

    def __init__(self, fields: Mapping[str, Any], source: Any = None) -> None:
        self._fields = dict(fields)
        self._source = source

    @classmethod
    def of(cls, result: Any) -> AuthUser:
        """The user an `authenticate` handler returned; TypeError for anything else."""
        if isinstance(result, AuthUser):
            return result
        source = None
        if isinstance(result, str):
            fields: dict[str, Any] = {"identity": result}
        elif isinstance(result, Mapping) and "identity" in result:
            fields = dict(result)
        elif getattr(result, "identity", None) is not None:
            names = ("identity", "display_name", "is_authenticated", "permissions")
            fields = {n: getattr(result, n) for n in names if hasattr(result, n)}
            source = result
        else:
            raise TypeError(
                "the authenticate handler must return an identity string, a dict with an "
                "'identity' key or an object with an 'identity' attribute, not "
                f"{type(result).__name__}"
            )
        if not isinstance(fields["identity"], str):
            raise TypeError(f"identity must be a string, not {type(fields['identity']).__name__}")
        fields.setdefault("display_name", fields["identity"])
        fields.setdefault("is_authenticated", True)
        fields["permissions"] = list(fields.get("permissions") or ())
        return cls(fields, source)

    @property
    def identity(self) -> str:
        return self._fields["identity"]  # type: ignore[no-any-return]

    @property
    def display_name(self) -> str:
        return self._fields["display_name"]  # type: ignore[no-any-return]

    @property
    def is_authenticated(self) -> bool:
        return bool(self._fields["is_authenticated"])

    @property
    def permissions(self) -> list[str]:
        return self._fields["permissions"]  # type: ignore[no-any-return]

    def __getitem__(self, key: str) -> Any:
        return self._fields[key]

    def __contains__(self, key: object) -> bool:
        return key in self._fields

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __getattr__(self, name: str) -> Any:
        try:  # no recursion while a copy is half-built (its slots not set yet)
            fields = object.__getattribute__(self, "_fields")
            source = object.__getattribute__(self, "_source")
        except AttributeError:
            raise AttributeError(name) from None
        if name in fields:
            return fields[name]
        if source is not None and not name.startswith("__"):
            return getattr(source, name)
        raise AttributeError(name)

    def get(self, key: str, default: Any = None) -> Any:
        return self._fields.get(key, default)

    def to_json(self) -> builtins.dict[str, Any]:
        """The user as run records keep it (`langgraph_auth_user` in a run's configurable)."""
        return builtins.dict(self._fields)

    def dict(self) -> builtins.dict[str, Any]:
        return builtins.dict(self._fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AuthUser) and other._fields == self._fields

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"AuthUser({self._fields!r})"


ANONYMOUS = AuthUser({"identity": "", "display_name": "", "is_authenticated": False,
                      "permissions": []})


# -- custom auth: the middleware ----------------------------------------------------------------


def check_auth(auth: Any) -> None:
    """TypeError unless `auth` is an `http_adapter.auth.Auth` (or langgraph-sdk's, which keeps
    its handlers in the same attributes)."""
    if not all(hasattr(auth, a) for a in ("_handlers", "_global_handlers",
                                           "_authenticate_handler")):
        raise TypeError(
            f"the configured auth object is a {type(auth).__name__}, not an "
            'http_adapter.auth.Auth (langgraph.json "auth": {"path": "./auth.py:auth"})'
        )



class CustomAuthMiddleware:
    """Runs the `@auth.authenticate` handler on every non-public request (pure ASGI, so
    streams pass through untouched). A refusal answers `{"detail": ...}` with the status of the
    handler's `HTTPException` (401 for an `AssertionError`); a handler that crashes or returns
    no user is a 500 (logged)."""

    def __init__(self, app: ASGIApp, auth: Any) -> None:
        check_auth(auth)
        self.app = app
        self.handler: Callable[..., Any] | None = auth._authenticate_handler
        self.wants: frozenset[str] = frozenset()
        if self.handler is not None:
            params = inspect.signature(self.handler).parameters.values()
            if any(p.kind == p.VAR_KEYWORD for p in params):
                self.wants = frozenset(_ARGUMENTS) | {"body"}
            else:
                self.wants = frozenset(p.name for p in params if p.kind != p.VAR_POSITIONAL)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _public(scope["path"]):
            await self.app(scope, receive, send)
            return
        if self.handler is None:  # authorization handlers only: they see an anonymous user
            user = ANONYMOUS
        else:
            body: bytes | None = None
            if "body" in self.wants or "request" in self.wants:
                body = await _read_body(receive)
                receive = _replay(body, receive)
            try:
                result = self.handler(**self._arguments(scope, body, receive))
                if inspect.isawaitable(result):
                    result = await result
                user = AuthUser.of(result)
            except AssertionError as error:
                await _refuse(send, 401, str(error) or "Unauthorized")
                return
            except Exception as error:
                status = getattr(error, "status_code", None)
                if isinstance(status, int) and hasattr(error, "detail"):  # HTTPException, any
                    await _refuse(send, status, error.detail, getattr(error, "headers", None))
                    return
                logger.exception("The authenticate handler failed on %s %s",
                                 scope["method"], scope["path"])
                await _refuse(send, 500, "Internal server error")
                return
            if body is not None:
                receive = _replay(body, receive)  # the app reads the body afresh
        scope["user"] = user
        scope["auth"] = AuthCredentials(user.permissions)
        await self.app(scope, receive, send)

    def _arguments(self, scope: Scope, body: bytes | None, receive: Receive) -> dict[str, Any]:
        """The handler's parameters, by name (only those it asks for are computed)."""
        headers = dict(scope["headers"])
        out = {name: make(scope, headers) for name, make in _ARGUMENTS.items()
               if name in self.wants}
        if "request" in self.wants:
            out["request"] = Request(scope, receive)
        if "body" in self.wants:
            out["body"] = _json_or_none(body or b"")
        return out


def _authorization(scope: Scope, headers: dict[bytes, bytes]) -> str | None:
    value = headers.get(b"authorization")
    return value.decode("latin-1") if value is not None else None


def _path_params(scope: Scope, headers: dict[bytes, bytes]) -> dict[str, Any]:
    """The path parameters of the route the request will reach (routing runs after us)."""
    app = scope.get("app")
    for route in getattr(getattr(app, "router", None), "routes", ()):
        match, child = route.matches(scope)
        if match == Match.FULL:
            return dict(child.get("path_params", {}))
    return {}


_ARGUMENTS: dict[str, Callable[[Scope, dict[bytes, bytes]], Any]] = {
    "path": lambda scope, _: scope["path"],
    "method": lambda scope, _: scope["method"],
    "headers": lambda _, headers: headers,
    "authorization": _authorization,
    "query_params": lambda scope, _: dict(QueryParams(scope.get("query_string", b""))),
    "path_params": _path_params,
    "scopes": lambda scope, _: [],  # nothing grants scopes before the handler runs
}


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands out `body` once, then passes the rest (a disconnect) through."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def _json_or_none(body: bytes) -> Any:
    """The parsed JSON body (`body` parameter); None when empty or not JSON."""
    if not body.strip():
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):  # too deep: the route answers 422 (issue 26)
        return None
