"""422s in the published HTTPValidationError shape, and API keys (401) on every route."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import KEY, ControlPlaneServer


def _errors(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 422, response.text
    detail = response.json()["detail"]
    assert isinstance(detail, list) and detail
    for item in detail:
        assert set(item) == {"loc", "msg", "type"} and isinstance(item["loc"], list)
    return detail  # type: ignore[no-any-return]


def _one(response: httpx.Response) -> tuple[list[Any], str, str]:
    (item,) = _errors(response)
    return item["loc"], item["type"], item["msg"]


def test_deployment_bodies(control_plane: ControlPlaneServer, tmp_path: Path) -> None:
    post = lambda body: control_plane.http.post("/v2/deployments", content=body)
    assert _one(post(b"")) == (["body"], "missing", "Field required")
    assert _one(post(b"{nope")) == (["body", 0], "json_invalid", "JSON decode error")
    assert _one(post(b"[]")) == (
        ["body"], "model_attributes_type",
        "Input should be a valid dictionary or object to extract fields from")
    missing = _errors(control_plane.http.post("/v2/deployments", json={}))
    assert [(e["loc"], e["type"]) for e in missing] == [
        (["body", "name"], "missing"), (["body", "source"], "missing"),
        (["body", "source_config"], "missing"), (["body", "source_revision_config"], "missing")]

    body = {
        "name": 5, "source": "svn", "extra": True,
        "source_config": {"repo_url": 1, "deployment_type": "huge", "integration_id": "x",
                          "build_on_push": "yes", "resource_spec": []},
        "source_revision_config": {"repo_ref": ["main"]},
        "secrets": [{"name": "1BAD", "value": "v"}, {"value": 2}, "s"],
    }
    found = {tuple(e["loc"]): (e["type"], e["msg"]) for e in _errors(
        control_plane.http.post("/v2/deployments", json=body))}
    assert found == {
        ("body", "name"): ("string_type", "Input should be a valid string"),
        ("body", "source"): ("literal_error", ("Input should be 'github', 'external_docker', "
                                               "'internal_docker', 'internal_source' or 'local'")),
        ("body", "extra"): ("extra_forbidden", "Extra inputs are not permitted"),
        ("body", "source_config", "repo_url"): ("string_type", "Input should be a valid string"),
        ("body", "source_config", "deployment_type"): (
            "literal_error", "Input should be 'dev_free', 'dev' or 'prod'"),
        ("body", "source_config", "integration_id"): ("uuid_parsing", "Input should be a valid UUID"),
        ("body", "source_config", "build_on_push"): ("bool_type", "Input should be a valid boolean"),
        ("body", "source_config", "resource_spec"): ("dict_type", "Input should be a valid dictionary"),
        ("body", "source_revision_config", "repo_ref"): ("string_type", "Input should be a valid string"),
        ("body", "secrets", 0, "name"): ("string_pattern_mismatch",
                                         "String should match pattern '^[A-Za-z_][A-Za-z0-9_]*$'"),
        ("body", "secrets", 1, "name"): ("missing", "Field required"),
        ("body", "secrets", 1, "value"): ("string_type", "Input should be a valid string"),
        ("body", "secrets", 2): ("model_attributes_type",
                                 "Input should be a valid dictionary or object to extract fields from"),
    }
    assert _one(control_plane.http.post("/v2/deployments", json={
        "name": "", "source": "local", "source_config": {}, "source_revision_config": {}})) == (
        ["body", "name"], "string_too_short", "String should have at least 1 character")

    secrets = [{"name": "A", "value": "1"}, {"name": "A", "value": "2"},
               {"name": "GRAPHRUN_API_KEYS", "value": "mine"}]
    found = {tuple(e["loc"]): e["type"] for e in _errors(control_plane.http.post("/v2/deployments", json={
        "name": "x", "source": "local", "source_config": {"repo_url": str(tmp_path)},
        "source_revision_config": {}, "secrets": secrets}))}
    assert found == {("body", "secrets", 1, "name"): "value_error",
                     ("body", "secrets", 2, "name"): "value_error"}


def test_patch_bodies_and_paths(control_plane: ControlPlaneServer, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    dep = control_plane.create(tmp_path / "empty", "x")
    path = f"/v2/deployments/{dep['id']}"
    assert _one(control_plane.http.patch(path, json={"secrets": {"A": "1"}})) == (
        ["body", "secrets"], "list_type", "Input should be a valid list")
    assert _one(control_plane.http.patch(path, json={"revision_source": "svn"}))[:2] == (
        ["body", "revision_source"], "literal_error")
    assert _one(control_plane.http.patch(path, json={"nope": 1}))[:2] == (["body", "nope"], "extra_forbidden")
    for method, url in (("GET", "/v2/deployments/not-a-uuid"),
                        ("PATCH", "/v2/deployments/not-a-uuid"),
                        ("DELETE", "/v2/deployments/not-a-uuid"),
                        ("GET", "/v2/deployments/not-a-uuid/revisions")):
        response = control_plane.http.request(method, url, json={} if method == "PATCH" else None)
        assert _one(response) == (["path", "deployment_id"], "uuid_parsing",
                                  "Input should be a valid UUID"), (method, url)
    assert _one(control_plane.http.get(f"{path}/revisions/zzz"))[:2] == (["path", "revision_id"], "uuid_parsing")


@pytest.mark.parametrize(("params", "expected"), [
    ({"limit": "x"}, (["query", "limit"], "int_parsing",
                      "Input should be a valid integer, unable to parse string as an integer")),
    ({"limit": "0"}, (["query", "limit"], "greater_than_equal", "Input should be greater than or equal to 1")),
    ({"limit": "101"}, (["query", "limit"], "less_than_equal", "Input should be less than or equal to 100")),
    ({"offset": "-1"}, (["query", "offset"], "greater_than_equal", "Input should be greater than or equal to 0")),
    ({"status": "READY,BOGUS"}, (["query", "status", 1], "enum",
                                 ("Input should be 'AWAITING_DATABASE', 'READY', 'UNUSED', "
                                  "'AWAITING_DELETE' or 'UNKNOWN'"))),
    ({"deployment_type": "big"}, (["query", "deployment_type", 0], "enum",
                                  "Input should be 'dev_free', 'dev' or 'prod'")),
    ({"deployment_ids": "nope"}, (["query", "deployment_ids", 0], "uuid_parsing", "Input should be a valid UUID")),
    ({"remote_reconciled": "maybe"}, (["query", "remote_reconciled"], "bool_parsing",
                                      "Input should be a valid boolean, unable to interpret input")),
])
def test_list_queries(control_plane: ControlPlaneServer, params: dict[str, str],
                      expected: tuple[list[Any], str, str]) -> None:
    assert _one(control_plane.http.get("/v2/deployments", params=params)) == expected


def test_bulk_delete_and_revision_queries(control_plane: ControlPlaneServer) -> None:
    assert _one(control_plane.http.delete("/v2/deployments")) == (
        ["query", "deployment_ids"], "missing", "Field required")
    many = ",".join(str(uuid.uuid4()) for _ in range(101))
    assert _one(control_plane.http.delete("/v2/deployments", params={"deployment_ids": many}))[:2] == (
        ["query", "deployment_ids"], "too_long")
    some = str(uuid.uuid4())
    assert _one(control_plane.http.get(f"/v2/deployments/{some}/revisions",
                                       params={"status": "DONE"}))[:2] == (["query", "status", 0], "enum")


def test_provider_bodies(control_plane: ControlPlaneServer) -> None:
    missing = _errors(control_plane.http.post("/v2/auth/providers", json={}))
    assert [e["loc"] for e in missing] == [["body", f] for f in
                                           ("provider_id", "name", "client_id", "auth_url", "token_url")]
    assert all(e["type"] == "missing" and e["msg"] == "Field required" for e in missing)
    found = {tuple(e["loc"]): e["type"] for e in _errors(control_plane.http.post("/v2/auth/providers", json={
        "provider_id": "a/b", "name": "n", "client_id": "c", "auth_url": "ftp://x", "token_url": 3,
        "uses_pkce": "yes", "provider_type": "google", "token_endpoint_auth_method": "magic",
        "client_secret": 12, "is_dynamic_client": True}))}
    assert found == {
        ("body", "provider_id"): "string_pattern_mismatch",
        ("body", "auth_url"): "string_pattern_mismatch",
        ("body", "token_url"): "string_type",
        ("body", "uses_pkce"): "bool_type",
        ("body", "provider_type"): "literal_error",
        ("body", "token_endpoint_auth_method"): "literal_error",
        ("body", "client_secret"): "string_type",
        ("body", "is_dynamic_client"): "extra_forbidden",
    }
    assert _one(control_plane.http.patch("/v2/auth/providers/p", json={"uses_pkce": "no"}))[:2] == (
        ["body", "uses_pkce"], "bool_type")
    assert _one(control_plane.http.patch("/v2/auth/providers/p", json={"provider_type": "slack"}))[:2] == (
        ["body", "provider_type"], "extra_forbidden")


def test_tenant_header(control_plane: ControlPlaneServer) -> None:
    response = control_plane.http.get("/v2/deployments", headers={"X-Tenant-Id": "workspace-1"})
    assert _one(response) == (["header", "x-tenant-id"], "uuid_parsing", "Input should be a valid UUID")


def test_api_keys(control_plane: ControlPlaneServer) -> None:
    url = control_plane.url
    for method, path in (("GET", "/v2/deployments"), ("POST", "/v2/deployments"),
                         ("GET", f"/v2/deployments/{uuid.uuid4()}"), ("GET", "/v2/auth/providers"),
                         ("DELETE", "/v2/auth/providers/x"), ("GET", "/nowhere")):
        missing = httpx.request(method, url + path)
        assert missing.status_code == 401 and "Missing API key" in missing.json()["detail"]
        wrong = httpx.request(method, url + path, headers={"X-Api-Key": "wrong"})
        assert (wrong.status_code, wrong.json()) == (401, {"detail": "Invalid API key."})
    for headers in ({"x-api-key": KEY}, {"X-API-KEY": KEY}, {"Authorization": f"Bearer {KEY}"},
                    {"authorization": f"bearer {KEY}"}):
        assert httpx.get(f"{url}/v2/deployments", headers=headers).status_code == 200, headers
    assert httpx.get(f"{url}/v2/deployments", headers={"Authorization": f"Basic {KEY}"}).status_code == 401
    for public in ("/ok", "/docs", "/openapi.json"):
        assert httpx.get(url + public).status_code == 200
    assert httpx.get(f"{url}/nowhere", headers={"X-Api-Key": KEY}).json() == {"detail": "Not Found"}
