"""The control plane's error tree and the one table that maps errors to HTTP responses.

    ControlPlaneError            root; `detail` is what a client sees
    ├── BadRequest        400    a valid request the control plane will not do (immutable field, ...)
    ├── Unauthorized      401    missing or wrong API key
    ├── NotFound          404    {"detail": "Deployment ID {id} not found."} and the like
    ├── Conflict          409    a name or provider_id already taken in the tenant
    ├── ValidationFailed  422    {"detail": [{"loc": [...], "msg": "...", "type": "..."}]}
    └── RevisionFailed           a revision that cannot be built or deployed (never an HTTP
        ├── BuildFailed          answer: the deployer records it as BUILD_FAILED / DEPLOY_FAILED
        └── DeployFailed         with the message as the revision's status_message)

Route handlers raise these and never build error responses themselves (STYLE 6).
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

__all__ = [
    "BadRequest",
    "BuildFailed",
    "Conflict",
    "ControlPlaneError",
    "DeployFailed",
    "NotFound",
    "RevisionFailed",
    "Unauthorized",
    "ValidationFailed",
    "deployment_not_found",
    "exception_handlers",
]

logger = logging.getLogger("http_adapter.control_plane")


class ControlPlaneError(Exception):
    """Root of the control plane's errors; `status` is the HTTP status when a request ends so."""

    status = 500

    def __init__(self, detail: Any) -> None:
        super().__init__(detail)
        self.detail = detail


class BadRequest(ControlPlaneError):
    status = 400


class Unauthorized(ControlPlaneError):
    status = 401


class NotFound(ControlPlaneError):
    status = 404


class Conflict(ControlPlaneError):
    status = 409


class ValidationFailed(ControlPlaneError):
    """`detail` is the list of `{"loc", "msg", "type"}` errors (the HTTPValidationError shape)."""

    status = 422


class RevisionFailed(ControlPlaneError):
    """A revision could not be built or deployed; the message says why."""


class BuildFailed(RevisionFailed):
    pass


class DeployFailed(RevisionFailed):
    pass


def deployment_not_found(deployment_id: str) -> NotFound:
    return NotFound(f"Deployment ID {deployment_id} not found.")


def _json(status: int, detail: Any, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


async def _known(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ControlPlaneError)
    return _json(exc.status, exc.detail)


async def _http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code in (204, 304):
        return Response(status_code=exc.status_code)
    return _json(exc.status_code, exc.detail, getattr(exc, "headers", None))


async def _unexpected(request: Request, exc: Exception) -> Response:
    logger.exception("Unhandled error on %s %s", request.method, request.url.path)
    return _json(500, "Internal server error")


exception_handlers: dict[Any, Any] = {
    ControlPlaneError: _known,
    HTTPException: _http,
    Exception: _unexpected,
}
