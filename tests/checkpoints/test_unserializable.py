"""A value the serializer cannot store fails the step and leaves nothing half-written (issue 3).

Through the engine, on both savers and every durability mode: the error is a
`SerializationError` naming the channel and the type, the thread's latest checkpoint and its
pending writes are what they were before the failing step, and the thread carries on once the
node writes storable values again.
"""

from __future__ import annotations

import contextlib
import operator
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from checkpoints import (
    BaseCheckpointSaver,
    InMemorySaver,
    PostgresSaver,
    SerializationError,
    SqliteSaver,
)
from checkpoints.base import empty_checkpoint, thread_config
from engine import END, START, Send, StateGraph, interrupt

THREAD = {"configurable": {"thread_id": "t"}}


class State(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    x: Any


def make_local() -> Any:
    class Local:  # defined in a function: no import path, so it cannot be stored
        pass

    return Local()


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseCheckpointSaver]:
    if request.param == "memory":
        yield InMemorySaver()
        return
    if request.param == "postgres":
        with PostgresSaver(request.getfixturevalue("pg_url")) as postgres_saver:
            yield postgres_saver
        return
    with SqliteSaver(tmp_path / "graph.db") as sqlite_saver:
        yield sqlite_saver


def build(bad: dict[str, bool], *, parallel: bool = False) -> Any:
    """first -> writer (-> a good sibling when `parallel`) -> after; `writer` writes an
    unstorable `x` while ``bad["on"]``."""

    def first(state: State) -> State:
        return {"log": ["first"]}

    def writer(state: State) -> State:
        value = {"nested": [1, make_local()]} if bad["on"] else "fine"
        return {"log": ["writer"], "x": value}

    def sibling(state: State) -> State:
        return {"log": ["sibling"]}

    def after(state: State) -> State:
        return {"log": ["after"]}

    builder: Any = StateGraph(State)
    for node in (first, writer, sibling, after):
        builder.add_node(node.__name__, node)
    builder.add_edge(START, "first")
    builder.add_edge("first", "writer")
    builder.add_edge("writer", "after")
    if parallel:
        builder.add_edge("first", "sibling")
        builder.add_edge("sibling", "after")
    builder.add_edge("after", END)
    return builder


def snapshot(saver: BaseCheckpointSaver) -> tuple[Any, ...]:
    """The thread's latest checkpoint id, its values and its pending writes."""
    latest = saver.get_tuple(THREAD)
    assert latest is not None
    writes = sorted((channel, repr(value)) for _, channel, value in latest.pending_writes or [])
    return latest.checkpoint["id"], latest.checkpoint["channel_values"], writes


def assert_names_channel_and_type(error: pytest.ExceptionInfo[SerializationError]) -> None:
    assert "'x'" in str(error.value)
    assert "Local'" in str(error.value)  # the qualified name: 'make_local.<locals>.Local'
    assert isinstance(error.value, TypeError)


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_a_node_writing_an_unstorable_value_fails_its_step(
    saver: BaseCheckpointSaver, durability: str
) -> None:
    bad = {"on": False}
    graph = build(bad).compile(checkpointer=saver, interrupt_before=["writer"])
    graph.invoke({"log": []}, THREAD, durability=durability)  # stops before `writer`
    before = snapshot(saver)

    bad["on"] = True
    with pytest.raises(SerializationError, match="Cannot save channel 'x'") as error:
        graph.invoke(None, THREAD, durability=durability)
    assert_names_channel_and_type(error)
    assert snapshot(saver) == before

    bad["on"] = False  # the thread is not poisoned: the step runs again and the run ends
    result = graph.invoke(None, THREAD, durability=durability)
    assert result == {"log": ["first", "writer", "after"], "x": "fine"}
    assert graph.get_state(THREAD).next == ()


@pytest.mark.anyio
@pytest.mark.parametrize("durability", ["sync", "async"])
async def test_the_same_through_ainvoke(saver: BaseCheckpointSaver, durability: str) -> None:
    bad = {"on": False}
    graph = build(bad).compile(checkpointer=saver, interrupt_before=["writer"])
    await graph.ainvoke({"log": []}, THREAD, durability=durability)
    before = snapshot(saver)

    bad["on"] = True
    with pytest.raises(SerializationError, match="Cannot save channel 'x'") as error:
        await graph.ainvoke(None, THREAD, durability=durability)
    assert_names_channel_and_type(error)
    assert snapshot(saver) == before


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_a_parallel_step_keeps_no_write_of_the_failing_task(
    saver: BaseCheckpointSaver, durability: str
) -> None:
    bad = {"on": True}
    graph = build(bad, parallel=True).compile(checkpointer=saver, interrupt_before=["writer"])
    graph.invoke({"log": []}, THREAD, durability=durability)
    checkpoint_id, values, _ = snapshot(saver)

    with pytest.raises(SerializationError, match="Cannot save channel 'x'"):
        graph.invoke(None, THREAD, durability=durability)
    # Still on the same checkpoint; the sibling, which finished, may have saved its writes, but
    # nothing of the failing task is stored.
    after_id, after_values, writes = snapshot(saver)
    assert (after_id, after_values) == (checkpoint_id, values)
    assert all(channel != "x" and "writer" not in value for channel, value in writes)

    bad["on"] = False
    result = graph.invoke(None, THREAD, durability=durability)
    assert result["x"] == "fine"
    assert sorted(result["log"]) == ["after", "first", "sibling", "writer"]


