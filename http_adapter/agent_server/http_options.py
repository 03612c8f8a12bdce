"""What langgraph.json's `http` section changes in the app (issue 18): the middleware in front
of every route (CORS, configurable headers), which route groups are served (`disable_*`), and
the user's own app beside the API (`custom_app.py`).

`config.py` validates the section and imports `http.app`; `create_app` calls these.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Route

from .configurable_headers import ConfigurableHeadersMiddleware
from .cors import cors_middleware
from .custom_app import mount_custom_app
from .settings import Settings

__all__ = ["DISABLE_FLAGS", "enabled_routes", "finish_app", "front_middleware", "http_section"]

# `disable_<group>` flags and the route groups they remove (LangGraph's HttpConfig);
# `disable_runs` removes the crons too, whose routes live under /runs in LangGraph.
DISABLE_FLAGS = ("assistants", "threads", "runs", "store", "meta", "mcp", "a2a")
_ALWAYS_SERVED = frozenset(("/ok",))  # `disable_meta` keeps /ok, as LangGraph does


def http_section(settings: Settings) -> Mapping[str, Any]:
    """The config's `http` object ({} without one)."""
    return settings.extra.get("http") or {}


def front_middleware(settings: Settings) -> list[Middleware]:
    """The API app's outermost middleware: CORS (answers preflights before any auth), then the
    configurable headers; none with `http.app`, whose outer app takes them (`finish_app`)."""
    if settings.extra.get("custom_app") is not None:
        return []
    return _front(settings)


def _front(settings: Settings) -> list[Middleware]:
    """`graphrun dev` (or `ALLOW_PRIVATE_NETWORK=true`) also answers Private Network Access
    preflights, as `langgraph dev` means to."""
    http = http_section(settings)
    private = bool(settings.extra.get("private_network")) or _env_flag("ALLOW_PRIVATE_NETWORK")
    stack = cors_middleware(http, private_network=private)
    if http.get("configurable_headers"):
        stack.append(Middleware(ConfigurableHeadersMiddleware, section=http["configurable_headers"]))
    return stack


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes")


def enabled_routes(settings: Settings, **groups: Sequence[BaseRoute]) -> list[BaseRoute]:
    """The routes of `groups` (name -> routes, in serving order) less the disabled groups."""
    http = http_section(settings)
    routes: list[BaseRoute] = []
    for name, group in groups.items():
        if not http.get(f"disable_{name}"):
            routes.extend(group)
        elif name == "meta":
            routes.extend(r for r in group if isinstance(r, Route) and r.path in _ALWAYS_SERVED)
    return routes


def finish_app(settings: Settings, auth: Sequence[Middleware], api: Starlette) -> Starlette:
    """`api` itself, or with `http.app` the app that serves the user's routes beside it, with
    the front middleware around both; `auth` is the API's authentication middleware."""
    user = settings.extra.get("custom_app")
    if user is None:
        return api
    return mount_custom_app(api, user, front=_front(settings), auth=auth,
                            http=http_section(settings))
