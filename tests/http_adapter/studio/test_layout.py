"""The page's layered layout (layout.js) run in Chromium on awkward graphs (issue 20): cycles,
self-loops, disconnected nodes, edges into START, and a 50-node random graph, timed."""

from __future__ import annotations

from typing import Any

import httpx

from .helpers import open_studio

# Lay out the graph in the page; return each node's centre and the elapsed ms.
LAY_OUT = """async ([nodes, edges, groups]) => {
  const { layout } = await import("./layout.js");
  const sized = nodes.map((id) => ({ id, width: 80, height: 36, group: (groups || {})[id] }));
  const t0 = performance.now();
  const out = layout(sized, edges.map(([source, target]) => ({ source, target })));
  const ms = performance.now() - t0;
  return { ms, pos: Object.fromEntries([...out.pos].map(([id, p]) => [id, [p.x, p.y]])),
           routes: out.routes.length, width: out.width, height: out.height };
}"""


def lay_out(page: Any, nodes: list[str], edges: list[tuple[str, str]],
            groups: dict[str, str] | None = None) -> dict[str, Any]:
    return page.evaluate(LAY_OUT, [nodes, [list(e) for e in edges], groups or {}])


def no_overlaps(pos: dict[str, list[float]]) -> bool:
    boxes = list(pos.values())
    return not any(abs(a[0] - b[0]) < 80 and abs(a[1] - b[1]) < 36
                   for i, a in enumerate(boxes) for b in boxes[i + 1:])


def test_cycles_self_loops_and_strays(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url)
    nodes = ["__start__", "a", "b", "c", "stray", "__end__"]
    edges = [("__start__", "a"), ("a", "b"), ("b", "c"), ("c", "a"), ("b", "b"),
             ("c", "__end__"), ("c", "__start__"), ("__end__", "a")]
    out = lay_out(page, nodes, edges)
    pos = out["pos"]
    assert sorted(pos) == sorted(nodes) and out["routes"] == len(edges)
    assert pos["__start__"][1] < pos["a"][1] < pos["b"][1] < pos["c"][1] < pos["__end__"][1]
    assert no_overlaps(pos)


def test_a_loop_does_not_pull_its_target_below_it(studio: Any, studio_url: str) -> None:
    """Issue 30: a depth-first walk reached b1 through the loop e1 -> b1 first and drew it
    below e1; the three branches of `a` stay side by side on one row."""
    page, _ = studio
    open_studio(page, studio_url)
    nodes = ["__start__", "a", "b1", "b2", "b3", "c", "d", "e1", "e2", "__end__"]
    edges = [("__start__", "a"), *(("a", b) for b in ("b1", "b2", "b3")), *((b, "c") for b in ("b1", "b2", "b3")),
             ("c", "d"), ("d", "e1"), ("d", "e2"), ("e1", "b1"), ("e2", "b3"), ("e1", "__end__"), ("e2", "__end__")]
    pos = lay_out(page, nodes, edges)["pos"]
    assert pos["b1"][1] == pos["b2"][1] == pos["b3"][1] < pos["c"][1] < pos["e1"][1] == pos["e2"][1]
    assert no_overlaps(pos)


def test_fifty_random_nodes_are_layered_quickly(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url)
    import random

    rng = random.Random(20)
    nodes = ["__start__", *(f"n{i}" for i in range(50)), "__end__"]
    edges = [("__start__", "n0")]
    for i in range(1, 50):  # each node reached from an earlier one, plus extra edges and loops
        edges.append((f"n{rng.randrange(i)}", f"n{i}"))
    edges += [(f"n{rng.randrange(50)}", f"n{rng.randrange(50)}") for _ in range(25)]
    edges += [(f"n{i}", "__end__") for i in range(45, 50)]
    out = lay_out(page, nodes, edges)
    pos = out["pos"]
    assert sorted(pos) == sorted(nodes) and no_overlaps(pos)
    assert pos["__end__"][1] == max(p[1] for p in pos.values())
    print(f"layout of 52 random nodes, 80 edges: {out['ms']:.1f} ms")
    assert out["ms"] < 100


def test_nodes_of_one_subgraph_sit_side_by_side(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url)
    nodes = ["__start__", "g:a", "x", "g:b", "__end__"]
    edges = [("__start__", n) for n in ("g:a", "x", "g:b")] + [(n, "__end__") for n in ("g:a", "x", "g:b")]
    pos = lay_out(page, nodes, edges, {"g:a": "g", "g:b": "g"})["pos"]
    row = sorted(("g:a", "x", "g:b"), key=lambda n: pos[n][0])
    assert row.index("x") in (0, 2), row  # never between the two members of g
    plain = lay_out(page, nodes, edges)["pos"]  # without groups the given order stands
    assert sorted(("g:a", "x", "g:b"), key=lambda n: plain[n][0]) == ["g:a", "x", "g:b"]


