"""Deep links in the studio (issue 20): `#assistant=...&thread=...&checkpoint=...` opens that
thread at that checkpoint, and the address follows the user so back and forward work."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from .helpers import current_thread, open_studio, run_and_wait


def route(page: Any) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(page.url).fragment).items()}


def selected(page: Any) -> tuple[str, str]:
    """(the Threads view's selected checkpoint row's step, the shown checkpoint's id)."""
    page.wait_for_selector("#history li.ckpt.selected")
    step = page.get_attribute("#history li.ckpt.selected", "data-step")
    return str(step), str(page.get_attribute("#checkpoint .checkpoint", "data-checkpoint-id"))


def checkpoints(url: str, thread: str) -> dict[int, str]:
    history = httpx.post(f"{url}/threads/{thread}/history", json={"limit": 100}).json()
    return {h["metadata"]["step"]: h["checkpoint"]["checkpoint_id"] for h in history}


def thread_shown_at_its_latest(page: Any, url: str, topic: str) -> tuple[str, dict[int, str]]:
    """Run the agent on `topic`, then open its thread in the Threads view (its latest
    checkpoint selected); the thread and its checkpoints by step."""
    open_studio(page, url, "agent")
    page.fill("#f-topic", topic)
    run_and_wait(page, "#run-button")
    thread = current_thread(page)
    at = checkpoints(url, thread)
    page.click('nav button[data-view="threads"]')
    page.wait_for_selector(f'#thread-list li[data-thread-id="{thread}"].selected')
    assert selected(page) == ("5", at[5])
    return thread, at


def test_a_link_opens_a_thread_at_a_checkpoint(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "agent")
    page.fill("#f-topic", "owls")
    run_and_wait(page, "#run-button")
    thread = current_thread(page)
    assert route(page) == {"assistant": "agent", "view": "run", "thread": thread}  # the run's thread
    at = checkpoints(studio_url, thread)
    page.goto(f"{studio_url}/#assistant=agent&thread={thread}&checkpoint={at[1]}")
    page.reload()  # a fresh page on the link
    page.wait_for_selector("body[data-ready]")
    assert page.get_attribute('nav button[data-view="threads"]', "class") == "active"
    assert selected(page) == ("1", at[1])
    assert page.text_content("#ckpt-next") == "write"  # after research, before write
    assert '"topic": "owls"' in page.input_value("#state-values")
    marked = page.eval_on_selector_all("#graph .node.next", "els => els.map(e => e.dataset.node)")
    assert marked == ["write"]
    assert route(page) == {"assistant": "agent", "view": "threads", "thread": thread, "checkpoint": at[1]}
    # a link to the Run view on that thread picks it for the next run
    page.goto(f"{studio_url}/#assistant=agent&view=run&thread={thread}")
    page.wait_for_function(f"document.getElementById('run-thread')?.value === '{thread}'")


def test_back_and_forward_walk_the_users_steps(studio: Any, studio_url: str) -> None:
    page, _ = studio
    thread, at = thread_shown_at_its_latest(page, studio_url, "moles")
    page.click('#history li.ckpt[data-step="1"]')
    page.click('#history li.ckpt[data-step="3"]')
    assert route(page)["checkpoint"] == at[3]
    page.go_back()
    page.wait_for_function(f"document.querySelector('#checkpoint .checkpoint')?.dataset.checkpointId === '{at[1]}'")
    assert selected(page) == ("1", at[1]) and route(page)["checkpoint"] == at[1]
    page.go_back()
    page.wait_for_function(f"document.querySelector('#checkpoint .checkpoint')?.dataset.checkpointId === '{at[5]}'")
    assert "checkpoint" not in route(page)
    page.go_back()  # the Run view, on the same thread
    page.wait_for_selector("#run-button")
    assert route(page) == {"assistant": "agent", "view": "run", "thread": thread}
    page.go_forward()
    page.go_forward()
    page.wait_for_function(f"document.querySelector('#checkpoint .checkpoint')?.dataset.checkpointId === '{at[1]}'")
    # another assistant is a step too; back returns to this thread
    page.select_option("#assistant", label="chat (v1)")
    page.wait_for_selector('#graph .node[data-node="chat"]')
    assert route(page)["assistant"] == "chat" and "thread" not in route(page)
    page.go_back()
    page.wait_for_selector('#graph .node[data-node="research"]')
    page.wait_for_function(f"document.querySelector('#checkpoint .checkpoint')?.dataset.checkpointId === '{at[1]}'")


def test_work_ending_before_a_step_is_followed_keeps_the_step(studio: Any, studio_url: str) -> None:
    """Back and forward change the address before their hashchange is handled; a fetch ending
    in between used to replace that entry with the route being left, and the page then showed
    the old one (two quick forwards landed on the wrong checkpoint)."""
    page, _ = studio
    thread, at = thread_shown_at_its_latest(page, studio_url, "voles")
    # the address moves on; before its hashchange, work of the old route ends (it rewrites the
    # address as a thread's reload does)
    page.evaluate(f"""() => {{
        location.hash = "#assistant=agent&view=threads&thread={thread}&checkpoint={at[1]}";
        window.studio.setThread(window.studio.thread);
    }}""")
    page.wait_for_function(f"document.querySelector('#checkpoint .checkpoint')?.dataset.checkpointId === '{at[1]}'")
    assert route(page)["checkpoint"] == at[1]
    page.go_back()  # the step is an entry of its own
    page.wait_for_function(f"document.querySelector('#checkpoint .checkpoint')?.dataset.checkpointId === '{at[5]}'")
