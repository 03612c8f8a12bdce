"""`add_node(..., error_handler=...)` and `set_node_defaults(...)` (issue 29)."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import anyio
import pytest

from checkpoints import SqliteSaver
from engine import END, START, Command, RetryPolicy, StateGraph
from engine.errors import NodeError


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]


def _boom(s: S) -> dict:
    raise RuntimeError("boom")


def test_handler_gets_the_error_and_routes_with_a_command() -> None:
    told: list[NodeError] = []

    def handler(s: S, error: NodeError) -> Command:
        told.append(error)
        return Command(update={"log": ["handled"]}, goto="after")

    g = StateGraph(S)
    g.add_node("bad", _boom, error_handler=handler)
    g.add_node("after", lambda s: {"log": ["after"]})
    g.add_edge(START, "bad")
    g.add_edge("bad", "never")  # the failed node's own edges are not followed
    g.add_node("never", lambda s: {"log": ["never"]})
    app = g.compile()
    assert app.invoke({"log": []}) == {"log": ["handled", "after"]}
    assert [(e.node, str(e.error)) for e in told] == [("bad", "boom")]
    assert "__error_handler__bad" in app.get_graph().nodes
    updates = list(app.stream({"log": []}, stream_mode="updates"))
    assert updates[0] == {"__error_handler__bad": {"log": ["handled"]}}


def test_handler_runs_after_retries_and_its_own_failure_fails_the_run() -> None:
    attempts: list[int] = []

    def flaky(s: S) -> dict:
        attempts.append(1)
        raise ValueError("no")

    g = StateGraph(S)
    retry = RetryPolicy(max_attempts=2, initial_interval=0, jitter=False, retry_on=ValueError)
    g.add_node("flaky", flaky, retry_policy=retry, error_handler=lambda s: {"log": ["ok"]})
    g.add_edge(START, "flaky")
    assert g.compile().invoke({"log": []}) == {"log": ["ok"]}
    assert len(attempts) == 2

    def broken(s: S) -> dict:
        raise KeyError("handler")

    g = StateGraph(S)
    g.add_node("bad", _boom, error_handler=broken)
    g.add_edge(START, "bad")
    with pytest.raises(KeyError):
        g.compile().invoke({"log": []})


def test_resume_runs_the_handler_again_not_the_node(tmp_path: Path) -> None:
    calls = {"node": 0, "handler": 0}
    fail = [True]

    def node(s: S) -> dict:
        calls["node"] += 1
        raise RuntimeError("boom")

    def handler(s: S, error: NodeError) -> dict:
        calls["handler"] += 1
        if fail[0]:
            raise RuntimeError("handler crash")
        return {"log": [f"recovered {error.node}: {error.error}"]}

    g = StateGraph(S).set_node_defaults(error_handler=handler)
    g.add_node("fail", node).add_node("ok", lambda s: {"log": ["ok"]})
    g.add_edge(START, "fail").add_edge(START, "ok")
    cfg = {"configurable": {"thread_id": "1"}}
    with SqliteSaver.from_conn_string(str(tmp_path / "cp.db")) as saver:
        app = g.compile(checkpointer=saver)
        with pytest.raises(RuntimeError, match="handler crash"):
            app.invoke({"log": []}, cfg)
        fail[0] = False
        # right after the failed node, as LangGraph orders a handler's writes
        assert app.invoke(None, cfg) == {"log": ["recovered fail: boom", "ok"]}
    assert calls == {"node": 1, "handler": 2}


def test_node_defaults_fill_what_a_node_does_not_set() -> None:
    attempts: list[str] = []

    def flaky(s: S) -> dict:
        attempts.append("x")
        if len(attempts) < 3:
            raise ValueError("again")
        return {"log": ["ok"]}

    g = StateGraph(S).set_node_defaults(
        retry_policy=RetryPolicy(max_attempts=3, initial_interval=0, jitter=False,
                                 retry_on=ValueError),
        error_handler=lambda s, error: {"log": [f"default {error.node}"]},
    )
    g.add_node("flaky", flaky)
    g.add_node("bad", _boom, error_handler=lambda s: {"log": ["own"]})
    g.add_edge(START, "flaky").add_edge("flaky", "bad").add_edge("bad", END)
    assert g.compile().invoke({"log": []}) == {"log": ["ok", "own"]}
    assert len(attempts) == 3

    clash = StateGraph(S).set_node_defaults(error_handler=lambda s: {})
    clash.add_node("__default_error_handler__", lambda s: {})
    clash.add_edge(START, "__default_error_handler__")
    with pytest.raises(ValueError, match="__default_error_handler__"):
        clash.compile()


def test_async_handler_of_an_async_node() -> None:
    async def bad(s: S) -> dict:
        raise RuntimeError("async boom")

    async def handler(s: S, error: NodeError) -> dict:
        return {"log": [str(error.error)]}

    g = StateGraph(S)
    g.add_node("bad", bad, error_handler=handler)
    g.add_edge(START, "bad")
    app = g.compile()

    async def main() -> Any:
        return await app.ainvoke({"log": []})

    assert anyio.run(main) == {"log": ["async boom"]}


def test_a_node_raising_cancelled_fails_the_run_but_a_cancel_still_cancels() -> None:
    import asyncio

    from engine.errors import NodeCancelledError

    async def boom(s: S) -> dict:
        raise asyncio.CancelledError("from the node")

    g = StateGraph(S)
    g.add_node("ok", lambda s: {"log": ["ok"]}).add_node("boom", boom)
    g.add_edge(START, "ok").add_edge(START, "boom")
    app = g.compile()
    started = asyncio.Event()

    async def slow(s: S) -> dict:
        started.set()
        await asyncio.sleep(60)
        return {}

    waiting = StateGraph(S).add_node("slow", slow).add_edge(START, "slow").compile()

    async def main() -> None:
        with pytest.raises(NodeCancelledError) as caught:
            await app.ainvoke({"log": []})
        assert caught.value.node == "boom"
        run = asyncio.create_task(waiting.ainvoke({}))
        await started.wait()
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(main())


def test_a_bad_task_timeout_fails_where_it_is_declared() -> None:
    from engine import task

    with pytest.raises(ValueError, match="greater than 0"):
        task(timeout=0)
