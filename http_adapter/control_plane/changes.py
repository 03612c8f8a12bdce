"""How requests change deployments: create, patch and redeploy, with the rules of each source.

Route handlers decode and encode; this module decides. Rules (SPEC §4 and the published API):
- `github`: any git repository URL or path (`source_config.repo_url`, required) at `repo_ref`;
  `local` (ours): a directory (`repo_url`, a path or file:// URL) copied for each revision.
  Docker sources cannot be built here: 400.
- `source_config.custom_url` is read-only (the active server's URL); `integration_id`,
  `repo_url`, `deployment_type`, `listener_id` and `listener_config` cannot change after create;
  `name` and `source` neither. Sending such a field with its current value is accepted (a client
  may PATCH back what it read); a different value is a 400 naming the field. Fields that report
  state (`status`, `updated_at`, `latest_revision_id`, ...) are ignored in a PATCH.
- A PATCH whose `source_revision_config` has a non-null field, or whose `secrets` is non-null,
  makes a new revision (the published rule; the quick start PATCHes the same repo_ref to build
  the branch's new head). `secrets` replaces the whole list; a value equal to the mask shown in
  responses keeps the stored value of that name.
"""

from __future__ import annotations

import re
import sqlite3
import uuid
from pathlib import Path, PurePosixPath
from typing import Any

import msgspec

from ._build import local_path
from .deployer import Deployer
from .errors import BadRequest, Conflict, NotFound, ValidationFailed
from .records import MASK, ControlRecords, now
from .schemas import (
    TERMINAL_STATUSES,
    Deployment,
    DeploymentCreateRequest,
    DeploymentPatchRequest,
    Revision,
    Secret,
    SourceConfig,
    SourceRevisionConfig,
    SourceRevisionConfigRequest,
)
from .validation import error

__all__ = ["create", "patch", "read_only_fields", "redeploy"]

_BUILDABLE = ("github", "local")
_IMMUTABLE = ("integration_id", "repo_url", "deployment_type", "listener_id", "listener_config")
_MUTABLE = ("build_on_push", "resource_spec", "install_command", "build_command")
_RESERVED_ENV = frozenset(("GRAPHRUN_API_KEYS",))  # set by the control plane: the org's keys
# Top-level Deployment fields a PATCH may repeat unchanged but never change, and the state the
# server keeps (a body read earlier carries stale values of it: they are ignored).
_IDENTITY = ("name", "source", "id", "tenant_id", "created_at")
_STATE = ("updated_at", "status", "latest_revision_id", "active_revision_id", "image_version")


async def create(
    records: ControlRecords, deployer: Deployer, tenant_id: str, req: DeploymentCreateRequest,
    image_version: str,
) -> Deployment:
    _check_secrets(req.secrets, ("body", "secrets"))
    _check_source(req.source)
    config, url = req.source_config, req.source_config.repo_url
    if not url:
        raise BadRequest(f"source_config.repo_url is required for source '{req.source}'.")
    if config.custom_url is not None:
        raise BadRequest("source_config.custom_url is read-only: it is set to the URL of the "
                         "deployed agent server.")
    if req.secret_references:
        raise BadRequest("secret_references (Kubernetes secrets) are not supported; use secrets.")
    if req.source == "local":
        directory = local_path(url).resolve()
        if not directory.is_dir():
            raise BadRequest(f"source_config.repo_url: no directory at '{url}'.")
        config = msgspec.structs.replace(config, repo_url=str(directory))
    elif _is_local_path(url):  # git clones run elsewhere: make the path absolute
        config = msgspec.structs.replace(config, repo_url=str(Path(url).expanduser().resolve()))
    revision_config = _revision_config(req.source, None, req.source_revision_config)
    if await records.name_taken(tenant_id, req.name):
        raise Conflict(f"A deployment named '{req.name}' already exists.")
    stamp = now()
    dep = Deployment(
        id=str(uuid.uuid4()), tenant_id=tenant_id, name=req.name, source=req.source,
        source_config=config, source_revision_config=revision_config,
        secrets=_masked(req.secrets), created_at=stamp, updated_at=stamp, status="READY",
        image_version=image_version,
    )
    rev = _revision(req.source, revision_config, stamp)
    dep.latest_revision_id = rev.id
    deployer.prepare(dep.id)
    try:
        await records.insert_deployment(dep, rev, list(req.secrets))
    except sqlite3.IntegrityError:
        raise Conflict(f"A deployment named '{req.name}' already exists.") from None
    deployer.submit(dep.id)
    return dep


