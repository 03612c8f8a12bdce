"""Deployments (v2) over HTTP: the published quick start word for word, CRUD, filters, bulk
delete, revisions, immutable fields and tenant isolation."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import httpx

from .conftest import (
    KEY,
    OTHER_TENANT,
    TENANT,
    ControlPlaneServer,
    git_project,
    stored_bytes,
    write_project,
)

MAX_WAIT_TIME = 60


def test_quick_start(control_plane: ControlPlaneServer, tmp_path: Path) -> None:
    """The control plane API's published quick start, with a local repository for GitHub."""
    repo = git_project(tmp_path / "langgraph-example")
    host = control_plane.url

    def get_headers() -> dict[str, str]:
        return {"X-Api-Key": KEY, "X-Tenant-Id": TENANT}

    def create_deployment() -> str:
        request_body = {
            "name": "my_deployment",
            "source": "github",
            "source_config": {
                "integration_id": str(uuid.uuid4()),
                "repo_url": f"file://{repo}",
                "deployment_type": "dev",
                "build_on_push": False,
                "custom_url": None,
                "resource_spec": None,
            },
            "source_revision_config": {
                "repo_ref": "main",
                "langgraph_config_path": "langgraph.json",
                "image_uri": None,
            },
            "secrets": [
                {"name": "OPENAI_API_KEY", "value": "test_openai_api_key"},
                {"name": "ANTHROPIC_API_KEY", "value": "test_anthropic_api_key"},
            ],
        }
        response = httpx.post(f"{host}/v2/deployments", headers=get_headers(), json=request_body)
        if response.status_code != 201:
            raise Exception(f"Failed to create deployment: {response.text}")
        return response.json()["id"]  # type: ignore[no-any-return]

    def get_deployment(deployment_id: str) -> dict:
        response = httpx.get(f"{host}/v2/deployments/{deployment_id}", headers=get_headers())
        if response.status_code != 200:
            raise Exception(f"Failed to get deployment ID {deployment_id}: {response.text}")
        return response.json()  # type: ignore[no-any-return]

    def get_revision(deployment_id: str, revision_id: str) -> dict:
        response = httpx.get(f"{host}/v2/deployments/{deployment_id}/revisions/{revision_id}",
                             headers=get_headers())
        if response.status_code != 200:
            raise Exception(f"Failed to get revision ID {revision_id}: {response.text}")
        return response.json()  # type: ignore[no-any-return]

    def patch_deployment(deployment_id: str) -> None:
        response = httpx.patch(
            f"{host}/v2/deployments/{deployment_id}",
            headers=get_headers(),
            json={
                "source_config": {"build_on_push": True},
                "source_revision_config": {
                    "repo_ref": "main",
                    "langgraph_config_path": "langgraph.json",
                },
            },
        )
        if response.status_code != 200:
            raise Exception(f"Failed to patch deployment: {response.text}")

    def wait_for_deployment(deployment_id: str, revision_id: str) -> None:
        start_time = time.time()
        status = None
        while time.time() - start_time < MAX_WAIT_TIME:
            revision = get_revision(deployment_id, revision_id)
            status = revision["status"]
            if status == "DEPLOYED":
                break
            elif "FAILED" in status:
                raise Exception(f"Revision ID {revision_id} failed: {revision}")
            time.sleep(0.05)
        else:
            raise Exception("Timeout waiting for deployment")

    def delete_deployment(deployment_id: str) -> None:
        response = httpx.delete(f"{host}/v2/deployments/{deployment_id}", headers=get_headers())
        if response.status_code != 204:
            raise Exception(f"Failed to delete deployment ID {deployment_id}: {response.text}")

    deployment_id = create_deployment()
    deployment = get_deployment(deployment_id)
    latest_revision_id = deployment["latest_revision_id"]
    wait_for_deployment(deployment_id, latest_revision_id)
    first_url = get_deployment(deployment_id)["source_config"]["custom_url"]

    git_project(repo, "v2")  # a push to main; the PATCH builds the branch's new head
    patch_deployment(deployment_id)
    deployment = get_deployment(deployment_id)
    assert deployment["latest_revision_id"] != latest_revision_id
    assert deployment["source_config"]["build_on_push"] is True
    latest_revision_id = deployment["latest_revision_id"]
    wait_for_deployment(deployment_id, latest_revision_id)
    url = get_deployment(deployment_id)["source_config"]["custom_url"]
    assert url != first_url
    answer = httpx.post(f"{url}/runs/wait", headers={"X-Api-Key": KEY},
                        json={"assistant_id": "agent", "input": {"text": "q"}}).json()
    assert answer["version"] == "v2"

    delete_deployment(deployment_id)
    assert httpx.get(f"{host}/v2/deployments/{deployment_id}", headers=get_headers()).json() == {
        "detail": f"Deployment ID {deployment_id} not found."}


