"""Concurrent runs on different threads sharing one SQLite file (issue 3).

Graph runs (not bare saver calls) from many OS threads and asyncio tasks against one saver, two
savers on one file, and the store in the same file: no "database is locked", and every thread's
final state and whole history are right.
"""

from __future__ import annotations

import asyncio
import itertools
import operator
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from checkpoints import SqliteSaver
from checkpoints.store import SqliteStore
from engine import END, START, StateGraph, get_store

STEPS = 20
WORKERS = 8


class State(TypedDict):
    n: int
    trail: Annotated[list[str], operator.add]


def build() -> Any:
    def tick(state: State) -> dict[str, Any]:
        n = state["n"] + 1
        store = get_store()
        if store is not None:  # the store lives in the same file as the checkpoints
            store.put(("ticks", state["trail"][0]), str(n), {"n": n})
        return {"n": n, "trail": [f"{state['trail'][0]}:{n}"]}

    builder: Any = StateGraph(State)
    builder.add_node("tick", tick)
    builder.add_edge(START, "tick")
    builder.add_conditional_edges("tick", lambda s: END if s["n"] >= STEPS else "tick")
    return builder


def config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def expected(thread_id: str, n: int = STEPS) -> State:
    return {
        "n": n,
        "trail": [thread_id] + [f"{thread_id}:{i}" for i in range(1, n + 1)],
    }


def check_history(graph: Any, thread_id: str) -> None:
    """Input, the input applied, one checkpoint per tick: newest first, whole, chained."""
    history = list(graph.get_state_history(config(thread_id)))
    assert [s.metadata["step"] for s in history] == list(range(STEPS, -2, -1))
    for snapshot in history[:-1]:
        assert snapshot.values == expected(thread_id, snapshot.metadata["step"])
    for newer, older in itertools.pairwise(history):
        assert newer.parent_config == older.config
    assert history[0].next == ()


def run_threads(target: Callable[[int], None], count: int) -> None:
    """Start `count` threads together; re-raise the first failure in the test's thread."""
    errors: list[BaseException] = []
    barrier = threading.Barrier(count)

    def worker(index: int) -> None:
        barrier.wait()
        try:
            target(index)
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_threads_invoke_their_own_thread_ids_on_one_saver(tmp_path: Path, durability: str) -> None:
    with SqliteSaver(tmp_path / "graph.db") as saver:
        graph = build().compile(checkpointer=saver)

        def run(index: int) -> None:
            thread_id = f"t{index}"
            value: State = {"n": 0, "trail": [thread_id]}
            result = graph.invoke(value, config(thread_id), durability=durability)
            assert result == expected(thread_id)
            check_history(graph, thread_id)  # while the others are still writing

        run_threads(run, WORKERS)
        for index in range(WORKERS):
            check_history(graph, f"t{index}")


@pytest.mark.anyio
@pytest.mark.parametrize("durability", ["sync", "async"])
async def test_asyncio_tasks_ainvoke_their_own_thread_ids_on_one_saver(
    tmp_path: Path, durability: str
) -> None:
    async with SqliteSaver(tmp_path / "graph.db") as saver:
        graph = build().compile(checkpointer=saver)

        async def run(thread_id: str) -> None:
            result = await graph.ainvoke(
                {"n": 0, "trail": [thread_id]}, config(thread_id), durability=durability
            )
            assert result == expected(thread_id)
            history = [s async for s in graph.aget_state_history(config(thread_id))]
            assert len(history) == STEPS + 2

        await asyncio.gather(*(run(f"a{index}") for index in range(WORKERS)))
        for index in range(WORKERS):
            check_history(graph, f"a{index}")


def test_two_savers_and_a_store_on_one_file_from_several_threads(
    tmp_path: Path,
) -> None:
    path = tmp_path / "graphrun.db"
    with SqliteSaver(path) as one, SqliteSaver(path) as two, SqliteStore(path) as store:
        graphs = [build().compile(checkpointer=saver, store=store) for saver in (one, two)]

        def run(index: int) -> None:
            graph = graphs[index % 2]
            for round_ in range(3):
                thread_id = f"s{index}-{round_}"
                result = graph.invoke({"n": 0, "trail": [thread_id]}, config(thread_id))
                assert result == expected(thread_id)

        run_threads(run, 4)  # two threads per saver
        # Either saver sees everything both wrote; the store holds every tick.
        for index in range(4):
            for round_ in range(3):
                thread_id = f"s{index}-{round_}"
                for graph in graphs:
                    check_history(graph, thread_id)
                items = store.search(("ticks", thread_id), limit=100)
                assert sorted(item.value["n"] for item in items) == list(range(1, STEPS + 1))


def test_a_commit_wakes_its_waiter_from_the_connection_thread(tmp_path: Path) -> None:
    """The waiter of a commit (a flush, a durable put) is woken by the thread that committed,
    right after the commit, not after a further hop through the saver's event loop; and by
    then the data is in the file for any other connection."""
    import concurrent.futures
    import sqlite3

    from checkpoints._sqlite_writer import Job

    with SqliteSaver(str(tmp_path / "w.db")) as saver:
        config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        checkpoint = {"v": 4, "id": "1f0", "ts": "2026-01-01T00:00:00+00:00",
                      "channel_values": {"x": 1}, "channel_versions": {"x": 1},
                      "versions_seen": {}}
        rows, _, _ = saver._put_rows(config, checkpoint, {"step": 0}, {"x": 1})
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        woken_on: list[str] = []
        done.add_done_callback(lambda _f: woken_on.append(threading.current_thread().name))
        saver._writer.submit(Job(rows, None, done))  # what a durable put hands over
        done.result(timeout=5)
        loop_thread = saver._backend.loop_thread._thread
        assert woken_on and woken_on[0] not in (threading.current_thread().name,
                                                 loop_thread.name)
        count = sqlite3.connect(tmp_path / "w.db").execute("SELECT count(*) FROM checkpoints")
        assert count.fetchone() == (1,)
