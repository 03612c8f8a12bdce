"""API keys and tenants: every route but `/ok`, `/docs` and `/openapi.json` needs a key, given
as `X-Api-Key` (header names are case-insensitive) or `Authorization: Bearer <key>`.

`X-Tenant-Id` (a workspace UUID) scopes every record a request reads or writes; without it the
request works in the default workspace. With no keys configured the control plane is open.
"""

from __future__ import annotations

import hmac
import json
import uuid
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["DEFAULT_TENANT", "PUBLIC_PATHS", "AuthMiddleware"]

PUBLIC_PATHS = frozenset(("/ok", "/docs", "/openapi.json"))
DEFAULT_TENANT = str(uuid.uuid5(uuid.NAMESPACE_URL, "graphrun:control-plane:default-workspace"))


class AuthMiddleware:
    """Pure ASGI: checks the key, then puts the tenant in `scope["state"]["tenant_id"]`."""

    def __init__(self, app: ASGIApp, api_keys: frozenset[str]) -> None:
        self.app = app
        self.api_keys = tuple(k.encode() for k in api_keys)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _public(scope["path"]):
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if self.api_keys:
            given = headers.get(b"x-api-key") or _bearer(headers.get(b"authorization", b""))
            if not given:
                await _reply(send, 401, "Missing API key: send X-Api-Key or Authorization: Bearer.")
                return
            if not any(hmac.compare_digest(given, key) for key in self.api_keys):
                await _reply(send, 401, "Invalid API key.")
                return
        raw_tenant = headers.get(b"x-tenant-id", b"").decode("latin-1").strip()
        try:
            tenant_id = str(uuid.UUID(raw_tenant)) if raw_tenant else DEFAULT_TENANT
        except ValueError:
            await _reply(send, 422, [{"loc": ["header", "x-tenant-id"],
                                      "msg": "Input should be a valid UUID",
                                      "type": "uuid_parsing"}])
            return
        scope.setdefault("state", {})["tenant_id"] = tenant_id
        await self.app(scope, receive, send)


def _public(path: str) -> bool:
    return path in PUBLIC_PATHS or path.startswith("/docs/")


def _bearer(value: bytes) -> bytes:
    scheme, _, token = value.partition(b" ")
    return token.strip() if scheme.lower() == b"bearer" else b""


async def _reply(send: Send, status: int, detail: Any) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
    ]})
    await send({"type": "http.response.body", "body": body})
