"""The studio's chat and run output (issue 30 item 5), in a real browser: tool calls and
results readable, markdown rendered without letting HTML in, a chat as tall as the window,
and the run's final values shown after it ends."""

from __future__ import annotations

from typing import Any

from .conftest import screenshot
from .helpers import open_studio, run_and_wait

BUBBLES = """els => els.map(e => [e.dataset.role, e.querySelector('.text').textContent.trim()])"""


def _ask_the_weather(page: Any, studio_url: str) -> None:
    open_studio(page, studio_url, "tools")
    page.fill("#chat-input", "weather in Paris?")
    assert run_and_wait(page, "#chat-send") == "success"


def test_a_tool_call_shows_its_name_and_arguments_and_its_result(studio: Any, studio_url: str) -> None:
    """A message holding only tool calls was an empty "ASSISTANT" bubble."""
    page, _ = studio
    _ask_the_weather(page, studio_url)
    roles = page.eval_on_selector_all("#chat .bubble", "els => els.map(e => e.dataset.role)")
    assert roles == ["user", "assistant", "tool", "assistant"], roles
    asked = page.locator("#chat .bubble").nth(1)
    assert asked.locator(".tool-call .tool-name").text_content() == "get_weather"
    args = asked.locator(".tool-call .tool-args").text_content()
    assert '"city": "Paris"' in args and '"unit": "C"' in args, args
    assert asked.bounding_box()["height"] > 30  # drawn, not an empty strip
    result = page.locator('#chat .bubble[data-role="tool"]')
    assert "get_weather" in result.locator(".who").text_content()
    assert '"sky": "sunny"' in result.locator(".text").text_content()  # the JSON laid out
    screenshot(page, "chat-tools", readme=False)


def test_markdown_renders_and_html_stays_text(studio: Any, studio_url: str) -> None:
    """Markdown showed raw; it renders now, and HTML in a message is shown, never run."""
    page, _ = studio
    _ask_the_weather(page, studio_url)
    answer = page.locator('#chat .bubble[data-role="assistant"]').last.locator(".text")
    assert answer.locator("strong").text_content() == "Sunny"
    assert answer.locator("code").text_content() == "Paris"
    assert answer.locator("li").all_text_contents() == ["high 21", "low 12"]
    link = answer.locator("a")
    assert link.get_attribute("href") == "https://example.invalid/weather"
    assert link.get_attribute("rel") == "noopener noreferrer"
    assert "**" not in answer.text_content()
    assert page.locator("#chat img").count() == 0
    assert '<img src=x onerror="window.__pwned=1">' in answer.text_content()
    assert page.evaluate("window.__pwned") is None


def test_the_chat_fills_the_height_of_the_window(studio: Any, studio_url: str) -> None:
    """The chat sat in a 280 px box whatever the window."""
    page, _ = studio
    page.set_viewport_size({"width": 1440, "height": 900})
    open_studio(page, studio_url, "chat")
    log = page.locator("#chat").bounding_box()
    send = page.locator("#chat-send").bounding_box()
    assert log["height"] > 0.55 * 900, log
    assert send["y"] + send["height"] <= 900  # the box to type in is on screen, unscrolled


def test_the_run_output_is_shown_after_a_run(studio: Any, studio_url: str) -> None:
    """There was no output panel: the final values were only in the Threads view."""
    page, _ = studio
    open_studio(page, studio_url, "agent")
    assert page.locator("#run-output").is_hidden()  # nothing has run yet
    page.fill("#f-topic", "newts")
    assert run_and_wait(page, "#run-button") == "success"
    output = page.locator("#run-output")
    assert output.is_visible()
    assert '"draft": "Draft 2 on newts, from 4 notes"' in output.locator("pre").text_content()
    assert "success" in output.locator(".output-status").text_content()
    # the next run starts: the last one's output does not pass for this one's
    page.fill("#f-topic", "toads")
    page.click("#run-button")
    page.wait_for_function("!document.querySelector('#run-output pre')?.textContent.includes('newts')")
    page.wait_for_function("Number(document.body.dataset.runs) === 2")
    assert "Draft 2 on toads" in output.locator("pre").text_content()
