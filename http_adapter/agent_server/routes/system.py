"""System routes (SPEC §3 "System"): /ok, /info, /metrics, /openapi.json and /docs.

None of them needs an API key except /metrics (auth.PUBLIC_PATHS). /docs and its assets are
served from local files, so the reference works with no network.
"""

from __future__ import annotations

import statistics
import time
from datetime import datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from ..errors import NotFound
from ..openapi import (
    docs_asset_response,
    docs_html,
    openapi_document,
    package_version,
)
from ..state import ServerState
from ._common import json_response, server

__all__ = ["routes"]

_IMPORTED = time.time()  # stands in for the server's start when the state does not record it
_RUN_STATUSES = ("pending", "running", "success", "error", "timeout", "interrupted")
_THREAD_STATUSES = ("idle", "busy", "interrupted", "error")


async def ok(request: Request) -> Response:
    """Health check."""
    return json_response({"ok": True, "services": {}})  # as langgraph dev (issue 18)


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
    """Queue, worker and record counts: Prometheus text, or JSON with `?format=json`."""
    figures = await _figures(server(request))
    if request.query_params.get("format") == "json":
        return json_response(figures)
    return PlainTextResponse(
        _prometheus(figures), media_type="text/plain; version=0.0.4; charset=utf-8"
    )


async def _figures(state: ServerState) -> dict[str, Any]:
    """One snapshot of the numbers, in LangGraph's JSON shape (`queue`, `workers`) plus ours."""
    counts = await state.records.stats()
    runs, threads = counts.runs, counts.threads
    queue = await _queue_numbers(state)
    workers = state.settings.workers
    started = getattr(state, "started_at", None) or _IMPORTED
    return {
        "queue": {
            "n_pending": queue["pending"],
            "n_running": queue["running"],
            "pending_runs_wait_time_max_secs": queue["wait_max"],
            "pending_runs_wait_time_med_secs": queue["wait_med"],
        },
        "workers": {
            "max": workers,
            "active": min(queue["running"], workers),
            "available": max(workers - queue["running"], 0),
        },
        "runs": {s: runs.get(s, 0) for s in _RUN_STATUSES},
        "threads": {s: threads.get(s, 0) for s in _THREAD_STATUSES},
        "assistants": counts.assistants,
        "uptime_seconds": round(time.time() - started, 3),
        "version": package_version(),
    }


async def _queue_numbers(state: ServerState) -> dict[str, Any]:
    """Pending and running runs, stateless ones included, and how long the pending have waited.

    Uses `RunQueue.stats()` when the queue offers it; otherwise reads the records and the
    queue's in-flight table.
    """
    queue = state.queue
    stats = getattr(queue, "stats", None)
    if callable(stats):
        given = stats()
        if isinstance(given, dict) and {"pending", "running"} <= given.keys():
            return {"wait_max": None, "wait_med": None, **given}
    active = getattr(queue, "_active", {}) or {}
    stateless = getattr(queue, "_stateless", {}) or {}
    pending = await state.records.runs_with_status("pending")
    pending += [r for rid, r in stateless.items() if rid not in active]
    running = max(len(active), (await state.records.stats()).runs.get("running", 0))
    waits = [w for w in (_age(r.created_at) for r in pending) if w is not None]
    return {
        "pending": len(pending),
        "running": running,
        "wait_max": round(max(waits), 3) if waits else None,
        "wait_med": round(statistics.median(waits), 3) if waits else None,
    }


def _age(stamp: str) -> float | None:
    try:
        return max(time.time() - datetime.fromisoformat(stamp).timestamp(), 0.0)
    except (TypeError, ValueError):
        return None


def _prometheus(figures: dict[str, Any]) -> str:
    """The Prometheus text exposition format (0.0.4): HELP, TYPE, then samples."""
    lines: list[str] = []

    def metric(name: str, kind: str, help_: str, samples: list[tuple[str, Any]]) -> None:
        lines.append(f"# HELP {name} {help_}")
        lines.append(f"# TYPE {name} {kind}")
        lines.extend(f"{name}{labels} {_number(value)}" for labels, value in samples)

    queue, workers = figures["queue"], figures["workers"]
    metric("lg_api_num_pending_runs", "gauge", "Runs waiting for a worker.",
           [("", queue["n_pending"])])
    metric("lg_api_num_running_runs", "gauge", "Runs executing now.", [("", queue["n_running"])])
    metric("lg_api_pending_runs_wait_time_max_seconds", "gauge",
           "Longest wait of a pending run.", [("", queue["pending_runs_wait_time_max_secs"] or 0)])
    for key in ("max", "active", "available"):
        metric(f"lg_api_workers_{key}", "gauge", f"Background run workers ({key}).",
               [("", workers[key])])
    metric("graphrun_runs", "gauge", "Run records by status.",
           [(f'{{status="{s}"}}', n) for s, n in figures["runs"].items()])
    metric("graphrun_threads", "gauge", "Threads by status.",
           [(f'{{status="{s}"}}', n) for s, n in figures["threads"].items()])
    metric("graphrun_assistants", "gauge", "Assistants, built-in ones included.",
           [("", figures["assistants"])])
    metric("graphrun_uptime_seconds", "gauge", "Seconds since the server started.",
           [("", figures["uptime_seconds"])])
    metric("graphrun_info", "gauge", "The graphrun version serving.",
           [(f'{{version="{figures["version"]}"}}', 1)])
    return "\n".join(lines) + "\n"


def _number(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


# -- the API description -----------------------------------------------------------------------


async def openapi(request: Request) -> Response:
    """The OpenAPI 3.1 document of every route this server has."""
    cached = getattr(request.app.state, "openapi_document", None)
    if cached is None:
        settings = server(request).settings
        document = openapi_document(list(request.app.routes), api_keys=bool(settings.api_keys))
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