def _empty(tmp_path: Path) -> Path:
    """A source with no langgraph.json: its revisions fail fast, which API tests do not mind."""
    directory = tmp_path / "empty"
    directory.mkdir(exist_ok=True)
    return directory


def test_create_returns_the_deployment_and_its_first_revision(
    control_plane: ControlPlaneServer, tmp_path: Path
) -> None:
    source = _empty(tmp_path)
    dep = control_plane.create(source, "first", secrets=[{"name": "A", "value": "1"}])
    assert set(dep) >= {"id", "tenant_id", "name", "source", "source_config",
                        "source_revision_config", "secrets", "status", "latest_revision_id",
                        "active_revision_id", "image_version", "created_at", "updated_at"}
    assert dep["tenant_id"] == TENANT and dep["status"] == "READY" and dep["source"] == "local"
    assert dep["source_config"]["repo_url"] == str(source.resolve())
    assert dep["created_at"].endswith("+00:00") and dep["image_version"]
    revision = control_plane.wait(dep["id"], dep["latest_revision_id"])
    assert set(revision) == {"id", "created_at", "updated_at", "status", "source",
                             "source_revision_config", "status_message"}
    assert revision["status"] == "BUILD_FAILED"
    assert revision["status_message"] == "no langgraph.json in the source"
    listed = control_plane.http.get(f"/v2/deployments/{dep['id']}/revisions").json()
    assert listed == {"resources": [revision], "offset": 1}


def test_list_filters_and_pages(control_plane: ControlPlaneServer, tmp_path: Path) -> None:
    source = _empty(tmp_path)
    ids = [control_plane.create(source, name)["id"] for name in ("alpha", "beta", "alphabet")]
    http = control_plane.http

    page = http.get("/v2/deployments", params={"limit": 2}).json()
    assert [d["id"] for d in page["resources"]] == ids[::-1][:2] and page["offset"] == 2
    rest = http.get("/v2/deployments", params={"limit": 2, "offset": page["offset"]}).json()
    assert [d["id"] for d in rest["resources"]] == [ids[0]] and rest["offset"] == 3
    names = [d["name"] for d in http.get("/v2/deployments", params={"name_contains": "ALPHA"}).json()["resources"]]
    assert names == ["alphabet", "alpha"]
    by_id = http.get("/v2/deployments", params={"deployment_ids": f"{ids[0]},{ids[1]}"}).json()
    assert sorted(d["id"] for d in by_id["resources"]) == sorted(ids[:2])
    assert len(http.get("/v2/deployments", params={"status": "READY"}).json()["resources"]) == 3
    assert http.get("/v2/deployments", params={"status": "UNUSED"}).json()["resources"] == []
    assert http.get("/v2/deployments", params={"deployment_type": "prod"}).json()["resources"] == []


def test_names_are_unique_within_a_tenant(control_plane: ControlPlaneServer, tmp_path: Path) -> None:
    control_plane.create(_empty(tmp_path), "same")
    body = {"name": "same", "source": "local", "source_config": {"repo_url": str(_empty(tmp_path))},
            "source_revision_config": {}}
    again = control_plane.http.post("/v2/deployments", json=body)
    assert again.status_code == 409 and again.json() == {"detail": "A deployment named 'same' already exists."}
    other = control_plane.http.post("/v2/deployments", json=body, headers={"X-Tenant-Id": OTHER_TENANT})
    assert other.status_code == 201


