// A layered (Sugiyama-style) layout computed in the page (issue 20): cycles broken by keeping
// the edges that go deeper in a breadth-first walk from START (issue 30), longest-path layers, dummy nodes on long edges, barycenter sweeps against crossings, then
// x positions pulled toward neighbours. O(sweeps * edges): ~1-3 ms for 50 nodes. A long edge
// crosses each row it spans straight down through its dummy's slot, so it never runs through a
// node; it bends only in the empty bands between rows.

const START = "__start__";
const END = "__end__";
const LOOP = 20; // room on each side of a node with a self-loop

/**
 * nodes: [{id, width, height, group?}], edges: [{source, target}] ->
 * {pos: Map(id -> {x, y}) (centres), routes: [[{x, y}...] per edge], width, height}.
 * A route runs from the source's centre to the target's; a downward one passes each row it
 * crosses vertically (two points: the row's top and bottom at the same x), so a drawing that
 * bends only between rows never enters a node box. An edge back up (a loop) takes the same
 * kind of route through its own dummies' slots, listed from its source up (issue 30).
 */
export function layout(nodes, edges, { gapX = 28, gapY = 56, sweeps = 8 } = {}) {
  const ids = nodes.map((n) => n.id);
  const size = new Map(nodes.map((n) => [n.id, n]));
  const forward = orient(ids, edges);
  const layer = layers(ids, forward);
  const { chains, rows } = withDummies(ids, forward, layer);
  const group = new Map(nodes.filter((n) => n.group).map((n) => [n.id, n.group]));
  orderRows(rows, chains, sweeps, group);
  const loops = new Set(edges.filter((e) => e.source === e.target).map((e) => e.source));
  const { pos, bands } = place(rows, size, chains, gapX, gapY, loops);
  const routes = edges.map((e, i) => route(chains[i], pos, forward[i].reversed, layer, bands));
  let width = 0;
  let height = 0;
  for (const [id, p] of pos) {
    const s = size.get(id) || { width: 0, height: 0 };
    width = Math.max(width, p.x + s.width / 2);
    height = Math.max(height, p.y + s.height / 2);
  }
  for (const id of [...pos.keys()]) if (!size.has(id)) pos.delete(id);
  return { pos, routes, width, height };
}

/** Edges as a DAG. An edge going deeper than its source in a breadth-first walk from START
 * keeps its direction; of the others, one that would close a cycle is reversed (issue 30: a
 * depth-first walk could reach a node first through a loop and draw it below the loop's end). */
function orient(ids, edges) {
  const depth = breadthFirst(ids, edges);
  const out = new Map(ids.map((id) => [id, []]));
  const kept = edges.map((e, i) => !forced(e) && depth.get(e.source) < depth.get(e.target));
  edges.forEach((e, i) => kept[i] && out.get(e.source)?.push(e.target));
  const reversed = new Set();
  edges.forEach((e, i) => {
    if (kept[i] || e.source === e.target) return;
    const back = forced(e) || reaches(out, e.target, e.source);
    const [from, to] = back ? [e.target, e.source] : [e.source, e.target];
    if (back) reversed.add(i);
    out.get(from)?.push(to);
  });
  return edges.map((e, i) =>
    reversed.has(i)
      ? { source: e.target, target: e.source, reversed: true }
      : { source: e.source, target: e.target, reversed: false });
}

/** An edge into START or out of END is drawn reversed, whatever the walk says. */
function forced(e) {
  return e.target === START || e.source === END;
}

/** Steps from START (then from each node not reached yet, in order) to every node. */
function breadthFirst(ids, edges) {
  const out = new Map(ids.map((id) => [id, []]));
  for (const e of edges) if (!forced(e)) out.get(e.source)?.push(e.target);
  const depth = new Map();
  let base = 0;
  for (const root of [START, ...ids]) {
    if (!out.has(root) || depth.has(root)) continue;
    const queue = [root];
    depth.set(root, base);
    for (let k = 0; k < queue.length; k++) {
      for (const next of out.get(queue[k])) {
        if (!depth.has(next) && out.has(next)) {
          depth.set(next, depth.get(queue[k]) + 1);
          queue.push(next);
        }
      }
    }
    base = Math.max(...depth.values()) + 1;
  }
  return depth;
}

