"""Rendering a drawn graph as LangGraph does: Mermaid text, ASCII art, Mermaid PNG (issue 29).

LangGraph hands its drawn graph to LangChain's `Graph`, whose renderers give the exact text
its users and snapshots know (front matter, `classDef`s, subgraph blocks for `xray`, labels
with metadata). graphrun does the same when langchain-core is installed: it is an optional
dependency, so `import engine` never needs it. Without it `draw_mermaid()` gives the bare
flowchart graphrun always drew, and any other form says what to install.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._drawing import DrawableGraph

__all__ = ["as_langchain", "bare_mermaid", "need_langchain"]

_INSTALL = (
    "{what} renders through langchain-core's graph drawing, which is not installed: "
    "pip install 'graphrun[langchain]'"
)


def as_langchain(drawn: DrawableGraph) -> Any:
    """The drawn graph as LangChain's `Graph` (None without langchain-core): each node with
    its short name (its label; `xray` nodes keep the inner name) and metadata."""
    try:
        from langchain_core.runnables.graph import Edge, Graph, Node
    except ImportError:
        return None
    nodes = {}
    for node_id, data in drawn.nodes.items():
        # node names cannot hold ":", so the last segment of an `xray` id is its own name
        label = getattr(data, "label", None) or node_id.rsplit(":", 1)[-1]
        runnable = getattr(data, "data", None)
        nodes[node_id] = Node(node_id, label, runnable, drawn.metadata.get(node_id) or None)
    edges = [Edge(e.source, e.target, e.data, e.conditional) for e in drawn.edges]
    return Graph(nodes=nodes, edges=edges)


def need_langchain(drawn: DrawableGraph, what: str) -> Any:
    graph = as_langchain(drawn)
    if graph is None:
        raise ImportError(_INSTALL.format(what=what))
    return graph


def bare_mermaid(drawn: DrawableGraph) -> str:
    """graphrun's own flowchart, without styles (used when langchain-core is missing)."""
    lines = ["graph TD;"]
    for name, data in drawn.nodes.items():
        bare = data is None or name.endswith(("__start__", "__end__"))
        lines.append(f"\t{name}([{name}])" if bare else f"\t{name}({name})")
    for edge in drawn.edges:
        arrow = "-.->" if edge.conditional else "-->"
        lines.append(f"\t{edge.source} {arrow} {edge.target};")
    return "\n".join(lines) + "\n"
