"""A list channel that only grew is stored as its new items (checkpoints/_deltas.py).

Every test reads the values back through the saver (and for SQLite from a fresh saver on the same
file), so a delta that cannot be rebuilt, or rebuilds the wrong list, fails here.
"""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from checkpoints import BaseCheckpointSaver, InMemorySaver, PostgresSaver, SqliteSaver
from checkpoints.base import empty_checkpoint, thread_config
from engine import END, START, StateGraph

from .test_postgres import query


class State(TypedDict):
    items: Annotated[list, operator.add]
    n: int


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseCheckpointSaver]:
    if request.param == "memory":
        yield InMemorySaver()
        return
    if request.param == "postgres":
        with PostgresSaver(request.getfixturevalue("pg_url")) as postgres_saver:
            yield postgres_saver
        return
    with SqliteSaver(tmp_path / "deltas.db") as sqlite_saver:
        yield sqlite_saver


def reopened(saver: BaseCheckpointSaver) -> list[BaseCheckpointSaver]:
    """A second saver on the same file or database (nothing remembered), if there can be one."""
    if isinstance(saver, SqliteSaver):
        return [SqliteSaver(saver.path)]
    if isinstance(saver, PostgresSaver):
        return [PostgresSaver(saver.url)]
    return []


def pg_column(saver: PostgresSaver, sql: str, channel: str) -> list[bytes]:
    saver.flush()
    return [row[0] for row in query(saver.url, sql, channel)]


def stored_blobs(saver: BaseCheckpointSaver, channel: str) -> list[bytes]:
    """The raw blobs of one channel, oldest version first."""
    if isinstance(saver, InMemorySaver):
        return [b for (_, _, ch, _), b in sorted(saver.blobs.items()) if ch == channel]
    if isinstance(saver, PostgresSaver):
        sql = "SELECT value FROM checkpoint_blobs WHERE channel = $1 ORDER BY version::bigint"
        return pg_column(saver, sql, channel)
    saver.flush()
    with sqlite3.connect(saver.path) as conn:
        rows = conn.execute(
            "SELECT value FROM blobs WHERE channel = ? ORDER BY version", (channel,)
        ).fetchall()
    return [r[0] for r in rows]


def is_delta(blob: Any) -> bool:
    return isinstance(blob, bytes) and blob[:1] == b"\xc1"


def counting_graph(steps: int, item: Any = ("t", 1)) -> StateGraph:
    """Appends one item per step, `steps` times."""

    def add(state: State) -> dict:
        return {"items": [{"step": state["n"], "payload": item}], "n": state["n"] + 1}

    builder = StateGraph(State)
    builder.add_node("add", add)
    builder.add_edge(START, "add")
    builder.add_conditional_edges("add", lambda s: END if s["n"] >= steps else "add")
    return builder


def expected(steps: int, item: Any = ("t", 1)) -> list[dict]:
    return [{"step": i, "payload": item} for i in range(steps)]


def test_a_growing_list_is_stored_as_deltas_and_every_checkpoint_reads_back(
    saver: BaseCheckpointSaver,
) -> None:
    graph = counting_graph(20).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 100}
    graph.invoke({"items": [], "n": 0}, config)

    blobs = stored_blobs(saver, "items")
    assert sum(map(is_delta, blobs)) >= 19, "each appended step should store only its new item"
    # Every checkpoint in the history, not only the latest, rebuilds its exact list, with the
    # tuple inside each item still a tuple.
    states = list(graph.get_state_history(config))
    for snapshot in states[:-1]:  # the last is the input checkpoint, before any value
        n = snapshot.values["n"]
        assert snapshot.values["items"] == expected(n)
        assert all(type(i["payload"]) is tuple for i in snapshot.values["items"])
    assert states[0].values["n"] == 20


def test_deltas_chain_without_a_cap_and_read_back_from_a_fresh_saver(
    saver: BaseCheckpointSaver,
) -> None:
    """Issue 32: after the first value every version is a delta on its parent's, however long
    the thread (before, a full value every 32 versions made storage quadratic); a saver that
    remembers nothing rebuilds every checkpoint's list from the chain."""
    steps = 150
    graph = counting_graph(steps).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 1000}
    graph.invoke({"items": [], "n": 0}, config)

    blobs = stored_blobs(saver, "items")
    # The input's empty list and the first item (nothing to build on); every other a delta.
    assert sum(not is_delta(b) for b in blobs) == 2
    assert max(map(len, blobs)) < 200  # each version stores its one new item
    for reader in [saver, *reopened(saver)]:
        graph = counting_graph(steps).compile(checkpointer=reader)
        assert graph.get_state(config).values["items"] == expected(steps)
        history = list(graph.get_state_history(config))
        assert [len(s.values.get("items", [])) for s in history[:-1]] == list(
            range(steps, -1, -1)
        )
        if reader is not saver:
            reader.close()


