// Drawing a graph (GET /assistants/{id}/graph?xray=true) as SVG: layered layout, normal and
// conditional edges, START/END, subgraphs collapsed to one node until expanded, breakpoint
// toggles on every node, and classes for the nodes a run is executing (issue 20).

import { layout } from "./layout.js";

const SVG = "http://www.w3.org/2000/svg";
const START = "__start__";
const END = "__end__";
const SEP = ":"; // xray names inner nodes `<subgraph node>:<inner node>`

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) el.setAttribute(k, v);
  for (const c of children) el.append(c);
  return el;
}

let measureCtx;
function textWidth(text) {
  measureCtx ||= document.createElement("canvas").getContext("2d");
  measureCtx.font = "13px system-ui, sans-serif";
  return measureCtx.measureText(text).width;
}

/**
 * Collapse the xray drawing: every node inside a subgraph that is not in `expanded` folds into
 * its subgraph node. `subgraphs` are the subgraph node paths (`outer:inner`).
 */
export function collapse(full, subgraphs, expanded) {
  // folded unless it and every subgraph around it are expanded
  const folded = subgraphs.filter((sg) => !expanded.has(sg) || [...ancestors(sg)].some((a) => subgraphs.includes(a) && !expanded.has(a)));
  const owner = (id) => {
    let best = null;
    for (const sg of folded) if (id.startsWith(sg + SEP) && (!best || sg.length < best.length)) best = sg;
    return best ?? id;
  };
  const nodes = new Map();
  for (const n of full.nodes) {
    const id = owner(n.id);
    if (!nodes.has(id)) nodes.set(id, { id, subgraph: subgraphs.includes(id), group: groupOf(id, subgraphs) });
  }
  const seen = new Set();
  const edges = [];
  for (const e of full.edges) {
    const source = owner(e.source);
    const target = owner(e.target);
    const key = `${source}\u0001${target}\u0001${!!e.conditional}`;
    if ((source === target && source !== e.source) || seen.has(key)) continue;
    seen.add(key);
    edges.push({ source, target, conditional: !!e.conditional });
  }
  return { nodes: [...nodes.values()], edges };
}

function* ancestors(path) {
  const parts = path.split(SEP);
  for (let i = 1; i < parts.length; i++) yield parts.slice(0, i).join(SEP);
}

function groupOf(id, subgraphs) {
  let best = null;
  for (const sg of subgraphs) if (id.startsWith(sg + SEP) && (!best || sg.length > best.length)) best = sg;
  return best;
}

function label(id) {
  if (id === START) return "START";
  if (id === END) return "END";
  return id.split(SEP).pop();
}

/**
 * Draw `graph` ({nodes, edges} after `collapse`) into `svg` (in a `g.scene` a Viewport moves);
 * returns the layout time in ms.
 * handlers: {onToggleSubgraph(id), onBreakpoint(id, "before"|"after")}
 */
export function draw(svg, graph, breakpoints, handlers) {
  const t0 = performance.now();
  const sized = graph.nodes.map((n) => {
    const terminal = n.id === START || n.id === END;
    return { id: n.id, group: n.group, width: Math.ceil(textWidth(label(n.id))) + (terminal ? 28 : n.subgraph ? 56 : 40), height: terminal ? 28 : 36 };
  });
  const result = layout(sized, graph.edges);
  const ms = performance.now() - t0;
  const size = new Map(sized.map((n) => [n.id, n]));
  // the viewport (viewport.js) zooms and pans this group; the svg fills the pane (issue 30)
  const scene = s("g", { class: "scene" });
  svg.replaceChildren(defs(), scene);
  scene.append(groups(graph, result.pos, size, handlers));
  const edgeLayer = s("g", { class: "edges" });
  graph.edges.forEach((e, i) => edgeLayer.append(edgePath(e, result.routes[i], size)));
  scene.append(edgeLayer);
  const nodeLayer = s("g", { class: "nodes" });
  for (const n of graph.nodes) nodeLayer.append(nodeShape(n, result.pos.get(n.id), size.get(n.id), breakpoints, handlers));
  scene.append(nodeLayer);
  return ms;
}

function defs() {
  const marker = (id, cls) => s("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
    s("path", { d: "M0,0 L10,5 L0,10 z", class: cls }));
  return s("defs", {}, marker("arrow", "arrowhead"), marker("arrow-cond", "arrowhead cond"));
}

/** A dashed box around the nodes of each expanded subgraph, with a button to fold it. */
function groups(graph, pos, size, handlers) {
  const layer = s("g", { class: "groups" });
  const members = new Map();
  for (const n of graph.nodes) if (n.group) (members.get(n.group) || members.set(n.group, []).get(n.group)).push(n.id);
  for (const [group, ids] of members) {
    const boxes = ids.map((id) => ({ p: pos.get(id), z: size.get(id) }));
    const x0 = Math.min(...boxes.map((b) => b.p.x - b.z.width / 2)) - 8;
    const y0 = Math.min(...boxes.map((b) => b.p.y - b.z.height / 2)) - 20;
    const x1 = Math.max(...boxes.map((b) => b.p.x + b.z.width / 2)) + 8;
    const y1 = Math.max(...boxes.map((b) => b.p.y + b.z.height / 2)) + 8;
    const title = s("text", { x: x0 + 6, y: y0 + 13, class: "group-label" });
    title.textContent = `${group} \u229f`;
    const g = s("g", { class: "group", "data-group": group }, s("rect", { x: x0, y: y0, width: x1 - x0, height: y1 - y0, rx: 8 }), title);
    g.addEventListener("click", () => handlers.onToggleSubgraph?.(group));
    layer.append(g);
  }
  return layer;
}

