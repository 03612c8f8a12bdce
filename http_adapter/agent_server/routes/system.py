"""System routes (SPEC §3 "System"): /ok, /info, /metrics, /openapi.json and /docs.

None of them needs an API key except /metrics (auth.PUBLIC_PATHS). /docs and its assets are
served from local files, so the reference works with no network.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from ..errors import NotFound, UnprocessableEntity
from ..metrics import figures, prometheus
from ..openapi import (
    docs_asset_response,
    docs_html,
    openapi_document,
    package_version,
)
from ._common import json_response, server

__all__ = ["routes"]


async def ok(request: Request) -> Response:
    """Health check; with PostgreSQL (and Redis) it reports each service (issue 19 §10).

    A host that cannot reach its database answers 503 naming it, with or without the LangGraph
    server's `?check_db=1`, so a load balancer stops sending to it, and 200 again by itself
    once the database answers (issue 26 §1). Redis down never fails it: the queue falls back
    to polling the database. Background loops failing right now are listed under `failing`;
    background tasks that stopped for good fail the check.
    """
    raw = request.query_params.get("check_db", "0")
    if raw not in ("0", "1"):
        raise UnprocessableEntity("check_db must be 0 or 1")
    state = server(request)
    services = await state.health()  # {} when embedded: as langgraph dev (issue 18)
    body: dict[str, Any] = {"ok": True, "services": services}
    if state.failing.now:
        body["failing"] = dict(state.failing.now)
    database = services.get("postgres", "ok")
    if database != "ok" or state.stopped:
        body["ok"] = False
        body["detail"] = state.stopped or f"postgres {database}"
    return json_response(body, 200 if body["ok"] else 503)


async def info(request: Request) -> Response:
    """Server version and feature flags."""
    paths = {getattr(r, "path", "") for r in request.app.routes}
    return json_response({
        "version": package_version(),
        "langgraph_py_version": "1.2.22",
        "flags": {
            "assistants": True,
            "crons": any(p.startswith("/runs/crons") for p in paths),
            "store": any(p.startswith("/store") for p in paths),
            "langsmith": False,
        },
        "host": {"kind": "self-hosted", "project_id": None, "host_revision_id": None,
                 "revision_id": None, "tenant_id": None},
    })


# -- metrics -----------------------------------------------------------------------------------


async def metrics(request: Request) -> Response:
    """Queue, worker, record and pool figures: Prometheus text, or JSON with `?format=json`."""
    snapshot = await figures(server(request))
    if request.query_params.get("format") == "json":
        return json_response(snapshot)
    return PlainTextResponse(
        prometheus(snapshot), media_type="text/plain; version=0.0.4; charset=utf-8"
    )


# -- the API description -----------------------------------------------------------------------


async def openapi(request: Request) -> Response:
    """The OpenAPI 3.1 document of every route this server has."""
    cached = getattr(request.app.state, "openapi_document", None)
    if cached is None:
        settings = server(request).settings
        document = openapi_document(list(request.app.routes), api_keys=bool(settings.api_keys))
        for path, operations in getattr(request.app.state, "custom_openapi_paths", {}).items():
            # issue 31 item 7: the `http.app` routes too; an API operation stays where both are
            document["paths"][path] = {**operations, **document["paths"].get(path, {})}
        if (settings.extra.get("http") or {}).get("disable_webhooks"):
            _without_webhook(document)
        cached = json_response(document).body
        request.app.state.openapi_document = cached
    return Response(cached, media_type="application/json")


def _without_webhook(document: dict[str, Any]) -> None:
    """`http.disable_webhooks`: no request schema offers `webhook`, as in langgraph-api."""
    for schema in document["components"]["schemas"].values():
        (schema.get("properties") or {}).pop("webhook", None)


async def docs(request: Request) -> Response:
    """The interactive API reference (Swagger UI from local files: no network needed)."""
    return HTMLResponse(docs_html(request.scope.get("root_path", "")))


async def docs_asset(request: Request) -> Response:
    """One file of the reference page's Swagger UI."""
    name = request.path_params["name"]
    response = docs_asset_response(name)
    if response is None:
        raise NotFound(f"No documentation asset '{name}'")
    return response


routes = [
    Route("/ok", ok, methods=["GET"]),
    Route("/info", info, methods=["GET"]),
    Route("/metrics", metrics, methods=["GET"]),
    Route("/openapi.json", openapi, methods=["GET"]),
    Route("/docs", docs, methods=["GET"]),
    Route("/docs/{name}", docs_asset, methods=["GET"]),
]
