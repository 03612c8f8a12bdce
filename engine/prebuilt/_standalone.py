"""Calling a prebuilt node outside a graph: `ToolNode([...]).invoke(input, config)` (issue 29).

LangGraph's prebuilt nodes are runnables, so programs and their tests call them directly. Such
a call has no task to take a runtime from: it uses the runtime a caller hands over in the
config under LangGraph's key (its documented way to test tools that read the store or context),
else the runtime of the graph task it runs inside, else an empty one.
"""

from __future__ import annotations

from typing import Any

from .._context import Runtime, current_scope

__all__ = ["standalone_call"]

#: The config key LangGraph's runnables read their runtime from (ported tool tests set it).
RUNTIME_KEY = "__pregel_runtime"


def runtime_for(config: dict[str, Any]) -> Any:
    """The runtime a direct call runs with (see the module docstring)."""
    given = (config.get("configurable") or {}).get(RUNTIME_KEY)
    if given is not None:
        return given
    scope = current_scope.get()
    return scope.runtime if scope is not None else Runtime()


def standalone_call(config: dict[str, Any] | None) -> tuple[dict[str, Any], Any]:
    """The config and runtime of a direct `invoke`/`ainvoke` of a node."""
    config = dict(config or {})
    return config, runtime_for(config)
