"""The control plane's OpenAPI 3.1 document (version 0.1.0, like the published API) and its
offline reference page: `/openapi.json` and `/docs` (Swagger UI from local files).

Operations are listed once below; their schemas come from the msgspec Structs the routes decode
and encode (`msgspec.json.schema_components`), so a field added to a Struct shows up here.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ..agent_server.openapi import docs_asset_response, docs_html
from . import schemas as s
from .errors import NotFound

__all__ = ["VERSION", "openapi_document", "routes"]

VERSION = "0.1.0"
_TITLE = "graphrun Control Plane API"
_DESCRIPTION = """\
Create and manage graphrun agent server deployments (the LangSmith Deployment control plane API).

## Authentication
Send an API key from `GRAPHRUN_CONTROL_PLANE_API_KEYS` as `X-Api-Key` (or `Authorization: Bearer
<key>`), and the workspace as `X-Tenant-Id` (a UUID; a default workspace without it).

## Quick Start
1. `POST /v2/deployments` creates a deployment; the response holds its `id` and the ID of its
   first revision (`latest_revision_id`).
2. `GET /v2/deployments/{deployment_id}` retrieves it.
3. Poll `GET /v2/deployments/{deployment_id}/revisions/{latest_revision_id}` until `status` is
   `DEPLOYED` (or a `*_FAILED` status; `GET .../revisions/{revision_id}/logs` says why).
   The deployment's URL is then `source_config.custom_url`.
