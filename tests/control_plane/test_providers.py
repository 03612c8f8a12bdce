"""OAuth providers (Auth Service v2): CRUD, the exact response shape, the secret never shown."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from typing import Any

import pytest

from http_adapter.control_plane.secrets import SecretBox

from .conftest import OTHER_TENANT, TENANT, ControlPlaneServer, stored_bytes

SECRET = "client-secret-do-not-leak-42"
RESPONSE_KEYS = {
    "id", "organization_id", "provider_id", "name", "client_id", "auth_url", "token_url",
    "uses_pkce", "code_challenge_method", "provider_type", "mcp_server_url",
    "token_endpoint_auth_method", "is_dynamic_client", "created_at", "updated_at",
}


def _create(cp: ControlPlaneServer, provider_id: str = "github", **fields: Any) -> dict[str, Any]:
    body = {"provider_id": provider_id, "name": "GitHub", "client_id": "cid",
            "client_secret": SECRET, "auth_url": "https://github.com/login/oauth/authorize",
            "token_url": "https://github.com/login/oauth/access_token", **fields}
    response = cp.http.post("/v2/auth/providers", json=body)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_provider_crud_never_shows_the_secret(
    control_plane: ControlPlaneServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    http = control_plane.http
    created = _create(control_plane)
    assert set(created) == RESPONSE_KEYS
    assert created["organization_id"] == TENANT and created["provider_id"] == "github"
    assert (created["uses_pkce"], created["code_challenge_method"], created["provider_type"],
            created["mcp_server_url"], created["token_endpoint_auth_method"],
            created["is_dynamic_client"]) == (False, "S256", None, None, "client_secret_post", False)

    assert http.get("/v2/auth/providers/github").json() == created
    assert http.get("/v2/auth/providers").json() == [created]

    patched = http.patch("/v2/auth/providers/github", json={"name": "GitHub 2", "client_id": None,
                                                            "uses_pkce": True})
    assert patched.status_code == 200
    after = patched.json()
    assert set(after) == RESPONSE_KEYS
    assert (after["name"], after["client_id"], after["uses_pkce"]) == ("GitHub 2", "cid", True)
    assert after["auth_url"] == created["auth_url"] and after["updated_at"] > created["updated_at"]
    rotated = http.patch("/v2/auth/providers/github", json={"client_secret": "rotated-" + SECRET})
    assert rotated.json() | {"updated_at": None} == after | {"updated_at": None}

    responses = [created, after, rotated.text, http.get("/v2/auth/providers").text]
    assert all(SECRET not in str(r) for r in responses)
    assert SECRET.encode() not in stored_bytes(control_plane)  # Fernet at rest
    assert SECRET not in caplog.text

    deleted = http.delete("/v2/auth/providers/github")
    assert (deleted.status_code, deleted.json()) == (200, {})
    for method in ("GET", "PATCH", "DELETE"):
        gone = http.request(method, "/v2/auth/providers/github", json={} if method == "PATCH" else None)
        assert (gone.status_code, gone.json()) == (404, {"detail": "OAuth provider 'github' not found."})


def test_the_stored_secret_is_the_encrypted_client_secret(control_plane: ControlPlaneServer) -> None:
    _create(control_plane)
    with contextlib.closing(sqlite3.connect(control_plane.settings.data_dir / "control.sqlite")) as db:
        (token,) = db.execute("SELECT client_secret FROM providers").fetchone()
    box = SecretBox(control_plane.settings.secret_key, control_plane.settings.data_dir)
    assert box.decrypt(token).decode() == SECRET


def test_provider_ids_are_unique_per_tenant_and_isolated(control_plane: ControlPlaneServer) -> None:
    _create(control_plane, provider_type="slack", token_endpoint_auth_method="none")
    again = control_plane.http.post("/v2/auth/providers", json={
        "provider_id": "github", "name": "x", "client_id": "c", "auth_url": "https://a.example",
        "token_url": "https://t.example"})
    assert again.status_code == 409
    assert again.json() == {"detail": "An OAuth provider with provider_id 'github' already exists."}
    other = {"X-Tenant-Id": OTHER_TENANT}
    assert control_plane.http.get("/v2/auth/providers", headers=other).json() == []
    assert control_plane.http.get("/v2/auth/providers/github", headers=other).status_code == 404
    assert control_plane.http.delete("/v2/auth/providers/github", headers=other).status_code == 404
    mine = control_plane.http.get("/v2/auth/providers/github").json()
    assert (mine["provider_type"], mine["token_endpoint_auth_method"]) == ("slack", "none")
