"""Builds the control plane's Starlette app: the /v2 routes, auth, the error table, and a
lifespan that owns the records and the deployer's task group (so every revision build, server
start and restart has an owner and stops with the app)."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..agent_server.openapi import package_version
from . import openapi
from .auth import AuthMiddleware
from .deployer import Deployer
from .errors import exception_handlers
from .records import ControlRecords
from .routes import deployments, providers
from .routes._common import json_response
from .secrets import SecretBox
from .settings import ControlPlaneSettings

__all__ = ["ControlPlane", "create_app"]

logger = logging.getLogger("http_adapter.control_plane")


@dataclasses.dataclass(slots=True)
class ControlPlane:
    """What the routes reach through `request.app.state.control_plane`."""

    settings: ControlPlaneSettings
    records: ControlRecords
    deployer: Deployer
    image_version: str  # graphrun's version: the "image" every deployment runs


async def ok(request: Request) -> Response:
    """Health check (no key needed)."""
    return json_response({"ok": True})


def create_app(settings: ControlPlaneSettings | None = None) -> Starlette:
    """The control plane for `settings` (default: from the environment)."""
    settings = settings or ControlPlaneSettings.from_env()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if not settings.api_keys:
            logger.warning("GRAPHRUN_CONTROL_PLANE_API_KEYS is not set: the control plane and the "
                           "servers it deploys accept requests without an API key")
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        records = ControlRecords(settings.db_path, SecretBox(settings.secret_key, settings.data_dir))
        await records.open()
        deployer = Deployer(settings, records)
        app.state.control_plane = ControlPlane(settings, records, deployer, package_version())
        try:
            async with anyio.create_task_group() as tg:
                await tg.start(deployer.serve)
                try:
                    yield
                finally:
                    tg.cancel_scope.cancel()
        finally:
            await deployer.close()
            await records.close()

    return Starlette(
        routes=[Route("/ok", ok, methods=["GET"]), *openapi.routes, *deployments.routes,
                *providers.routes],
        middleware=[Middleware(AuthMiddleware, api_keys=settings.api_keys)],
        exception_handlers=exception_handlers,
        lifespan=lifespan,
    )
