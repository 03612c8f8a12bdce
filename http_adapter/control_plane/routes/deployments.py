"""Deployments (v2): CRUD, list filters, bulk delete, revisions, redeploy and revision logs.

Every handler decodes, calls `changes` / the records / the deployer, and encodes (STYLE 6);
records are always looked up within the request's tenant, so another tenant's deployment is a
404 exactly like a missing one.
"""

from __future__ import annotations

import anyio
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .. import changes
from ..errors import NotFound, deployment_not_found
from ..schemas import (
    DEPLOYMENT_STATUSES,
    DEPLOYMENT_TYPES,
    REVISION_STATUSES,
    Deployment,
    DeploymentCreateRequest,
    DeploymentPatchRequest,
)
from ..validation import convert, parse
from ._common import (
    body,
    json_response,
    path_uuid,
    plane,
    query_bool,
    query_choices,
    query_int,
    query_uuids,
    tenant,
)

__all__ = ["routes"]



async def create_deployment(request: Request) -> Response:
    """Create a deployment and its first revision, which the deployer builds and deploys."""
    cp = plane(request)
    req = await body(request, DeploymentCreateRequest)
    dep = await changes.create(cp.records, cp.deployer, tenant(request), req, cp.image_version)
    return json_response(dep, 201)


async def list_deployments(request: Request) -> Response:
    """List the tenant's deployments, newest first."""
    limit = query_int(request, "limit", 20, ge=1, le=100)
    offset = query_int(request, "offset", 0, ge=0)
    statuses = query_choices(request, "status", DEPLOYMENT_STATUSES)
    types = query_choices(request, "deployment_type", DEPLOYMENT_TYPES)
    query_bool(request, "remote_reconciled")  # validated; every deployment here is reconciled
    found = await plane(request).records.deployments(
        tenant(request),
        name_contains=request.query_params.get("name_contains"),
        statuses=statuses,
        deployment_types=types,
        image_version=request.query_params.get("image_version"),
        ids=query_uuids(request, "deployment_ids"),
        limit=limit,
        offset=offset,
    )
    return json_response({"resources": found, "offset": offset + len(found)})


async def delete_deployments(request: Request) -> Response:
    """Delete several deployments: 200 when all were deleted, 207 when only some were."""
    ids = query_uuids(request, "deployment_ids", required=True)
    cp, tenant_id = plane(request), tenant(request)
    found = [i for i in ids if await cp.records.deployment(i, tenant_id) is not None]
    if not found:
        raise deployment_not_found(ids[0])
    async with anyio.create_task_group() as tg:  # their servers stop concurrently
        for deployment_id in found:
            tg.start_soon(cp.deployer.remove, deployment_id)
    failed = [{"id": i, "detail": f"Deployment ID {i} not found."} for i in ids if i not in found]
    return json_response({"deleted": found, "failed": failed}, 207 if failed else 200)


async def get_deployment(request: Request) -> Response:
    """Get a deployment by ID."""
    return json_response(await _deployment(request))


async def patch_deployment(request: Request) -> Response:
    """Patch a deployment; a new revision when source_revision_config or secrets say so."""
    cp = plane(request)
    raw = parse(await request.body())
    dep = await _deployment(request)
    async with cp.deployer.lock(dep.id):
        dep = await _deployment(request)
        req = convert(changes.read_only_fields(raw, dep), DeploymentPatchRequest)
        dep = await changes.patch(cp.records, cp.deployer, dep, req)
    return json_response(dep)


async def delete_deployment(request: Request) -> Response:
    """Delete a deployment: its server is stopped and its data removed."""
    dep = await _deployment(request)
    await plane(request).deployer.remove(dep.id)
    return Response(status_code=204)


async def list_revisions(request: Request) -> Response:
    """List a deployment's revisions, newest first."""
    limit = query_int(request, "limit", 20, ge=1, le=100)
    offset = query_int(request, "offset", 0, ge=0)
    statuses = query_choices(request, "status", REVISION_STATUSES)
    query_bool(request, "remote_reconciled")
    dep = await _deployment(request)
    found = await plane(request).records.revisions(
        dep.id, statuses=statuses, limit=limit, offset=offset)
    return json_response({"resources": found, "offset": offset + len(found)})


async def get_revision(request: Request) -> Response:
    """Get a revision by ID for a deployment."""
    revision_id = path_uuid(request, "revision_id")
    dep = await _deployment(request)
    rev = await plane(request).records.revision(dep.id, revision_id)
    if rev is None:
        raise NotFound(f"Revision ID {revision_id} not found.")
    return json_response(rev)


async def redeploy_revision(request: Request) -> Response:
    """Redeploy a revision: a new revision with its code and the current secrets."""
    revision_id = path_uuid(request, "revision_id")
    cp = plane(request)
    dep = await _deployment(request)
    async with cp.deployer.lock(dep.id):
        dep = await _deployment(request)
        dep = await changes.redeploy(cp.records, cp.deployer, dep, revision_id)
    return json_response(dep)


async def revision_logs(request: Request) -> Response:
    """A revision's build, deploy and server logs (their last 256 KiB each)."""
    revision_id = path_uuid(request, "revision_id")
    cp = plane(request)
    dep = await _deployment(request)
    rev = await cp.records.revision(dep.id, revision_id)
    if rev is None:
        raise NotFound(f"Revision ID {revision_id} not found.")
    return json_response({"revision_id": rev.id, "status": rev.status,
                          "status_message": rev.status_message,
                          **cp.deployer.logs(dep.id, rev.id)})


async def _deployment(request: Request) -> Deployment:
    deployment_id = path_uuid(request, "deployment_id")
    dep = await plane(request).records.deployment(deployment_id, tenant(request))
    if dep is None:
        raise deployment_not_found(deployment_id)
    return dep


routes = [
    Route("/v2/deployments", list_deployments, methods=["GET"]),
    Route("/v2/deployments", create_deployment, methods=["POST"]),
    Route("/v2/deployments", delete_deployments, methods=["DELETE"]),
    Route("/v2/deployments/{deployment_id}", get_deployment, methods=["GET"]),
    Route("/v2/deployments/{deployment_id}", patch_deployment, methods=["PATCH"]),
    Route("/v2/deployments/{deployment_id}", delete_deployment, methods=["DELETE"]),
    Route("/v2/deployments/{deployment_id}/revisions", list_revisions, methods=["GET"]),
    Route("/v2/deployments/{deployment_id}/revisions/{revision_id}", get_revision,
          methods=["GET"]),
    Route("/v2/deployments/{deployment_id}/revisions/{revision_id}/redeploy", redeploy_revision,
          methods=["POST"]),
    Route("/v2/deployments/{deployment_id}/revisions/{revision_id}/logs", revision_logs,
          methods=["GET"]),
]
