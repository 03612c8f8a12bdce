"""CORS, so browser clients (agent-chat-ui, LangGraph Studio, `useStream`) can call the server
directly (issue 18 "Browsers cannot call us at all").

Without `http.cors` in langgraph.json the server answers as the LangGraph Agent Server does by
default, for `dev` and `serve` alike: any origin, any method and request header, no credentials,
and the response headers the JS client reads exposed. `CORS_ALLOW_ORIGINS` (comma-separated)
narrows the origins, and then credentials are allowed, as in LangGraph. With `http.cors` its
keys go to Starlette's `CORSMiddleware` as they are (its defaults for the keys left out), which
is what LangGraph does with them.

The middleware is outermost, so a preflight `OPTIONS` is answered before the API-key check and
error responses (401, 404, ...) still carry the headers a browser needs to read them.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping
from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CORS_KEYS", "EXPOSED_HEADERS", "PrivateNetworkMiddleware", "cors_middleware"]

# LangGraph exposes the first three; `location` too, so a browser's JS client can reconnect a
# dropped run stream (it reads `Location`): a deliberate difference, listed in docs/differences.md.
EXPOSED_HEADERS = ("x-pagination-total", "x-pagination-next", "content-location", "location")

# The keys of langgraph.json's `http.cors` (LangGraph's CorsConfig = CORSMiddleware's arguments).
CORS_KEYS = frozenset((
    "allow_origins", "allow_methods", "allow_headers", "allow_credentials",
    "allow_origin_regex", "expose_headers", "max_age",
))


def cors_middleware(http: Mapping[str, Any], *, private_network: bool = False) -> list[Middleware]:
    """The CORS middleware for the `http` section (already validated by `config.py`).

    `private_network` (set by `graphrun dev`, as `langgraph dev` sets it) also answers Chrome's
    Private Network Access preflights, so a public page may call a server on loopback.
    """
    options = http.get("cors")
    if options is None:
        origins = _env_origins()
        options = {
            "allow_origins": origins,
            "allow_credentials": "*" not in origins,
            "allow_methods": ["*"],
            "allow_headers": ["*"],
            "expose_headers": list(EXPOSED_HEADERS),
        }
    options = dict(options)
    if private_network and _CORS_KNOWS_PRIVATE_NETWORK:
        # Starlette >= 0.47 refuses (400) a preflight asking for private network access unless
        # allowed; `langgraph dev` does not allow it there and so fails such preflights, while
        # still adding the header below. We allow it: a deliberate difference (docs/differences.md).
        options["allow_private_network"] = True
    stack = [Middleware(CORSMiddleware, **options)]
    if private_network:
        stack.insert(0, Middleware(PrivateNetworkMiddleware))
    return stack


_CORS_KNOWS_PRIVATE_NETWORK = (
    "allow_private_network" in inspect.signature(CORSMiddleware.__init__).parameters
)


def _env_origins() -> list[str]:
    given = os.environ.get("CORS_ALLOW_ORIGINS", "")
    return [o.strip() for o in given.split(",") if o.strip()] or ["*"]


class PrivateNetworkMiddleware:
    """Adds `Access-Control-Allow-Private-Network: true` to every `OPTIONS` response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "OPTIONS":
            await self.app(scope, receive, send)
            return

        async def send_allowing(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)["access-control-allow-private-network"] = "true"
            await send(message)

        await self.app(scope, receive, send_allowing)
