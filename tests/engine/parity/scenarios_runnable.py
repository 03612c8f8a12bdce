"""Parity scenarios for issue 29: the compiled graph as a LangChain `Runnable` (composition on
both sides of `|`, `pipe`, `assign`, `bind`, `with_retry`, `as_tool`, `get_name`, `batch`).
Registered into `scenarios.SCENARIOS`."""

from __future__ import annotations

import warnings
from typing import Any

from langchain_core.runnables import Runnable, RunnableLambda
from typing_extensions import TypedDict

from .harness import Transcript
from .scenarios import scenario


class Num(TypedDict):
    n: int


def _doubler(lib: Any, failures: list[int] | None = None) -> Any:
    """`n` doubled by one node, which raises while `failures` still holds items."""
    def double(state: Num) -> dict[str, int]:
        if failures:
            failures.pop()
            raise ValueError("not yet")
        return {"n": state["n"] * 2}

    g = lib.StateGraph(Num)
    g.add_node("double", double)
    g.add_edge(lib.START, "double")
    return g.compile(name="doubler")


@scenario
def runnable_composition(lib: Any) -> list[Any]:
    t = Transcript()
    graph = _doubler(lib)
    t.add("isinstance", isinstance(graph, Runnable))
    t.add("names", [graph.get_name(), graph.get_name("Input")])
    t.add("types", [graph.InputType is Num, graph.OutputType])
    around = RunnableLambda(lambda v: {"n": v}) | graph | RunnableLambda(lambda s: s["n"] + 1)
    t.call("sequence", around.invoke, 3)
    t.call("sequence_batch", around.batch, [1, 2, 3])
    t.call("pipe", graph.pipe(lambda s: s["n"], str).invoke, {"n": 5})
    t.call("dict_left", ({"n": lambda v: v} | graph).invoke, 7)
    t.call("assign", graph.assign(half=lambda s: s["n"] // 2).invoke, {"n": 4})
    t.call("bind", graph.bind().invoke, {"n": 6})
    t.call("stream_through", lambda: list((graph | (lambda s: s)).stream({"n": 1})))
    return t.items


@scenario
def runnable_wrappers(lib: Any) -> list[Any]:
    t = Transcript()
    failures = [1, 1]
    retried = _doubler(lib, failures).with_retry(stop_after_attempt=3,
                                                 wait_exponential_jitter=False)
    t.call("retry", retried.invoke, {"n": 2})
    t.add("failures_left", failures)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tool = _doubler(lib).as_tool(name="double", description="Doubles n.")
    t.add("tool", [tool.name, tool.description, sorted(tool.args)])
    t.call("tool_invoke", tool.invoke, {"n": 21})
    return t.items
