"""The control plane's wire types (SPEC §4; field names and enums of the published v0.1.0 API).

Requests forbid unknown fields, so a misspelt or unsupported field is a 422 naming it instead of
being silently ignored. Responses are the stored records themselves, encoded once by msgspec.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct

__all__ = [
    "DEPLOYMENT_STATUSES",
    "DEPLOYMENT_TYPES",
    "REVISION_STATUSES",
    "SOURCES",
    "TERMINAL_STATUSES",
    "DeleteDeploymentsResult",
    "DeleteFailure",
    "Deployment",
    "DeploymentCreateRequest",
    "DeploymentPatchRequest",
    "DeploymentsList",
    "ErrorResponse",
    "HTTPValidationError",
    "OAuthProviderCreateRequest",
    "OAuthProviderResponse",
    "OAuthProviderUpdateRequest",
    "Revision",
    "RevisionLogs",
    "RevisionsList",
    "Secret",
    "SourceConfig",
    "SourceRevisionConfig",
    "SourceRevisionConfigRequest",
    "ValidationError",
]

# `local` is ours: a directory on the control plane's machine, copied for each revision.
Source = Literal["github", "external_docker", "internal_docker", "internal_source", "local"]
SOURCES: tuple[str, ...] = Source.__args__  # type: ignore[attr-defined]
RevisionSource = Literal["github", "internal_docker", "internal_source", "local"]
DeploymentType = Literal["dev_free", "dev", "prod"]
DEPLOYMENT_TYPES: tuple[str, ...] = DeploymentType.__args__  # type: ignore[attr-defined]
RevisionStatus = Literal[
    "CREATING", "QUEUED", "AWAITING_BUILD", "BUILDING", "AWAITING_DEPLOY", "DEPLOYING",
    "CREATE_FAILED", "BUILD_FAILED", "DEPLOY_FAILED", "DEPLOYED", "SKIPPED", "INTERRUPTED",
    "UNKNOWN",
]
REVISION_STATUSES: tuple[str, ...] = RevisionStatus.__args__  # type: ignore[attr-defined]
TERMINAL_STATUSES = frozenset((
    "CREATE_FAILED", "BUILD_FAILED", "DEPLOY_FAILED", "DEPLOYED", "SKIPPED", "INTERRUPTED",
    "UNKNOWN",
))
DeploymentStatus = Literal["AWAITING_DATABASE", "READY", "UNUSED", "AWAITING_DELETE", "UNKNOWN"]
DEPLOYMENT_STATUSES: tuple[str, ...] = DeploymentStatus.__args__  # type: ignore[attr-defined]

EnvName = Annotated[str, Meta(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
NonEmpty = Annotated[str, Meta(min_length=1)]
HttpUrl = Annotated[str, Meta(pattern=r"^https?://[^\s/]+\S*$")]
ProviderId = Annotated[str, Meta(pattern=r"^[^/\s]+$")]


class Secret(Struct, forbid_unknown_fields=True):
    """A secret, given to the deployment's server (and its build check) as an env variable."""

    name: EnvName
    value: str


class SourceConfig(Struct, forbid_unknown_fields=True):
    """Source fields that need no new revision when changed, or cannot change at all."""

    integration_id: uuid.UUID | None = None  # accepted and kept; no integration is needed
    repo_url: str | None = None  # git URL (github) or a directory (local); immutable
    deployment_type: DeploymentType | None = None  # immutable
    build_on_push: bool | None = None  # kept; pushes are not watched
    custom_url: str | None = None  # read-only: the URL of the active revision's server
    resource_spec: dict[str, Any] | None = None
    listener_id: uuid.UUID | None = None
    listener_config: dict[str, Any] | None = None
    install_command: str | None = None
    build_command: str | None = None


class SourceRevisionConfigRequest(Struct, forbid_unknown_fields=True):
    """Fields whose non-null value in a PATCH makes a new revision."""

    repo_ref: str | None = None  # branch, tag (refs/tags/...) or commit of a git source
    langgraph_config_path: str | None = None  # relative to the source's root
    image_uri: str | None = None
    source_tarball_path: str | None = None


