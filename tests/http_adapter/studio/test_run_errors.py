"""A failed run in the studio reads as the error's type and message (issue 30 item 1): a task's
error arrives as `{error, message}` and showed as "explode: [object Object]"."""

from __future__ import annotations

from typing import Any

from .helpers import open_studio, run_and_wait


def test_a_failed_task_reads_as_its_error_type_and_message(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "fail")
    assert run_and_wait(page, "#run-button") == "error"
    rows = page.eval_on_selector_all('#timeline li[data-kind="error"] .head',
                                     "els => els.map(e => e.textContent)")
    assert not any("[object Object]" in row for row in rows), rows
    titles = page.eval_on_selector_all('#timeline li[data-kind="error"]',
                                       "els => els.map(e => e.dataset.node)")
    assert "explode: ValueError: boom from the studio test" in titles, titles  # the task's row
    assert "ValueError: boom from the studio test" in titles, titles  # the run's error event
