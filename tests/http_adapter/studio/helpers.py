"""Small page actions the studio tests share."""

from __future__ import annotations

from typing import Any

import httpx


def open_studio(page: Any, url: str, assistant: str = "agent") -> None:
    """Load the page on `assistant` and wait until it is interactive (graph drawn)."""
    page.goto(f"{url.rstrip('/')}/#assistant={assistant}")
    page.wait_for_selector("body[data-ready]")
    page.wait_for_selector("#graph .node")


def runs_ended(page: Any) -> int:
    return int(page.evaluate("Number(document.body.dataset.runs || 0)"))


def run_and_wait(page: Any, selector: str, timeout: float = 20_000) -> str:
    """Click `selector`, wait for the run it starts to end; the run's final status."""
    before = runs_ended(page)
    page.click(selector)
    page.wait_for_function(f"Number(document.body.dataset.runs || 0) > {before}", timeout=timeout)
    return str(page.evaluate("document.body.dataset.lastRun"))


def timeline(page: Any, kind: str) -> list[str]:
    return page.eval_on_selector_all(
        f'#timeline li[data-kind="{kind}"]', "els => els.map(e => e.dataset.node)")


def thread_state(url: str, thread_id: str) -> dict[str, Any]:
    return httpx.get(f"{url}/threads/{thread_id}/state", timeout=5).json()


def current_thread(page: Any) -> str:
    return str(page.evaluate("window.studio.thread"))