/** Is there a path from `a` to `b` along `out`? */
function reaches(out, a, b) {
  const seen = new Set([a]);
  const stack = [a];
  while (stack.length) {
    const id = stack.pop();
    if (id === b) return true;
    for (const next of out.get(id) || []) if (!seen.has(next)) seen.add(next) && stack.push(next);
  }
  return false;
}

/** Longest path from the sources; END alone on the last layer. */
function layers(ids, forward) {
  const indegree = new Map(ids.map((id) => [id, 0]));
  const out = new Map(ids.map((id) => [id, []]));
  for (const e of forward) {
    if (e.source === e.target || !out.has(e.source) || !indegree.has(e.target)) continue;
    out.get(e.source).push(e.target);
    indegree.set(e.target, indegree.get(e.target) + 1);
  }
  const layer = new Map(ids.map((id) => [id, 0]));
  const queue = ids.filter((id) => indegree.get(id) === 0);
  while (queue.length) {
    const id = queue.shift();
    for (const t of out.get(id)) {
      layer.set(t, Math.max(layer.get(t), layer.get(id) + 1));
      indegree.set(t, indegree.get(t) - 1);
      if (indegree.get(t) === 0) queue.push(t);
    }
  }
  if (layer.has(END)) {
    let last = 0;
    for (const [id, l] of layer) if (id !== END) last = Math.max(last, l);
    layer.set(END, last + 1);
  }
  return layer;
}

/** Each edge as a chain of nodes one layer apart (dummies in between), and the rows. */
function withDummies(ids, forward, layer) {
  const rows = [];
  const put = (id, l) => (rows[l] ||= []).push(id);
  for (const id of ids) put(id, layer.get(id));
  const chains = forward.map((e, i) => {
    const chain = [e.source];
    const from = layer.get(e.source) ?? 0;
    const to = layer.get(e.target) ?? 0;
    for (let l = from + 1; l < to; l++) {
      const dummy = `\u0000${i}:${l}`;
      layer.set(dummy, l);
      put(dummy, l);
      chain.push(dummy);
    }
    chain.push(e.target);
    return chain;
  });
  for (let l = 0; l < rows.length; l++) rows[l] ||= [];
  return { chains, rows };
}

/** Barycenter sweeps down and up; keeps the best order seen (fewest crossings). */
function orderRows(rows, chains, sweeps, group) {
  const up = new Map();
  const down = new Map();
  for (const chain of chains) {
    for (let k = 0; k + 1 < chain.length; k++) {
      if (chain[k] === chain[k + 1]) continue;
      (down.get(chain[k]) || down.set(chain[k], []).get(chain[k])).push(chain[k + 1]);
      (up.get(chain[k + 1]) || up.set(chain[k + 1], []).get(chain[k + 1])).push(chain[k]);
    }
  }
  rows.forEach((r, l) => (rows[l] = together(r, group)));
  let best = rows.map((r) => [...r]);
  let bestCrossings = crossings(rows, down);
  for (let s = 0; s < sweeps && bestCrossings > 0; s++) {
    const downward = s % 2 === 0;
    const order = downward ? rows.keys() : [...rows.keys()].reverse();
    for (const l of order) {
      const ref = rows[downward ? l - 1 : l + 1];
      if (!ref) continue;
      const index = new Map(ref.map((id, i) => [id, i]));
      const links = downward ? up : down;
      const bary = new Map(rows[l].map((id, i) => {
        const ns = (links.get(id) || []).filter((n) => index.has(n));
        return [id, ns.length ? ns.reduce((a, n) => a + index.get(n), 0) / ns.length : i];
      }));
      rows[l].sort((a, b) => bary.get(a) - bary.get(b));
      rows[l] = together(rows[l], group);
    }
    const c = crossings(rows, down);
    if (c < bestCrossings) {
      bestCrossings = c;
      best = rows.map((r) => [...r]);
    }
  }
  best.forEach((r, l) => (rows[l] = r));
}

/** Nodes of one subgraph side by side in a row, where the first of them stood. */
function together(row, group) {
  if (!group.size) return row;
  const out = [];
  const placed = new Set();
  for (const id of row) {
    if (placed.has(id)) continue;
    const g = group.get(id);
    for (const other of g ? row.filter((o) => group.get(o) === g) : [id]) {
      out.push(other);
      placed.add(other);
    }
  }
  return out;
}

