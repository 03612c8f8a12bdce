"""Threads in the studio, in a real browser (issue 20): history, resuming an interrupt from
the page, and forking from an earlier checkpoint (time travel)."""

from __future__ import annotations

from typing import Any

import httpx

from .conftest import screenshot
from .helpers import current_thread, open_studio, run_and_wait, thread_state


def test_an_interrupt_is_resumed_from_the_page(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "approval")
    page.fill("#f-request", "a refund")
    run_and_wait(page, "#run-button")
    thread = current_thread(page)
    assert httpx.get(f"{studio_url}/threads/{thread}").json()["status"] == "interrupted"
    page.click('nav button[data-view="threads"]')
    page.wait_for_selector(f'#thread-list li[data-thread-id="{thread}"]')
    shown = page.text_content("#interrupt .interrupt-value")
    assert "Re: a refund. We will get back to you within a day." in shown
    assert "Send this draft?" in shown
    screenshot(page, "threads")
    # feedback first: a new draft, and the thread waits again
    page.fill("#interrupt .resume-value", "mention the order number")
    run_and_wait(page, "#interrupt .resume-button")
    page.wait_for_selector("#interrupt .interrupt-value:has-text('mention the order number')")
    page.fill("#interrupt .resume-value", "approve")
    run_and_wait(page, "#interrupt .resume-button")
    state = thread_state(studio_url, thread)
    assert state["next"] == [] and state["values"]["revisions"] == 2
    assert state["values"]["sent"] == "Re: a refund. We will get back to you within a day. (mention the order number)"
    page.wait_for_selector(f'#thread-detail .chip[data-status="idle"]')
    assert page.query_selector("#interrupt") is None


def test_a_fork_from_an_earlier_checkpoint_changes_the_result(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "agent")
    page.fill("#f-topic", "otters")
    run_and_wait(page, "#run-button")
    thread = current_thread(page)
    assert thread_state(studio_url, thread)["values"]["draft"] == "Draft 2 on otters, from 4 notes"
    page.click('nav button[data-view="threads"]')
    page.wait_for_selector("#history li.ckpt")
    steps = page.eval_on_selector_all("#history li.ckpt", "els => els.map(e => e.dataset.step)")
    assert steps == ["5", "4", "3", "2", "1", "0", "-1"]  # newest first
    page.click('#history li.ckpt[data-step="1"]')  # after research, before the first write
    assert page.text_content("#ckpt-next") == "write"
    values = page.input_value("#state-values")
    assert '"topic": "otters"' in values
    page.fill("#state-values", values.replace('"topic": "otters"', '"topic": "seals"'))
    run_and_wait(page, "#fork-button")
    forked = thread_state(studio_url, thread)["values"]
    assert forked["draft"] == "Draft 2 on seals, from 4 notes"  # the result changed
    assert forked["notes"][:2] == ["otters: three facts", "otters: one open question"]  # research kept
    history = httpx.post(f"{studio_url}/threads/{thread}/history", json={"limit": 100}).json()
    drafts = [h["values"].get("draft") for h in history if h["metadata"].get("step") == 5]
    assert sorted(drafts) == ["Draft 2 on otters, from 4 notes", "Draft 2 on seals, from 4 notes"]
    page.wait_for_selector("#history li.ckpt:nth-child(12)")  # the fork's checkpoints listed too
    screenshot(page, "time-travel")


def test_threads_are_listed_and_searched(studio: Any, studio_url: str) -> None:
    page, _ = studio
    made = httpx.post(f"{studio_url}/threads", json={"metadata": {"owner": "studio-search"}}).json()
    open_studio(page, studio_url, "agent")
    page.click('nav button[data-view="threads"]')
    page.fill("#thread-search", '{"owner": "studio-search"}')
    page.press("#thread-search", "Enter")
    page.wait_for_function(
        "document.querySelectorAll('#thread-list li.thread').length === 1 && "
        f"document.querySelector('#thread-list li.thread').dataset.threadId === '{made['thread_id']}'")
    page.fill("#thread-search", made["thread_id"][:13])
    page.press("#thread-search", "Enter")
    page.wait_for_selector(f'#thread-list li[data-thread-id="{made["thread_id"]}"]')


def test_an_interrupt_is_resumed_in_the_run_view(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "approval")
    page.fill("#f-request", "a visit")
    run_and_wait(page, "#run-button")
    assert "Re: a visit." in page.text_content("#run-interrupt .interrupt-value")
    page.fill("#interrupt .resume-value", '"approve"')  # JSON works too
    run_and_wait(page, "#interrupt .resume-button")
    assert thread_state(studio_url, current_thread(page))["values"]["sent"].startswith("Re: a visit.")
    page.wait_for_function("!document.querySelector('#run-interrupt .interrupt')")


