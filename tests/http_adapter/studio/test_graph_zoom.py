"""The studio's drawing without traps (issue 30 item 6), in a real browser: zoom, pan and fit,
loop-back edges around the nodes, breakpoint dots one can hit, a fork mark every font draws,
no debug readout, and stream modes in plain words."""

from __future__ import annotations

from typing import Any

import httpx

from .helpers import open_studio

BOXES = """() => Object.fromEntries([...document.querySelectorAll('#graph .node')].map(n => {
  const r = n.querySelector('rect').getBoundingClientRect();
  return [n.dataset.node, [r.left, r.top, r.right, r.bottom]];
}))"""


def _boxes(page: Any) -> dict[str, list[float]]:
    return page.evaluate(BOXES)


def _inside(box: list[float], frame: dict[str, float]) -> bool:
    return (box[0] >= frame["x"] - 0.5 and box[1] >= frame["y"] - 0.5
            and box[2] <= frame["x"] + frame["width"] + 0.5 and box[3] <= frame["y"] + frame["height"] + 0.5)


def _outside(page: Any) -> list[str]:
    """The drawn nodes not wholly inside the visible canvas."""
    frame = page.locator("#graph-pane .canvas").bounding_box()
    return [n for n, box in _boxes(page).items() if not _inside(box, frame)]


def _big(page: Any, studio_url: str) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    open_studio(page, studio_url, "big")
    assert len(_boxes(page)) == 21  # 19 nodes, START and END


def test_a_19_node_graph_fits_a_1440x900_window(studio: Any, studio_url: str) -> None:
    page, _ = studio
    _big(page, studio_url)
    assert _outside(page) == []  # fitted when drawn
    assert 10 < int(page.text_content("#zoom-level").rstrip("%")) < 100  # and says how far
    page.click("#zoom-in")
    page.click("#zoom-in")
    assert _outside(page) != []  # zoomed in: no longer all in view
    page.click("#zoom-fit")
    assert _outside(page) == []
    width = lambda: _boxes(page)["draft"][2] - _boxes(page)["draft"][0]  # noqa: E731
    assert width() > 30  # fitted, not shrunk to nothing


def test_zoom_with_the_wheel_and_buttons_and_pan_by_dragging(studio: Any, studio_url: str) -> None:
    page, _ = studio
    _big(page, studio_url)
    before = _boxes(page)["draft"]
    cx, cy = (before[0] + before[2]) / 2, (before[1] + before[3]) / 2
    page.mouse.move(cx, cy)
    page.mouse.wheel(0, -300)  # zoom in around the pointer
    page.wait_for_function(f"document.querySelector('#graph .node[data-node=draft] rect')"
                           f".getBoundingClientRect().width > {(before[2] - before[0]) * 1.3}")
    after = _boxes(page)["draft"]
    assert abs((after[0] + after[2]) / 2 - cx) < 2 and abs((after[1] + after[3]) / 2 - cy) < 2  # stayed put
    # drag, even from a breakpoint dot: the drawing follows the pointer, and the dot stays off
    # (a press that moved is a pan, not a click)
    dot = page.locator('#graph .bp[data-bp="before"][data-node="draft"]').bounding_box()
    start = (dot["x"] + dot["width"] / 2, dot["y"] + dot["height"] / 2)
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(start[0] + 60, start[1] - 90, steps=4)
    page.mouse.up()
    moved = _boxes(page)["draft"]
    assert abs(moved[0] - after[0] - 60) < 1 and abs(moved[1] - after[1] + 90) < 1
    # the buttons: out, in, and 100%
    width = moved[2] - moved[0]
    page.click("#zoom-out")
    smaller = _boxes(page)["draft"]
    assert smaller[2] - smaller[0] < width * 0.9
    page.click("#zoom-reset")
    assert page.get_attribute("#graph", "data-zoom") == "1.000"
    assert page.text_content("#zoom-level") == "100%"
    assert page.locator("#graph .bp.on").count() == 0
    page.click('#graph .bp[data-bp="before"][data-node="draft"]')  # a click still is one
    assert page.locator("#graph .bp.on").count() == 1


