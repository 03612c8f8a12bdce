"""OAuth providers (Auth Service v2): create, list, get, patch, delete within the tenant.

Responses are `OAuthProviderResponse` exactly. The client secret is accepted on create and
patch, stored Fernet-encrypted (`records.py`), and never returned or logged.
"""

from __future__ import annotations

import sqlite3
import uuid

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..errors import Conflict, NotFound
from ..records import now
from ..schemas import (
    OAuthProviderCreateRequest,
    OAuthProviderResponse,
    OAuthProviderUpdateRequest,
)
from ._common import body, json_response, plane, tenant

__all__ = ["routes"]

_UPDATABLE = ("name", "client_id", "auth_url", "token_url", "uses_pkce", "code_challenge_method")


async def list_providers(request: Request) -> Response:
    """List the tenant's OAuth providers."""
    return json_response(await plane(request).records.providers(tenant(request)))


async def create_provider(request: Request) -> Response:
    """Create an OAuth provider."""
    req = await body(request, OAuthProviderCreateRequest)
    records, tenant_id = plane(request).records, tenant(request)
    if await records.provider(tenant_id, req.provider_id) is not None:
        raise _taken(req.provider_id)
    stamp = now()
    provider = OAuthProviderResponse(
        id=str(uuid.uuid4()), organization_id=tenant_id, provider_id=req.provider_id,
        name=req.name, client_id=req.client_id, auth_url=req.auth_url, token_url=req.token_url,
        uses_pkce=req.uses_pkce, code_challenge_method=req.code_challenge_method,
        provider_type=req.provider_type, mcp_server_url=None,
        token_endpoint_auth_method=req.token_endpoint_auth_method, is_dynamic_client=False,
        created_at=stamp, updated_at=stamp,
    )
    try:
        await records.insert_provider(provider, req.client_secret)
    except sqlite3.IntegrityError:
        raise _taken(req.provider_id) from None
    return json_response(provider)


async def get_provider(request: Request) -> Response:
    """Get an OAuth provider by its provider_id."""
    return json_response(await _provider(request))


async def update_provider(request: Request) -> Response:
    """Update an OAuth provider; null and omitted fields keep their stored values."""
    req = await body(request, OAuthProviderUpdateRequest)
    provider = await _provider(request)
    changed = {name: getattr(req, name) for name in _UPDATABLE if getattr(req, name) is not None}
    provider = msgspec.structs.replace(provider, **changed, updated_at=now())
    await plane(request).records.update_provider(provider, req.client_secret)
    return json_response(provider)


async def delete_provider(request: Request) -> Response:
    """Delete an OAuth provider."""
    provider_id = request.path_params["provider_id"]
    if not await plane(request).records.delete_provider(tenant(request), provider_id):
        raise _not_found(provider_id)
    return json_response({})


async def _provider(request: Request) -> OAuthProviderResponse:
    provider_id = request.path_params["provider_id"]
    found = await plane(request).records.provider(tenant(request), provider_id)
    if found is None:
        raise _not_found(provider_id)
    return found


def _not_found(provider_id: str) -> NotFound:
    return NotFound(f"OAuth provider '{provider_id}' not found.")


def _taken(provider_id: str) -> Conflict:
    return Conflict(f"An OAuth provider with provider_id '{provider_id}' already exists.")


routes = [
    Route("/v2/auth/providers", list_providers, methods=["GET"]),
    Route("/v2/auth/providers", create_provider, methods=["POST"]),
    Route("/v2/auth/providers/{provider_id}", get_provider, methods=["GET"]),
    Route("/v2/auth/providers/{provider_id}", update_provider, methods=["PATCH"]),
    Route("/v2/auth/providers/{provider_id}", delete_provider, methods=["DELETE"]),
]
