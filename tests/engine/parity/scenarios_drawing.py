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


@scenario
def drawing_json_node_kinds(lib: Any) -> list[Any]:
    """`to_json()` names each node's runnable as LangGraph does (issue 27): a function, a
    lambda, a callable object, LangChain runnables (a lambda, a sequence), a `ToolNode`, a
    `ValidationNode`, a compiled subgraph and an entrypoint, plain and with `xray`."""
    import warnings
    from typing import TypedDict

    from langchain_core.runnables import RunnableLambda
    from langchain_core.tools import tool

    class S(TypedDict, total=False):
        x: int

    def f(state: S) -> dict[str, Any]:
        return {}

    class Callable_:
        def __call__(self, state: S) -> dict[str, Any]:
            return {}

    @tool
    def ping(x: int) -> int:
        """Echo x."""
        return x

    @lib.entrypoint()
    def flow(state: dict[str, Any]) -> dict[str, Any]:
        return {}

    inner = lib.StateGraph(S)
    inner.add_node("i", f)
    inner.add_edge(lib.START, "i")
    with warnings.catch_warnings():  # deprecated in LangGraph 1.x, still drawn
        warnings.simplefilter("ignore")
        validate = lib.ValidationNode([ping])
    kinds = {
        "function": f, "lambda": lambda s: {}, "object": Callable_(),
        "lc_lambda": RunnableLambda(f), "lc_sequence": RunnableLambda(f) | RunnableLambda(f),
        "tools": lib.ToolNode([ping]), "validate": validate,
        "sub": inner.compile(), "flow": flow,
    }
    b = lib.StateGraph(S)
    previous = lib.START
    for name, action in kinds.items():
        b.add_node(name, action)
        b.add_edge(previous, name)
        previous = name
    graph = b.compile()
    t = Transcript()
    t.add("plain", graph.get_graph().to_json())
    t.add("xray", graph.get_graph(xray=True).to_json())
    return t.items


@scenario
def drawing_loops_without_end(lib: Any) -> list[Any]:
    """A cycle with no way out draws its `__end__` edge from the node LangGraph's symbolic
    run (steps -1 to 249) ends on: the parity of the loop's length decides it (issue 27)."""
    from typing import TypedDict

    class S(TypedDict, total=False):
        x: int

    def f(state: S) -> dict[str, Any]:
        return {}

    t = Transcript()
    for length in (1, 2, 3):
        names = [f"n{i}" for i in range(length)]
        b = lib.StateGraph(S)
        for name in names:
            b.add_node(name, f)
        b.add_edge(lib.START, names[0])
        for src, dst in zip(names, names[1:] + names[:1]):
            b.add_edge(src, dst)
        drawn = b.compile().get_graph()
        t.add(f"loop_{length}", [tuple(e) for e in drawn.edges])
    return t.items