function edgePath(edge, points, size) {
  const cls = edge.conditional ? "edge cond" : "edge";
  const attrs = { class: cls, "data-source": edge.source, "data-target": edge.target, "marker-end": `url(#${edge.conditional ? "arrow-cond" : "arrow"})` };
  if (edge.source === edge.target) {
    const p = points[0];
    const w = size.get(edge.source).width / 2;
    return s("path", { ...attrs, d: `M${p.x + w},${p.y - 6} C${p.x + w + 40},${p.y - 30} ${p.x + w + 40},${p.y + 30} ${p.x + w},${p.y + 6}` });
  }
  const pts = points.map((p) => ({ ...p }));
  const a = size.get(edge.source);
  const b = size.get(edge.target);
  if (pts[pts.length - 1].y < pts[0].y) return s("path", { ...attrs, class: `${cls} back`, d: loopBack(pts, a, b) });
  pts[0].y += a.height / 2;
  pts[pts.length - 1].y -= b.height / 2;
  return s("path", { ...attrs, d: `M${pts[0].x},${pts[0].y}${through(pts)}` });
}

/** Straight through each row (the layout's vertical pairs), S-curves between rows: the
 * curves stay inside their end points' box, which lies in the empty band between two rows. */
function through(pts) {
  let d = "";
  for (let i = 1; i < pts.length; i++) {
    const p = pts[i - 1];
    const q = pts[i];
    if (p.x === q.x) {
      if (q.y !== p.y) d += ` V${q.y}`;
      continue;
    }
    const my = (p.y + q.y) / 2;
    d += ` C${p.x},${my} ${q.x},${my} ${q.x},${q.y}`;
  }
  return d;
}

const BEND = 12; // how far right of its two nodes a loop runs; rows keep 28 px between nodes

/** An edge back up the layers (a loop), issue 30: it was drawn across the rows at its ends,
 * through the nodes beside them. Now it leaves the source's right side, turns up just beside
 * it, follows its route up through the free slots the layout kept for it (as an edge going
 * down does) and turns into the target's right side. */
function loopBack(pts, a, b) {
  const last = pts.length - 1;
  const [sx, sy] = [pts[0].x + a.width / 2, pts[0].y];
  const [tx, ty] = [pts[last].x + b.width / 2, pts[last].y];
  const up = [{ x: sx + BEND, y: sy - BEND }, { x: sx + BEND, y: Math.min(pts[1].y, sy - BEND) },
    ...pts.slice(2, last - 1),
    { x: tx + BEND, y: Math.max(pts[last - 1].y, ty + BEND) }, { x: tx + BEND, y: ty + BEND }];
  return `M${sx},${sy} Q${sx + BEND},${sy} ${sx + BEND},${sy - BEND}${through(up)} Q${tx + BEND},${ty} ${tx},${ty}`;
}

function nodeShape(node, p, z, breakpoints, handlers) {
  const terminal = node.id === START || node.id === END;
  const g = s("g", { class: `node${terminal ? " terminal" : ""}${node.subgraph ? " subgraph" : ""}`, "data-node": node.id, transform: `translate(${p.x},${p.y})` });
  g.append(s("rect", { x: -z.width / 2, y: -z.height / 2, width: z.width, height: z.height, rx: terminal ? z.height / 2 : 6 }));
  const text = s("text", { "text-anchor": "middle", dy: "0.35em", x: node.subgraph ? -8 : 0 });
  text.textContent = label(node.id);
  g.append(text);
  if (node.subgraph) {
    const plus = s("g", { class: "expand", "data-expand": node.id, transform: `translate(${z.width / 2 - 16},0)` },
      s("rect", { x: -8, y: -8, width: 16, height: 16, rx: 3 }), s("path", { d: "M-4,0 H4 M0,-4 V4" }));
    plus.addEventListener("click", (ev) => { ev.stopPropagation(); handlers.onToggleSubgraph?.(node.id); });
    g.append(plus);
  }
  if (!terminal) {
    for (const [when, y] of [["before", -z.height / 2], ["after", z.height / 2]]) {
      const on = breakpoints[when].has(node.id);
      // r 7: a 15 px target at 100% (issue 30: 5 was too small to hit)
      const dot = s("circle", { class: `bp${on ? " on" : ""}`, "data-bp": when, "data-node": node.id, cx: -z.width / 2 + 12, cy: y, r: 7 });
      dot.append(s("title", {}, document.createTextNode(`interrupt ${when} ${label(node.id)}`)));
      dot.addEventListener("click", (ev) => { ev.stopPropagation(); handlers.onBreakpoint?.(node.id, when); });
      g.append(dot);
    }
  }
  return g;
}

/** Mark nodes: `state` is "running", "done", "next" or "error"; names not drawn are mapped to
 * the node that holds them (an inner node of a folded subgraph lights its subgraph node). */
export function mark(svg, name, state, on = true) {
  const el = findNode(svg, name);
  if (el) el.classList.toggle(state, on);
}

/** Light ("running") exactly the drawn nodes that hold one of `paths` (node paths of running
 * tasks): a folded subgraph stays lit while any of its inner tasks, or its own, runs. */
export function light(svg, paths) {
  const lit = new Set();
  for (const path of paths) lit.add(findNode(svg, path));
  for (const el of svg.querySelectorAll(".node")) el.classList.toggle("running", lit.has(el));
}

export function clearMarks(svg, ...states) {
  for (const el of svg.querySelectorAll(".node")) el.classList.remove(...states);
}

function findNode(svg, name) {
  let id = name;
  for (;;) {
    const el = svg.querySelector(`.node[data-node="${CSS.escape(id)}"]`);
    if (el || !id.includes(SEP)) return el;
    id = id.slice(0, id.lastIndexOf(SEP));
  }
}
