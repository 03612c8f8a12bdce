"""Parity scenarios for issue 29: `get_graph().draw_mermaid(...)` text as LangGraph's.

The same shapes as `more_get_graph` (dead ends, path maps with metadata and interrupts,
unknown and Literal ends, joins, Commands, deferred nodes, Sends, cycles, nested subgraphs,
an entrypoint), drawn with styles and without, plain and with `xray`, plus LangChain's other
options (curve style, front matter). The ASCII drawing needs `grandalf`, which neither side
installs: both raise the same ImportError.
"""

from __future__ import annotations

from typing import Any

from .harness import Transcript
from .scenarios import scenario
from .scenarios_more import _shapes


@scenario
def drawing_mermaid(lib: Any) -> list[Any]:
    t = Transcript()
    for name, graph in _shapes(lib):
        for xray in (False, True):
            drawn = graph.get_graph(xray=xray)
            t.call(f"{name}_xray={xray}_styled", drawn.draw_mermaid)
            t.call(f"{name}_xray={xray}_plain", drawn.draw_mermaid, with_styles=False)
        front = {"config": {"theme": "neutral"}}
        t.call(f"{name}_options", graph.get_graph().draw_mermaid, wrap_label_n_words=2,
               frontmatter_config=front)
    return t.items


@scenario
def drawing_ascii_without_grandalf(lib: Any) -> list[Any]:
    t = Transcript()
    name, graph = next(iter(_shapes(lib)))
    t.call(name, graph.get_graph().draw_ascii)
    return t.items


@scenario
def drawing_node_return_annotations(lib: Any) -> list[Any]:
    """Only `Command[Literal[...]]` (also in a Union) names a node's destinations; a bare
    `Literal` return is a value. Edges compare as LangChain's (source, target, data,
    conditional) tuples."""
    from typing import Literal, TypedDict, Union

    class S(TypedDict, total=False):
        x: int

    def bare(state: S) -> Literal["b"]:  # type: ignore[return]
        return {}  # type: ignore[return-value]

    def union(state: S) -> Union[lib.Command[Literal["b", "c"]], dict]:  # noqa: UP007
        return {}

    def f(state: S) -> dict[str, Any]:
        return {}

    t = Transcript()
    for name, first in (("bare", bare), ("union", union)):
        b = lib.StateGraph(S)
        b.add_node("a", first)
        b.add_node("b", f)
        b.add_node("c", f)
        b.add_edge(lib.START, "a")
        drawn = b.compile().get_graph()
        t.add(name, [tuple(e) for e in drawn.edges])
        t.call(f"{name}_mermaid", drawn.draw_mermaid, with_styles=False)
    return t.items


@scenario
def drawing_destinations_labels(lib: Any) -> list[Any]:
    """`add_node(..., destinations=...)`: a tuple draws plain conditional edges, a dict labels
    them with its values."""
    from typing import TypedDict

    class S(TypedDict):
        foo: str

    def f(state: S) -> dict[str, Any]:
        return {}

    t = Transcript()
    for name, ends in (("tuple", ("b", "c")), ("dict", {"b": "foo", "c": "bar"})):
        b = lib.StateGraph(S)
        b.add_edge(lib.START, "child")
        b.add_node("child", f, destinations=ends)
        b.add_node("b", f)
        b.add_node("c", f)
        drawn = b.compile().get_graph()
        t.add(name, [tuple(e) for e in drawn.edges])
        t.call(f"{name}_mermaid", drawn.draw_mermaid)
    return t.items
