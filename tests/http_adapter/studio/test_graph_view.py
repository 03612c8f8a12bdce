"""The studio's drawing and assistant views in a real browser (issue 20)."""

from __future__ import annotations

from typing import Any

import httpx

from .conftest import screenshot
from .helpers import open_studio


def drawn(page: Any) -> list[str]:
    return page.eval_on_selector_all("#graph .node", "els => els.map(e => e.dataset.node)")


def test_the_example_graph_draws_with_its_node_names(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "agent")
    assert sorted(drawn(page)) == ["__end__", "__start__", "research", "review", "write"]
    labels = page.eval_on_selector_all("#graph .node text", "els => els.map(e => e.textContent)")
    assert sorted(labels) == ["END", "START", "research", "review", "write"]
    edges = page.eval_on_selector_all(
        "#graph .edge", "els => els.map(e => [e.dataset.source, e.dataset.target, e.classList.contains('cond')])")
    assert sorted(edges) == [
        ["__start__", "research", False], ["research", "write", False],
        ["review", "__end__", True], ["review", "write", True], ["write", "review", False],
    ]
    # top to bottom in execution order: each layer below the one before
    ys = {n: page.evaluate(f"document.querySelector('#graph .node[data-node=\"{n}\"]').getBoundingClientRect().y")
          for n in ("__start__", "research", "write", "review", "__end__")}
    assert ys["__start__"] < ys["research"] < ys["write"] < ys["review"] < ys["__end__"]
    screenshot(page, "graph", readme=False)


def test_the_page_is_interactive_within_a_second(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "agent")
    # ms from navigation start until the assistants are listed and the graph drawn
    ready = page.evaluate("window.studio.readyAt")
    print(f"time to interactive: {ready:.0f} ms")
    assert ready < 1000


def test_a_50_node_graph_is_laid_out_without_overlaps(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "wide")
    assert len(drawn(page)) == 52  # 50 nodes + START and END
    layout_ms = page.evaluate("window.studio.layoutMs")
    print(f"layout of 52 nodes: {layout_ms:.1f} ms")
    assert layout_ms < 100
    boxes = page.eval_on_selector_all("#graph .node > rect", """els => els.map(e => {
        const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })""")
    overlaps = [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:]
                if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]]
    assert overlaps == []
    # every lane's chain goes downward
    top = {n: page.evaluate(f"document.querySelector('#graph .node[data-node=\"{n}\"]').getBoundingClientRect().y")
           for n in ("fan", "l2_0", "l2_7", "join")}
    assert top["fan"] < top["l2_0"] < top["l2_7"] < top["join"]


def test_a_subgraph_expands_and_folds(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "nested")
    assert sorted(drawn(page)) == ["__end__", "__start__", "finish", "prepare", "worker"]
    page.click('#graph [data-expand="worker"]')
    assert sorted(drawn(page)) == ["__end__", "__start__", "finish", "prepare", "worker:act", "worker:plan"]
    edges = page.eval_on_selector_all("#graph .edge", "els => els.map(e => [e.dataset.source, e.dataset.target])")
    assert ["prepare", "worker:plan"] in edges and ["worker:plan", "worker:act"] in edges
    assert ["worker:act", "finish"] in edges
    page.click('#graph .group[data-group="worker"] .group-label')
    assert "worker" in drawn(page)


def test_an_expanded_subgraph_stays_together_in_its_box(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "clustered")
    page.click('#graph [data-expand="worker"]')
    members = {"worker:plan", "worker:act", "worker:check", "worker:merge"}
    assert members <= set(drawn(page))
    box = page.eval_on_selector('#graph .group[data-group="worker"] rect', """e => {
        const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }""")
    centres = page.eval_on_selector_all("#graph .node", """els => els.map(e => {
        const r = e.querySelector("rect").getBoundingClientRect();
        return [e.dataset.node, (r.left + r.right) / 2, (r.top + r.bottom) / 2]; })""")
    inside = {n for n, x, y in centres if box[0] < x < box[2] and box[1] < y < box[3]}
    assert inside == members


def test_an_assistant_config_is_saved_as_a_new_version(studio: Any, studio_url: str) -> None:
    page, _ = studio
    created = httpx.post(f"{studio_url}/assistants", json={"graph_id": "agent", "name": "tuned"}).json()
    open_studio(page, studio_url, created["assistant_id"])
    page.click('nav button[data-view="assistant"]')
    page.fill("#assistant-config", '{"configurable": {"max_revisions": 3}}')
    page.click("#save-version")
    page.wait_for_selector('#versions li[data-version="2"]')
    latest = httpx.get(f"{studio_url}/assistants/{created['assistant_id']}").json()
    assert latest["version"] == 2 and latest["config"]["configurable"] == {"max_revisions": 3}
    assert "max_revisions" in page.text_content('#versions li[data-version="2"]')
    assert page.text_content(f'#assistant option[value="{created["assistant_id"]}"]') == "tuned (v2)"
    listed = page.eval_on_selector_all("#assistant-list li", "els => els.map(e => e.dataset.graph)")
    assert {"agent", "chat", "approval"} <= set(listed)
    screenshot(page, "assistant")
    # an earlier version made latest again, from the list
    page.click('#versions li[data-version="1"] button')
    page.wait_for_selector('#versions li[data-version="1"] b')
    assert httpx.get(f"{studio_url}/assistants/{created['assistant_id']}").json()["version"] == 1
    # another assistant picked from the list
    page.click('#assistant-list li[data-graph="chat"]')
    page.wait_for_selector('#graph .node[data-node="chat"]')