class SourceRevisionConfig(SourceRevisionConfigRequest, forbid_unknown_fields=True):
    repo_commit_sha: str | None = None  # read-only: the commit a git revision was built from


class DeploymentCreateRequest(Struct, forbid_unknown_fields=True):
    name: NonEmpty
    source: Source
    source_config: SourceConfig
    source_revision_config: SourceRevisionConfigRequest
    secrets: list[Secret] = msgspec.field(default_factory=list)
    secret_references: list[dict[str, Any]] | None = None


class DeploymentPatchRequest(Struct, forbid_unknown_fields=True):
    revision_source: RevisionSource | None = None
    source_config: SourceConfig | None = None
    source_revision_config: SourceRevisionConfigRequest | None = None
    secrets: list[Secret] | None = None  # the whole list; masked values keep the stored ones
    secret_references: list[dict[str, Any]] | None = None


class Deployment(Struct, kw_only=True):
    """The Deployment resource; `secrets` hold masked values in every response."""

    name: str
    source: str
    source_config: SourceConfig
    source_revision_config: SourceRevisionConfig
    secrets: list[Secret] = msgspec.field(default_factory=list)
    secret_references: list[dict[str, Any]] | None = None
    id: str
    tenant_id: str
    created_at: str
    updated_at: str
    status: str = "READY"
    latest_revision_id: str | None = None
    active_revision_id: str | None = None
    image_version: str | None = None


class Revision(Struct, kw_only=True):
    """The Revision resource; `status_message` says why a revision failed (ours)."""

    id: str
    created_at: str
    updated_at: str
    status: str = "QUEUED"
    source: str
    source_revision_config: SourceRevisionConfig
    status_message: str | None = None


class OAuthProviderCreateRequest(Struct, forbid_unknown_fields=True):
    provider_id: ProviderId
    name: NonEmpty
    client_id: str
    auth_url: HttpUrl
    token_url: HttpUrl
    client_secret: str | None = None
    uses_pkce: bool = False
    code_challenge_method: str = "S256"
    provider_type: Literal["microsoft", "salesforce", "slack"] | None = None
    token_endpoint_auth_method: Literal["none", "client_secret_basic", "client_secret_post"] = (
        "client_secret_post"
    )


class OAuthProviderUpdateRequest(Struct, forbid_unknown_fields=True):
    """Null and omitted fields leave the stored value unchanged."""

    name: NonEmpty | None = None
    client_id: str | None = None
    client_secret: str | None = None
    auth_url: HttpUrl | None = None
    token_url: HttpUrl | None = None
    uses_pkce: bool | None = None
    code_challenge_method: str | None = None


class OAuthProviderResponse(Struct, kw_only=True):
    """Exactly the published response: never the client secret."""

    id: str
    organization_id: str
    provider_id: str
    name: str
    client_id: str
    auth_url: str
    token_url: str
    uses_pkce: bool
    code_challenge_method: str | None
    provider_type: str | None
    mcp_server_url: str | None
    token_endpoint_auth_method: str
    is_dynamic_client: bool
    created_at: str
    updated_at: str


class DeploymentsList(Struct):
    resources: list[Deployment]
    offset: int  # pass it back to get the next page


class RevisionsList(Struct):
    resources: list[Revision]
    offset: int


class RevisionLogs(Struct):
    """GET /v2/deployments/{id}/revisions/{rid}/logs (ours): the last 256 KiB of each log."""

    revision_id: str
    status: str
    status_message: str | None
    build_log: str  # fetch and graph check
    deploy_log: str  # server start, /ok, switch, stop of the previous server, restarts
    server_log: str  # the agent server's own output


class DeleteFailure(Struct):
    id: str
    detail: str


class DeleteDeploymentsResult(Struct):
    """Bulk delete: 200 when every deployment was deleted, 207 when only some were."""

    deleted: list[str]
    failed: list[DeleteFailure]


class ValidationError(Struct):
    loc: list[str | int]
    msg: str
    type: str


class HTTPValidationError(Struct):
    detail: list[ValidationError]


class ErrorResponse(Struct):
    detail: str