def test_tenants_never_see_each_others_deployments(
    control_plane: ControlPlaneServer, tmp_path: Path
) -> None:
    dep = control_plane.create(_empty(tmp_path), "mine")
    other = {"X-Tenant-Id": OTHER_TENANT}
    http = control_plane.http
    assert http.get("/v2/deployments", headers=other).json() == {"resources": [], "offset": 0}
    not_found = {"detail": f"Deployment ID {dep['id']} not found."}
    for method, path in (("GET", ""), ("PATCH", ""), ("DELETE", ""), ("GET", "/revisions"),
                         ("GET", f"/revisions/{dep['latest_revision_id']}"),
                         ("GET", f"/revisions/{dep['latest_revision_id']}/logs"),
                         ("POST", f"/revisions/{dep['latest_revision_id']}/redeploy")):
        response = http.request(method, f"/v2/deployments/{dep['id']}{path}", headers=other,
                                json={} if method == "PATCH" else None)
        assert (response.status_code, response.json()) == (404, not_found), (method, path)
    bulk = http.delete("/v2/deployments", params={"deployment_ids": dep["id"]}, headers=other)
    assert bulk.status_code == 404
    assert http.get(f"/v2/deployments/{dep['id']}").status_code == 200


def test_bulk_delete(control_plane: ControlPlaneServer, tmp_path: Path) -> None:
    source = _empty(tmp_path)
    a, b, c = (control_plane.create(source, n)["id"] for n in ("a", "b", "c"))
    missing = str(uuid.uuid4())
    http = control_plane.http
    partial = http.delete("/v2/deployments", params=[("deployment_ids", a), ("deployment_ids", missing)])
    assert partial.status_code == 207
    assert partial.json() == {"deleted": [a], "failed": [
        {"id": missing, "detail": f"Deployment ID {missing} not found."}]}
    everything = http.delete("/v2/deployments", params={"deployment_ids": f"{b},{c}"})
    assert everything.status_code == 200 and everything.json() == {"deleted": [b, c], "failed": []}
    none = http.delete("/v2/deployments", params={"deployment_ids": missing})
    assert none.status_code == 404 and none.json() == {"detail": f"Deployment ID {missing} not found."}
    assert http.get("/v2/deployments").json()["resources"] == []


def test_revisions_get_and_404s(control_plane: ControlPlaneServer, tmp_path: Path) -> None:
    dep = control_plane.create(_empty(tmp_path))
    http = control_plane.http
    unknown = str(uuid.uuid4())
    revision = http.get(f"/v2/deployments/{unknown}/revisions")
    assert revision.status_code == 404 and revision.json() == {"detail": f"Deployment ID {unknown} not found."}
    response = http.get(f"/v2/deployments/{dep['id']}/revisions/{unknown}")
    assert response.status_code == 404 and response.json() == {"detail": f"Revision ID {unknown} not found."}
    assert http.get(f"/v2/deployments/{dep['id']}/revisions", params={"status": "DEPLOYED"}).json() == {
        "resources": [], "offset": 0}
    assert http.delete(f"/v2/deployments/{unknown}").status_code == 404


