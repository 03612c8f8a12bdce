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
    # ms from navigation start until the assistants are listed and the graph drawn; the best of
    # up to three loads: a busy machine (the suite's other xdist worker) only adds to it (2.1 s
    # seen once on two loaded cores)
    times = [page.evaluate("window.studio.readyAt")]
    while times[-1] >= 1000 and len(times) < 3:
        page.reload()
        page.wait_for_selector("body[data-ready]")
        page.wait_for_selector("#graph .node")
        times.append(page.evaluate("window.studio.readyAt"))
    print(f"time to interactive: {', '.join(f'{t:.0f}' for t in times)} ms")
    assert min(times) < 1000


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


# Every drawn edge that goes down, sampled from its `d` (M, V and C commands: 24 points per
# curve, every 2 px of a vertical run): the nodes it passes through (boxes shrunk by 1.5 px)
# other than its own ends. Edges back up (class `back`) go around the side.
THROUGH_NODES = """() => {
  const boxes = [...document.querySelectorAll("#graph .node")].map((g) => {
    const r = g.querySelector("rect").getBBox();
    const t = g.transform.baseVal[0].matrix;
    return [g.dataset.node, r.x + t.e + 1.5, r.y + t.f + 1.5, r.x + t.e + r.width - 1.5, r.y + t.f + r.height - 1.5];
  });
  const points = (d) => {
    const out = [];
    let at = [0, 0];
    for (const [, cmd, args] of d.matchAll(/([MVC])([^MVC]*)/g)) {
      const n = args.trim().split(/[ ,]+/).map(Number);
      if (cmd === "M") at = [n[0], n[1]];
      else if (cmd === "V") for (let y = at[1]; Math.abs(y - n[0]) > 2; y += Math.sign(n[0] - y) * 2) out.push([at[0], y]);
      else for (let k = 1; k <= 24; k++) {
        const t = k / 24, u = 1 - t;
        const c = (i) => u * u * u * at[i] + 3 * u * u * t * n[i] + 3 * u * t * t * n[2 + i] + t * t * t * n[4 + i];
        out.push([c(0), c(1)]);
      }
      if (cmd === "V") at = [at[0], n[0]];
      else if (cmd === "C") at = [n[4], n[5]];
      out.push(at);
    }
    return out;
  };
  const hits = new Set();
  for (const path of document.querySelectorAll("#graph .edge:not(.back)")) {
    const { source, target } = path.dataset;
    for (const [x, y] of points(path.getAttribute("d")))
      for (const [node, x0, y0, x1, y1] of boxes)
        if (node !== source && node !== target && x > x0 && x < x1 && y > y0 && y < y1) hits.add(`${source} -> ${target} through ${node}`);
  }
  return [...hits];
}"""

# Draw a random 50-node graph with the page's own drawing code (graph.js) into the page.
DRAW_RANDOM = """async (edges) => {
  const { draw } = await import("./graph.js");
  const ids = [...new Set(edges.flat())];
  const svg = document.getElementById("graph");
  draw(svg, { nodes: ids.map((id) => ({ id })), edges: edges.map(([source, target]) => ({ source, target })) },
       { before: new Set(), after: new Set() }, {});
}"""


def test_edges_are_drawn_around_the_nodes(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "wide")
    assert page.evaluate(THROUGH_NODES) == []
    assert page.eval_on_selector_all("#graph .edge.back", "els => els.length") == 1  # join -> fan
    import random

    for seed in range(8):
        rng = random.Random(seed)
        edges = [("__start__", "n0"), *((f"n{rng.randrange(i)}", f"n{i}") for i in range(1, 50))]
        edges += [(f"n{rng.randrange(50)}", f"n{rng.randrange(50)}") for _ in range(25)]
        edges += [(f"n{i}", "__end__") for i in range(45, 50)]
        page.evaluate(DRAW_RANDOM, [list(e) for e in edges])
        assert page.evaluate(THROUGH_NODES) == [], seed
