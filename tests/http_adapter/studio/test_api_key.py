"""The studio on a server that wants a key (issue 20): the page asks for it, keeps it in
session storage, and sends it as X-Api-Key (GRAPHRUN_API_KEYS) or a bearer token (custom auth)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import open_page
from .helpers import open_studio, run_and_wait

REFUSED = "status of 401"  # Chromium logs every refused request as a console error


@pytest.fixture
def keyed(browser: Any, keyed_studio_url: str, request: pytest.FixtureRequest) -> Iterator[tuple[Any, Any]]:
    yield from open_page(browser, keyed_studio_url, request)


@pytest.fixture
def custom(browser: Any, custom_auth_url: str, request: pytest.FixtureRequest) -> Iterator[tuple[Any, Any]]:
    yield from open_page(browser, custom_auth_url, request)


def enter_key(page: Any, key: str, scheme: str = "x-api-key") -> None:
    page.wait_for_selector("#key-dialog[open]")
    page.select_option("#key-scheme", scheme)
    page.fill("#key-input", key)
    page.click("#key-ok")


def test_the_page_asks_for_the_api_key_and_keeps_it(keyed: Any, keyed_studio_url: str) -> None:
    page, watch = keyed
    watch.allowed_errors.append(REFUSED)
    page.goto(keyed_studio_url + "/")
    enter_key(page, "wrong")
    page.wait_for_function("document.getElementById('key-detail').textContent === 'Invalid API key'")
    enter_key(page, "studio-key")
    page.wait_for_selector('#graph .node[data-node="research"]')
    assert page.evaluate("sessionStorage.getItem('graphrun.studio.key')") == "studio-key"
    page.fill("#f-topic", "keys")
    assert run_and_wait(page, "#run-button") == "success"
    refused = len(watch.errors)
    page.reload()  # the same tab: the key is remembered, nothing is refused
    open_studio(page, keyed_studio_url)
    assert page.query_selector("#key-dialog[open]") is None and len(watch.errors) == refused
    # a key gone stale: the three calls refused at once share one dialog
    page.evaluate("sessionStorage.setItem('graphrun.studio.key', 'stale')")
    page.select_option("#assistant", label="chat (v1)")
    enter_key(page, "studio-key")
    page.wait_for_selector('#graph .node[data-node="chat"]')
    assert page.query_selector("#key-dialog[open]") is None


def test_custom_auth_gets_a_bearer_token(custom: Any, custom_auth_url: str) -> None:
    page, watch = custom
    watch.allowed_errors.append(REFUSED)
    page.goto(custom_auth_url + "/")
    enter_key(page, "studio-token", "bearer")
    page.wait_for_selector('#graph .node[data-node="research"]')
    page.fill("#f-topic", "tokens")
    assert run_and_wait(page, "#run-button") == "success"


def test_a_refusal_from_custom_auth_says_not_allowed_without_asking_for_a_key(
        custom: Any, custom_auth_url: str) -> None:
    page, watch = custom
    watch.allowed_errors += [REFUSED, "status of 403"]
    page.goto(custom_auth_url + "/")
    enter_key(page, "reader-token", "bearer")  # a known user who may read but not run
    page.wait_for_selector('#graph .node[data-node="research"]')
    page.fill("#f-topic", "forbidden")
    page.click("#run-button")
    page.wait_for_selector('#status[data-kind="denied"]')
    assert page.text_content("#status").startswith("Not allowed: the server's auth refused this (Forbidden)")
    assert page.query_selector("#key-dialog[open]") is None
    assert page.evaluate("sessionStorage.getItem('graphrun.studio.key')") == "reader-token"  # kept
    assert "1" not in (page.get_attribute("body", "data-runs") or "")
    # the Key button switches user; a 401 (unknown token) still asks
    page.click("#key-button")
    enter_key(page, "nobody", "bearer")
    page.wait_for_selector("#key-dialog[open]")
    page.wait_for_function("document.getElementById('key-detail').textContent === 'Invalid token'")
    enter_key(page, "studio-token", "bearer")
    page.wait_for_selector('#graph .node[data-node="research"]')
    assert run_and_wait(page, "#run-button") == "success"