4. `PATCH /v2/deployments/{deployment_id}` updates it.
"""
_DEPLOYMENTS, _PROVIDERS, _SYSTEM = "Deployments (v2)", "Auth Service (v2)", "System"
_TAGS = [
    {"name": _DEPLOYMENTS, "description": "A deployment is an agent server; each revision builds "
     "and deploys one version of its source."},
    {"name": _PROVIDERS, "description": "OAuth provider configuration."},
    {"name": _SYSTEM, "description": "Health and this reference."},
]
_STRUCTS = (
    s.Deployment, s.DeploymentCreateRequest, s.DeploymentPatchRequest, s.DeploymentsList,
    s.Revision, s.RevisionsList, s.RevisionLogs, s.DeleteDeploymentsResult,
    s.OAuthProviderCreateRequest, s.OAuthProviderUpdateRequest, s.OAuthProviderResponse,
    s.HTTPValidationError, s.ErrorResponse,
)


@dataclasses.dataclass(frozen=True)
class _Op:
    method: str
    path: str
    summary: str
    tag: str
    ok: tuple[int, str | None] = (200, None)  # status, response schema (None: no body)
    body: str | None = None
    query: tuple[tuple[str, dict[str, Any], bool, str], ...] = ()  # name, schema, required, text
    errors: tuple[int, ...] = ()


def _int(default: int, lo: int, hi: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "default": default, "minimum": lo}
    return schema | ({"maximum": hi} if hi is not None else {})


_STR = {"type": "string"}
_PAGE = (("limit", _int(20, 1, 100), False, "Maximum number of resources to return."),
         ("offset", _int(0, 0), False, "Pagination offset: pass the `offset` of the previous "
          "page."))
_DEP = "/v2/deployments/{deployment_id}"
_REV = _DEP + "/revisions/{revision_id}"
_OPS = (
    _Op("get", "/v2/deployments", "List Deployments", _DEPLOYMENTS, (200, "DeploymentsList"),
        query=(*_PAGE,
               ("name_contains", _STR, False, "Only deployments whose name contains this."),
               ("status", _STR, False, "Comma-separated deployment statuses."),
               ("deployment_type", {"enum": ["dev_free", "dev", "prod"]}, False, "Deployment type."),
               ("image_version", _STR, False, "Image (graphrun) version."),
               ("deployment_ids", _STR, False, "Comma-separated deployment IDs."),
               ("remote_reconciled", {"type": "boolean"}, False, "Accepted; always reconciled."))),
    _Op("post", "/v2/deployments", "Create Deployment", _DEPLOYMENTS, (201, "Deployment"),
        body="DeploymentCreateRequest", errors=(400, 409)),
    _Op("delete", "/v2/deployments", "Delete Deployments", _DEPLOYMENTS,
        (200, "DeleteDeploymentsResult"), errors=(207, 404),
        query=(("deployment_ids", {"type": "array", "items": {"type": "string", "format": "uuid"},
                                   "maxItems": 100}, True, "Deployment IDs (repeated or "
                "comma-separated)."),)),
    _Op("get", _DEP, "Get Deployment", _DEPLOYMENTS, (200, "Deployment"), errors=(404,)),
    _Op("patch", _DEP, "Patch Deployment", _DEPLOYMENTS, (200, "Deployment"),
        body="DeploymentPatchRequest", errors=(400, 404)),
    _Op("delete", _DEP, "Delete Deployment", _DEPLOYMENTS, (204, None), errors=(404,)),
    _Op("get", _DEP + "/revisions", "List Revisions", _DEPLOYMENTS, (200, "RevisionsList"),
        errors=(404,), query=(*_PAGE, ("status", _STR, False, "Comma-separated revision statuses."),
                              ("remote_reconciled", {"type": "boolean"}, False, "Accepted."))),
    _Op("get", _REV, "Get Revision", _DEPLOYMENTS, (200, "Revision"), errors=(404,)),
    _Op("post", _REV + "/redeploy", "Redeploy Revision", _DEPLOYMENTS, (200, "Deployment"),
        errors=(400, 404)),
    _Op("get", _REV + "/logs", "Get Revision Logs", _DEPLOYMENTS, (200, "RevisionLogs"),
        errors=(404,)),
    _Op("get", "/v2/auth/providers", "List Oauth Providers", _PROVIDERS,
        (200, "OAuthProviderResponse[]")),
    _Op("post", "/v2/auth/providers", "Create Oauth Provider", _PROVIDERS,
        (200, "OAuthProviderResponse"), body="OAuthProviderCreateRequest", errors=(409,)),
    _Op("get", "/v2/auth/providers/{provider_id}", "Get Oauth Provider", _PROVIDERS,
        (200, "OAuthProviderResponse"), errors=(404,)),
    _Op("patch", "/v2/auth/providers/{provider_id}", "Update Oauth Provider", _PROVIDERS,
        (200, "OAuthProviderResponse"), body="OAuthProviderUpdateRequest", errors=(404,)),
    _Op("delete", "/v2/auth/providers/{provider_id}", "Delete Oauth Provider", _PROVIDERS,
        (200, "{}"), errors=(404,)),
    _Op("get", "/ok", "Health Check", _SYSTEM),
)
_PUBLIC = frozenset(("/ok",))


@cache
def openapi_document() -> dict[str, Any]:
    """The whole document (built once)."""
    _, components = msgspec.json.schema_components(_STRUCTS, ref_template="#/components/schemas/{name}")
    paths: dict[str, dict[str, Any]] = {}
    for op in _OPS:
        paths.setdefault(op.path, {})[op.method] = _operation(op)
    return {
        "openapi": "3.1.0",
        "info": {"title": _TITLE, "version": VERSION, "description": _DESCRIPTION},
        "tags": _TAGS,
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "API Key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"},
                "Tenant ID": {"type": "apiKey", "in": "header", "name": "X-Tenant-Id"},
                "Bearer Auth": {"type": "http", "scheme": "bearer"},
            },
        },
    }


def _operation(op: _Op) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "tags": [op.tag], "summary": op.summary,
        "operationId": f"{op.summary.lower().replace(' ', '_')}_{op.method}",
        "parameters": [*_path_parameters(op.path), *_query_parameters(op.query)],
        "responses": _responses(op),
    }
    if op.path not in _PUBLIC:
        operation["security"] = [{"API Key": [], "Tenant ID": []}, {"Bearer Auth": [], "Tenant ID": []}]
    if op.body:
        operation["requestBody"] = {"required": True, "content": {"application/json": {
            "schema": _ref(op.body)}}}
    return operation


def _path_parameters(path: str) -> list[dict[str, Any]]:
    found = []
    for name in ("deployment_id", "revision_id", "provider_id"):
        if "{" + name + "}" in path:
            schema = {"type": "string"} if name == "provider_id" else {"type": "string", "format": "uuid"}
            found.append({"name": name, "in": "path", "required": True, "schema": schema})
    return found


def _query_parameters(query: tuple[tuple[str, dict[str, Any], bool, str], ...]) -> list[dict[str, Any]]:
    return [{"name": name, "in": "query", "required": required, "schema": schema,
             "description": text} for name, schema, required, text in query]


def _responses(op: _Op) -> dict[str, Any]:
    status, schema = op.ok
    ok: dict[str, Any] = {"description": "Successful Response"}
    if schema is not None:
        ok["content"] = {"application/json": {"schema": _ref(schema)}}
    responses = {str(status): ok}
    for code in op.errors:
        if code == 207:
            responses["207"] = {"description": "Some deployments deleted, some not",
                                "content": {"application/json": {"schema": _ref("DeleteDeploymentsResult")}}}
        else:
            responses[str(code)] = {"description": _ERRORS[code], "content": {
                "application/json": {"schema": _ref("ErrorResponse")}}}
    if op.path not in _PUBLIC:
        responses["401"] = {"description": "Missing or invalid API key",
                            "content": {"application/json": {"schema": _ref("ErrorResponse")}}}
    responses["422"] = {"description": "Validation Error",
                        "content": {"application/json": {"schema": _ref("HTTPValidationError")}}}
    return responses


_ERRORS = {400: "Bad Request", 404: "Not Found", 409: "Conflict"}


def _ref(name: str) -> dict[str, Any]:
    if name == "{}":
        return {"type": "object"}
    if name.endswith("[]"):
        return {"type": "array", "items": _ref(name[:-2])}
    return {"$ref": f"#/components/schemas/{name}"}


# -- routes ------------------------------------------------------------------------------------



async def openapi(request: Request) -> Response:
    """This API's OpenAPI document."""
    return Response(_document_bytes(), media_type="application/json")


@cache
def _document_bytes() -> bytes:
    return msgspec.json.encode(openapi_document())


async def docs(request: Request) -> Response:
    """The interactive API reference (Swagger UI from local files: no network needed)."""
    page = docs_html(request.scope.get("root_path", ""))
    return HTMLResponse(page.replace("graphrun Agent Server API", _TITLE))


async def docs_asset(request: Request) -> Response:
    """One file of the reference page's Swagger UI."""
    name = request.path_params["name"]
    response = docs_asset_response(name)
    if response is None:
        raise NotFound(f"No documentation asset '{name}'")
    return response


routes = [
    Route("/openapi.json", openapi, methods=["GET"]),
    Route("/docs", docs, methods=["GET"]),
    Route("/docs/{name}", docs_asset, methods=["GET"]),
]