# The served test graphs' drawings (every subgraph expanded), laid out as the page does, with
# label-sized nodes; each edge's route as points, and which edges go back up (loops).
LAY_OUT_SERVED = """async ([graphId, nodes, edges]) => {
  const { layout } = await import("./layout.js");
  const sized = nodes.map((n) => ({ id: n.id, group: n.group, width: 40 + 7 * n.id.length, height: 36 }));
  const t0 = performance.now();
  const out = layout(sized, edges);
  const ms = performance.now() - t0;
  return { ms, boxes: Object.fromEntries(sized.map((n) => {
             const p = out.pos.get(n.id);
             return [n.id, [p.x - n.width / 2, p.y - n.height / 2, p.x + n.width / 2, p.y + n.height / 2]];
           })),
           routes: out.routes.map((r) => r.map((p) => [p.x, p.y])) };
}"""


def _crosses(a: list[float], b: list[float], box: list[float]) -> bool:
    """Does the segment a-b pass through the inside of `box` (x0, y0, x1, y1)? Liang-Barsky."""
    x0, y0, x1, y1 = box[0] + 1, box[1] + 1, box[2] - 1, box[3] - 1
    dx, dy = b[0] - a[0], b[1] - a[1]
    lo, hi = 0.0, 1.0
    for p, q in ((-dx, a[0] - x0), (dx, x1 - a[0]), (-dy, a[1] - y0), (dy, y1 - a[1])):
        if p == 0:
            if q < 0:
                return False
        elif p < 0:
            lo = max(lo, q / p)
        else:
            hi = min(hi, q / p)
    return lo < hi


def edge_crossings(boxes: dict[str, list[float]], edges: list[dict[str, Any]],
                   routes: list[list[list[float]]]) -> list[tuple[str, str, str]]:
    """(source, target, node) for every edge segment through a node box other than its own
    ends; edges back up the layers too (issue 30: they were drawn across their end rows)."""
    found = []
    for edge, points in zip(edges, routes):
        for a, b in zip(points, points[1:]):
            for node, box in boxes.items():
                if node not in (edge["source"], edge["target"]) and _crosses(a, b, box):
                    found.append((edge["source"], edge["target"], node))
    return found


def served_graph(url: str, graph_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The xray drawing of a served graph with every subgraph expanded (group = its subgraph)."""
    assistant = httpx.post(f"{url}/assistants/search", json={"graph_id": graph_id}).json()[0]["assistant_id"]
    drawing = httpx.get(f"{url}/assistants/{assistant}/graph", params={"xray": "true"}).json()
    subgraphs = [ns.replace("|", ":") for ns in httpx.get(f"{url}/assistants/{assistant}/subgraphs",
                                                          params={"recurse": "true"}).json()]
    inner = {n["id"] for n in drawing["nodes"]}

    def group(node: str) -> str | None:
        return max((s for s in subgraphs if node.startswith(s + ":")), key=len, default=None)

    def expanded(node: str) -> bool:  # a subgraph drawn by its inner nodes
        return node in subgraphs and any(i.startswith(node + ":") for i in inner)

    nodes = [{"id": n["id"], "group": group(n["id"])} for n in drawing["nodes"] if not expanded(n["id"])]
    ids = {n["id"] for n in nodes}
    edges = [{"source": e["source"], "target": e["target"]} for e in drawing["edges"]
             if e["source"] in ids and e["target"] in ids]
    return nodes, edges


def test_no_edge_passes_through_a_node(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url)
    for graph_id in ("wide", "clustered", "nested", "team", "agent", "questions"):
        nodes, edges = served_graph(studio_url, graph_id)
        out = page.evaluate(LAY_OUT_SERVED, [graph_id, nodes, edges])
        assert edge_crossings(out["boxes"], edges, out["routes"]) == [], graph_id
        if graph_id == "wide":
            print(f"layout of the 52-node graph: {out['ms']:.1f} ms")
            assert out["ms"] < 15 or min(_retimed(page, nodes, edges)) < 15


def _retimed(page: Any, nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> list[float]:
    """A first call also compiles the module: time a few more before judging."""
    return [page.evaluate(LAY_OUT_SERVED, ["wide", nodes, edges])["ms"] for _ in range(3)]


def test_random_fifty_node_graphs_route_around_nodes(studio: Any, studio_url: str) -> None:
    page, _ = studio
    open_studio(page, studio_url)
    import random

    for seed in range(5):
        rng = random.Random(seed)
        names = [f"n{i}" for i in range(50)]
        nodes = [{"id": n, "group": None} for n in ["__start__", *names, "__end__"]]
        edges = [{"source": "__start__", "target": "n0"}]
        edges += [{"source": f"n{rng.randrange(i)}", "target": f"n{i}"} for i in range(1, 50)]
        edges += [{"source": f"n{rng.randrange(50)}", "target": f"n{rng.randrange(50)}"} for _ in range(25)]
        edges += [{"source": f"n{i}", "target": "__end__"} for i in range(45, 50)]
        out = page.evaluate(LAY_OUT_SERVED, ["random", nodes, edges])
        assert edge_crossings(out["boxes"], edges, out["routes"]) == [], seed
