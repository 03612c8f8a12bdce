"""The build check a revision must pass: `python -m http_adapter.control_plane.buildcheck CONFIG`.

Loads the langgraph.json the way `graphrun serve` will (env, dependencies, graph imports), then
compiles every graph as the agent server does: a StateGraph is compiled, a compiled graph is
taken as it is, a factory is called (with a config when it takes one). Prints one line per graph;
on failure the last line says what failed and the exit code is 1. Runs in a fresh interpreter
so a broken graph cannot touch the control plane.
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from http_adapter._graph_spec import compile_graph

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m http_adapter.control_plane.buildcheck LANGGRAPH_JSON")
        return 2
    from http_adapter.config import ConfigError, load_settings

    try:
        settings = load_settings(args[0], in_memory=True)
    except ConfigError as error:
        print(f"FAILED: {error}")
        return 1
    except Exception as error:  # a graph module that raises while imported
        traceback.print_exc(file=sys.stdout)
        print(f"FAILED: importing the graphs raised {type(error).__name__}: {error}")
        return 1
    if not settings.graphs:
        print("FAILED: the config declares no graphs")
        return 1
    errors = [e for e in (_check(g, spec) for g, spec in settings.graphs.items()) if e]
    if errors:
        print(f"FAILED: {'; '.join(errors)}")
        return 1
    return 0


def _check(graph_id: str, spec: Any) -> str | None:
    """None when the graph compiles, else what went wrong (after its traceback)."""
    try:
        graph = asyncio.run(compile_graph(spec))
    except Exception as error:
        traceback.print_exc(file=sys.stdout)
        return f"graph '{graph_id}': {type(error).__name__}: {error}"
    print(f"graph '{graph_id}': ok ({len(graph.nodes)} node(s))")
    return None


if __name__ == "__main__":
    sys.exit(main())