def read_only_fields(raw: Any, dep: Deployment) -> Any:
    """`raw` (a PATCH body) without the read-only fields that repeat current values; a 400 for
    one that would change."""
    if not isinstance(raw, dict):
        return raw
    current = msgspec.to_builtins(dep)
    for name in _IDENTITY:
        if name in raw:
            if raw[name] != current.get(name):
                raise BadRequest(f"{name} cannot be changed once the deployment is created.")
            del raw[name]
    for name in _STATE:
        raw.pop(name, None)
    given = raw.get("source_revision_config")
    if isinstance(given, dict) and "repo_commit_sha" in given:
        if given["repo_commit_sha"] not in (None, dep.source_revision_config.repo_commit_sha):
            raise BadRequest("source_revision_config.repo_commit_sha is read-only: it is the "
                             "commit a revision was built from.")
        del given["repo_commit_sha"]
    return raw


async def patch(
    records: ControlRecords, deployer: Deployer, dep: Deployment, req: DeploymentPatchRequest,
) -> Deployment:
    """Apply `req` to `dep` (read under the deployment's lock); a new revision when it says so."""
    if req.revision_source is not None and req.revision_source != dep.source:
        raise BadRequest(f"revision_source '{req.revision_source}' differs from the deployment's "
                         f"source '{dep.source}'; a deployment keeps its source.")
    if req.secret_references:
        raise BadRequest("secret_references (Kubernetes secrets) are not supported; use secrets.")
    dep = msgspec.structs.replace(dep, updated_at=now())
    if req.source_config is not None:
        dep.source_config = _patched_source_config(dep.source_config, req.source_config)
    wanted = req.source_revision_config
    new_config = wanted is not None and any(
        v is not None for v in msgspec.structs.astuple(wanted))
    if not new_config and req.secrets is None:
        await records.update_deployment(dep)
        return dep
    revision_config = (_revision_config(dep.source, dep.source_revision_config, wanted)
                       if new_config and wanted is not None else
                       msgspec.structs.replace(dep.source_revision_config))
    secrets = await records.deployment_secrets(dep.id)
    if req.secrets is not None:
        _check_secrets(req.secrets, ("body", "secrets"))
        secrets = _unmasked(req.secrets, secrets)
    rev = _revision(dep.source, revision_config, dep.updated_at)
    dep.latest_revision_id = rev.id
    dep.source_revision_config = revision_config
    dep.secrets = _masked(secrets)
    await records.add_revision(dep, rev, secrets)
    deployer.submit(dep.id)
    return dep


async def redeploy(
    records: ControlRecords, deployer: Deployer, dep: Deployment, revision_id: str
) -> Deployment:
    """A new revision running the code of `revision_id` (its source tree when still on disk,
    else its commit) with the deployment's current secrets."""
    old = await records.revision(dep.id, revision_id)
    if old is None:
        raise NotFound(f"Revision ID {revision_id} not found.")
    if old.status not in TERMINAL_STATUSES:
        raise BadRequest(f"Revision ID {revision_id} is {old.status}; only a finished revision "
                         "can be redeployed.")
    stamp = now()
    rev = _revision(dep.source, msgspec.structs.replace(old.source_revision_config), stamp)
    secrets = await records.deployment_secrets(dep.id)
    dep = msgspec.structs.replace(dep, latest_revision_id=rev.id, updated_at=stamp,
                                  source_revision_config=rev.source_revision_config)
    await records.add_revision(dep, rev, secrets, code_from=revision_id)
    deployer.submit(dep.id)
    return dep


