"""langgraph.json's `http.configurable_headers`: which request headers a run finds in
`config["configurable"]` (issue 18), matched as the LangGraph Agent Server matches them.

`includes` / `excludes` (or `include` / `exclude`) are lower-case header names with `*` as the
only wildcard; a header is passed when it matches an include and no exclude. Without the
section no header is passed. `authorization`, `x-api-key`, `x-service-key` and `x-tenant-id`
never are.

The run routes build `configurable` from the request body, so this middleware adds the chosen
headers to the body's `config.configurable` of run-creating requests (the header wins over a
body value of the same name, as in LangGraph). A body with `context` is left alone: the routes
refuse `context` together with `configurable` (a documented limit).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["ConfigurableHeadersMiddleware", "HeaderFilter"]

_NEVER = frozenset(("authorization", "x-api-key", "x-service-key", "x-tenant-id"))
# POST routes that create runs: /runs, /runs/stream|wait|batch, /threads/{id}/runs[/stream|wait].
_RUN_PATHS = re.compile(r"^(?:/threads/[^/]+)?/runs(?:/stream|/wait)?$|^/runs/batch$")


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
    """Pure ASGI: rewrites only the JSON body of run-creating POSTs; streams pass untouched."""

    def __init__(self, app: ASGIApp, section: Mapping[str, Any]) -> None:
        self.app = app
        self.filter = HeaderFilter(section)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not _RUN_PATHS.match(scope["path"]):
            await self.app(scope, receive, send)
            return
        picked = self.filter.pick(scope["headers"])
        if not picked:
            await self.app(scope, receive, send)
            return
        body = _with_headers(await _read_body(receive), picked)
        headers = [(k, v) for k, v in scope["headers"] if k != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await self.app({**scope, "headers": headers}, _replay(body, receive), send)


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()  # then the disconnect, when it comes
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


def _with_headers(body: bytes, picked: dict[str, str]) -> bytes:
    """The body with `picked` in each payload's `config.configurable`; unchanged when it is not
    a JSON object (or list of them, for /runs/batch): the route reports that itself."""
    try:
        payload = json.loads(body)
    except ValueError:
        return body
    payloads = payload if isinstance(payload, list) else [payload]
    for item in payloads:
        if isinstance(item, dict) and not item.get("context"):
            _merge(item, picked)
    return json.dumps(payload).encode()


def _merge(item: dict[str, Any], picked: dict[str, str]) -> None:
    config = item.get("config")
    if config is None:
        config = item["config"] = {}
    if not isinstance(config, dict):
        return
    configurable = config.get("configurable")
    if configurable is None:
        configurable = config["configurable"] = {}
    if isinstance(configurable, dict):
        configurable.update(picked)
