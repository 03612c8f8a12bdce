"""Parity scenarios for a run's `context` (issue 27): built into the graph's `context_schema`
(dataclass, pydantic, TypedDict, none), from no context, `{}`, a dict, an instance; in
subgraphs, async runs and `@entrypoint`s. Registered into `scenarios.SCENARIOS`."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
from typing import Any, TypedDict

from pydantic import BaseModel

from .harness import Transcript
from .scenarios import scenario


class Out(TypedDict):
    out: list


@dataclasses.dataclass
class Dc:
    model: str = "dc-default"


@dataclasses.dataclass
class DcRequired:
    model: str


class Pm(BaseModel):
    model: str = "pm-default"


class Td(TypedDict, total=False):
    model: str


SCHEMAS = {"dataclass": Dc, "required": DcRequired, "pydantic": Pm, "typeddict": Td, "none": None}
GIVEN: dict[str, dict[str, Any]] = {
    "absent": {}, "None": {"context": None}, "empty": {"context": {}},
    "dict": {"context": {"model": "m"}}, "instance": {"context": Dc("i")},
    "extra_key": {"context": {"model": "m", "other": 1}},
}


def _runtime_names(lib: Any) -> tuple[Any, Any]:
    """`Runtime` and `get_runtime` (not in the shared `load_lib`)."""
    module = importlib.import_module("langgraph.runtime" if lib.name == "lg" else "engine")
    return module.Runtime, module.get_runtime


def _recording_graph(lib: Any, schema: Any) -> Any:
    Runtime, _ = _runtime_names(lib)

    def node(state: Out, runtime: Runtime) -> dict[str, Any]:
        return {"out": [*state["out"], repr(runtime.context)]}

    b = lib.StateGraph(Out, context_schema=schema)
    b.add_node("n", node)
    b.add_edge(lib.START, "n")
    return b.compile()


@scenario
def context_built_from_schema(lib: Any) -> list[Any]:
    """Every schema kind with every way of giving (or not giving) a context."""
    t = Transcript()
    for schema_name, schema in SCHEMAS.items():
        graph = _recording_graph(lib, schema)
        for given_name, kwargs in GIVEN.items():
            t.call(f"{schema_name}/{given_name}", graph.invoke, {"out": []}, **kwargs)
    graph = _recording_graph(lib, Pm)
    t.call("async", lambda: asyncio.run(graph.ainvoke({"out": []}, context={"model": "a"})))
    t.stream("stream", graph, {"out": []}, context={"model": "s"}, stream_mode="values")
    return t.items


@scenario
def context_in_subgraphs(lib: Any) -> list[Any]:
    """A subgraph sees its parent's context (already built, whatever its own schema), unless
    it is invoked with one of its own."""
    Runtime, _ = _runtime_names(lib)
    t = Transcript()
    inner = _recording_graph(lib, Dc)

    def calls_inner(state: Out, runtime: Runtime) -> dict[str, Any]:
        plain = inner.invoke({"out": []})["out"]
        own = inner.invoke({"out": []}, context={"model": "own"})["out"]
        return {"out": [*plain, *own, repr(runtime.context)]}

    for label, schema in (("pydantic_parent", Pm), ("no_schema_parent", None)):
        b = lib.StateGraph(Out, context_schema=schema)
        b.add_node("sub", inner)
        b.add_node("calls", calls_inner)
        b.add_edge(lib.START, "sub")
        b.add_edge("sub", "calls")
        graph = b.compile()
        t.call(f"{label}/dict", graph.invoke, {"out": []}, context={"model": "x"})
        t.call(f"{label}/absent", graph.invoke, {"out": []})
    return t.items


@scenario
def context_in_entrypoint(lib: Any) -> list[Any]:
    """`@entrypoint(context_schema=...)`: `get_runtime().context` is built the same way."""
    _, get_runtime = _runtime_names(lib)
    t = Transcript()

    @lib.entrypoint(context_schema=Dc)
    def flow(x: int) -> str:
        return repr(get_runtime().context)

    for given_name, kwargs in GIVEN.items():
        t.call(given_name, flow.invoke, 1, **kwargs)
    return t.items
