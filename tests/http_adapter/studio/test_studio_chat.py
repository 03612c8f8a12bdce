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


RENDER = """async (texts) => {
  const { renderMarkdown } = await import("./markdown.js");
  return texts.map((text) => {
    const box = document.createElement("div");
    box.append(renderMarkdown(text));
    return box.innerHTML;
  });
}"""


def test_the_markdown_subset(studio: Any, studio_url: str) -> None:
    """markdown.js builds elements from a fixed set; what is not markdown stays text."""
    page, _ = studio
    open_studio(page, studio_url, "chat")
    cases = {
        "# Title\nsome *em* and __bold__ and ~~gone~~": (
            "<h3 class=\"md-h\">Title</h3><p>some <em>em</em> and <strong>bold</strong> and <del>gone</del></p>"),
        "1. one\n2. `two`": "<ol><li>one</li><li><code>two</code></li></ol>",
        "> quoted\n\nafter": "<blockquote><p>quoted</p></blockquote><p>after</p>",
        "```\n<b>**not bold**</b>\n```": "<pre class=\"md-code\"><code>&lt;b&gt;**not bold**&lt;/b&gt;</code></pre>",
        "[click](javascript:alert(1)) <script>x</script>": (
            "<p>[click](javascript:alert(1)) &lt;script&gt;x&lt;/script&gt;</p>"),
        "line one\nline two": "<p>line one<br>line two</p>",
        "snake_case_name and 2 * 3 * 4": "<p>snake_case_name and 2 * 3 * 4</p>",
    }
    assert page.evaluate(RENDER, list(cases)) == list(cases.values())


STREAM_CALL = """async () => {
  const { Chat } = await import("./chat.js");
  const chat = new Chat(document.createElement("div"));
  const chunk = (args, name) => ({ type: "AIMessageChunk", id: "run-1", content: "",
    tool_call_chunks: [{ index: 0, id: name ? "call-9" : null, name: name || null, args }] });
  chat.put(chunk('{"ci', "get_weather"), true);
  chat.put(chunk('ty": "Oslo"}'), true);
  await new Promise(requestAnimationFrame); // tokens are drawn once a frame
  const el = chat.root.querySelector(".bubble");
  return [el.querySelector(".tool-name").textContent, el.querySelector(".tool-args").textContent];
}"""


def test_streamed_tool_call_chunks_add_up(studio: Any, studio_url: str) -> None:
    """A model streams a tool call in pieces (`tool_call_chunks`): one call, its arguments whole."""
    page, _ = studio
    open_studio(page, studio_url, "chat")
    name, args = page.evaluate(STREAM_CALL)
    assert name == "get_weather" and args == '{\n  "city": "Oslo"\n}'
