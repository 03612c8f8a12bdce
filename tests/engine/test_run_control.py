"""What a node's `Runtime` tells it (execution_info, server_info), and draining a run through
its `RunControl` (issue 29)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, TypedDict

import anyio
import pytest

from checkpoints import InMemorySaver, SqliteSaver
from engine import START, RetryPolicy, StateGraph
from engine.errors import GraphDrained
from engine.runtime import DEFAULT_RUNTIME, ExecutionInfo, RunControl, Runtime, ServerInfo


class S(TypedDict, total=False):
    first: str
    second: str


def _two_steps(first: Any) -> StateGraph[S]:
    g = StateGraph(S)
    g.add_node("first", first)
    g.add_node("second", lambda s: {"second": "done"})
    g.add_edge(START, "first")
    g.add_edge("first", "second")
    return g


# -- Runtime -------------------------------------------------------------------------------------


def test_runtime_merge_override_and_default() -> None:
    control = RunControl()
    base = Runtime(context={"a": 1}, control=control)
    assert base.merge(Runtime()).control is control
    assert base.merge(Runtime(context={"b": 2})).context == {"b": 2}
    assert base.override(context=None).context is None
    assert DEFAULT_RUNTIME.execution_info is None and DEFAULT_RUNTIME.control is None
    info = ExecutionInfo(checkpoint_id="c", checkpoint_ns="n", task_id="t")
    assert info.patch(node_attempt=2).node_attempt == 2 and info.node_attempt == 1
    with pytest.raises(RuntimeError):
        Runtime().patch_execution_info(node_attempt=2)


def test_execution_info_names_thread_task_and_attempt(tmp_path: Path) -> None:
    seen: list[ExecutionInfo] = []

    def flaky(s: S, runtime: Runtime) -> dict:
        seen.append(runtime.execution_info)  # type: ignore[arg-type]
        if len(seen) < 3:
            raise ValueError("again")
        return {"first": "ok"}

    g = StateGraph(S)
    retry = RetryPolicy(initial_interval=0, jitter=False, retry_on=ValueError)
    g.add_node("flaky", flaky, retry_policy=retry)
    g.add_edge(START, "flaky")
    with SqliteSaver.from_conn_string(str(tmp_path / "cp.db")) as saver:
        app = g.compile(checkpointer=saver)
        app.invoke({}, {"configurable": {"thread_id": "t-1"}, "run_id": "r-1"})
    assert [i.node_attempt for i in seen] == [1, 2, 3]
    assert {i.node_first_attempt_time for i in seen} == {seen[0].node_first_attempt_time}
    assert all(i.thread_id == "t-1" and i.run_id == "r-1" for i in seen)
    assert seen[0].checkpoint_ns == f"flaky:{seen[0].task_id}"
    assert seen[0].checkpoint_id


def test_server_info_comes_from_the_agent_server_keys() -> None:
    seen: list[Any] = []
    g = StateGraph(S)
    g.add_node("n", lambda s, runtime: seen.append(runtime.server_info) or {})
    g.add_edge(START, "n")
    app = g.compile()
    app.invoke({})
    app.invoke({}, {"configurable": {"assistant_id": "a-1", "graph_id": "agent"}})
    assert seen == [None, ServerInfo(assistant_id="a-1", graph_id="agent")]


# -- drain ---------------------------------------------------------------------------------------


def test_drain_stops_before_the_next_step_and_resumes(tmp_path: Path) -> None:
    control = RunControl()

    def first(s: S) -> dict:
        control.request_drain("sigterm")
        return {"first": "done"}

    with SqliteSaver.from_conn_string(str(tmp_path / "cp.db")) as saver:
        app = _two_steps(first).compile(checkpointer=saver)
        cfg = {"configurable": {"thread_id": "1"}}
        with pytest.raises(GraphDrained) as caught:
            app.invoke({}, cfg, control=control)
        assert caught.value.reason == "sigterm"
        assert app.get_state(cfg).next == ("second",)
        assert app.invoke(None, cfg) == {"first": "done", "second": "done"}


def test_drain_asked_by_a_node_through_its_runtime_stops_an_async_run() -> None:
    async def first(s: S, runtime: Runtime) -> dict:
        runtime.control.request_drain()  # type: ignore[union-attr]
        return {"first": "done"}

    app = _two_steps(first).compile()

    async def main() -> None:
        with pytest.raises(GraphDrained, match="shutdown"):
            await app.ainvoke({})

    anyio.run(main)


def test_drain_in_the_last_step_finishes_and_a_breakpoint_comes_first() -> None:
    control = RunControl()
    g = StateGraph(S)
    g.add_node("only", lambda s: control.request_drain() or {"first": "x"})
    g.add_edge(START, "only")
    assert g.compile().invoke({}, control=control) == {"first": "x"}

    app = _two_steps(lambda s, runtime: runtime.control.request_drain() or {"first": "x"})
    app = app.compile(checkpointer=InMemorySaver(), interrupt_before=["second"])
    cfg = {"configurable": {"thread_id": "b"}}
    assert app.invoke({}, cfg, control=RunControl()) == {"first": "x"}  # paused, not drained
    assert app.invoke(None, cfg) == {"first": "x", "second": "done"}


def test_drain_from_another_thread_and_in_a_subgraph() -> None:
    started, go_on = threading.Event(), threading.Event()

    def first(s: S) -> dict:
        started.set()
        go_on.wait(30)
        return {"first": "done"}

    child = _two_steps(first).compile()
    parent = StateGraph(S)
    parent.add_node("child", child)
    parent.add_edge(START, "child")
    app = parent.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "sub"}}
    control, errors = RunControl(), []

    def run() -> None:
        try:
            app.invoke({}, cfg, control=control)
        except GraphDrained as error:
            errors.append(error)

    worker = threading.Thread(target=run)
    worker.start()
    assert started.wait(30)
    control.request_drain("rollout")
    go_on.set()
    worker.join(30)
    assert [e.reason for e in errors] == ["rollout"]
    assert app.invoke(None, cfg) == {"first": "done", "second": "done"}
