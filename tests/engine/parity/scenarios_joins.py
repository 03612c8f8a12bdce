"""Parity scenarios for joins, deferred nodes and schema checks (issue 27): a `defer=True`
node behind a join waits until the run would otherwise end; an update while a join target is
next keeps it next; a bad reducer, `builder.managed`, `graph.channels`, and which keys a node
reads. Registered into `scenarios.SCENARIOS`.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, NotRequired, TypedDict

from .harness import Transcript
from .scenarios import scenario


class Docs(TypedDict, total=False):
    query: str
    answer: str
    docs: Annotated[list[str], operator.add]


def _fan_out(lib: Any, *, defer: bool, join: bool) -> Any:
    """rewrite -> (retrieve_one -> analyze, retrieve_two); both retrievers -> qa."""

    def rewrite(s: Docs) -> Docs:
        return {"query": f"q: {s['query']}"}

    def analyze(s: Docs) -> Docs:
        return {"query": f"analyzed: {s['query']}"}

    def retrieve_one(s: Docs) -> Docs:
        return {"docs": ["doc1"]}

    def retrieve_two(s: Docs) -> Docs:
        return {"docs": ["doc2"]}

    def qa(s: Docs) -> Docs:
        return {"answer": f"{s['query']} from {','.join(sorted(s['docs']))}"}

    b = lib.StateGraph(Docs)
    for fn in (rewrite, analyze, retrieve_one, retrieve_two):
        b.add_node(fn)
    b.add_node(qa, defer=defer)
    b.add_edge(lib.START, "rewrite")
    b.add_edge("rewrite", "retrieve_one")
    b.add_edge("retrieve_one", "analyze")
    b.add_edge("rewrite", "retrieve_two")
    if join:
        b.add_edge(["retrieve_one", "retrieve_two"], "qa")
    else:
        b.add_edge("retrieve_one", "qa")
        b.add_edge("retrieve_two", "qa")
    b.add_edge("qa", lib.END)
    return b


def _steps(graph: Any, config: Any) -> list[Any]:
    """Each checkpoint's step and next nodes, oldest first: which node ran in which step."""
    history = list(graph.get_state_history(config))
    return [(s.metadata["step"], sorted(s.next)) for s in reversed(history)]


@scenario
def joins_deferred_node(lib: Any) -> list[Any]:
    """A deferred node behind a join (and behind two edges) runs after `analyze`, once
    nothing else is left; with interrupts around it; and its drawing."""
    t = Transcript()
    for join in (True, False):
        b = _fan_out(lib, defer=True, join=join)
        t.add(f"join={join}_mermaid", b.compile().get_graph().draw_mermaid(with_styles=False))
        graph = b.compile(checkpointer=lib.InMemorySaver())
        config = {"configurable": {"thread_id": "1"}}
        t.call(f"join={join}_invoke", graph.invoke, {"query": "sf"}, config)
        t.add(f"join={join}_steps", _steps(graph, config))
        for where in ("interrupt_after", "interrupt_before"):
            node = "analyze" if where == "interrupt_after" else "qa"
            graph = b.compile(checkpointer=lib.InMemorySaver(), **{where: [node]})
            t.stream(f"join={join}_{where}", graph, {"query": "sf"}, config,
                     stream_mode="values")
            t.add(f"join={join}_{where}_next", graph.get_state(config).next)
            t.stream(f"join={join}_{where}_resume", graph, None, config, stream_mode="values")
    return t.items


@scenario
def joins_update_keeps_target_next(lib: Any) -> list[Any]:
    """Stopped before a join's target, an update (as the node that ran last, or as another
    node) leaves the target next, and resuming runs it on the updated state."""
    t = Transcript()
    for as_node in (None, "retrieve_two", "qa"):
        graph = _fan_out(lib, defer=False, join=True).compile(
            checkpointer=lib.InMemorySaver(), interrupt_before=["qa"])
        config = {"configurable": {"thread_id": "1"}}
        t.stream(f"{as_node}_first", graph, {"query": "sf"}, config, stream_mode="updates")
        t.call(f"{as_node}_update", graph.update_state, config, {"docs": ["doc3"]}, as_node)
        t.state(f"{as_node}_state", graph, config)
        t.stream(f"{as_node}_resume", graph, None, config, stream_mode="updates")
    return t.items


@scenario
def joins_schema_checks(lib: Any) -> list[Any]:
    """A reducer that cannot take two values fails when the schema is read; the builder's
    managed keys; the compiled graph's state channels; a node without its own schema reads
    the state schema's keys only (not those only the output schema adds), a callable
    object's annotated `__call__` its own."""
    def one(a: Any) -> Any:
        return a

    def three(a: Any, b: Any, c: Any) -> Any:
        return a

    t = Transcript()
    for name, reducer in (("one_arg", one), ("three_args", three)):
        bad = TypedDict("Bad", {"x": Annotated[list, reducer]})  # type: ignore[misc]
        t.call(name, lambda schema=bad: type(lib.StateGraph(schema)).__name__)

    managed = TypedDict(  # type: ignore[misc]
        "Managed", {"steps": NotRequired[lib.RemainingSteps], "x": int})
    t.add("managed", sorted(lib.StateGraph(managed).managed))
    t.add("channels", sorted(k for k in _graph_with_output(lib).channels if "branch" not in k))
    t.stream("reads", _graph_with_output(lib), {"question": "hi"}, stream_mode="updates")
    return t.items


def _graph_with_output(lib: Any) -> Any:
    class In(TypedDict):
        question: str

    class Out(TypedDict):
        seen: Any

    class Extra(In):
        extra: str

    def plain(state):  # type: ignore[no-untyped-def]
        return {"seen": sorted(state)}

    def add_extra(state: In) -> Extra:
        return {"extra": "e"}  # type: ignore[typeddict-item]

    class Reader:
        def __call__(self, state: Extra) -> Out:
            return {"seen": sorted(state)}

    b = lib.StateGraph(In, output_schema=Out)
    b.add_node("plain", plain)
    b.add_node("extend", add_extra)
    b.add_node("reader", Reader())
    b.add_node("again", plain)
    b.add_edge(lib.START, "plain")
    b.add_edge("plain", "extend")
    b.add_edge("extend", "reader")
    b.add_edge("reader", "again")
    return b.compile()
