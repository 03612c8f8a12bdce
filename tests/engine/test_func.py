"""The functional API (issue 17) beyond what the parity scenarios compare: durability on a real
SQLite file, parallelism, nested calls past the pool size, trio, and graphrun's extensions."""

from __future__ import annotations

import asyncio
import operator
import threading
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

import anyio
import pytest

from checkpoints import InMemorySaver, SqliteSaver
from engine import START, Command, StateGraph, entrypoint, interrupt, task
from engine._func import EntrypointGraph


def _config(thread: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _workflow(saver: Any, calls: list[str], broken: bool) -> Any:
    """The same program, built twice (as two processes would) over one SQLite file."""

    @task
    def fetch(x: int) -> int:
        calls.append("fetch")
        return x + 1

    @task
    def publish(x: int) -> int:
        calls.append("publish")
        if broken:
            raise ConnectionAbortedError("down")
        return x * 10

    @entrypoint(checkpointer=saver)
    def flow(x: int) -> int:
        return publish(fetch(x).result()).result()

    return flow


def test_a_new_process_resumes_without_rerunning_finished_tasks(tmp_path: Path) -> None:
    calls: list[str] = []
    with SqliteSaver(tmp_path / "func.db") as saver:
        with pytest.raises(ConnectionAbortedError):
            _workflow(saver, calls, broken=True).invoke(1, _config())
    assert calls == ["fetch", "publish"]
    with SqliteSaver(tmp_path / "func.db") as saver:  # as after a restart
        flow = _workflow(saver, calls, broken=False)
        assert flow.invoke(None, _config()) == 20
        assert calls == ["fetch", "publish", "publish"]
        assert flow.get_state(_config()).values == 20


def test_sync_calls_run_in_parallel() -> None:
    together = threading.Barrier(4, timeout=10)  # passed only when the four calls run at once

    @task
    def meet(x: int) -> int:
        together.wait()
        return x

    @entrypoint()
    def flow(n: int) -> list[int]:
        return [f.result() for f in [meet(i) for i in range(n)]]

    assert flow.invoke(4) == [0, 1, 2, 3]


def test_async_calls_run_concurrently() -> None:
    together = asyncio.Barrier(5)

    @task
    async def meet(x: int) -> int:
        async with asyncio.timeout(10):
            await together.wait()
        return x

    @entrypoint()
    async def flow(n: int) -> list[int]:
        return list(await asyncio.gather(*[meet(i) for i in range(n)]))

    assert asyncio.run(flow.ainvoke(5)) == [0, 1, 2, 3, 4]


def test_nested_calls_past_the_pool_size_do_not_deadlock() -> None:
    """Every pool thread may be a task waiting on its own calls: those then run inline."""

    @task
    def leaf(x: int) -> int:
        return x

    @task
    def branch(x: int) -> int:
        parts = [leaf(x), leaf(x + 1)]
        time.sleep(0.01)
        return sum(p.result() for p in parts)

    @entrypoint(checkpointer=InMemorySaver())
    def flow(n: int) -> int:
        return sum(f.result() for f in [branch(i) for i in range(n)])

    assert flow.invoke(40, _config()) == sum(2 * i + 1 for i in range(40))


def test_an_unawaited_call_finishes_before_the_run_ends() -> None:
    done = threading.Event()

    @task
    def side_effect(x: int) -> int:
        time.sleep(0.05)
        done.set()
        return x

    @entrypoint()
    def flow(x: int) -> str:
        side_effect(x)
        return "returned"

    chunks = list(flow.stream(1))
    assert done.is_set()
    assert {"side_effect": 1} in chunks and {"flow": "returned"} in chunks


def test_interrupt_in_a_nested_task_resumes_it() -> None:
    @task
    def inner(x: int) -> str:
        return f"{x}:{interrupt('inner?')}"

    @task
    def outer(x: int) -> str:
        return inner(x).result().upper()

    @entrypoint(checkpointer=InMemorySaver())
    def flow(x: int) -> str:
        return outer(x).result()

    first = flow.invoke(7, _config())
    assert [i.value for i in first["__interrupt__"]] == ["inner?"]
    assert flow.invoke(Command(resume="yes"), _config()) == "7:YES"


def test_sync_and_async_entrypoints_run_through_either_api() -> None:
    """graphrun extension: LangGraph cannot `invoke` an async entrypoint (no sync function)."""

    @entrypoint()
    async def aflow(x: int) -> int:
        return x + 1

    @entrypoint()
    def sflow(x: int) -> int:
        return x + 2

    assert aflow.invoke(1) == 2
    assert asyncio.run(sflow.ainvoke(1)) == 3


def test_copy_keeps_an_entrypoint() -> None:
    @entrypoint()
    def flow(x: int) -> int:
        return x

    saver = InMemorySaver()
    copied = flow.copy(checkpointer=saver)
    assert isinstance(copied, EntrypointGraph) and copied.checkpointer is saver
    assert copied.invoke(3, _config()) == 3 and copied.get_state(_config()).values == 3


class _Log(TypedDict):
    log: Annotated[list, operator.add]


def _node_graph(saver: Any, calls: list[str], broken: bool) -> Any:
    """A graph whose node calls two tasks, one of which may fail (built once per "process")."""

    @task
    def fetch(x: int) -> int:
        calls.append("fetch")
        return x + 1

    @task
    def publish(x: int) -> int:
        calls.append("publish")
        if broken:
            raise ConnectionAbortedError("down")
        return x * 10

    def node(state: _Log) -> dict[str, Any]:
        one, two = fetch(1), fetch(5)
        return {"log": [publish(one.result() + two.result()).result()]}

    builder = StateGraph(_Log)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    return builder.compile(checkpointer=saver)


def test_tasks_in_a_graph_node_resume_from_a_sqlite_file(tmp_path: Path) -> None:
    """Calls a node made are saved as they finish: the run after a failure (another graph over
    the same file, as another process) re-runs only the call that failed."""
    path = tmp_path / "calls.sqlite"
    calls: list[str] = []
    with SqliteSaver(str(path)) as saver:
        with pytest.raises(ConnectionAbortedError):
            _node_graph(saver, calls, broken=True).invoke({"log": []}, _config())
    assert sorted(calls) == ["fetch", "fetch", "publish"]
    calls.clear()
    with SqliteSaver(str(path)) as saver:
        out = _node_graph(saver, calls, broken=False).invoke(None, _config())
    assert calls == ["publish"]
    assert out == {"log": [80]}


def test_an_async_node_gathers_calls_in_parallel() -> None:
    """An async node's calls run as tasks of their own; the node waits for them."""

    together = asyncio.Barrier(6)  # passed only when the six calls run at once

    @task
    async def nap(x: int) -> int:
        async with asyncio.timeout(10):
            await together.wait()
        return x

    async def node(state: _Log) -> dict[str, Any]:
        nap(99)  # never awaited: waited for when the node returns
        return {"log": list(await asyncio.gather(*[nap(i) for i in range(5)]))}

    builder = StateGraph(_Log)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    graph = builder.compile()
    chunks = asyncio.run(_collect(graph.astream({"log": []}, stream_mode="updates")))
    assert chunks[-1] == {"node": {"log": [0, 1, 2, 3, 4]}}
    assert sorted(c["nap"] for c in chunks[:-1]) == [0, 1, 2, 3, 4, 99]


def test_parallel_sync_nodes_call_tasks_and_wait_for_unasked_calls() -> None:
    """Two nodes of one step call tasks at once (the run learns about calls from either);
    a call nobody asks the result of, slower than the whole step, still finishes (and
    streams) before the step ends."""
    done: list[int] = []

    @task
    def slow(x: int) -> int:
        time.sleep(0.1 * x)
        done.append(x)
        return x

    def left(state: _Log) -> dict[str, Any]:
        slow(4)  # never asked for
        return {"log": ["left"]}

    def right(state: _Log) -> dict[str, Any]:
        return {"log": [slow(1).result(), slow(2).result()]}

    builder = StateGraph(_Log)
    builder.add_node("left", left)
    builder.add_node("right", right)
    builder.add_node("after", lambda state: {"log": ["after"]})
    builder.add_edge(START, "left")
    builder.add_edge(START, "right")
    builder.add_edge("right", "after")
    graph = builder.compile(checkpointer=InMemorySaver())
    chunks = list(graph.stream({"log": []}, _config(), stream_mode="updates"))
    assert sorted(done) == [1, 2, 4]
    assert chunks.index({"slow": 4}) < chunks.index({"after": {"log": ["after"]}})
    assert graph.get_state(_config()).values["log"][-1] == "after"


async def _collect(agen: Any) -> list[Any]:
    return [item async for item in agen]


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_async_calls_on_trio(anyio_backend: str) -> None:
    pytest.importorskip("trio")

    @task
    async def double(x: int) -> int:
        await anyio.sleep(0.01)
        return x * 2

    @task
    def inc(x: int) -> int:
        return x + 1

    @entrypoint(checkpointer=InMemorySaver())
    async def flow(n: int) -> list[int]:
        calls = [double(i) for i in range(n)]
        return [await c for c in calls] + [await inc(n)]

    chunks = [c async for c in flow.astream(3, _config(), stream_mode="updates")]
    assert chunks[-1] == {"flow": [0, 2, 4, 4]}
    assert sorted(next(iter(c)) for c in chunks[:-1]) == ["double"] * 3 + ["inc"]
