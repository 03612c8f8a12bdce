"""A compiled graph's shape as data: nodes and edges (conditional ones marked), for drawing."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from .types import END, START

if TYPE_CHECKING:
    from ._pregel import CompiledStateGraph

__all__ = ["DrawableGraph", "graph_of"]


@dataclasses.dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    conditional: bool = False
    data: Any = None


@dataclasses.dataclass(slots=True)
class DrawableGraph:
    nodes: dict[str, dict[str, Any]]
    edges: list[Edge]

    def to_json(self) -> dict[str, Any]:
        """The JSON shape the agent server's `/graph` endpoint returns."""
        return {
            "nodes": [{"id": n, "type": "runnable" if n not in (START, END) else "schema",
                       "data": d} for n, d in self.nodes.items()],
            "edges": [
                {"source": e.source, "target": e.target, **({"conditional": True} if e.conditional else {})}
                for e in self.edges
            ],
        }

    def draw_mermaid(self) -> str:
        lines = ["graph TD;"]
        for name in self.nodes:
            lines.append(f"\t{name}([{name}])" if name in (START, END) else f"\t{name}({name})")
        for edge in self.edges:
            arrow = "-.->" if edge.conditional else "-->"
            lines.append(f"\t{edge.source} {arrow} {edge.target};")
        return "\n".join(lines) + "\n"


def graph_of(graph: CompiledStateGraph, *, xray: int | bool = False) -> DrawableGraph:
    builder = graph.builder
    nodes: dict[str, dict[str, Any]] = {START: {"name": START}}
    for name, spec in builder.nodes.items():
        nodes[name] = {"name": name, **({"metadata": spec.metadata} if spec.metadata else {})}
    edges = [Edge(src, dst) for src, dst in builder.edges]
    edges += [Edge(src, dst) for starts, dst in builder.waiting_edges for src in starts]
    for src, branches in builder.branches.items():
        for branch in branches.values():
            targets = branch.ends or tuple(n for n in builder.nodes if n != src) + (END,)
            edges += [Edge(src, dst, conditional=True) for dst in targets]
    for name, spec in builder.nodes.items():
        edges += [Edge(name, dst, conditional=True) for dst in spec.destinations]
    if any(e.target == END for e in edges):
        nodes[END] = {"name": END}
    return DrawableGraph(nodes, _in_step_order(edges))


def _in_step_order(edges: list[Edge]) -> list[Edge]:
    """Edges source by source in the order a run reaches the sources from START, as LangGraph
    lists them (it draws by tracing steps); unreachable sources keep their place at the end.
    Issue 18: `/assistants/{id}/graph` showed conditional edges last."""
    by_source: dict[str, list[Edge]] = {}
    for edge in edges:
        by_source.setdefault(edge.source, []).append(edge)
    ordered: list[Edge] = []
    queue, seen = [START], {START}
    for source in queue:
        for edge in by_source.pop(source, ()):
            ordered.append(edge)
            if edge.target not in seen:
                seen.add(edge.target)
                queue.append(edge.target)
    return ordered + [edge for rest in by_source.values() for edge in rest]
