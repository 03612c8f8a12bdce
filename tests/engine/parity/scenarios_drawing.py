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