def test_patch_rules(control_plane: ControlPlaneServer, tmp_path: Path) -> None:
    dep = control_plane.create(_empty(tmp_path), secrets=[{"name": "KEEP", "value": "secret-value"}])
    control_plane.wait(dep["id"], dep["latest_revision_id"])
    path, http = f"/v2/deployments/{dep['id']}", control_plane.http

    def bad(body: dict, detail: str) -> None:
        response = http.patch(path, json=body)
        assert (response.status_code, response.json()) == (400, {"detail": detail}), body

    bad({"name": "renamed"}, "name cannot be changed once the deployment is created.")
    bad({"source": "github"}, "source cannot be changed once the deployment is created.")
    bad({"source_config": {"repo_url": "/elsewhere"}},
        "source_config.repo_url cannot be changed once the deployment is created.")
    bad({"source_config": {"deployment_type": "prod"}},
        "source_config.deployment_type cannot be changed once the deployment is created.")
    bad({"source_config": {"custom_url": "http://example.com"}},
        "source_config.custom_url is read-only: it is the URL of the deployed agent server.")
    bad({"source_revision_config": {"repo_ref": "main"}},
        "source_revision_config.repo_ref applies to git sources only; a 'local' source is the "
        "directory as it is.")
    bad({"source_revision_config": {"image_uri": "x"}},
        "source_revision_config.image_uri does not apply to source 'local'.")
    bad({"revision_source": "github"},
        "revision_source 'github' differs from the deployment's source 'local'; a deployment keeps "
        "its source.")

    # What GET returned may be sent back: read-only fields that did not change are accepted.
    current = control_plane.deployment(dep["id"])
    resent = {k: v for k, v in current.items() if k not in ("source_revision_config", "secrets")}
    same = http.patch(path, json=resent)
    assert same.status_code == 200, same.text
    assert same.json()["latest_revision_id"] == dep["latest_revision_id"]  # no new revision
    whole = http.patch(path, json=current)  # its source_revision_config makes a revision
    assert whole.status_code == 200, whole.text
    assert whole.json()["latest_revision_id"] != dep["latest_revision_id"]
    bad({"source_revision_config": {"repo_commit_sha": "abc"}},
        "source_revision_config.repo_commit_sha is read-only: it is the commit a revision was "
        "built from.")

    # A masked secret keeps its stored value; a new revision gets both.
    changed = http.patch(path, json={"secrets": [{"name": "KEEP", "value": "********"},
                                                 {"name": "NEW", "value": "n"}]})
    assert changed.status_code == 200
    assert changed.json()["latest_revision_id"] != dep["latest_revision_id"]
    assert changed.json()["secrets"] == [{"name": "KEEP", "value": "********"},
                                         {"name": "NEW", "value": "********"}]
    assert b"secret-value" not in stored_bytes(control_plane)  # encrypted at rest


def test_redeploy_rules(control_plane: ControlPlaneServer, tmp_path: Path) -> None:
    dep = control_plane.create(write_project(tmp_path / "slow"), "slow")
    unknown = str(uuid.uuid4())
    path = f"/v2/deployments/{dep['id']}/revisions"
    missing = control_plane.http.post(f"{path}/{unknown}/redeploy")
    assert missing.status_code == 404 and missing.json() == {"detail": f"Revision ID {unknown} not found."}
    early = control_plane.http.post(f"{path}/{dep['latest_revision_id']}/redeploy")
    if early.status_code == 400:  # still building: only a finished revision can be redeployed
        assert "only a finished revision can be redeployed" in early.json()["detail"]
    control_plane.wait(dep["id"], dep["latest_revision_id"])


def test_unsupported_sources_and_missing_fields_are_400(
    control_plane: ControlPlaneServer, tmp_path: Path
) -> None:
    def create(**fields: object) -> httpx.Response:
        body = {"name": "x", "source": "local", "source_config": {"repo_url": str(_empty(tmp_path))},
                "source_revision_config": {}, **fields}
        return control_plane.http.post("/v2/deployments", json=body)

    response = create(source="external_docker")
    assert response.status_code == 400 and "not supported" in response.json()["detail"]
    response = create(source_config={})
    assert response.json() == {"detail": "source_config.repo_url is required for source 'local'."}
    response = create(source_config={"repo_url": str(tmp_path / "nope")})
    assert response.status_code == 400 and "no directory" in response.json()["detail"]
    response = create(source_config={"repo_url": str(tmp_path), "custom_url": "http://x"})
    assert response.status_code == 400 and "read-only" in response.json()["detail"]
    response = create(source_revision_config={"langgraph_config_path": "../langgraph.json"})
    assert response.status_code == 400 and "inside the source" in response.json()["detail"]
    relative = create(source="github", name="rel",
                      source_config={"repo_url": os.path.relpath(tmp_path)})
    assert relative.json()["source_config"]["repo_url"] == str(tmp_path)  # a path, made absolute