def test_sqlite_deltas_read_back_from_a_fresh_saver_and_a_new_run_continues(
    tmp_path: Path,
) -> None:
    path = tmp_path / "deltas.db"
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 100}
    with SqliteSaver(path) as first:
        counting_graph(10).compile(checkpointer=first).invoke({"items": [], "n": 0}, config)
    with SqliteSaver(path) as second:
        graph = counting_graph(25).compile(checkpointer=second)
        assert graph.get_state(config).values["items"] == expected(10)
        graph.invoke({"n": 10}, config)  # new input on the finished thread: loops on to 25
        assert graph.get_state(config).values["items"] == expected(25)
    with SqliteSaver(path) as third:
        assert counting_graph(25).compile(checkpointer=third).get_state(config).values[
            "items"
        ] == expected(25)


def extend_in_place(old: list, new: list) -> list:
    old.extend(new)
    return old


class Mutating(TypedDict):
    items: Annotated[list, extend_in_place]
    n: int


def test_a_reducer_that_mutates_its_list_in_place_reads_back(
    saver: BaseCheckpointSaver,
) -> None:
    """The stored object grows under the saver: a delta builds on the snapshot taken when it
    was stored (issue 16), so every checkpoint reads back the list it had."""
    def add(state: Mutating) -> dict:
        return {"items": [state["n"]], "n": state["n"] + 1}

    builder = StateGraph(Mutating)
    builder.add_node("add", add)
    builder.add_edge(START, "add")
    builder.add_conditional_edges("add", lambda s: END if s["n"] >= 6 else "add")
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    result = graph.invoke({"items": [], "n": 0}, config)

    # LangGraph 1.2.22 gives the same doubled list (the reducer also sees the node's write twice).
    assert result["items"] == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    history = [s.values for s in graph.get_state_history(config)][:-1]  # the input's: empty
    assert [len(v["items"]) for v in history] == [2 * v["n"] for v in history]
    assert all(v["items"] == result["items"][: 2 * v["n"]] for v in history)


def test_a_replaced_item_stores_the_items_before_it_as_a_delta(
    saver: BaseCheckpointSaver,
) -> None:
    """Issue 32: add_messages replacing a message by id keeps the prefix before it: only the
    items from the replaced one on are written again."""
    config = thread_config("t")
    first, second = {"id": "1", "text": "a"}, {"id": "2", "text": "b"}
    values = [first, second]
    config = put(saver, config, {"m": values}, {"m": 1})
    grown = [*values, {"id": "3", "text": "c"}]
    config = put(saver, config, {"m": grown}, {"m": 2})
    replaced = [first, {"id": "2", "text": "edited"}, grown[2]]  # same length, one new object
    put(saver, config, {"m": replaced}, {"m": 3})

    blobs = stored_blobs(saver, "m")
    assert [is_delta(b) for b in blobs] == [False, True, True]
    for reader in [saver, *reopened(saver)]:
        latest = reader.get_tuple(thread_config("t"))
        assert latest is not None
        assert latest.checkpoint["channel_values"]["m"] == replaced
        history = [t.checkpoint["channel_values"]["m"] for t in reader.list(thread_config("t"))]
        assert history == [replaced, grown, values]
        if reader is not saver:
            reader.close()


def test_a_list_mutated_after_it_was_stored_keeps_its_stored_value(
    saver: BaseCheckpointSaver,
) -> None:
    values = [1, 2]
    config = put(saver, thread_config("t"), {"m": values}, {"m": 1})
    values.append(99)  # user code appends to the stored object itself
    values[0] = 7  # and replaces an item: the snapshot taken at put time does not change
    put(saver, config, {"m": [*values, 3]}, {"m": 2})

    history = [t.checkpoint["channel_values"]["m"] for t in saver.list(thread_config("t"))]
    assert history == [[7, 2, 99, 3], [1, 2]]


