"""langgraph.json's `http.app`: the user's own Starlette or FastAPI app served beside the API
(issue 18), in the LangGraph Agent Server's order of precedence:

1. `/ok`, `/metrics`, `/docs` and `/openapi.json` are always the server's;
2. then the user's routes (a route of theirs with the path and method of an API route replaces
   it, as in LangGraph: "it can override or extend the default routes");
3. then the API.

The user's routes are not behind the API key or custom auth unless `http.enable_custom_route_auth`
is true; the user's own middleware wraps the API routes too (LangGraph's default
`middleware_order`, "middleware_first"). Both lifespans run: the server's, then the user's.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Match, Mount
from starlette.schemas import SchemaGenerator
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["UNSHADOWABLE_PATHS", "custom_openapi_paths", "mount_custom_app"]

UNSHADOWABLE_PATHS = frozenset(("/ok", "/metrics", "/docs", "/openapi.json"))


def mount_custom_app(api: Starlette, user: Starlette, *, front: Sequence[Middleware],
                     auth: Sequence[Middleware], http: Mapping[str, Any]) -> Starlette:
    """One app serving `user`'s routes and `api`'s; `front` (CORS...) wraps both, `auth` the
    user's routes only with `enable_custom_route_auth`."""
    user_side: ASGIApp = user
    if http.get("enable_custom_route_auth"):
        user_side = _wrap(user, auth)
    api_side = _wrap(api, list(getattr(user, "user_middleware", None) or []))
    api.state.custom_openapi_paths = custom_openapi_paths(user)
    dispatch = _Dispatch(api_side, user_side, list(user.routes))

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with api.router.lifespan_context(api), user.router.lifespan_context(user):
            yield

    return Starlette(routes=[Mount("", app=dispatch)], middleware=list(front), lifespan=lifespan)


def _wrap(app: ASGIApp, middleware: Sequence[Middleware]) -> ASGIApp:
    for cls, args, kwargs in reversed(middleware):
        app = cls(app, *args, **kwargs)
    return app


class _Dispatch:
    """Sends a request to the user's app when one of its routes matches it fully."""

    def __init__(self, api: ASGIApp, user: ASGIApp, user_routes: list[BaseRoute]) -> None:
        self.api = api
        self.user = user
        self.user_routes = user_routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        target = self.user if self._user_serves(scope) else self.api
        await target(scope, receive, send)

    def _user_serves(self, scope: Scope) -> bool:
        if scope["type"] not in ("http", "websocket") or scope["path"] in UNSHADOWABLE_PATHS:
            return False
        return any(route.matches(scope)[0] is Match.FULL for route in self.user_routes)


def custom_openapi_paths(user: Starlette) -> dict[str, Any]:
    """The OpenAPI `paths` of the user's routes, which `/openapi.json` lists too (issue 31 item 7):
    a FastAPI app's own document's; a Starlette app's from its endpoints' docstrings (YAML after
    `---`, else an empty operation), as the reference does."""
    openapi = getattr(user, "openapi", None)
    if callable(openapi):  # FastAPI
        try:
            return dict(openapi().get("paths") or {})
        except Exception:  # a document FastAPI cannot build: the routes still work
            return {}
    generator = SchemaGenerator({})
    paths: dict[str, Any] = {}
    for endpoint in generator.get_endpoints(list(user.routes)):
        try:
            operation = generator.parse_docstring(endpoint.func)
        except Exception:  # no PyYAML, or YAML that does not parse: the text, as the reference
            operation = {"description": getattr(endpoint.func, "__doc__", None) or ""}
        paths.setdefault(endpoint.path, {})[endpoint.http_method] = operation
    return paths
