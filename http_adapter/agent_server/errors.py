"""The server's errors, and the one table that maps them to HTTP responses (STYLE 6).

Route handlers raise these; `exception_handlers` turns every error into a JSON body with a
`detail`, never a traceback (SPEC §3: 400/404/409/422, unknown route 404, wrong method 405).

The table's catch-all (`Exception`) is applied by `LastResort`, the outermost middleware, and
not by Starlette's own server-error middleware: that one re-raises after answering, so uvicorn
logged the traceback a second time and closed the client's keep-alive connection (issue 16).
"""

from __future__ import annotations

import logging
from typing import Any

import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from checkpoints import DamagedCheckpointError

__all__ = [
    "BadRequest",
    "Conflict",
    "FailedDependency",
    "LastResort",
    "NotFound",
    "ServerError",
    "UnprocessableEntity",
    "exception_handlers",
]

logger = logging.getLogger("http_adapter")


class ServerError(Exception):
    """Root of the errors a request can end with; `status` is the HTTP status."""

    status = 500

    def __init__(self, detail: Any) -> None:
        super().__init__(detail)
        self.detail = detail


class BadRequest(ServerError):
    status = 400


class NotFound(ServerError):
    status = 404


class Conflict(ServerError):
    status = 409


class UnprocessableEntity(ServerError):
    status = 422


class FailedDependency(ServerError):
    """Something the request needs could not be made: a graph that fails to load (issue 31)."""

    status = 424


def _json(status: int, detail: Any, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


async def _server_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ServerError)
    return _json(exc.status, exc.detail, getattr(exc, "headers", None))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code in (204, 304):
        return Response(status_code=exc.status_code)
    return _json(exc.status_code, exc.detail, getattr(exc, "headers", None))


async def _validation_error(request: Request, exc: Exception) -> Response:
    return _json(422, str(exc))


async def _damaged(request: Request, exc: Exception) -> Response:
    """A stored checkpoint that cannot be read (edited by hand): the message names the thread
    and checkpoint, for whoever repairs the file; no traceback, it is not a bug of ours."""
    logger.error("%s %s: %s", request.method, request.url.path, exc)
    return _json(500, str(exc))


async def _unexpected(request: Request, exc: Exception) -> Response:
    state = getattr(request.app.state, "server", None) if "app" in request.scope else None
    if isinstance(exc, getattr(state, "unavailable", ())):
        # The database is out of reach (issue 19): the request changed nothing; try again.
        logger.warning("%s %s: database unavailable: %r", request.method, request.url.path, exc)
        return _json(503, f"The database is unavailable: {type(exc).__name__}",
                     {"Retry-After": "1"})
    logger.exception("Unhandled error on %s %s", request.method, request.url.path)
    return _json(500, "Internal server error")


async def _client_gone(request: Request, exc: Exception) -> Response:
    """The client left before its body arrived (an abandoned upload, a request that timed
    out): nobody to answer and nothing wrong here, so one debug line (issue 26: it was logged
    with a traceback)."""
    logger.debug("%s %s: the client went away before sending its body", request.method,
                 request.url.path)
    return Response(status_code=400)


exception_handlers: dict[Any, Any] = {
    ClientDisconnect: _client_gone,
    ServerError: _server_error,
    HTTPException: _http_error,
    msgspec.ValidationError: _validation_error,
    msgspec.DecodeError: _validation_error,
    DamagedCheckpointError: _damaged,
    Exception: _unexpected,
}


class LastResort:
    """Answers an exception no other handler took with the table's catch-all, and ends the
    request normally, so the server neither logs it again nor closes the connection.

    A response that has already begun (a stream) cannot turn into a 500: the error is raised
    on, and the server ends the connection, the only way left to say the body is incomplete.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:
            if started:
                raise
            response = await exception_handlers[Exception](Request(scope, receive), exc)
            await response(scope, receive, send)