def test_prune_keeps_the_versions_a_kept_delta_builds_on(saver: BaseCheckpointSaver) -> None:
    graph = counting_graph(12).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 100}
    graph.invoke({"items": [], "n": 0}, config)
    saver.prune(["t"], strategy="keep_latest", keep_last=1)

    assert len(list(saver.list(thread_config("t")))) == 1
    assert graph.get_state(config).values["items"] == expected(12)
    blobs = stored_blobs(saver, "items")
    # The input's empty list and the twelve deltas on it; no other version survived.
    # The first item (full: nothing before it) and the eleven deltas on it; the input's empty
    # list is not needed and went too.
    assert [is_delta(b) for b in blobs] == [False] + [True] * 11


def test_copy_thread_and_delete_thread_with_deltas(saver: BaseCheckpointSaver) -> None:
    graph = counting_graph(8).compile(checkpointer=saver)
    graph.invoke({"items": [], "n": 0}, {"configurable": {"thread_id": "a"}})
    saver.copy_thread("a", "b")
    saver.delete_thread("a")

    copied = graph.get_state({"configurable": {"thread_id": "b"}})
    assert copied.values["items"] == expected(8)
    assert graph.get_state({"configurable": {"thread_id": "a"}}).values == {}
    # The copy goes on growing: its first new version is stored in full, then deltas again.
    more = counting_graph(11).compile(checkpointer=saver)
    more.invoke({"n": 8}, {"configurable": {"thread_id": "b"}})
    assert more.get_state({"configurable": {"thread_id": "b"}}).values["items"] == expected(11)


def test_messages_grow_as_deltas_and_forks_read_their_own_history(
    saver: BaseCheckpointSaver,
) -> None:
    from engine import MessagesState

    def reply(state: MessagesState) -> dict:
        return {"messages": [{"role": "ai", "content": f"echo {len(state['messages'])}"}]}

    builder = StateGraph(MessagesState)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    for turn in range(5):
        graph.invoke({"messages": [{"role": "user", "content": f"hi {turn}"}]}, config)
    assert sum(map(is_delta, stored_blobs(saver, "messages"))) >= 5

    history = list(graph.get_state_history(config))
    middle = next(s for s in history if len(s.values.get("messages", [])) == 4)
    forked = graph.invoke({"messages": [{"role": "user", "content": "fork"}]}, middle.config)
    contents = [_content(m) for m in forked["messages"]]
    assert contents == ["hi 0", "echo 1", "hi 1", "echo 3", "fork", "echo 5"]
    latest = graph.get_state(config).values["messages"]
    assert [_content(m) for m in latest][-2:] == ["fork", "echo 5"]
    assert [_content(m) for m in graph.get_state(middle.config).values["messages"]] == contents[:4]


def _content(message: Any) -> str:
    return message["content"] if isinstance(message, dict) else message.content


def put(
    saver: BaseCheckpointSaver, config: dict[str, Any], values: dict, new_versions: dict
) -> dict[str, Any]:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = values
    checkpoint["channel_versions"] = dict(new_versions)
    return saver.put(config, checkpoint, {"source": "loop", "step": 0}, new_versions)


def test_more_threads_than_the_lineage_remembers_still_read_back(
    saver: BaseCheckpointSaver,
) -> None:
    from checkpoints._deltas import _THREADS

    threads = [f"t{i}" for i in range(_THREADS + 6)]
    lists = {t: [t] for t in threads}
    configs = {t: put(saver, thread_config(t), {"m": lists[t]}, {"m": 1}) for t in threads}
    for version in (2, 3):  # round robin: the oldest threads were forgotten in between
        for t in threads:
            lists[t] = [*lists[t], version]
            configs[t] = put(saver, configs[t], {"m": lists[t]}, {"m": version})
    read = {}
    for t in threads:
        latest = saver.get_tuple(thread_config(t))
        assert latest is not None
        assert latest.checkpoint["channel_values"]["m"] == [t, 2, 3]
        read[t] = latest.checkpoint["channel_values"]["m"]
    # Round robin over more threads than remembered: every version was stored in full ...
    assert not any(map(is_delta, stored_blobs(saver, "m")))
    # ... while a thread written again from what was just read of it (a run's next turn,
    # issue 32) gets a delta.
    last = threads[-1]
    put(saver, configs[last], {"m": [*read[last], 4]}, {"m": 4})
    assert sum(map(is_delta, stored_blobs(saver, "m"))) == 1
    latest = saver.get_tuple(thread_config(last))
    assert latest is not None and latest.checkpoint["channel_values"]["m"] == [last, 2, 3, 4]