SAMPLE_EDGE = """(edge) => {
  const el = document.querySelector(`#graph .edge[data-source="${edge[0]}"][data-target="${edge[1]}"]`);
  const m = el.getScreenCTM();
  const points = [];
  const length = el.getTotalLength();
  for (let at = 0; at <= length; at += 2) {
    const p = el.getPointAtLength(at);
    points.push([m.a * p.x + m.c * p.y + m.e, m.b * p.x + m.d * p.y + m.f]);
  }
  return points;
}"""


def _through(page: Any, source: str, target: str) -> list[str]:
    """The nodes (other than its ends) the drawn edge source->target passes through."""
    boxes = _boxes(page)
    points = page.evaluate(SAMPLE_EDGE, [source, target])
    assert len(points) > 10
    return sorted({node for node, (x0, y0, x1, y1) in boxes.items() if node not in (source, target)
                   for x, y in points if x0 + 1 < x < x1 - 1 and y0 + 1 < y < y1 - 1})


def test_a_loop_back_edge_goes_around_the_nodes(studio: Any, studio_url: str) -> None:
    """An edge back up was drawn straight across the nodes beside its two ends."""
    page, _ = studio
    _big(page, studio_url)
    assert _through(page, "check_style", "search_web") == []
    assert _through(page, "check_facts", "search_db") == []
    for graph, source, target in (("agent", "review", "write"), ("tools", "tools", "agent")):
        open_studio(page, studio_url, graph)
        page.wait_for_selector(f'#graph .node[data-node="{source}"]')
        assert _through(page, source, target) == [], graph


def test_breakpoint_dots_are_big_enough_to_hit(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "agent")
    for dot in page.locator("#graph .bp").all():
        box = dot.bounding_box()
        assert box["width"] >= 14 and box["height"] >= 14, box  # were 11 px
    assert page.get_attribute("#graph", "data-zoom") == "1.000"  # measured at 100%


def test_the_fork_mark_is_drawn_not_a_missing_glyph(studio: Any, studio_url: str) -> None:
    page, _ = studio
    thread = httpx.post(f"{studio_url}/threads", json={}).json()["thread_id"]
    run = {"assistant_id": "agent", "input": {"topic": "moles"}}
    assert httpx.post(f"{studio_url}/threads/{thread}/runs/wait", json=run, timeout=30).status_code == 200
    history = httpx.post(f"{studio_url}/threads/{thread}/history", json={"limit": 20}).json()
    earlier = next(h for h in history if h["metadata"]["step"] == 1)["checkpoint"]
    forked = httpx.post(f"{studio_url}/threads/{thread}/state",
                        json={"values": {"topic": "voles"}, "checkpoint": earlier})
    assert forked.status_code == 200, forked.text
    page.goto(f"{studio_url}/#assistant=agent&view=threads&thread={thread}")
    mark = page.locator("#history .fork").first
    mark.wait_for()
    assert mark.locator("svg").count() == 1  # an icon, not a font's glyph
    text = mark.text_content()
    assert "forked from step 1" in text and text.isascii(), text


def test_the_legend_has_no_debug_readout(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "agent")
    legend = page.text_content("#graph-pane .legend")
    assert " ms" not in legend and "layout" not in legend, legend
    assert page.evaluate("window.studio.layoutMs") > 0  # still measured, for the tests


def test_stream_modes_are_named_in_plain_words(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url, "agent")
    labels = page.eval_on_selector_all("#run-modes label", """els => els.map(e =>
        [e.querySelector('input').dataset.mode, e.querySelector('.mode-name').textContent, e.title])""")
    assert [m for m, _, _ in labels] == ["updates", "values", "messages-tuple", "custom", "tasks", "debug"]
    for mode, name, title in labels:
        assert name != mode and len(name) > 3, (mode, name)  # plain words on the box
        assert mode in title and len(title) > len(mode) + 20, (mode, title)  # and what it does
    assert "stream" in page.text_content("#run-modes .hint")
