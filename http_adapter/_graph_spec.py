"""What a `graphs` entry of langgraph.json may be, and how it becomes a runnable graph.

Shared by the agent server (which runs the graph) and the control plane's build check (which only
proves it compiles), so a revision that passes the check is one the server can run.
"""

from __future__ import annotations

import inspect
from typing import Any

from engine import CompiledStateGraph, StateGraph

__all__ = ["NotAGraph", "compile_graph"]


class NotAGraph(TypeError):
    """A `graphs` entry (or what its factory returned) is not a graph."""


async def compile_graph(spec: Any) -> CompiledStateGraph:
    """A loaded `graphs` entry as a compiled graph, as `graphrun serve` runs it: a StateGraph is
    compiled, a compiled graph taken as is, a factory (sync or async) called, with a config when
    it takes one. Raises `NotAGraph` for anything else; errors inside a factory propagate."""
    if isinstance(spec, StateGraph):
        return spec.compile()
    if isinstance(spec, CompiledStateGraph):
        return spec
    if not callable(spec):
        raise NotAGraph(f"{type(spec).__name__} is not a graph or a graph factory")
    result = spec({"configurable": {}}) if inspect.signature(spec).parameters else spec()
    if inspect.isawaitable(result):
        result = await result
    if isinstance(result, StateGraph):
        result = result.compile()
    if not isinstance(result, CompiledStateGraph):
        raise NotAGraph(f"the factory returned {type(result).__name__}, not a graph")
    return result
