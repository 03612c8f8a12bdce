"""Graph lifecycle callbacks (`engine.callbacks`) and LangGraph's deprecation warnings
(`engine.warnings`), issue 29."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

import anyio
import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers.base import BaseTracer

from checkpoints import SqliteSaver
from engine import START, Command, Interrupt, StateGraph, entrypoint, interrupt, task
from engine.callbacks import GraphCallbackHandler, GraphInterruptEvent, GraphResumeEvent
from engine.errors import NodeInterrupt
from engine.warnings import LangGraphDeprecatedSinceV05, LangGraphDeprecatedSinceV10


class S(TypedDict, total=False):
    answer: str


class Recorder(GraphCallbackHandler):
    def __init__(self) -> None:
        self.events: list[Any] = []

    def on_interrupt(self, event: GraphInterruptEvent) -> None:
        self.events.append(event)

    def on_resume(self, event: GraphResumeEvent) -> None:
        self.events.append(event)


class Plain(BaseCallbackHandler):
    def __init__(self) -> None:
        self.starts = 0

    def on_chain_start(self, *args: Any, **kwargs: Any) -> None:
        self.starts += 1


class Raising(GraphCallbackHandler):
    def __init__(self, raise_error: bool) -> None:
        self.raise_error = raise_error

    async def on_interrupt(self, event: GraphInterruptEvent) -> None:
        raise ValueError("handler boom")


def _asking(saver: Any) -> Any:
    g = StateGraph(S)
    g.add_node("ask", lambda s: {"answer": interrupt("which?")})
    g.add_edge(START, "ask")
    return g.compile(checkpointer=saver)


def test_interrupt_and_resume_reach_graph_handlers_only(tmp_path: Path) -> None:
    recorder = Recorder()
    with SqliteSaver.from_conn_string(str(tmp_path / "cp.db")) as saver:
        app = _asking(saver)
        cfg = {"configurable": {"thread_id": "1"}, "callbacks": [Plain(), recorder]}
        assert "__interrupt__" in app.invoke({}, cfg)
        assert app.invoke(Command(resume="red"), cfg) == {"answer": "red"}
    paused, resumed = recorder.events
    assert isinstance(paused, GraphInterruptEvent) and paused.checkpoint_ns == ()
    assert isinstance(paused.interrupts[0], Interrupt) and paused.interrupts[0].value == "which?"
    assert isinstance(resumed, GraphResumeEvent) and resumed.checkpoint_id


def test_a_handler_error_is_logged_unless_it_asks_to_raise() -> None:
    from checkpoints import InMemorySaver

    app = _asking(InMemorySaver())
    cfg: dict[str, Any] = {"configurable": {"thread_id": "1"}, "callbacks": [Raising(False)]}
    assert "__interrupt__" in app.invoke({}, cfg)

    async def main() -> None:
        cfg2 = {"configurable": {"thread_id": "2"}, "callbacks": [Raising(True)]}
        with pytest.raises(ValueError, match="handler boom"):
            await app.ainvoke({}, cfg2)

    anyio.run(main)


def test_old_spellings_warn_as_langgraph() -> None:
    with pytest.warns(LangGraphDeprecatedSinceV05, match="`input` is deprecated"):
        StateGraph(S, input=S)
    with pytest.warns(LangGraphDeprecatedSinceV10, match="`config_schema` is deprecated"):
        StateGraph(S, config_schema=S)
    with pytest.warns(LangGraphDeprecatedSinceV05, match="`retry` is deprecated"):
        StateGraph(S).add_node("n", lambda s: s, retry=None)
    with pytest.warns(LangGraphDeprecatedSinceV05, match="`retry` is deprecated"):
        task(retry=None)(lambda x: x)
    with pytest.warns(LangGraphDeprecatedSinceV05, match="`retry` is deprecated"):
        entrypoint(retry=None)(lambda x: x)
    with pytest.warns(LangGraphDeprecatedSinceV10, match="`interrupt_id` is deprecated"):
        assert Interrupt(value=1, id="abc").interrupt_id == "abc"
    with pytest.warns(LangGraphDeprecatedSinceV10, match="NodeInterrupt is deprecated"):
        NodeInterrupt("stop")


# -- LangChain tracing of the graph and node runs (issues 27, 29) -----------------------------


class Tracer(BaseTracer):
    """Keeps the finished root runs, as a LangSmith tracer would send them."""

    def __init__(self) -> None:
        super().__init__()
        self.roots: list[Any] = []

    def _persist_run(self, run: Any) -> None:
        self.roots.append(run)


class V(TypedDict):
    value: int


def test_tracers_see_the_graph_run_and_its_node_runs_nested() -> None:
    from langchain_core.runnables import RunnableLambda

    inner = RunnableLambda(lambda x: x + 1).with_config(run_name="inner")
    g = StateGraph(V)
    g.add_node("n", lambda s: {"value": inner.invoke(s["value"])})
    g.add_edge(START, "n")
    tracer = Tracer()
    assert g.compile(name="demo").invoke({"value": 1}, {"callbacks": [tracer]}) == {"value": 2}
    (root,) = tracer.roots
    assert (root.name, root.inputs, root.outputs) == ("demo", {"value": 1}, {"value": 2})
    (node,) = root.child_runs
    assert (node.name, node.inputs, node.outputs) == ("n", {"value": 1}, {"value": 2})
    assert [c.name for c in node.child_runs] == ["inner"]


def test_trace_policy_changes_what_tracers_record_only() -> None:
    from engine.types import TracePolicy

    seen: list[Any] = []

    class Plain(BaseCallbackHandler):
        def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
            if kwargs.get("name") == "n":
                seen.append(inputs)

    policy = TracePolicy(process_inputs=lambda v: {"hidden": True},
                         process_outputs=lambda v: 1 / 0)  # a failing processor records as is
    g = StateGraph(V)
    g.add_node("n", lambda s: {"value": s["value"] * 10}, trace_policy=policy)
    g.add_edge(START, "n")
    tracer = Tracer()

    async def main() -> Any:
        return await g.compile().ainvoke({"value": 2}, {"callbacks": [Plain(), tracer]})

    assert anyio.run(main) == {"value": 20}
    (node,) = tracer.roots[0].child_runs
    assert (node.inputs, node.outputs) == ({"hidden": True}, {"value": 20})
    assert seen == [{"value": 2}]


def test_subgraphs_trace_under_their_node_as_langgraph() -> None:
    sub = StateGraph(V)
    sub.add_node("inner", lambda s: {"value": s["value"] + 1}).add_edge(START, "inner")
    compiled = sub.compile()
    g = StateGraph(V)
    g.add_node("child", compiled)
    g.add_node("calls", lambda s: {"value": compiled.invoke(s)["value"] * 10})
    g.add_edge(START, "child").add_edge("child", "calls")
    tracer = Tracer()
    assert g.compile().invoke({"value": 1}, {"callbacks": [tracer]}) == {"value": 30}

    def tree(run: Any) -> Any:
        return (run.name, run.tags, [tree(c) for c in run.child_runs])

    inner = [("LangGraph", ["seq:step:1"], [("inner", ["graph:step:1"], [])])]
    assert tree(tracer.roots[0]) == ("LangGraph", [], [
        ("child", ["graph:step:1"], inner), ("calls", ["graph:step:2"], inner),
    ])
