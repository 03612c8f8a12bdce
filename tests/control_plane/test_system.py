"""/ok, the OpenAPI document (0.1.0), the offline reference page, and `graphrun control-plane`."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from http_adapter.control_plane.openapi import openapi_document

from .conftest import KEY, ControlPlaneServer


def test_ok_openapi_and_docs(control_plane: ControlPlaneServer) -> None:
    url = control_plane.url
    assert httpx.get(f"{url}/ok").json() == {"ok": True}
    document = httpx.get(f"{url}/openapi.json").json()
    assert document["openapi"] == "3.1.0" and document["info"]["version"] == "0.1.0"
    assert set(document["paths"]) >= {
        "/v2/deployments", "/v2/deployments/{deployment_id}",
        "/v2/deployments/{deployment_id}/revisions",
        "/v2/deployments/{deployment_id}/revisions/{revision_id}",
        "/v2/deployments/{deployment_id}/revisions/{revision_id}/redeploy",
        "/v2/deployments/{deployment_id}/revisions/{revision_id}/logs",
        "/v2/auth/providers", "/v2/auth/providers/{provider_id}",
    }
    assert set(document["paths"]["/v2/deployments"]) == {"get", "post", "delete"}
    schemas = document["components"]["schemas"]
    assert set(schemas["OAuthProviderResponse"]["properties"]) == {
        "id", "organization_id", "provider_id", "name", "client_id", "auth_url", "token_url",
        "uses_pkce", "code_challenge_method", "provider_type", "mcp_server_url",
        "token_endpoint_auth_method", "is_dynamic_client", "created_at", "updated_at"}
    assert "client_secret" not in str(schemas["OAuthProviderResponse"])
    assert schemas["HTTPValidationError"]["properties"]["detail"]["type"] == "array"
    create = document["paths"]["/v2/deployments"]["post"]
    assert create["responses"]["201"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Deployment"}
    assert document == openapi_document()

    page = httpx.get(f"{url}/docs")
    assert page.status_code == 200 and "graphrun Control Plane API" in page.text
    assets = re.findall(r'(?:src|href)="(/docs/[^"]+)"', page.text)
    assert "/docs/swagger-ui-bundle.js" in assets and "/docs/init.js" in assets
    for asset in assets:  # everything the page loads is served here: it works offline
        assert httpx.get(url + asset).status_code == 200, asset
    assert "http" not in re.sub(r"http://www\.w3\.org[^\"']*", "", page.text)


def test_graphrun_control_plane_command(tmp_path: Path) -> None:
    env = {**os.environ, "GRAPHRUN_CONTROL_PLANE_API_KEYS": KEY,
           "GRAPHRUN_SECRET_KEY": "a passphrase, stretched with scrypt"}
    process = subprocess.Popen(
        [sys.executable, "-m", "http_adapter.cli", "control-plane", "--port", "0",
         "--data-dir", str(tmp_path / "state"), "--log-level", "warning"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+", first)
        assert url, first
        assert "API keys required" in process.stdout.readline() + process.stdout.readline()
        assert httpx.get(f"{url[0]}/ok").json() == {"ok": True}
        assert httpx.get(f"{url[0]}/v2/deployments").status_code == 401
        listed = httpx.get(f"{url[0]}/v2/deployments", headers={"X-Api-Key": KEY})
        assert listed.json() == {"resources": [], "offset": 0}
        assert (tmp_path / "state" / "control.sqlite").exists()
        assert not (tmp_path / "state" / "secret.key").exists()  # the env key is used
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(10)
        if process.stdout is not None:
            process.stdout.close()
    assert code in (0, -signal.SIGTERM)  # uvicorn re-raises the signal after a graceful stop
