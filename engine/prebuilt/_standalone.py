"""Calling a prebuilt node outside a graph: `ToolNode([...]).invoke(input, config)` (issue 29).

LangGraph's prebuilt nodes are runnables, so programs and their tests call them directly. Such
a call has no task to take a runtime from: it uses the runtime a caller hands over in the
config under LangGraph's key (its documented way to test tools that read the store or context),
else the runtime of the graph task it runs inside, else an empty one.
"""

from __future__ import annotations

from typing import Any

from .._context import Runtime, current_scope

__all__ = ["NOT_GIVEN", "given_state", "standalone_call"]

#: The config key LangGraph's runnables read their runtime from (ported tool tests set it).
RUNTIME_KEY = "__pregel_runtime"
#: LangGraph's keys for a node's state reader: a no-argument one, and its channel reader (a
#: `functools.partial` whose second bound argument holds the channels), which ported tool
#: tests set to hand a `ToolNode` called on a list of tool calls its state (issue 29).
READ_STATE_KEY = "__pregel_read_state"
READ_KEY = "__pregel_read"
NOT_GIVEN: Any = object()


def runtime_for(config: dict[str, Any]) -> Any:
    """The runtime a direct call runs with (see the module docstring)."""
    given = (config.get("configurable") or {}).get(RUNTIME_KEY)
    if given is not None:
        return given
    scope = current_scope.get()
    return scope.runtime if scope is not None else Runtime()


def given_state(config: dict[str, Any]) -> Any:
    """The state a direct call's config hands over under LangGraph's keys, else `NOT_GIVEN`."""
    conf = config.get("configurable") or {}
    if (read_state := conf.get(READ_STATE_KEY)) is not None:
        return read_state()
    read = conf.get(READ_KEY)
    channels = getattr(read, "args", ())[1:2]
    if not channels or not isinstance(channels[0], dict):
        return NOT_GIVEN
    return read(list(channels[0]), True)


def standalone_call(config: dict[str, Any] | None) -> tuple[dict[str, Any], Any]:
    """The config and runtime of a direct `invoke`/`ainvoke` of a node."""
    config = dict(config or {})
    return config, runtime_for(config)