# -- a task's write of a list the checkpoint already holds ----------------------------------------


def stored_writes(saver: BaseCheckpointSaver, channel: str) -> list[bytes]:
    """The raw stored values of one channel's pending writes."""
    if isinstance(saver, InMemorySaver):
        return [v for ws in saver.writes.values() for _, ch, v, _ in ws.values() if ch == channel]
    if isinstance(saver, PostgresSaver):
        sql = "SELECT value FROM checkpoint_writes WHERE channel = $1 ORDER BY seq"
        return pg_column(saver, sql, channel)
    saver.flush()
    with sqlite3.connect(saver.path) as conn:
        rows = conn.execute("SELECT value FROM writes WHERE channel = ?", (channel,)).fetchall()
    return [r[0] for r in rows]


class Copying(TypedDict):
    items: Annotated[list, operator.add]
    copy: list
    n: int


def copying_graph(steps: int, returned: list[tuple[int, list]]) -> StateGraph:
    """Each step appends to `items` and, in a parallel node, writes `items` plus a marker to
    the plain channel `copy`: the write starts with the very list the checkpoint holds."""

    def add(state: Copying) -> dict:
        big = {"step": state["n"], "payload": "x" * 200}
        return {"items": [big], "n": state["n"] + 1}

    def copy(state: Copying) -> dict:
        value = state["items"] + [f"copy {state['n']}"] if state["n"] % 2 else state["items"]
        returned.append((state["n"], value))
        return {"copy": value}

    builder = StateGraph(Copying)
    builder.add_node("add", add)
    builder.add_node("copy", copy)
    builder.add_edge(START, "add")
    builder.add_edge(START, "copy")
    builder.add_conditional_edges("add", lambda s: END if s["n"] >= steps else ["add", "copy"])
    return builder


def run_copying(saver: BaseCheckpointSaver, steps: int) -> list[tuple[int, list]]:
    """Run `copying_graph` on thread "t"; returns what its `copy` node returned, per step."""
    returned: list[tuple[int, list]] = []
    graph = copying_graph(steps, returned).compile(checkpointer=saver)
    graph.invoke({"items": [], "copy": [], "n": 0}, {"configurable": {"thread_id": "t"}})
    return returned


def test_a_written_list_the_checkpoint_holds_is_stored_as_a_reference(
    saver: BaseCheckpointSaver,
) -> None:
    returned = run_copying(saver, 12)

    writes = stored_writes(saver, "copy")
    assert len(writes) == 13  # the input's, then one per step
    # The input and the first copy (of the input's empty list: nothing to refer to) are stored
    # in full; later ones only store their new items, so they stay small however long `items`
    # grows.
    assert sum(map(is_delta, writes)) == 11
    assert max(len(w) for w in writes if is_delta(w)) < 100
    # Every checkpoint's pending write reads back as exactly what the node returned.
    readers = [saver, *reopened(saver)]
    for reader in readers:
        found = {}
        for snapshot in reader.list(thread_config("t")):
            step = snapshot.checkpoint["channel_values"].get("n")  # None: the input's
            for _, channel, value in snapshot.pending_writes:
                if channel == "copy" and step is not None:
                    found[step] = value
        assert found == dict(returned)
        if reader is not saver:
            reader.close()


def test_a_resumed_step_replays_a_referenced_write(tmp_path: Path) -> None:
    """A sibling interrupts; the finished sibling's write (a reference) is read back by a new
    saver on the same file and applied without running that node again."""
    from engine import Command, interrupt

    class Resumable(TypedDict):
        items: Annotated[list, operator.add]
        copy: list
        answer: str

    calls: list[str] = []

    def fill(state: Resumable) -> dict:
        return {"items": [{"i": i, "payload": "y" * 100} for i in range(50)]}

    def copy(state: Resumable) -> dict:
        calls.append("copy")
        return {"copy": state["items"] + ["tail"]}

    def ask(state: Resumable) -> dict:
        return {"answer": interrupt("question?")}

    builder = StateGraph(Resumable)
    for node in (fill, copy, ask):
        builder.add_node(node)
    builder.add_edge(START, "fill")
    builder.add_edge("fill", "copy")
    builder.add_edge("fill", "ask")
    config = {"configurable": {"thread_id": "t"}}
    path = tmp_path / "resume.db"
    with SqliteSaver(path) as first:
        builder.compile(checkpointer=first).invoke({"items": [], "copy": []}, config)
        assert calls == ["copy"]
    with SqliteSaver(path) as second:
        assert sum(map(is_delta, stored_writes(second, "copy"))) == 1
        result = builder.compile(checkpointer=second).invoke(Command(resume="yes"), config)
    assert calls == ["copy"]  # not run again: its write came from the file
    expected_items = [{"i": i, "payload": "y" * 100} for i in range(50)]
    assert result == {"items": expected_items, "copy": [*expected_items, "tail"], "answer": "yes"}


