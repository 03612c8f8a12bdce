"""A browser client for real (issue 18 "Browsers cannot call us at all"): a chat page on the
official `@langchain/langgraph-sdk` (js/page/, bundled with esbuild), served from another origin
than the API, in headless Chromium (Debian's, through Playwright), calling `graphrun dev`
directly: a chat turn, a second turn, a reload with the thread id, the history list."""

from __future__ import annotations

import functools
import shutil
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import pytest

from .js_tools import JS_DIR, PROJECT, bundle, chromium, need
from .test_cli import Running

try:
    from playwright import sync_api as playwright_api  # the test extra installs it
except ImportError:  # pragma: no cover - fails in CI, skips elsewhere (js_tools.need)
    playwright_api = None

CHROMIUM_ARGS = ["--no-sandbox", "--headless=new", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def page_origin(tmp_path: Path) -> Iterator[str]:
    """The page on its own loopback port: another origin than the API's."""
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(JS_DIR / "page" / "index.html", site / "index.html")
    bundle(JS_DIR / "page" / "app.js", site / "bundle.js")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def dev() -> Iterator[Running]:
    server = Running(["dev", "--config", str(PROJECT), "--port", "0", "--in-memory"],
                     cwd=PROJECT.parent)
    yield server
    server.stop()


@pytest.fixture
def browser() -> Iterator[object]:
    need(playwright_api is not None, "playwright is not installed (pip install -e '.[test]')")
    executable = chromium()
    with playwright_api.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS,
                                          headless=True)
        yield launched
        launched.close()


def test_chat_page_in_chromium(browser: object, page_origin: str, dev: Running) -> None:
    page = browser.new_page()  # type: ignore[attr-defined]
    console: list[str] = []
    page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
    expect = playwright_api.expect
    page.goto(f"{page_origin}/index.html?api={quote(dev.url)}")
    status = page.locator("#status")
    expect(status).to_have_text("ready", timeout=15_000)
    messages = page.locator("#messages li")

    def say(text: str, reply: str, count: int) -> None:
        page.fill("#input", text)
        page.click("#send")
        expect(status).to_have_text("ready", timeout=15_000)
        expect(messages).to_have_count(count)
        expect(messages.nth(count - 1)).to_have_text(reply)

    say("hello", "You said: hello (turn 1)", 2)
    assert int(page.text_content("#tokens") or 0) == 9  # streamed token by token, across origins
    say("and again", "You said: and again (turn 2)", 4)
    thread_id = page.text_content("#thread-id")
    assert thread_id and f"thread={thread_id}" in page.url
    page.reload()  # the thread comes back from the server, by the id in the URL
    expect(status).to_have_text("ready", timeout=15_000)
    expect(messages).to_have_count(4)
    expect(page.locator("#messages li.human")).to_have_text(["hello", "and again"])
    assert int(page.text_content("#checkpoints") or 0) >= 6
    history = page.locator("#threads a")
    expect(history).to_have_count(1)
    assert history.first.get_attribute("data-thread-id") == thread_id
    expect(history.first).to_have_text("hello (4)")
    assert not [line for line in console if line.startswith("error")], console
