"""CORS (issue 18): browsers' preflights and reads, as `langgraph dev` answers them by default
and as langgraph.json's `http.cors` configures them; real servers, raw httpx requests."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from .conftest import Served

ORIGIN = "http://127.0.0.1:5173"


def preflight(url: str, origin: str = ORIGIN, method: str = "POST",
              headers: str = "content-type,x-api-key", **extra: str) -> httpx.Response:
    return httpx.options(url, headers={
        "Origin": origin, "Access-Control-Request-Method": method,
        "Access-Control-Request-Headers": headers, **extra,
    })


def test_default_answers_preflights_like_langgraph_dev(server: Served) -> None:
    answer = preflight(f"{server.url}/threads/search")
    assert answer.status_code == 200
    assert answer.headers["access-control-allow-origin"] == "*"
    assert answer.headers["access-control-allow-headers"] == "content-type,x-api-key"
    assert "POST" in answer.headers["access-control-allow-methods"]
    assert answer.headers["access-control-max-age"] == "600"
    assert "access-control-allow-credentials" not in answer.headers  # "*" never with credentials
    assert "access-control-allow-private-network" not in answer.headers  # only `graphrun dev`


def test_default_exposes_the_headers_the_js_client_reads(server: Served) -> None:
    thread = httpx.post(f"{server.url}/threads", json={}).json()["thread_id"]
    answer = httpx.post(f"{server.url}/threads/{thread}/runs/stream", headers={"Origin": ORIGIN},
                        json={"assistant_id": "chat", "input": {"messages": []}})
    assert answer.status_code == 200
    assert answer.headers["access-control-allow-origin"] == "*"
    exposed = answer.headers["access-control-expose-headers"].split(", ")
    assert {"content-location", "location", "x-pagination-total", "x-pagination-next"} <= set(exposed)
    assert answer.headers["content-location"].startswith(f"/threads/{thread}/runs/")


def test_api_keys_do_not_block_preflights(serve_app: Callable[..., Served]) -> None:
    server = serve_app(api_keys=frozenset({"secret"}))
    answer = preflight(f"{server.url}/threads")
    assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == "*"
    refused = httpx.post(f"{server.url}/threads", json={}, headers={"Origin": ORIGIN})
    assert refused.status_code == 401  # the browser can read why: the 401 carries CORS too
    assert refused.headers["access-control-allow-origin"] == "*"
    allowed = httpx.post(f"{server.url}/threads", json={},
                         headers={"Origin": ORIGIN, "X-Api-Key": "secret"})
    assert allowed.status_code == 200


def test_private_network_preflights_are_answered_for_dev(serve_app: Callable[..., Served]) -> None:
    server = serve_app(extra={"private_network": True})  # what `graphrun dev` sets
    answer = preflight(f"{server.url}/threads", **{"Access-Control-Request-Private-Network": "true"})
    assert answer.status_code == 200  # `langgraph dev` refuses this one (400): see cors.py
    assert answer.headers["access-control-allow-private-network"] == "true"


def test_env_origins_allow_credentials(serve_app: Callable[..., Served],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORS_ALLOW_ORIGINS", f"{ORIGIN}, https://app.test")
    server = serve_app()
    answer = preflight(f"{server.url}/threads", origin="https://app.test")
    assert answer.headers["access-control-allow-origin"] == "https://app.test"
    assert answer.headers["access-control-allow-credentials"] == "true"
    assert preflight(f"{server.url}/threads", origin="https://evil.test").status_code == 400


CONFIGURED = {
    "allow_origins": ["https://app.test"],
    "allow_methods": ["GET", "POST"],
    "allow_headers": ["content-type", "x-custom"],
    "allow_credentials": True,
    "expose_headers": ["x-pagination-total"],
    "max_age": 42,
}


def test_http_cors_configures_the_middleware(serve_app: Callable[..., Served]) -> None:
    server = serve_app(extra={"http": {"cors": CONFIGURED}})
    answer = preflight(f"{server.url}/threads/search", origin="https://app.test",
                       headers="content-type,x-custom")
    assert answer.status_code == 200
    assert answer.headers["access-control-allow-origin"] == "https://app.test"
    assert answer.headers["access-control-allow-credentials"] == "true"
    assert answer.headers["access-control-allow-methods"] == "GET, POST"
    assert answer.headers["access-control-max-age"] == "42"
    # a header, a method or an origin the config does not allow fails the preflight
    assert preflight(f"{server.url}/threads", origin="https://app.test",
                     headers="x-other").status_code == 400
    assert preflight(f"{server.url}/threads/x", origin="https://app.test",
                     method="DELETE", headers="content-type").status_code == 400
    assert preflight(f"{server.url}/threads", origin="https://evil.test",
                     headers="content-type").status_code == 400
    read = httpx.post(f"{server.url}/threads/search", json={}, headers={"Origin": "https://app.test"})
    assert read.headers["access-control-allow-origin"] == "https://app.test"
    assert read.headers["access-control-expose-headers"] == "x-pagination-total"
    other = httpx.post(f"{server.url}/threads/search", json={}, headers={"Origin": "https://evil.test"})
    assert other.status_code == 200 and "access-control-allow-origin" not in other.headers
