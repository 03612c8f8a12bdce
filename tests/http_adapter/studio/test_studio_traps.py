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