def test_a_list_mutated_in_the_node_is_written_as_it_was_returned(
    saver: BaseCheckpointSaver,
) -> None:
    class Plain(TypedDict):
        items: list
        out: list

    def grow(state: Plain) -> dict:
        items = state["items"]
        items.append(len(items))  # mutates the stored object itself
        items[0] = 9
        return {"out": items}

    builder = StateGraph(Plain)
    builder.add_node("grow", grow)
    builder.add_edge(START, "grow")
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"items": [10, 11], "out": []}, config)

    first = list(saver.list(thread_config("t")))[-2]  # the checkpoint `grow` ran from
    assert first.checkpoint["channel_values"]["items"] == [10, 11]
    assert [v for _, ch, v in first.pending_writes if ch == "out"] == [[9, 11, 2]]


def test_prune_keeps_what_the_latest_checkpoints_references_build_on(
    saver: BaseCheckpointSaver,
) -> None:
    returned = run_copying(saver, 9)
    before = list(saver.list(thread_config("t")))
    step_8 = next(s for s in before if s.checkpoint["channel_values"]["n"] == 8)
    saver.prune(["t"], strategy="keep_latest", keep_last=2)

    kept = list(saver.list(thread_config("t")))
    assert [s.config for s in kept][1] == step_8.config
    assert [(c, v) for _, c, v in kept[1].pending_writes if c == "copy"] == [
        ("copy", returned[-1][1])
    ]


# -- new items that are another channel's value (sourced deltas) -------------------------------


class Shared(TypedDict):
    a: Annotated[list, operator.add]
    b: Annotated[list, operator.add]
    n: int


def sharing_graph(steps: int, size: int) -> StateGraph:
    """A loop of grow -> mirror (-> back after rounds 3 and 6): `mirror` appends all of `a` to
    `b`, `back` all of `b` to `a`, so their new items are objects the other channel holds."""

    def grow(state: Shared) -> dict:
        return {"a": [{"n": state["n"], "payload": "p" * size}], "n": state["n"] + 1}

    def mirror(state: Shared) -> dict:
        return {"b": state["a"]}

    def back(state: Shared) -> dict:
        return {"a": state["b"]}

    def after_mirror(state: Shared) -> str:
        if state["n"] >= steps:
            return END
        return "back" if state["n"] in (3, 6) else "grow"

    builder = StateGraph(Shared)
    for node in (grow, mirror, back):
        builder.add_node(node)
    builder.add_edge(START, "grow")
    builder.add_edge("grow", "mirror")
    builder.add_conditional_edges("mirror", after_mirror, ["back", "grow", END])
    builder.add_edge("back", "grow")
    return builder


def run_sharing(
    saver: BaseCheckpointSaver, steps: int, thread: str = "t", size: int = 300
) -> list[dict]:
    """Run `sharing_graph`; returns the state after every step, oldest first."""
    graph = sharing_graph(steps, size).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": thread}, "recursion_limit": 10_000}
    states = list(graph.stream({"a": [], "b": [], "n": 0}, config, stream_mode="values"))
    return [copy_state(s) for s in states]


def copy_state(state: dict) -> dict:
    return {k: list(v) if isinstance(v, list) else v for k, v in state.items()}


def history_values(saver: BaseCheckpointSaver, thread: str = "t") -> list[dict]:
    """Every checkpoint's values read back through `saver`, oldest first, the input's left out."""
    snapshots = reversed(list(saver.list(thread_config(thread))))
    keys = Shared.__annotations__
    return [
        copy_state({k: v for k, v in s.checkpoint["channel_values"].items() if k in keys})
        for s in snapshots
        if s.metadata["source"] != "input"
    ]


