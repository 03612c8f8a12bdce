"""System routes on a real server: /ok, /info, /metrics, /openapi.json and the offline /docs."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from starlette.responses import Response
from starlette.routing import Mount, Route

from http_adapter.agent_server import create_app
from http_adapter.agent_server.openapi import openapi_document, package_version
from http_adapter.agent_server.routes._common import body
from http_adapter.agent_server.settings import Settings

from . import graphs as test_graphs

# Issue 19 §11: every test here runs on SQLite and on PostgreSQL + Redis (conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgres")

_SAMPLE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? -?[0-9.e+-]+$')


def settings_for(tmp_path: Path, **overrides: Any) -> Settings:
    return Settings(graphs=test_graphs.GRAPHS, data_dir=tmp_path / ".graphrun", **overrides)


def test_ok_and_info(serve_app: Any, tmp_path: Path, backend: str) -> None:
    url = serve_app(settings_for(tmp_path)).url
    ok = httpx.get(f"{url}/ok")
    # embedded: nothing to check, as langgraph dev; else each service checked (issue 19 §10)
    services = {"postgres": "ok", "redis": "ok"} if backend == "postgres" else {}
    assert ok.status_code == 200 and ok.json() == {"ok": True, "services": services}
    info = httpx.get(f"{url}/info").json()
    assert info["version"] == package_version()
    assert info["flags"]["assistants"] is True
    assert set(info["flags"]) >= {"assistants", "crons", "langsmith"}


def test_metrics_text_and_json_count_runs(serve_app: Any, tmp_path: Path) -> None:
    url = serve_app(settings_for(tmp_path, workers=3)).url
    with httpx.Client(base_url=url, timeout=10) as client:
        done = client.post("/runs/wait", json={"assistant_id": "agent", "input": {"x": 1}})
        assert done.status_code == 200 and done.json()["x"] == 2
        thread = client.post("/threads", json={}).json()["thread_id"]
        kept = client.post(f"/threads/{thread}/runs/wait",
                           json={"assistant_id": "agent", "input": {"x": 1}})
        assert kept.status_code == 200
        figures = client.get("/metrics", params={"format": "json"}).json()
        text = client.get("/metrics")
    assert figures["queue"]["n_pending"] == 0 and figures["queue"]["n_running"] == 0
    assert figures["workers"] == {"max": 3, "active": 0, "available": 3}
    assert figures["runs"]["success"] == 1  # the thread run; stateless runs keep no record
    assert figures["threads"]["idle"] == 1
    assert figures["assistants"] == 2 and figures["uptime_seconds"] >= 0
    assert text.status_code == 200
    assert text.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples = {}
    for line in text.text.splitlines():
        if line.startswith("#"):
            assert re.match(r"^# (HELP|TYPE) \w+ ", line), line
            continue
        assert _SAMPLE.match(line), line
        name, value = line.rsplit(" ", 1)
        samples[name] = float(value)
    assert samples['graphrun_runs{status="success"}'] == 1
    assert samples['graphrun_threads{status="idle"}'] == 1
    assert samples["lg_api_workers_max"] == 3 and samples["lg_api_num_pending_runs"] == 0


def test_openapi_lists_every_route(serve_app: Any, tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    url = serve_app(settings).url
    document = httpx.get(f"{url}/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    assert document["info"]["version"] == package_version()
    for route in create_app(settings).routes:
        path = re.sub(r"{(\w+)(?::\w+)?}", r"{\1}", route.path)
        assert path in document["paths"], path
        for method in route.methods - {"HEAD"}:
            operation = document["paths"][path][method.lower()]
            assert operation["summary"] and operation["tags"]
    create = document["paths"]["/threads/{thread_id}/runs"]["post"]
    assert create["summary"] == "Create Background Run" and create["tags"] == ["Thread Runs"]
    assert create["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/RunCreate"}
    assert [p["name"] for p in create["parameters"]] == ["thread_id"]
    components = document["components"]["schemas"]
    assert "assistant_id" in components["RunCreate"]["properties"]
    assert set(components) >= {"Assistant", "Thread", "Run", "ThreadCreate", "ErrorResponse"}
    assert {t["name"] for t in document["tags"]} >= {"Assistants", "Threads", "System"}
    for ref in re.findall(r'"\$ref":\s*"#/components/schemas/([^"]+)"', httpx.get(
            f"{url}/openapi.json").text):
        assert ref in components, ref


class ItemBody(msgspec.Struct):
    name: str


async def make_item(request: Any) -> Response:
    """Make an item."""
    spec = await body(request, ItemBody)
    return Response(spec.name)


async def plain(request: Any) -> Response:
    return Response(request.query_params.get("q"))


def test_openapi_walks_mounts_and_marks_keyed_operations() -> None:
    routes = [
        Route("/ok", plain, methods=["GET"]),
        Mount("/extra", routes=[Route("/items/{item_id:int}", make_item, methods=["POST"])]),
    ]
    document = openapi_document(routes, api_keys=True)
    operation = document["paths"]["/extra/items/{item_id}"]["post"]
    assert operation["summary"] == "Make an item"
    assert operation["requestBody"]["required"] is True
    assert operation["security"] == [{"ApiKeyHeader": []}]
    assert "ItemBody" in document["components"]["schemas"]
    ok = document["paths"]["/ok"]["get"]
    assert "security" not in ok
    assert ok["parameters"] == [{"name": "q", "in": "query", "required": False,
                                 "schema": {"type": "string"}}]


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [v for k, v in attrs if k in ("src", "href") and v]


def test_docs_work_offline(serve_app: Any, tmp_path: Path) -> None:
    url = serve_app(settings_for(tmp_path)).url
    page = httpx.get(f"{url}/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "http://" not in page.text and "https://" not in page.text
    parser = _Links()
    parser.feed(page.text)
    assert len(parser.urls) >= 3
    kinds = set()
    for link in parser.urls:
        assert link.startswith("/docs/") or not link.startswith(("/", "//")), link
        asset = httpx.get(f"{url}{link}")
        assert asset.status_code == 200, link
        kind = asset.headers["content-type"].split(";")[0]
        assert kind in ("text/javascript", "text/css", "image/png"), (link, kind)
        kinds.add(kind)
    assert kinds >= {"text/javascript", "text/css"}
    assert 'data-spec="/openapi.json"' in page.text
    assert httpx.get(f"{url}/docs/index.html").status_code == 404
    assert httpx.get(f"{url}/docs/../pyproject.toml").status_code == 404


def test_public_routes_need_no_key(serve_app: Any, tmp_path: Path) -> None:
    url = serve_app(settings_for(tmp_path, api_keys=frozenset({"secret"}))).url
    for path in ("/ok", "/info", "/docs", "/openapi.json", "/docs/swagger-ui.css"):
        assert httpx.get(f"{url}{path}").status_code == 200, path
    assert httpx.get(f"{url}/metrics").status_code == 401
    assert httpx.get(f"{url}/metrics", headers={"x-api-key": "secret"}).status_code == 200
    document = httpx.get(f"{url}/openapi.json").json()
    assert document["paths"]["/threads"]["post"]["security"] == [{"ApiKeyHeader": []}]
    assert "security" not in document["paths"]["/ok"]["get"]


@pytest.mark.parametrize("root", ["", "/prefix"])
def test_docs_page_follows_the_root_path(root: str) -> None:
    from http_adapter.agent_server.openapi import docs_html

    page = docs_html(root)
    assert f'href="{root}/docs/swagger-ui.css"' in page
    assert f'src="{root}/docs/swagger-ui-bundle.js"' in page