def test_two_parallel_interrupts_are_answered_one_by_one_by_their_ids(studio: Any, studio_url: str) -> None:
    page, watch = studio
    open_studio(page, studio_url, "questions")
    run_and_wait(page, "#run-button")
    thread = current_thread(page)
    ids = {t["name"]: t["interrupts"][0]["id"] for t in thread_state(studio_url, thread)["tasks"]}
    page.wait_for_selector('#run-interrupt .interrupt[data-count="2"]')
    shown = page.eval_on_selector_all(
        "#run-interrupt .interrupt-item",
        "els => els.map(e => [e.dataset.node, e.dataset.interruptId, e.querySelector('pre').textContent])")
    assert sorted((n, i) for n, i, _ in shown) == sorted(ids.items())
    assert all(f"What about {n.removeprefix('ask_')}?" in text for n, _, text in shown)
    screenshot(page, "interrupts", readme=False)
    # answer only the size: the colour still waits, alone
    size = f'#run-interrupt .interrupt-item[data-interrupt-id="{ids["ask_size"]}"]'
    page.fill(f"{size} .resume-value", "large")
    run_and_wait(page, f"{size} .resume-button")
    state = thread_state(studio_url, thread)
    assert state["values"]["log"] == ["size=large"] and state["next"] == ["ask_colour"]
    page.wait_for_selector('#run-interrupt .interrupt[data-count="1"]')
    left = page.eval_on_selector_all("#run-interrupt .interrupt-item", "els => els.map(e => e.dataset.interruptId)")
    assert left == [ids["ask_colour"]]
    page.fill("#run-interrupt .resume-value", '"red"')
    run_and_wait(page, "#run-interrupt .resume-button")
    state = thread_state(studio_url, thread)
    assert state["next"] == [] and sorted(state["values"]["log"]) == ["colour=red", "done", "size=large"]


def test_resume_all_answers_every_filled_in_interrupt_in_one_run(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "questions")
    run_and_wait(page, "#run-button")
    thread = current_thread(page)
    page.click('nav button[data-view="threads"]')
    page.wait_for_selector('#interrupt[data-count="2"]')
    page.fill('#interrupt .interrupt-item[data-node="ask_colour"] .resume-value', "blue")
    page.fill('#interrupt .interrupt-item[data-node="ask_size"] .resume-value', "small")
    run_and_wait(page, "#resume-all")
    state = thread_state(studio_url, thread)
    assert state["next"] == [] and sorted(state["values"]["log"]) == ["colour=blue", "done", "size=small"]
    runs = httpx.get(f"{studio_url}/threads/{thread}/runs").json()
    assert len(runs) == 2  # the first run and one resume


def test_a_checkpoint_shows_its_tasks_and_a_fork_can_be_stepped_through(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "agent")
    page.fill("#f-topic", "crows")
    run_and_wait(page, "#run-button")
    thread = current_thread(page)
    page.click('nav button[data-view="threads"]')
    page.click('#history li.ckpt[data-step="1"]')
    # the task of that step and what it wrote
    assert page.eval_on_selector_all("#checkpoint li.task", "els => els.map(e => e.dataset.task)") == ["write"]
    assert "Draft 1 on crows" in page.text_content("#checkpoint li.task .task-result")
    values = page.input_value("#state-values")
    page.fill("#state-values", values.replace('"topic": "crows"', '"topic": "rooks"'))
    page.click("#fork-save")  # save only: the fork is selected, nothing runs
    page.wait_for_function("document.querySelector('#history li.ckpt.selected')?.dataset.step === '2'")
    assert page.text_content("#ckpt-next") == "write"
    assert len(httpx.get(f"{studio_url}/threads/{thread}/runs").json()) == 1
    assert thread_state(studio_url, thread)["values"]["topic"] == "rooks"
    # then one step from the Run view: write runs on the forked values
    page.click('nav button[data-view="run"]')
    run_and_wait(page, "#step-button")
    state = thread_state(studio_url, thread)
    assert state["values"]["draft"].startswith("Draft 1 on rooks") and state["next"] == ["review"]


def test_threads_are_found_by_whole_id_and_filtered_by_status(studio: Any, studio_url: str) -> None:
    page, _ = studio
    old = httpx.post(f"{studio_url}/threads", json={"metadata": {"owner": "old"}}).json()["thread_id"]
    for _ in range(55):  # 55 newer threads push it out of the newest 50
        httpx.post(f"{studio_url}/threads", json={})
    open_studio(page, studio_url, "agent")
    page.click('nav button[data-view="threads"]')
    page.wait_for_selector("#thread-list li.thread")
    assert page.query_selector(f'#thread-list li[data-thread-id="{old}"]') is None
    page.fill("#thread-search", old)
    page.press("#thread-search", "Enter")
    page.wait_for_function("(id) => [...document.querySelectorAll('#thread-list li.thread')]"
                           ".map(e => e.dataset.threadId).join() === id", arg=old)
    page.fill("#thread-search", "")
    asking = httpx.post(f"{studio_url}/threads", json={}).json()["thread_id"]  # one that waits
    httpx.post(f"{studio_url}/threads/{asking}/runs/wait", json={"assistant_id": "questions", "input": {}}, timeout=20)
    waiting = httpx.post(f"{studio_url}/threads/search", json={"status": "interrupted", "limit": 50}).json()
    page.select_option("#thread-status", "interrupted")
    page.wait_for_function("""(n) => {
        const shown = [...document.querySelectorAll('#thread-list li.thread')];
        return shown.length === n && shown.every((e) => e.dataset.status === 'interrupted'); }""", arg=len(waiting))
    shown = page.eval_on_selector_all("#thread-list li.thread", "els => els.map(e => e.dataset.threadId)")
    assert asking in shown and sorted(shown) == sorted(t["thread_id"] for t in waiting)