def sourced(blob: bytes) -> bool:
    from checkpoints._deltas import _header

    return is_delta(blob) and _header(blob).source is not None


def test_new_items_that_are_another_channels_value_are_stored_as_a_reference(
    saver: BaseCheckpointSaver,
) -> None:
    states = run_sharing(saver, 12)
    assert len(states[-1]["b"]) > 50  # b holds many copies of a's items

    b_blobs, a_blobs = stored_blobs(saver, "b"), stored_blobs(saver, "a")
    assert sum(map(sourced, b_blobs)) >= 10  # every mirror after the first
    assert sum(map(sourced, a_blobs)) == 2  # each back
    # Deltas built on a sourced one carry its reads along: a's `grow` after a `back`.
    from checkpoints._deltas import _header, needs_of

    assert any(
        is_delta(x) and not sourced(x) and len(needs_of(x, "a")) > len(_header(x).chain)
        for x in a_blobs
    )
    # Nothing is written out twice: far less than the items themselves.
    assert sum(map(len, b_blobs + a_blobs)) < 20 * 400

    readers = [saver, *reopened(saver)]
    for reader in readers:
        assert history_values(reader) == states
        if reader is not saver:
            reader.close()


def test_sourced_reads_stay_bounded_over_a_long_thread(saver: BaseCheckpointSaver) -> None:
    from checkpoints._deltas import MAX_NEEDS, needs_of

    states = run_sharing(saver, 80, size=10)
    blobs = {ch: stored_blobs(saver, ch) for ch in ("a", "b")}
    for channel, stored in blobs.items():
        assert all(len(needs_of(x, channel)) <= MAX_NEEDS for x in stored if is_delta(x))
        assert sum(not is_delta(x) for x in stored) <= 2  # issue 32: no full value again
    assert sum(map(sourced, blobs["b"])) > 50
    assert history_values(saver)[-1] == states[-1]


def test_prune_keeps_the_sources_a_kept_delta_reads(saver: BaseCheckpointSaver) -> None:
    states = run_sharing(saver, 20)
    saver.prune(["t"], strategy="keep_latest", keep_last=1)
    assert len(stored_blobs(saver, "n")) == 1  # pruning did run
    # The latest values read every earlier version of both lists (one chain each, with
    # sources into the other): all are kept.
    assert len(stored_blobs(saver, "a")) == 20 + 2  # grows, backs

    readers = [saver, *reopened(saver)]
    for reader in readers:
        assert history_values(reader) == [states[-1]]
        if reader is not saver:
            reader.close()


def test_a_copied_thread_reads_its_sourced_deltas(saver: BaseCheckpointSaver) -> None:
    states = run_sharing(saver, 9, thread="a")
    saver.copy_thread("a", "b")
    saver.delete_thread("a")
    assert history_values(saver, "b") == states
    assert history_values(saver, "a") == []


class Replaced(TypedDict):
    a: Annotated[list, operator.add]
    c: list
    n: int


def test_prune_keeps_a_source_no_kept_checkpoint_holds(saver: BaseCheckpointSaver) -> None:
    """`a` takes `c`'s items by reference, then `c` is replaced: the latest checkpoint holds
    only the new `c`, yet reading its `a` needs the old one, so pruning must keep it."""
    items = [{"i": i, "payload": "q" * 50} for i in range(5)]

    def fill(state: Replaced) -> dict:
        return {"c": list(items)}

    def take(state: Replaced) -> dict:
        return {"a": state["c"]}

    def replace(state: Replaced) -> dict:
        return {"c": ["other"], "n": 1}

    builder = StateGraph(Replaced)
    for node in (fill, take, replace):
        builder.add_node(node)
    builder.add_edge(START, "fill")
    builder.add_edge("fill", "take")
    builder.add_edge("take", "replace")
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"a": [], "c": [], "n": 0}, config)
    assert sum(map(sourced, stored_blobs(saver, "a"))) == 1

    saver.prune(["t"], strategy="keep_latest", keep_last=1)
    # The latest `c`, and the one `a` reads.
    assert len(stored_blobs(saver, "c")) == 2
    readers = [saver, *reopened(saver)]
    for reader in readers:
        state = builder.compile(checkpointer=reader).get_state(config)
        assert state.values == {"a": items, "c": ["other"], "n": 1}
        if reader is not saver:
            reader.close()
