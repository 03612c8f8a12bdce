"""The studio's files (issue 20): served at / and /studio/ when on, public, out of the API
description; `graphrun serve` serves them only with `--studio`. The page itself is tested in
a real browser in tests/http_adapter/studio/."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from http_adapter import studio

from .conftest import Served
from .test_cli import Running, project, running  # noqa: F401 (fixtures)

STUDIO_DIR = Path(studio.__file__).parent


def test_the_page_and_its_modules_are_served(serve_app: Callable[..., Served]) -> None:
    url = serve_app(studio=True).url
    page = httpx.get(f"{url}/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<base href="/studio/">' in page.text and 'src="app.js"' in page.text
    assert httpx.get(f"{url}/studio/").text == page.text == httpx.get(f"{url}/studio").text
    for name in ("app.js", "layout.js", "graph.js", "api.js"):
        module = httpx.get(f"{url}/studio/{name}")
        assert module.status_code == 200, name
        assert module.headers["content-type"] == "text/javascript; charset=utf-8"
        assert module.content == (STUDIO_DIR / name).read_bytes()
    assert httpx.get(f"{url}/studio/style.css").headers["content-type"].startswith("text/css")


def test_only_shipped_files_are_served(serve_app: Callable[..., Served]) -> None:
    url = serve_app(studio=True).url
    for path in ("/studio/nope.js", "/studio/__init__.py", "/studio/_serve.py",
                 "/studio/%2e%2e/agent_server/app.py", "/studio/sub/app.js"):
        missing = httpx.get(url + path)
        assert missing.status_code == 404 and missing.json() == {"detail": "Not Found"}, path


def test_every_module_the_page_imports_is_shipped() -> None:
    """A module imported but not shipped would break the page only when installed."""
    import re

    shipped = {p.name for p in STUDIO_DIR.iterdir()}
    for module in STUDIO_DIR.glob("*.js"):
        for name in re.findall(r'from "\./([\w.]+)"', module.read_text()):
            assert name in shipped, (module.name, name)


def test_the_page_needs_no_key_but_the_api_does(serve_app: Callable[..., Served]) -> None:
    url = serve_app(studio=True, api_keys=frozenset({"k1"})).url
    assert httpx.get(f"{url}/").status_code == 200
    assert httpx.get(f"{url}/studio/app.js").status_code == 200
    assert httpx.post(f"{url}/assistants/search", json={}).status_code == 401
    ok = httpx.post(f"{url}/assistants/search", json={}, headers={"X-Api-Key": "k1"})
    assert ok.status_code == 200


def test_the_studio_is_not_part_of_the_api_description(serve_app: Callable[..., Served]) -> None:
    url = serve_app(studio=True).url
    paths = httpx.get(f"{url}/openapi.json").json()["paths"]
    assert "/" not in paths and not any(p.startswith("/studio") for p in paths)
    assert "/assistants/search" in paths


def test_off_by_default(serve_app: Callable[..., Served]) -> None:
    url = serve_app().url
    assert httpx.get(f"{url}/").status_code == 404
    assert httpx.get(f"{url}/studio/app.js").status_code == 404


def test_serve_needs_the_studio_flag(project: Path, running: list[Running]) -> None:  # noqa: F811
    plain = Running(["serve", "--port", "0", "--in-memory"], cwd=project)
    running.append(plain)
    assert httpx.get(f"{plain.url}/").status_code == 404
    assert "Studio:" not in "".join(plain.output)
    with_studio = Running(["serve", "--port", "0", "--in-memory", "--studio"], cwd=project)
    running.append(with_studio)
    assert with_studio.wait_for(r"Studio:  (\S+)") == f"{with_studio.url}/"
    assert httpx.get(f"{with_studio.url}/").status_code == 200


def test_every_file_of_the_page_ships_as_package_data() -> None:
    """Files the package-data globs miss would be absent from an installed wheel."""
    import fnmatch
    import tomllib

    pyproject = tomllib.loads((STUDIO_DIR.parents[1] / "pyproject.toml").read_text())
    globs = pyproject["tool"]["setuptools"]["package-data"]["http_adapter.studio"]
    for path in STUDIO_DIR.iterdir():
        if path.is_file() and path.suffix not in (".py", ".pyc"):
            assert any(fnmatch.fnmatch(path.name, g) for g in globs), path.name


@pytest.mark.anyio
async def test_behind_a_proxy_prefix_the_page_points_under_it() -> None:
    from starlette.applications import Starlette

    app = Starlette(routes=studio.routes())
    transport = httpx.ASGITransport(app=app, root_path="/lab")
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        page = await client.get("/")
    assert '<base href="/lab/studio/">' in page.text
