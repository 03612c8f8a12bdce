"""Studio traps a new user fell into (issue 30 items 3-5), each in a real browser."""

from __future__ import annotations

from typing import Any

import httpx

from .helpers import open_studio, run_and_wait


def test_a_thread_of_another_graph_is_drawn_and_replayed_with_its_own_graph(
    studio: Any, studio_url: str
) -> None:
    """Item 3: "Replay from here" on a `burst` thread while `agent` was selected ran agent's
    nodes on burst's checkpoint and left the thread in `error`."""
    page, _ = studio
    thread = httpx.post(f"{studio_url}/threads", json={}).json()["thread_id"]
    done = httpx.post(f"{studio_url}/threads/{thread}/runs/wait",
                      json={"assistant_id": "burst", "input": {}}, timeout=30)
    assert done.status_code == 200
    burst = httpx.post(f"{studio_url}/assistants/search",
                       json={"graph_id": "burst", "limit": 1}).json()[0]["assistant_id"]
    open_studio(page, studio_url, "agent")
    page.click('nav button[data-view="threads"]')
    page.click(f'#thread-list li[data-thread-id="{thread}"]')
    page.wait_for_selector('#graph .node[data-node="burst"]')  # the thread's graph, drawn
    assert page.input_value("#assistant") == burst
    page.click('#history li.ckpt[data-step="0"]')  # before the node ran
    assert page.text_content("#ckpt-next") == "burst"
    assert run_and_wait(page, "#replay-button") == "success"
    assert httpx.get(f"{studio_url}/threads/{thread}").json()["status"] == "idle"
    runs = httpx.get(f"{studio_url}/threads/{thread}/runs").json()
    assert {r["assistant_id"] for r in runs} == {burst}


def test_an_assistant_is_saved_as_a_version_twice(studio: Any, studio_url: str) -> None:
    """Item 4: the second "Save version" answered `400: Cannot specify both configurable and
    context`: the page sent back the context the server mirrored from configurable."""
    page, _ = studio
    created = httpx.post(f"{studio_url}/assistants", json={"graph_id": "agent", "name": "twice"}).json()
    assistant = created["assistant_id"]
    open_studio(page, studio_url, assistant)
    page.click('nav button[data-view="assistant"]')
    page.fill("#assistant-config", '{"configurable": {"max_revisions": 3}}')
    page.click("#save-version")
    page.wait_for_selector('#versions li[data-version="2"]')
    assert '"max_revisions": 3' in page.input_value("#assistant-context")  # the server's mirror
    page.fill("#assistant-config", '{"configurable": {"max_revisions": 4}}')  # changed again
    page.click("#save-version")
    page.wait_for_selector('#versions li[data-version="3"]')
    latest = httpx.get(f"{studio_url}/assistants/{assistant}").json()
    assert latest["version"] == 3 and latest["config"]["configurable"] == {"max_revisions": 4}
    assert latest["context"] == {"max_revisions": 4}
    # and the context edited instead: it is what is saved (the config follows it)
    page.fill("#assistant-context", '{"max_revisions": 5}')
    page.click("#save-version")
    page.wait_for_selector('#versions li[data-version="4"]')
    latest = httpx.get(f"{studio_url}/assistants/{assistant}").json()
    assert latest["context"] == {"max_revisions": 5}
    assert latest["config"]["configurable"] == {"max_revisions": 5}
    assert page.get_attribute("#status", "data-kind") != "error", page.text_content("#status")


def test_a_run_paused_at_an_interrupt_or_a_breakpoint_says_paused(
    studio: Any, studio_url: str
) -> None:
    """Item 5: both said "Run ... success" (the API's run status, as LangGraph's)."""
    page, _ = studio
    open_studio(page, studio_url, "approval")
    page.fill("#f-request", "a refund")
    assert run_and_wait(page, "#run-button") == "success"  # what the API says
    shown = page.text_content("#status")
    assert "paused: the thread waits for input" in shown and "success" not in shown, shown
    assert page.text_content('#timeline li[data-kind="end"]') == "end run paused"
    open_studio(page, studio_url, "agent")
    page.click('#graph .bp[data-bp="before"][data-node="review"]')
    page.fill("#f-topic", "wasps")
    assert run_and_wait(page, "#run-button") == "success"
    shown = page.text_content("#status")
    assert "paused before review: Continue goes on" in shown and "success" not in shown, shown


def _start_slow(page: Any, studio_url: str) -> None:
    open_studio(page, studio_url, "slow")
    page.click("#run-button")
    page.wait_for_selector('#timeline li[data-kind="custom"]')
    page.wait_for_selector("#cancel-button:enabled")


def test_a_cancelled_run_says_cancelled(studio: Any, studio_url: str) -> None:
    """Item 5: a cancel showed "interrupted" (the API's run status)."""
    page, _ = studio
    _start_slow(page, studio_url)
    assert run_and_wait(page, "#cancel-button") == "interrupted"
    assert page.text_content("#status").endswith(" cancelled")
    assert page.text_content('#timeline li[data-kind="end"]') == "end run cancelled"


def test_the_footer_says_running_while_a_new_run_streams(studio: Any, studio_url: str) -> None:
    """Item 5: the footer kept the previous run's "success" while the next one streamed."""
    page, _ = studio
    open_studio(page, studio_url, "burst")
    assert run_and_wait(page, "#run-button") == "success"
    assert page.text_content("#status").endswith(" success")
    _start_slow(page, studio_url)
    shown = page.text_content("#status")
    assert shown.endswith(": running\u2026") and "success" not in shown, shown
    run_and_wait(page, "#cancel-button")


def test_custom_events_show_their_payload(studio: Any, studio_url: str) -> None:
    """Item 5: a `custom` event was a row with no text until opened."""
    page, _ = studio
    open_studio(page, studio_url, "burst")
    page.fill("#f-n", "3")
    assert run_and_wait(page, "#run-button") == "success"
    rows = page.eval_on_selector_all('#timeline li[data-kind="custom"] summary',
                                     "els => els.map(e => e.textContent)")
    assert rows == ['custom {"i":0}', 'custom {"i":1}', 'custom {"i":2}'], rows
    shown = page.locator('#timeline li[data-kind="custom"] .preview').first.bounding_box()
    assert shown is not None and shown["width"] > 20  # on the row, not hidden
