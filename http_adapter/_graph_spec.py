"""What a `graphs` entry of langgraph.json may be, and how it becomes a runnable graph.

Shared by the agent server (which runs the graph) and the control plane's build check (which only
proves it compiles), so a revision that passes the check is one the server can run.

A factory may take no argument, `(config)`, `(runtime: ServerRuntime)` or both in either order
(issue 31, as the reference classifies them by annotation), may be async, and may return a graph,
an awaitable of one, or a (sync or async) context manager yielding one, left when the graph is
no longer needed (the end of the run it was made for).

A graph built with the real `langgraph` package (any of those forms) comes back as a
`LangGraphGraph`: the same surface, executed by LangGraph's runtime (issue 28).
"""

from __future__ import annotations

import contextlib
import inspect
import typing
from collections.abc import AsyncIterator, Callable
from typing import Any, get_args, get_origin

from engine import CompiledStateGraph, StateGraph

from .agent_server.langgraph_graph import is_langgraph, served
from .server_runtime import ExecutionRuntime, ReadRuntime, ServerRuntime

__all__ = ["NotAGraph", "compile_graph", "is_factory", "open_graph"]

_RUNTIME_NAMES = frozenset({
    "ServerRuntime", "_ExecutionRuntime", "_ReadRuntime", "ExecutionRuntime", "ReadRuntime",
})
# string annotations (`from __future__ import annotations`, the type imported for checking only)
_LOCALNS = {"ServerRuntime": ServerRuntime, "RunnableConfig": dict, "Config": dict}


class NotAGraph(TypeError):
    """A `graphs` entry (or what its factory returned) is not a graph."""


def is_factory(spec: Any) -> bool:
    """A graph factory, not a graph (graphrun's or LangGraph's, issue 28)."""
    return not (isinstance(spec, (StateGraph, CompiledStateGraph)) or is_langgraph(spec)
                ) and callable(spec)


async def compile_graph(spec: Any) -> Any:
    """A loaded `graphs` entry as a compiled graph, as `graphrun serve` reads it (a factory is
    called as for the graph's shape: `assistants.read`). Raises `NotAGraph` for anything else;
    errors inside a factory propagate."""
    async with open_graph(spec, {"configurable": {}}, ReadRuntime(access_context="assistants.read")
                          ) as graph:
        return graph


@contextlib.asynccontextmanager
async def open_graph(spec: Any, config: dict[str, Any], runtime: Any
                     ) -> AsyncIterator[Any]:
    """The graph of a `graphs` entry, for as long as the caller needs it; a factory is called
    with `config` and/or `runtime` (an `ExecutionRuntime` or `ReadRuntime`) as it asks."""
    if not is_factory(spec):
        yield _compiled(spec)
        return
    made = spec(**_factory_kwargs(spec, config, runtime))
    if hasattr(made, "__aenter__") and hasattr(made, "__aexit__"):
        async with made as graph:
            yield _compiled(graph)
    elif hasattr(made, "__enter__") and hasattr(made, "__exit__"):
        with made as graph:
            yield _compiled(graph)
    else:
        yield _compiled(await made if inspect.isawaitable(made) else made)


def _compiled(value: Any) -> Any:
    """graphrun's compiled graph, or a LangGraph graph behind the same surface (issue 28)."""
    if is_langgraph(value):
        return served(value)
    if isinstance(value, StateGraph):
        return value.compile()
    if isinstance(value, CompiledStateGraph):
        return value
    if callable(value):
        raise NotAGraph(f"the factory returned {type(value).__name__}, not a graph")
    raise NotAGraph(f"{type(value).__name__} is not a graph or a graph factory")


def _factory_kwargs(fn: Callable[..., Any], config: dict[str, Any], runtime: Any
                    ) -> dict[str, Any]:
    """Which parameter gets the config and which the runtime (by annotation, as the reference):
    one unannotated parameter is the config; of two, the one typed `ServerRuntime` is the
    runtime."""
    params = list(inspect.signature(fn).parameters.values())
    if not params:
        return {}
    hints = _hints(fn)
    is_runtime = [_is_runtime(hints.get(p.name, p.annotation)) for p in params]
    if len(params) == 1:
        return {params[0].name: runtime if is_runtime[0] else config}
    if len(params) == 2 and is_runtime.count(True) == 1:
        rt = is_runtime.index(True)
        return {params[rt].name: runtime, params[1 - rt].name: config}
    if len(params) == 2:
        raise TypeError(
            f"Graph factory {fn.__name__} can only accept arguments of type ServerRuntime "
            f"and/or RunnableConfig, got {[str(p.annotation) for p in params]}"
        )
    raise TypeError(
        f"Graph factory {fn.__name__} must take 0, 1, or 2 arguments. "
        f"Got {len(params)} parameters: {[p.name for p in params]}"
    )


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(inspect.unwrap(fn), localns=_LOCALNS)
    except Exception:  # an annotation that does not resolve: the raw ones are read by name
        return {}


def _is_runtime(annotation: Any) -> bool:
    """`ServerRuntime` (ours or `langgraph_sdk.runtime`'s), parameterized or `Annotated`."""
    if annotation is inspect.Parameter.empty or annotation is None:
        return False
    if isinstance(annotation, str):
        return annotation.split("[")[0].split(".")[-1].strip() in _RUNTIME_NAMES
    if annotation in (ExecutionRuntime, ReadRuntime) or annotation == ServerRuntime:
        return True
    if getattr(annotation, "__name__", None) in _RUNTIME_NAMES:
        return True
    origin = get_origin(annotation)
    if origin is typing.Union:
        return any(_is_runtime(arg) for arg in get_args(annotation))
    if origin is not None:
        args = get_args(annotation)
        return _is_runtime(origin) or bool(args) and _is_runtime(args[0])
    return False