def test_unstorable_input_is_refused_before_anything_is_saved(
    saver: BaseCheckpointSaver,
) -> None:
    graph = build({"on": False}).compile(checkpointer=saver)
    with pytest.raises(SerializationError, match="Cannot save channel 'x'") as error:
        graph.invoke({"log": [], "x": make_local()}, THREAD)
    assert_names_channel_and_type(error)
    assert saver.get_tuple(THREAD) is None


def test_update_state_with_an_unstorable_value_saves_nothing(
    saver: BaseCheckpointSaver,
) -> None:
    graph = build({"on": False}).compile(checkpointer=saver, interrupt_before=["writer"])
    graph.invoke({"log": []}, THREAD)
    before = snapshot(saver)
    with pytest.raises(SerializationError, match="Cannot save channel 'x'") as error:
        graph.update_state(THREAD, {"x": make_local()})
    assert_names_channel_and_type(error)
    assert snapshot(saver) == before


def test_the_sqlite_file_holds_no_row_of_the_failed_step(tmp_path: Path) -> None:
    path = tmp_path / "graph.db"
    bad = {"on": False}

    def rows() -> dict[str, int]:
        with contextlib.closing(sqlite3.connect(path)) as conn:
            return {
                table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in ("checkpoints", "blobs", "writes")
            }

    with SqliteSaver(path) as saver:
        graph = build(bad).compile(checkpointer=saver, interrupt_before=["writer"])
        graph.invoke({"log": []}, THREAD)
        before = rows()
        bad["on"] = True
        with pytest.raises(SerializationError):
            graph.invoke(None, THREAD)
        saver.flush()
        assert rows() == before


def one_node(node: Any) -> Any:
    builder: Any = StateGraph(State)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    builder.add_edge("node", END)
    return builder


def test_internal_channels_are_named_by_what_the_user_wrote(saver: BaseCheckpointSaver) -> None:
    builder: Any = StateGraph(State)
    builder.add_node("a", lambda state: {"log": ["a"]})
    builder.add_node("b", lambda state: {"log": ["b"]})
    builder.add_edge(START, "a")
    builder.add_conditional_edges("a", lambda state: [Send("b", {"x": make_local()})], ["b"])
    graph = builder.compile(checkpointer=saver)
    with pytest.raises(SerializationError, match=r"Cannot save the Send to node 'b' .*Local'"):
        graph.invoke({"log": []}, THREAD)

    graph = one_node(lambda state: {"log": [interrupt(make_local())]}).compile(checkpointer=saver)
    with pytest.raises(SerializationError, match=r"Cannot save the interrupt value .*Local'"):
        graph.invoke({"log": []}, {"configurable": {"thread_id": "interrupt"}})


def test_unstorable_run_metadata_names_its_key(saver: BaseCheckpointSaver) -> None:
    graph = one_node(lambda state: {"log": ["node"]}).compile(checkpointer=saver)
    config = {**THREAD, "metadata": {"owner": make_local()}}
    with pytest.raises(SerializationError, match=r"checkpoint metadata key 'owner': .*Local'"):
        graph.invoke({"log": []}, config)
    assert saver.get_tuple(THREAD) is None


# --- the savers on their own ---------------------------------------------------------------------


def test_saver_puts_refuse_the_whole_change(saver: BaseCheckpointSaver) -> None:
    first = empty_checkpoint()
    first["channel_values"] = {"a": 1}
    first["channel_versions"] = {"a": 1}
    config = saver.put(thread_config("t"), first, {"step": 0}, {"a": 1})
    before = snapshot(saver)

    second = empty_checkpoint()
    second["channel_values"] = {"a": 2, "x": make_local()}
    second["channel_versions"] = {"a": 2, "x": 1}
    puts = [saver.put, getattr(saver, "put_nowait", saver.put)]
    for put in puts:
        with pytest.raises(SerializationError, match=r"Cannot save channel 'x': .*Local'"):
            put(config, second, {"step": 1}, {"a": 2, "x": 1})
    writes = [("a", 3), ("x", make_local())]
    for put_writes in [saver.put_writes, getattr(saver, "put_writes_nowait", saver.put_writes)]:
        with pytest.raises(SerializationError, match=r"Cannot save channel 'x': .*Local'"):
            put_writes(config, writes, "task")
    flush = getattr(saver, "flush", None)
    if flush is not None:
        flush()  # nothing failed in the background: the refused changes never got there
    assert snapshot(saver) == before
    assert len(list(saver.list(thread_config("t")))) == 1
