"""A drawn node as JSON, in the shape LangGraph 1.2.22's `get_graph().to_json()` gives (issue 27).

LangGraph draws through LangChain's `Graph`, whose `to_json` names each node's runnable by
its LangChain serialization id (`{"id": [...module path, class], "name": node}`). Programs
and snapshot tests ported from LangGraph compare that JSON, so graphrun gives the id LangGraph
gives for the same node:
- a plain function (or callable object), and a state graph's `__start__`: LangGraph wraps each
  in its `RunnableCallable`, so that id, though graphrun calls the function directly;
- a node that is one of graphrun's ports of a LangGraph class (a compiled graph, `ToolNode`,
  `ValidationNode`, an `@entrypoint`): the LangGraph class's public path, where a porter's
  import of the same name leads;
- a LangChain runnable (a chain, a chat model): its own id, by LangChain's rules;
- anything else (an object of graphrun's or the user's with `invoke`): its own class path.
The Agent Server does not send the id (`langgraph dev` drops it; `routes/assistants.py`).
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["node_json"]

_CALLABLE = ("langgraph", "_internal", "_runnable", "RunnableCallable")
# graphrun's class (module.qualname) -> the LangGraph class it ports
_PORTED = {
    "engine._pregel.CompiledStateGraph": ("langgraph", "graph", "state", "CompiledStateGraph"),
    "engine._func.EntrypointGraph": ("langgraph", "pregel", "main", "Pregel"),
    "engine.prebuilt._tool_node.ToolNode": ("langgraph", "prebuilt", "tool_node", "ToolNode"),
    "engine.prebuilt._validation_node.ValidationNode": (
        "langgraph", "prebuilt", "tool_validator", "ValidationNode"),
}


def node_json(node_id: str, node: Any) -> dict[str, Any]:
    """LangChain's `node_data_json` for a drawn node: empty for a bare one (`None`)."""
    if node is None:
        return {}
    return {"type": "runnable", "data": {"id": list(runnable_id(node.data)), "name": node_id}}


def runnable_id(runnable: Any) -> tuple[str, ...]:
    """The serialization id LangGraph's drawing shows for a node running `runnable`."""
    if runnable is None:
        return _CALLABLE
    cls = type(runnable)
    ported = _PORTED.get(f"{cls.__module__}.{cls.__qualname__}")
    if ported is not None:
        return ported
    found = _langchain_id(runnable)
    if found is not None:
        return found
    if callable(runnable):
        return _CALLABLE
    return (*cls.__module__.split("."), cls.__name__)


def _langchain_id(runnable: Any) -> tuple[str, ...] | None:
    """A LangChain runnable's id as `Graph.to_json` gives it; None for anything else (and
    without importing langchain-core: a LangChain object means it is loaded)."""
    if "langchain_core.runnables.base" not in sys.modules:
        return None
    from langchain_core.load.serializable import to_json_not_implemented
    from langchain_core.runnables.base import Runnable, RunnableSerializable

    if isinstance(runnable, RunnableSerializable):
        return tuple(runnable.lc_id())
    if isinstance(runnable, Runnable) and type(runnable).__module__.split(".")[0] != "engine":
        return tuple(to_json_not_implemented(runnable)["id"])
    return None
