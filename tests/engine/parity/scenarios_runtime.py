"""Parity scenarios for LangGraph 1.2's runtime-side API (issue 29): error handlers and node
defaults, draining a run through its `RunControl`, what `Runtime.execution_info` tells a node,
graph lifecycle callbacks, and LangChain tracing of graph and node runs with a `TracePolicy`.
Registered into `scenarios.SCENARIOS`."""

from __future__ import annotations

import importlib
import operator
from typing import Annotated, Any, TypedDict

from .harness import Transcript
from .scenarios import cfg, scenario


class L(TypedDict, total=False):
    log: Annotated[list, operator.add]


def _mod(lib: Any, lg: str, gr: str) -> Any:
    return importlib.import_module(lg if lib.name == "lg" else gr)


def _fails(name: str) -> Any:
    def node(state: L) -> dict[str, Any]:
        raise RuntimeError(f"{name} failed")

    return node


@scenario
def error_handlers_route_and_resume(lib: Any) -> list[Any]:
    """A node's handler, the builder default, retries first, and a handler that crashed runs
    again on resume (the failed node does not)."""
    errors = _mod(lib, "langgraph.errors", "engine.errors")
    NodeError = errors.NodeError
    t = Transcript()

    def handler(state: L, error: NodeError) -> Any:
        return lib.Command(update={"log": [f"handled {error.node}: {error.error}"]}, goto="after")

    b = lib.StateGraph(L)
    b.add_node("bad", _fails("bad"), error_handler=handler)
    b.add_node("after", lambda s: {"log": ["after"]})
    b.add_edge(lib.START, "bad")  # alone in its step: a sibling's chunks could come first
    t.stream("handled", b.compile(), {"log": []}, stream_mode=["updates", "values"])

    crash = [True]

    def default(state: L, error: NodeError) -> dict[str, Any]:
        if crash[0]:
            raise KeyError("handler crash")
        return {"log": [f"default {error.node}"]}

    d = lib.StateGraph(L).set_node_defaults(
        error_handler=default,
        retry_policy=lib.RetryPolicy(max_attempts=2, initial_interval=0, jitter=False,
                                     retry_on=RuntimeError),
    )
    d.add_node("a", _fails("a")).add_node("b", lambda s: {"log": ["b"]})
    d.add_edge(lib.START, "a").add_edge(lib.START, "b")
    app = d.compile(checkpointer=lib.InMemorySaver())
    t.call("crash", app.invoke, {"log": []}, cfg("1"))
    crash[0] = False
    t.call("resume", app.invoke, None, cfg("1"))
    t.add("nodes", sorted(app.get_graph().nodes))
    return t.items


@scenario
def drain_stops_at_the_step_boundary(lib: Any) -> list[Any]:
    """`request_drain()` from a node: the run stops before the next step, saved; a resume
    finishes it; a drain in the last step changes nothing."""
    runtime = _mod(lib, "langgraph.runtime", "engine.runtime")
    errors = _mod(lib, "langgraph.errors", "engine.errors")
    t = Transcript()

    def first(state: L, runtime: runtime.Runtime) -> dict[str, Any]:
        runtime.control.request_drain("sigterm")
        return {"log": ["first"]}

    b = lib.StateGraph(L)
    b.add_node("first", first).add_node("second", lambda s: {"log": ["second"]})
    b.add_edge(lib.START, "first").add_edge("first", "second")
    app = b.compile(checkpointer=lib.InMemorySaver())
    try:
        for item in app.stream({"log": []}, cfg("d"), stream_mode="values"):
            t.add("drained", item)
    except errors.GraphDrained as drained:  # a BaseException on graphrun, as its GraphInterrupt
        t.add("reason", drained.reason)
    t.add("next", app.get_state(cfg("d")).next)
    t.call("resumed", app.invoke, None, cfg("d"))
    last = lib.StateGraph(L)
    last.add_node("only", first).add_edge(lib.START, "only")
    t.call("last_step", last.compile().invoke, {"log": []})
    return t.items


@scenario
def execution_info_of_nodes_and_attempts(lib: Any) -> list[Any]:
    runtime = _mod(lib, "langgraph.runtime", "engine.runtime")
    t = Transcript()
    seen: list[Any] = []

    def flaky(state: L, runtime: runtime.Runtime) -> dict[str, Any]:
        info = runtime.execution_info
        seen.append((info.node_attempt, info.thread_id, info.checkpoint_ns.split(":")[0],
                     info.task_id in info.checkpoint_ns, runtime.server_info))
        if len(seen) < 2:
            raise ValueError("again")
        return {"log": ["ok"]}

    b = lib.StateGraph(L)
    b.add_node("flaky", flaky, retry_policy=lib.RetryPolicy(
        initial_interval=0, jitter=False, retry_on=ValueError))
    b.add_edge(lib.START, "flaky")
    app = b.compile(checkpointer=lib.InMemorySaver())
    t.call("run", app.invoke, {"log": []},
           {"configurable": {"thread_id": "t", "assistant_id": "a", "graph_id": "g"}})
    t.add("seen", seen)
    return t.items


@scenario
def lifecycle_callbacks_and_tracing(lib: Any) -> list[Any]:
    """`GraphCallbackHandler` events on interrupt and resume; a tracer's run tree with a
    node's `TracePolicy` applied."""
    from langchain_core.tracers.base import BaseTracer

    callbacks = _mod(lib, "langgraph.callbacks", "engine.callbacks")
    types = _mod(lib, "langgraph.types", "engine.types")
    t = Transcript()

    class Recorder(callbacks.GraphCallbackHandler):
        def on_interrupt(self, event: Any) -> None:
            t.add("interrupt", (event.status, event.checkpoint_ns, event.interrupts))

        def on_resume(self, event: Any) -> None:
            t.add("resume", (event.status, event.checkpoint_ns))

    class Tracer(BaseTracer):
        def __init__(self) -> None:
            super().__init__()
            self.roots: list[Any] = []

        def _persist_run(self, run: Any) -> None:
            self.roots.append(run)

    def tree(run: Any) -> Any:
        return (run.name, run.inputs, run.outputs, [tree(c) for c in run.child_runs])

    b = lib.StateGraph(L)
    b.add_node("ask", lambda s: {"log": [lib.interrupt("which?")]})
    b.add_node("scrubbed", lambda s: {"log": ["secret"]},
               trace_policy=types.TracePolicy(process_outputs=lambda v: {"log": ["***"]}))
    b.add_edge(lib.START, "ask").add_edge("ask", "scrubbed")
    app = b.compile(checkpointer=lib.InMemorySaver(), name="traced")
    tracer = Tracer()
    config = {**cfg("c"), "callbacks": [Recorder(), tracer]}
    t.call("first", app.invoke, {"log": []}, config)
    t.call("second", app.invoke, lib.Command(resume="red"), config)
    t.add("traces", [tree(r) for r in tracer.roots])
    return t.items
