"""Custom auth for the agent server, the LangGraph way, without langgraph-sdk at runtime.

An auth file written for LangGraph works after one import change
(`from langgraph_sdk import Auth` -> `from http_adapter.auth import Auth`); `langgraph.json`
names it as LangGraph's does: `"auth": {"path": "./auth.py:auth"}`.

```python
auth = Auth()

@auth.authenticate
async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
    user = lookup(authorization)  # raise Auth.exceptions.HTTPException(401) to refuse
    return {"identity": user.id, "permissions": user.permissions}

@auth.on                     # every resource and action without a more specific handler
async def owner_only(ctx: Auth.types.AuthContext, value: dict) -> dict:
    return {"owner": ctx.user.identity}  # a filter: other owners' records are invisible

@auth.on.assistants.delete   # the most specific handler wins
async def no_deletes(ctx, value) -> bool:
    return False                         # 403
```

- `authenticate` handlers take any of `request`, `body`, `path`, `method`, `path_params`,
  `query_params`, `headers`, `authorization`, `scopes` by name (sync or async) and return an
  identity string, a dict with `identity` (+ `permissions`, `display_name`, any extra fields)
  or an object with those attributes.
- Authorization handlers are `(ctx, value)`: `ctx.user`, `ctx.permissions`, `ctx.resource`,
  `ctx.action`; they return None/True (allow), False (403), a metadata filter dict, or raise
  `Auth.exceptions.HTTPException`. The one called is the most specific registered:
  `(resource, action)`, `(resource, *)`, `(*, action)`, then the global `@auth.on`.
- Resources and actions: `threads` (create, read, update, delete, search, create_run),
  `assistants` and `crons` (create, read, update, delete, search), `store` (put, get, search,
  delete, list_namespaces).

How the server applies them is `http_adapter.agent_server.authz`. The registry attributes
(`_handlers`, `_global_handlers`, `_authenticate_handler`) are langgraph-sdk's, so the server
also accepts an unchanged langgraph-sdk `Auth` object.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Sequence

from . import exceptions, types

__all__ = ["AUTHENTICATE_PARAMETERS", "Auth", "exceptions", "is_studio_user", "types"]

AUTHENTICATE_PARAMETERS = frozenset((
    "request", "body", "path", "method", "path_params", "query_params", "headers",
    "authorization", "scopes",
))

F = typing.TypeVar("F", bound=Callable[..., typing.Any])

_RESOURCE_ACTIONS = ("create", "read", "update", "delete", "search")


class Auth:
    """Authentication (`@auth.authenticate`) and authorization (`@auth.on...`) handlers."""

    __slots__ = ("_authenticate_handler", "_global_handlers", "_handler_cache", "_handlers", "on")

    types = types
    exceptions = exceptions

    def __init__(self) -> None:
        self.on = _On(self)
        self._handlers: dict[tuple[str, str], list[Callable[..., typing.Any]]] = {}
        self._global_handlers: list[Callable[..., typing.Any]] = []
        self._authenticate_handler: Callable[..., typing.Any] | None = None
        self._handler_cache: dict[tuple[str, str], Callable[..., typing.Any]] = {}

    def authenticate(self, fn: F) -> F:
        """Register the one authentication handler (run on every non-public request)."""
        if self._authenticate_handler is not None:
            raise ValueError(
                f"Authentication handler already set as {self._authenticate_handler}."
            )
        _check_authenticate(fn)
        self._authenticate_handler = fn
        return fn


def is_studio_user(user: typing.Any) -> bool:
    """Whether `user` is LangGraph Studio's (never, on graphrun: it has no Studio login)."""
    return isinstance(user, types.StudioUser) or (
        isinstance(user, dict) and user.get("kind") == "StudioUser"
    )


# -- registration ----------------------------------------------------------------------------------


def _check_authenticate(fn: Callable[..., typing.Any]) -> None:
    """Refuse an authenticate handler that needs a parameter the server cannot give."""
    name = getattr(fn, "__name__", fn)
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.name not in AUTHENTICATE_PARAMETERS and param.default is param.empty:
            raise ValueError(
                f"Authentication handler '{name}' has an unsupported parameter "
                f"'{param.name}'. Supported: {', '.join(sorted(AUTHENTICATE_PARAMETERS))}."
            )


def _check_handler(fn: Callable[..., typing.Any]) -> None:
    """Handlers are called as `fn(ctx=..., value=...)`; sync handlers are accepted too."""
    name = getattr(fn, "__name__", fn)
    params = inspect.signature(fn).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return
    for required in ("ctx", "value"):
        if required not in params:
            raise ValueError(
                f"Auth handler '{name}' must have a '{required}' parameter "
                "(handlers are called as handler(ctx=..., value=...))."
            )


