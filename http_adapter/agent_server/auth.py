"""API-key authentication (SPEC §3 "Auth"): every route but the public ones needs `X-Api-Key`.

Keys come from `GRAPHRUN_API_KEYS` (comma-separated) or the config file; with none configured
the server is open. Header names are case-insensitive (ASGI lowercases them).
"""

from __future__ import annotations

import hmac
import json

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["ApiKeyMiddleware", "PUBLIC_PATHS"]

PUBLIC_PATHS = frozenset(("/ok", "/info", "/docs", "/openapi.json"))


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
        body = json.dumps({"detail": detail}).encode()
        await send({"type": "http.response.start", "status": 401, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        ]})
        await send({"type": "http.response.body", "body": body})


def _public(path: str) -> bool:
    return path in PUBLIC_PATHS or path.startswith("/docs/")