def _is_local_path(url: str) -> bool:
    """A repository given as a path (not a URL, not scp-like user@host:path) that exists."""
    if "://" in url or re.match(r"^[\w.-]+@[\w.-]+:", url):
        return False
    return Path(url).expanduser().exists()


def _check_source(source: str) -> None:
    if source not in _BUILDABLE:
        raise BadRequest(f"source '{source}' is not supported by graphrun's control plane: use "
                         "'github' (a git repository) or 'local' (a directory).")


def _revision_config(
    source: str, previous: SourceRevisionConfig | None, given: SourceRevisionConfigRequest | None,
) -> SourceRevisionConfig:
    """The revision's config: `given`'s non-null fields over `previous`'s (commit unpinned)."""
    given = given or SourceRevisionConfigRequest()
    for name in ("image_uri", "source_tarball_path"):
        if getattr(given, name) is not None:
            raise BadRequest(f"source_revision_config.{name} does not apply to source '{source}'.")
    if source == "local" and given.repo_ref is not None:
        raise BadRequest("source_revision_config.repo_ref applies to git sources only; a 'local' "
                         "source is the directory as it is.")
    base = previous or SourceRevisionConfig()
    config_path = given.langgraph_config_path or base.langgraph_config_path or "langgraph.json"
    path = PurePosixPath(config_path)
    if path.is_absolute() or ".." in path.parts or Path(config_path).is_absolute():
        raise BadRequest("source_revision_config.langgraph_config_path must be a path inside the "
                         "source, relative to its root.")
    return SourceRevisionConfig(
        repo_ref=given.repo_ref if given.repo_ref is not None else base.repo_ref,
        langgraph_config_path=config_path,
    )


def _patched_source_config(current: SourceConfig, given: SourceConfig) -> SourceConfig:
    changes: dict[str, Any] = {}
    for name in _IMMUTABLE:
        value = getattr(given, name)
        if value is not None and value != getattr(current, name):
            raise BadRequest(f"source_config.{name} cannot be changed once the deployment is "
                             "created.")
    if given.custom_url is not None and given.custom_url != current.custom_url:
        raise BadRequest("source_config.custom_url is read-only: it is the URL of the deployed "
                         "agent server.")
    for name in _MUTABLE:
        value = getattr(given, name)
        if value is not None:
            changes[name] = value
    return msgspec.structs.replace(current, **changes)


def _revision(source: str, config: SourceRevisionConfig, stamp: str) -> Revision:
    return Revision(id=str(uuid.uuid4()), created_at=stamp, updated_at=stamp, status="QUEUED",
                    source=source, source_revision_config=config)


def _check_secrets(secrets: list[Secret], loc: tuple[str, ...]) -> None:
    seen: set[str] = set()
    errors = []
    for i, secret in enumerate(secrets):
        if secret.name in _RESERVED_ENV:
            errors.append(error((*loc, i, "name"), f"Value error, {secret.name} is set by the "
                                "control plane (the org's API keys)", "value_error"))
        elif secret.name in seen:
            errors.append(error((*loc, i, "name"), f"Value error, duplicate secret name "
                                f"'{secret.name}'", "value_error"))
        seen.add(secret.name)
    if errors:
        raise ValidationFailed(errors)


def _masked(secrets: list[Secret]) -> list[Secret]:
    return [Secret(name=s.name, value=MASK) for s in secrets]


def _unmasked(given: list[Secret], stored: list[Secret]) -> list[Secret]:
    """`given`, where a masked value stands for the stored value of the same name."""
    known = {s.name: s.value for s in stored}
    return [Secret(name=s.name, value=known[s.name]) if s.value == MASK and s.name in known else s
            for s in given]
