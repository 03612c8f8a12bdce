"""Builds the agent server's Starlette app: routes, auth middleware, errors, lifespan.

In front of everything, CORS and the other `http` options of langgraph.json (`http_options.py`,
issue 18). Authentication is two middlewares, outermost first: the API-key check, then (with a
custom `Auth` in `settings.auth`) its `@auth.authenticate` handler; authorization happens in the
routes (`authz.authorize`), where the value being authorized is known.

The lifespan owns the process-wide state (records, saver, store) and the run queue's worker
task group, so every background task has an owner and stops with the server. On shutdown
(uvicorn's SIGTERM handling) the queue drains first: running runs get `settings.drain_grace`
seconds to finish, then the rest are handed back, so a rolling restart loses no run (issue 19
§5).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware

from .. import studio
from .auth import ApiKeyMiddleware, CustomAuthMiddleware, check_auth
from .body_limit import BodyLimit
from .crons import CronScheduler
from .errors import LastResort, exception_handlers
from .handover import Handover, HandoverGate
from .http_options import enabled_routes, finish_app, front_middleware
from .routes import a2a, assistants, crons, mcp, runs, store, system, thread_stream, threads, ui
from .settings import Settings
from .state import ServerState
from .thread_ttl import ThreadSweeper

__all__ = ["create_app"]

logger = logging.getLogger("http_adapter.app")
_CRON_RESCAN = 5.0  # seconds: how soon a host sees a cron created on another one


def create_app(settings: Settings) -> Starlette:
    """The LangGraph-compatible agent server for `settings.graphs`."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        state = ServerState(settings)
        await state.open()
        queue = state.make_queue()
        app.state.server = state
        state.webhooks.app = whole  # relative webhook URLs call it, `http.app` too (issue 26)
        # Shared records (issue 19 §8): crons made on other hosts are found by a rescan.
        rescan = _CRON_RESCAN if settings.database_url is not None else None
        app.state.crons = scheduler = CronScheduler(state, rescan=rescan)
        try:
            async with anyio.create_task_group() as tg:
                for part in (state.signals, state.broker):  # Redis listeners and flushers
                    if part is not None and hasattr(part, "serve"):
                        await tg.start(part.serve)
                await tg.start(queue.serve)
                await tg.start(scheduler.serve)
                ttl = (settings.extra.get("checkpointer") or {}).get("ttl") or {}
                if ttl.get("default_ttl"):  # langgraph.json checkpointer.ttl (issue 18)
                    await tg.start(ThreadSweeper(state, ttl).serve)
                try:
                    yield
                finally:
                    try:
                        with anyio.CancelScope(shield=True):
                            await queue.drain(settings.drain_grace)
                            if queue.busy():
                                await _abandon(state, queue.busy())
                    finally:
                        tg.cancel_scope.cancel()
        except Exception as error:  # a background task died: /ok says so from now on
            state.stopped = f"background tasks stopped: {error!r}"
            logger.exception("The server's background tasks stopped")
            raise
        finally:
            await state.close()

    # With --handover, the lifespan waits for the server before it on the same SQLite file and
    # the gate holds requests meanwhile (issue 26, finding 8).
    handover = Handover(settings)
    gate = [Middleware(HandoverGate, handover=handover)] if handover.lock is not None else []
    # LastResort first (outermost): an unexpected error anywhere inside answers a JSON 500 and
    # keeps the connection (issue 16).
    middleware = [
        Middleware(LastResort),
        Middleware(BodyLimit, limit=settings.max_body_size),  # issue 26; before custom auth reads
        Middleware(ApiKeyMiddleware, api_keys=settings.api_keys),
    ]
    if settings.auth is not None:
        check_auth(settings.auth)  # now, not at the first request
        middleware.append(Middleware(CustomAuthMiddleware, auth=settings.auth))
    # CORS first (issue 18): preflights are answered before the API-key check.
    whole = finish_app(settings, middleware, Starlette(
        routes=enabled_routes(settings, meta=system.routes, assistants=assistants.routes,
                              threads=[*threads.routes, *thread_stream.routes],
                              runs=[*runs.routes, *crons.routes],
                              store=store.routes, ui=ui.routes, a2a=a2a.routes, mcp=mcp.routes,
                              studio=studio.routes() if settings.studio else []),
        middleware=[*gate, *front_middleware(settings), *middleware],
        exception_handlers=exception_handlers,
        lifespan=handover.wrap(lifespan),
    ))
    return whole


async def _abandon(state: ServerState, running: int) -> None:
    """Runs still running after the drain are given up: the cluster queue has handed them back,
    the embedded one re-runs them at the next start. Their checkpoints end here (the saver is
    flushed and closed), so what finished is durable and a sync node still running in a thread,
    which nothing can interrupt, writes nothing more (issue 19 §5)."""
    logger.warning("%d run(s) still running after the drain grace: given up, to be re-run", running)
    await state.saver.aclose()
