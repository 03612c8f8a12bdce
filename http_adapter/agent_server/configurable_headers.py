"""langgraph.json's `http.configurable_headers`: which request headers a run finds in
`config["configurable"]` (issue 18), matched as the LangGraph Agent Server matches them.

`includes` / `excludes` (or `include` / `exclude`) are lower-case header names with `*` as the
only wildcard; a header is passed when it matches an include and no exclude. Without the
section no header is passed. `authorization`, `x-api-key`, `x-service-key` and `x-tenant-id`
never are.

The middleware picks the headers of each request into its scope; the routes that start graph
work add them to the config's `configurable` as langgraph-api does: run creation (with or
without `context`) and state updates. Cron runs get none (the reference's scheduler passes no
headers).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["ConfigurableHeadersMiddleware", "HeaderFilter", "picked_headers"]

_NEVER = frozenset(("authorization", "x-api-key", "x-service-key", "x-tenant-id"))
_SCOPE_KEY = "graphrun.configurable_headers"


def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in text.lower().split("*")) + r"\Z", re.S)


class HeaderFilter:
    """The include/exclude patterns of one `configurable_headers` section."""

    def __init__(self, section: Mapping[str, Any]) -> None:
        self.includes = [_pattern(p) for p in section.get("includes") or section.get("include") or []]
        self.excludes = [_pattern(p) for p in section.get("excludes") or section.get("exclude") or []]

    def wants(self, name: str) -> bool:
        if name in _NEVER or any(p.match(name) for p in self.excludes):
            return False
        return any(p.match(name) for p in self.includes)

    def pick(self, headers: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
        picked: dict[str, str] = {}
        for raw_name, raw_value in headers:
            name = raw_name.decode("latin-1").lower()
            if self.wants(name):
                picked[name] = raw_value.decode("latin-1")
        return picked


class ConfigurableHeadersMiddleware:
    """Pure ASGI: records the request's chosen headers in its scope; the body passes untouched."""

    def __init__(self, app: ASGIApp, section: Mapping[str, Any]) -> None:
        self.app = app
        self.filter = HeaderFilter(section)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope = {**scope, _SCOPE_KEY: self.filter.pick(scope["headers"])}
        await self.app(scope, receive, send)


def picked_headers(request: Request) -> dict[str, str]:
    """The headers `request` passes to the graph's `configurable` (none without the section)."""
    return dict(request.scope.get(_SCOPE_KEY) or {})
