"""Browser fixtures for the studio (issue 20): a real `graphrun dev` subprocess serving the
examples (+ graphs.py) on a free loopback port, and Debian's Chromium driven by Playwright.

Chromium is the system package (`executable_path`), never a Playwright download. Missing, the
tests skip locally and FAIL in CI (CI=true), where `.ci/run` installs it. Every page refuses
and records requests that leave the server's origin, and a test fails on any console error;
a failing test leaves a screenshot in $GRAPHRUN_TEST_ARTIFACTS (default: a temp folder).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from ..test_cli import EXAMPLE, Running

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = Path(os.environ.get("GRAPHRUN_TEST_ARTIFACTS") or Path(tempfile.gettempdir()) / "graphrun-artifacts")
# Set GRAPHRUN_STUDIO_SCREENSHOTS=docs/studio to refresh the README's pictures.
SCREENSHOTS = os.environ.get("GRAPHRUN_STUDIO_SCREENSHOTS")


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: CI must run the browser tests (.ci/run installs chromium)")
    pytest.skip(reason)


# Package scope, not session: Playwright's sync API keeps an asyncio loop running on the main
# thread while it is open, and every async test after it would fail to start its own.
@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    chromium = shutil.which("chromium")
    if chromium is None:
        _unavailable("no chromium on PATH (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[test]')")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def _project(root: Path, graphs: dict[str, str]) -> Path:
    for path in EXAMPLE.glob("*.py"):
        shutil.copy(path, root / path.name)
    shutil.copy(HERE / "graphs.py", root / "studio_graphs.py")
    config = json.loads((EXAMPLE / "langgraph.json").read_text())
    config["graphs"].update(graphs)
    (root / "langgraph.json").write_text(json.dumps(config))
    return root


EXTRA_GRAPHS = {
    "burst": "./studio_graphs.py:burst_graph",
    "slow": "./studio_graphs.py:slow_graph",
    "wide": "./studio_graphs.py:wide_graph",
    "nested": "./studio_graphs.py:nested_graph",
    "fail": "./studio_graphs.py:fail_graph",
    "clustered": "./studio_graphs.py:clustered_graph",
    "questions": "./studio_graphs.py:two_questions_graph",
    "team": "./studio_graphs.py:parallel_inside_graph",
    "tools": "./studio_graphs.py:tools_graph",
    "big": "./studio_graphs.py:big_graph",
}


@pytest.fixture(scope="package")
def studio_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`graphrun dev` over the examples and the extra graphs, in memory, for these tests."""
    root = _project(tmp_path_factory.mktemp("studio"), EXTRA_GRAPHS)
    server = Running(["dev", "--port", "0", "--in-memory"], cwd=root)
    yield server.url
    server.stop()


@pytest.fixture(scope="package")
def keyed_studio_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The examples behind GRAPHRUN_API_KEYS=studio-key."""
    root = _project(tmp_path_factory.mktemp("keyed"), {})
    server = Running(["dev", "--port", "0", "--in-memory"], cwd=root,
                     env={"GRAPHRUN_API_KEYS": "studio-key"})
    yield server.url
    server.stop()


CUSTOM_AUTH = """
from http_adapter.auth import Auth

auth = Auth()


@auth.authenticate
async def authenticate(authorization: str | None) -> str:
    users = {"Bearer studio-token": "studio-user", "Bearer reader-token": "reader"}
    if authorization not in users:
        raise Auth.exceptions.HTTPException(status_code=401, detail="Invalid token")
    return users[authorization]


@auth.on.threads.create
async def writers_only(ctx: Auth.types.AuthContext, value: dict) -> bool:
    return ctx.user.identity != "reader"  # the reader may look, not run: 403
"""


@pytest.fixture(scope="package")
def custom_auth_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The examples behind a custom `@auth.authenticate` handler wanting a bearer token."""
    root = _project(tmp_path_factory.mktemp("custom-auth"), {})
    (root / "studio_auth.py").write_text(CUSTOM_AUTH)
    config = json.loads((root / "langgraph.json").read_text())
    config["auth"] = {"path": "./studio_auth.py:auth"}
    (root / "langgraph.json").write_text(json.dumps(config))
    server = Running(["dev", "--port", "0", "--in-memory"], cwd=root)
    yield server.url
    server.stop()


_ANY_KEY = {"X-Api-Key": "studio-key"}  # /openapi.json is public; the keyed server ignores it


class Watch:
    """What a page did that it must not: console errors, page errors, outside requests."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.allowed_errors: list[str] = []  # substrings a test expects (e.g. a 401)
        self.calls: set[tuple[str, str]] = set()  # (METHOD, path) of the API calls made

    def route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(self.origin + "/") or url == self.origin or url.startswith("data:"):
            path = urlsplit(url).path
            if path != "/" and not path.startswith("/studio") and not url.startswith("data:"):
                self.calls.add((route.request.method, path))
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def console(self, message: Any) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def unexpected(self) -> list[str]:
        return [e for e in self.errors if not any(a in e for a in self.allowed_errors)]

    def undocumented(self) -> list[tuple[str, str]]:
        """API calls that match no operation of the server's OpenAPI document: the studio
        must be a client of the public API only."""
        paths = httpx.get(f"{self.origin}/openapi.json", headers=_ANY_KEY).json()["paths"]
        operations = [(method.upper(), re.compile("^" + re.sub(r"\{\w+\}", "[^/]+", path) + "$"))
                      for path, item in paths.items() for method in item]
        return sorted(c for c in self.calls
                      if not any(m == c[0] and p.match(c[1]) for m, p in operations))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


def open_page(browser: Any, url: str, request: pytest.FixtureRequest) -> Iterator[tuple[Any, Watch]]:
    origin = url.rstrip("/")
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    watch = Watch(origin)
    context.route("**/*", watch.route)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.on("console", watch.console)
    page.on("pageerror", lambda error: watch.errors.append(f"pageerror: {error}"))
    try:
        yield page, watch
        failed = getattr(request.node, "rep_call", None)
        if failed is not None and failed.failed:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            target = ARTIFACTS / f"{request.node.name}.png"
            page.screenshot(path=str(target), full_page=True)
            print(f"screenshot of the failure: {target}")
        else:
            assert watch.outside == [], "requests left the server's origin"
            assert watch.undocumented() == [], "calls outside the documented API"
            assert watch.unexpected() == [], "console errors"
    finally:
        context.close()


@pytest.fixture
def studio(browser: Any, studio_url: str, request: pytest.FixtureRequest) -> Iterator[tuple[Any, Watch]]:
    """A fresh browser context on the studio; checked for errors and outside requests after."""
    yield from open_page(browser, studio_url, request)


def screenshot(page: Any, name: str, readme: bool = True) -> Path:
    """A picture of a view: into docs/studio/ when asked to refresh the README's, else (and
    for the ones the README does not show) the artifacts folder."""
    folder = REPO / SCREENSHOTS if SCREENSHOTS and readme else ARTIFACTS
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path))
    return path