def _register(auth: Auth, resource: str | None, action: str | None,
              fn: Callable[..., typing.Any]) -> None:
    _check_handler(fn)
    resource = resource or "*"
    action = action or "*"
    if resource == "*" and action == "*":
        if auth._global_handlers:
            raise ValueError("Global handler already set.")
        auth._global_handlers.append(fn)
        return
    if (resource, action) in auth._handlers:
        raise ValueError(f"Handler already set for {resource}, {action}.")
    auth._handlers[(resource, action)] = [fn]


def _names(given: str | Sequence[str] | None, what: str) -> list[str]:
    """A `resources=`/`actions=` argument as a list (`["*"]` when not given)."""
    if given is None:
        return ["*"]
    if isinstance(given, str):
        return [given]
    if isinstance(given, Sequence) and all(isinstance(g, str) for g in given):
        return list(given)
    raise TypeError(f"{what} must be a string or sequence of strings")


class _ActionOn:
    """`@auth.on.<resource>.<action>`."""

    def __init__(self, auth: Auth, resource: str, action: str) -> None:
        self.auth = auth
        self.resource = resource
        self.action = action

    def __call__(self, fn: F) -> F:
        _register(self.auth, self.resource, self.action, fn)
        return fn


class _ResourceOn:
    """`@auth.on.<resource>` (every action), or `@auth.on.<resource>(actions=[...])`."""

    _actions: tuple[str, ...] = _RESOURCE_ACTIONS

    def __init__(self, auth: Auth, resource: str) -> None:
        self.auth = auth
        self.resource = resource
        self.create = _ActionOn(auth, resource, "create")
        self.read = _ActionOn(auth, resource, "read")
        self.update = _ActionOn(auth, resource, "update")
        self.delete = _ActionOn(auth, resource, "delete")
        self.search = _ActionOn(auth, resource, "search")

    def __call__(self, fn: F | None = None, *, resources: str | Sequence[str] | None = None,
                 actions: str | Sequence[str] | None = None) -> typing.Any:
        def decorator(handler: F) -> F:
            _check_handler(handler)
            if _names(resources, "resources") not in (["*"], [self.resource]):
                raise ValueError(
                    f"Resource-specific decorator for {self.resource!r} cannot register "
                    f"handlers for {resources!r}. Use @auth.on(...) for other or multiple "
                    "resources."
                )
            action_list = _names(actions, "actions")
            if not action_list:
                raise ValueError("actions must not be empty")
            invalid = sorted(set(action_list) - set(self._actions)) if actions is not None else []
            if invalid:
                raise ValueError(f"Invalid action(s) for {self.resource}: {', '.join(invalid)}")
            if len(action_list) != len(set(action_list)):
                raise ValueError("actions must not contain duplicates")
            for action in action_list:
                if (self.resource, action) in self.auth._handlers:
                    raise ValueError(f"Handler already set for {self.resource}, {action}.")
            for action in action_list:
                _register(self.auth, self.resource, action, handler)
            return handler

        return decorator(fn) if fn is not None else decorator


class _ThreadsOn(_ResourceOn):
    _actions = (*_RESOURCE_ACTIONS, "create_run")

    def __init__(self, auth: Auth, resource: str) -> None:
        super().__init__(auth, resource)
        self.create_run = _ActionOn(auth, resource, "create_run")


class _StoreOn:
    """`@auth.on.store`, `@auth.on.store(actions=[...])`, `@auth.on.store.<action>`."""

    def __init__(self, auth: Auth) -> None:
        self._auth = auth
        self.put = _ActionOn(auth, "store", "put")
        self.get = _ActionOn(auth, "store", "get")
        self.search = _ActionOn(auth, "store", "search")
        self.delete = _ActionOn(auth, "store", "delete")
        self.list_namespaces = _ActionOn(auth, "store", "list_namespaces")

    def __call__(self, fn: F | None = None, *,
                 actions: str | Sequence[str] | None = None) -> typing.Any:
        if fn is not None:
            _register(self._auth, "store", None, fn)
            return fn

        def decorator(handler: F) -> F:
            for action in _names(actions, "actions"):
                _register(self._auth, "store", action, handler)
            return handler

        return decorator


class _On:
    """`@auth.on` (global), `@auth.on(resources=..., actions=...)`, `@auth.on.<resource>...`."""

    __slots__ = ("_auth", "assistants", "crons", "store", "threads", "value")

    def __init__(self, auth: Auth) -> None:
        self._auth = auth
        self.assistants = _ResourceOn(auth, "assistants")
        self.threads = _ThreadsOn(auth, "threads")
        self.crons = _ResourceOn(auth, "crons")
        self.store = _StoreOn(auth)
        self.value = dict[str, typing.Any]

    def __call__(self, fn: F | None = None, *, resources: str | Sequence[str] | None = None,
                 actions: str | Sequence[str] | None = None) -> typing.Any:
        if fn is not None:
            _register(self._auth, None, None, fn)
            return fn

        def decorator(handler: F) -> F:
            for resource in _names(resources, "resources"):
                for action in _names(actions, "actions"):
                    _register(self._auth, resource, action, handler)
            return handler

        return decorator
