"""Which subgraph a node runs: `graph.nodes[n].subgraphs`, `get_subgraphs()` (issue 29).

A node may be a compiled graph, or a function that calls one it reaches from outside its own
scope: a captured variable, a global it names, or an attribute path from either
(`holder.graph.invoke(...)`). The function's bytecode says which names it loads; following
each load chain from the function's closure and globals finds the values it can reach. Code of
nested functions and lambdas counts too, resolved against the outer function's names only.
A subgraph compiled with `checkpointer=False` is not one (LangGraph's rule).
"""

from __future__ import annotations

import dis
import types
from collections.abc import Iterator
from typing import Any

__all__ = ["SubgraphMethods", "find_subgraph", "node_subgraph", "reachable_values"]

# Values that cannot hold a graph: a function reaching only these needs no bytecode walk.
_LEAVES = frozenset(
    (int, float, complex, bool, str, bytes, bytearray, list, tuple, dict, set, frozenset,
     type(None), range)
)
_ATTR_LOADS = frozenset(("LOAD_ATTR", "LOAD_METHOD"))


def _function_of(func: Any) -> types.FunctionType | None:
    func = getattr(func, "__func__", func)  # a bound method: its function
    wrapped = getattr(func, "__wrapped__", None)
    if callable(wrapped):  # a decorator's wrapper: what it wraps
        func = getattr(wrapped, "__func__", wrapped)
    return func if isinstance(func, types.FunctionType) else None


def _cells(func: types.FunctionType) -> dict[str, Any]:
    found = {}
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or ()):
        try:
            found[name] = cell.cell_contents
        except ValueError:  # a cell never filled
            continue
    return found


def _chain_values(code: types.CodeType, cells: dict[str, Any], names: dict[str, Any]) -> list[Any]:
    """What each load chain (`name`, `name.attr`, `name.attr.attr`...) of `code` reaches."""
    out: list[Any] = []
    value: Any = None
    for instruction in dis.get_instructions(code):
        op = instruction.opname
        if op == "LOAD_GLOBAL":
            value = names.get(instruction.argval)
        elif op == "LOAD_DEREF":
            value = cells.get(instruction.argval)
        elif op in _ATTR_LOADS:
            value = getattr(value, instruction.argval, None)
        else:
            value = None  # any other instruction ends a chain
            continue
        if value is not None:
            out.append(value)
    return out


def reachable_values(func: Any) -> list[Any]:
    """The values `func` may reach outside its scope: every captured value, and what each
    global or captured name and attribute path it loads holds (an over-approximation)."""
    fn = _function_of(func)
    if fn is None:
        return []
    code = fn.__code__
    cells = _cells(fn)
    names = {n: fn.__globals__[n] for n in code.co_names if n in fn.__globals__}
    found = list(cells.values())
    if all(type(v) in _LEAVES for v in (*cells.values(), *names.values())):
        return found
    codes = [code]
    for current in codes:  # nested functions, lambdas and comprehensions too
        codes.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
        found.extend(_chain_values(current, cells, names))
    return found


def _is_graph(value: Any) -> bool:
    from ._pregel import CompiledStateGraph

    return isinstance(value, CompiledStateGraph) and value.checkpointer is not False


def _expand(candidate: Any, first: bool) -> list[Any]:
    """What to look into next: a LangChain sequence's steps, a lambda's dependencies, and the
    node's own function's reachable values."""
    steps = getattr(candidate, "steps", None)
    if isinstance(steps, list) and hasattr(candidate, "invoke"):
        return list(steps)
    deps = getattr(candidate, "deps", None)
    if isinstance(deps, list) and hasattr(candidate, "invoke"):
        return list(deps)
    if first and callable(candidate) and not hasattr(candidate, "invoke"):
        return [getattr(v, "__self__", v) for v in reachable_values(candidate)]
    return []


def find_subgraph(action: Any) -> Any:
    """The compiled graph a node's action is or calls, or None."""
    candidates = [action]
    for index, candidate in enumerate(candidates):
        if _is_graph(candidate):
            return candidate
        candidates.extend(_expand(candidate, index == 0))
    return None


def node_subgraph(graph: Any, name: str) -> Any:
    """The subgraph node `name` of `graph` runs: the node itself, or one its function calls."""
    node = graph.plan.nodes.get(name)
    if node is None:
        return None
    if node.is_subgraph:
        return node.callee.fn
    spec = graph.builder.nodes.get(name)
    return find_subgraph(spec.action) if spec is not None else None


class SubgraphMethods:
    """`get_subgraphs` / `aget_subgraphs` of a compiled graph."""

    builder: Any

    def get_subgraphs(
        self, *, namespace: str | None = None, recurse: bool = False
    ) -> Iterator[tuple[str, Any]]:
        """(namespace, subgraph) for each node running a subgraph; `namespace` picks one
        (`parent|child` needs `recurse=True`)."""
        for name, spec in self.builder.nodes.items():
            if namespace is not None and namespace != name and not namespace.startswith(
                name + "|"
            ):
                continue
            graph = find_subgraph(spec.action)
            if graph is None:
                continue
            if name == namespace:
                yield name, graph
                return
            if namespace is None:
                yield name, graph
            if recurse:
                rest = None if namespace is None else namespace[len(name) + 1:]
                for child, sub in graph.get_subgraphs(namespace=rest, recurse=True):
                    yield f"{name}|{child}", sub

    async def aget_subgraphs(
        self, *, namespace: str | None = None, recurse: bool = False
    ) -> Any:
        for item in self.get_subgraphs(namespace=namespace, recurse=recurse):
            yield item