function crossings(rows, down) {
  let total = 0;
  for (let l = 0; l + 1 < rows.length; l++) {
    const below = new Map(rows[l + 1].map((id, i) => [id, i]));
    const pairs = [];
    rows[l].forEach((id, i) => (down.get(id) || []).forEach((t) => below.has(t) && pairs.push([i, below.get(t)])));
    for (let a = 0; a < pairs.length; a++)
      for (let b = a + 1; b < pairs.length; b++)
        if ((pairs[a][0] - pairs[b][0]) * (pairs[a][1] - pairs[b][1]) < 0) total++;
  }
  return total;
}

/** y by layer; x packed left to right, then pulled toward the neighbours' mean. */
function place(rows, size, chains, gapX, gapY, loops) {
  // a self-loop bulges ~30 px right of its node (graph.js): keep the neighbours clear of it
  const w = (id) => (size.get(id)?.width ?? 8) + (loops.has(id) ? 2 * LOOP : 0);
  const h = (id) => size.get(id)?.height ?? 0;
  const pos = new Map();
  const neighbours = new Map();
  for (const chain of chains)
    for (let k = 0; k + 1 < chain.length; k++) {
      (neighbours.get(chain[k]) || neighbours.set(chain[k], []).get(chain[k])).push(chain[k + 1]);
      (neighbours.get(chain[k + 1]) || neighbours.set(chain[k + 1], []).get(chain[k + 1])).push(chain[k]);
    }
  let y = 0;
  const bands = []; // [top, bottom] of each row
  for (const row of rows) {
    const rowHeight = Math.max(0, ...row.map(h));
    let x = 0;
    for (const id of row) {
      pos.set(id, { x: x + w(id) / 2, y: y + rowHeight / 2 });
      x += w(id) + gapX;
    }
    bands.push([y, y + rowHeight]);
    y += rowHeight + gapY;
  }
  const widest = Math.max(...rows.map((r) => rowWidth(r, w, gapX)));
  for (const row of rows) shift(row, pos, (widest - rowWidth(row, w, gapX)) / 2);
  for (let pass = 0; pass < 6; pass++) {
    for (const row of rows) {
      for (const id of row) {
        const ns = neighbours.get(id) || [];
        if (ns.length) pos.get(id).x = ns.reduce((a, n) => a + pos.get(n).x, 0) / ns.length;
      }
      separate(row, pos, w, gapX);
    }
  }
  const left = Math.min(...[...pos].map(([id, p]) => p.x - w(id) / 2));
  for (const p of pos.values()) p.x -= left - 4;
  return { pos, bands };
}

function rowWidth(row, w, gapX) {
  return row.reduce((a, id) => a + w(id), 0) + gapX * Math.max(0, row.length - 1);
}

function shift(row, pos, dx) {
  for (const id of row) pos.get(id).x += dx;
}

/** Push overlapping neighbours in a row apart, keeping the row's centre. */
function separate(row, pos, w, gapX) {
  const before = row.reduce((a, id) => a + pos.get(id).x, 0);
  for (let i = 1; i < row.length; i++) {
    const a = pos.get(row[i - 1]);
    const b = pos.get(row[i]);
    const min = a.x + (w(row[i - 1]) + w(row[i])) / 2 + gapX;
    if (b.x < min) b.x = min;
  }
  const after = row.reduce((a, id) => a + pos.get(id).x, 0);
  shift(row, pos, (before - after) / row.length);
}

/** The points of one edge: see `layout`. Between two rows it may go anywhere (no node is
 * there); inside a row it keeps to its own column: the source's or target's, or its dummy's,
 * which `separate` keeps clear of every node by gapX. */
function route(chain, pos, reversed, layer, bands) {
  if (reversed) return route(chain, pos, false, layer, bands).reverse(); // same slots, upward
  const first = pos.get(chain[0]);
  const last = pos.get(chain[chain.length - 1]);
  if (!first || !last) return chain.map((id) => ({ ...pos.get(id) }));
  const points = [{ ...first }, { x: first.x, y: bands[layer.get(chain[0])][1] }];
  for (const id of chain.slice(1, -1)) {
    const [top, bottom] = bands[layer.get(id)];
    const x = pos.get(id).x;
    points.push({ x, y: top }, { x, y: bottom });
  }
  points.push({ x: last.x, y: bands[layer.get(chain[chain.length - 1])][0] }, { ...last });
  return points;
}
