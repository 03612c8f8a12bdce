"""System routes: /ok and /info (the rest of the group lands with the system work)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ._common import json_response

__all__ = ["routes"]


async def ok(request: Request) -> Response:
    return json_response({"ok": True})


async def info(request: Request) -> Response:
    from importlib.metadata import PackageNotFoundError, version

    try:
        current = version("graphrun")
    except PackageNotFoundError:
        current = "0.0.0"
    return json_response({
        "version": current,
        "langgraph_py_version": "1.2.22",
        "flags": {"assistants": True, "crons": False, "langsmith": False},
        "metadata": {},
    })


routes = [
    Route("/ok", ok, methods=["GET"]),
    Route("/info", info, methods=["GET"]),
]
