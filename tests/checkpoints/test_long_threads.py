"""Long threads in linear space (issue 32): a turn stores what is new, whoever reads the thread.

Before issue 32 each invoke started from `get_tuple`, which rebuilt the list as new objects, so
the first checkpoint of every turn stored the whole list again (O(n^2) over a thread), and a
delta chain restarted with a full value every 32 versions. Here a turn's bytes must not grow
with the thread, on every back end, with one saver and with a new saver per turn (another
process on the same database), and the remembered state must never hide another writer's.
"""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from checkpoints import BaseCheckpointSaver, InMemorySaver, PostgresSaver, SqliteSaver
from checkpoints.base import thread_config
from engine import END, START, StateGraph

from .test_postgres import query

CONFIG = {"configurable": {"thread_id": "t"}}
TURNS = 40
TEXT = 200  # bytes of each turn's message


class Chat(TypedDict):
    messages: Annotated[list, operator.add]


def reply(state: Chat) -> dict[str, Any]:
    return {"messages": [{"turn": len(state["messages"]), "text": "r" * TEXT}]}


def chat() -> StateGraph:
    builder = StateGraph(Chat)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    return builder


def said(turn: int) -> dict[str, Any]:
    return {"messages": [{"said": turn, "text": "h" * TEXT}]}


Opener = Callable[[], BaseCheckpointSaver]


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens a saver on the test's database; memory: always the same saver."""
    if request.param == "memory":
        memory = InMemorySaver()
        yield lambda: memory
        return
    opened: list[BaseCheckpointSaver] = []

    def open_one() -> BaseCheckpointSaver:
        if request.param == "postgres":
            saver: BaseCheckpointSaver = PostgresSaver(request.getfixturevalue("pg_url"))
        else:
            saver = SqliteSaver(tmp_path / "long.db")
        opened.append(saver)
        return saver

    yield open_one
    for saver in opened:
        saver.close()


def message_bytes(saver: BaseCheckpointSaver) -> int:
    """Every stored byte of the `messages` channel: its blobs and its pending writes."""
    if isinstance(saver, InMemorySaver):
        blobs = sum(len(b or b"") for k, b in saver.blobs.items() if k[2] == "messages")
        writes = sum(len(w[2]) for ws in saver.writes.values() for w in ws.values()
                     if w[1] == "messages")
        return blobs + writes
    saver.flush()  # type: ignore[attr-defined]
    if isinstance(saver, PostgresSaver):
        rows = query(saver.url, "SELECT (SELECT coalesce(sum(length(value)), 0) FROM "
                     "checkpoint_blobs WHERE channel = 'messages') + (SELECT coalesce("
                     "sum(length(value)), 0) FROM checkpoint_writes WHERE channel = 'messages')")
        return int(rows[0][0])
    with sqlite3.connect(saver.path) as conn:  # type: ignore[attr-defined]
        return sum(
            conn.execute(f"SELECT coalesce(sum(length(value)), 0) FROM {table} "
                         "WHERE channel = 'messages'").fetchone()[0]
            for table in ("blobs", "writes")
        )


def turns(opener: Opener, count: int, fresh: bool) -> tuple[BaseCheckpointSaver, list[int]]:
    """`count` turns; the stored bytes of `messages` after each. `fresh`: a new saver per turn
    (nothing remembered but what it reads), as a thread served by several processes."""
    saver = opener()
    sizes = []
    for turn in range(count):
        if fresh and turn:
            saver = opener()
        chat().compile(checkpointer=saver).invoke(said(turn), CONFIG)
        sizes.append(message_bytes(saver))
    return saver, sizes


@pytest.mark.parametrize("fresh", [False, True], ids=["one_saver", "saver_per_turn"])
def test_a_turn_stores_what_is_new_however_long_the_thread(opener: Opener, fresh: bool) -> None:
    saver, sizes = turns(opener, TURNS, fresh)
    growth = [b - a for a, b in zip(sizes, sizes[1:])]  # noqa: B905
    # A turn adds two messages of ~TEXT bytes, each stored at most a few times (the node's
    # write, the channel's delta); before issue 32 the turn's input checkpoint stored the
    # whole list again: ~TURNS * 2 * TEXT by the end.
    assert max(growth[5:]) < 8 * TEXT, growth
    assert growth[-1] < 2 * growth[5] + TEXT, growth
    values = chat().compile(checkpointer=saver).get_state(CONFIG).values
    assert [m.get("said", m.get("turn")) for m in values["messages"]] == [
        x for turn in range(TURNS) for x in (turn, 2 * turn + 1)
    ]


def test_the_remembered_state_never_hides_another_writers(opener: Opener) -> None:
    """Two savers on one database take turns on a thread, and one deletes and recreates it:
    each read is what the database holds now (the checkpoint id proves a cache hit)."""
    first, second = opener(), opener()
    graphs = [chat().compile(checkpointer=s) for s in (first, second)]
    for turn in range(6):
        graphs[turn % 2].invoke(said(turn), CONFIG)
        for graph in graphs:
            messages = graph.get_state(CONFIG).values["messages"]
            assert [m.get("said") for m in messages[::2]] == list(range(turn + 1))
    first.delete_thread("t")
    graphs[0].invoke(said(100), CONFIG)
    for graph in graphs:
        assert [m.get("said") for m in graph.get_state(CONFIG).values["messages"]] == [100, None]
    history = list(graphs[1].get_state_history(CONFIG))
    assert len(history) == 3  # the input, the input applied, the reply


def test_a_read_of_the_latest_state_hands_back_the_stored_items(opener: Opener) -> None:
    """Reading a thread's latest checkpoint again rebuilds nothing: the same item objects,
    in a new list each time (a caller changing its list changes nothing stored)."""
    saver = opener()
    graph = chat().compile(checkpointer=saver)
    for turn in range(3):
        graph.invoke(said(turn), CONFIG)
    first = saver.get_tuple(thread_config("t"))
    second = saver.get_tuple(thread_config("t"))
    assert first is not None and second is not None
    a = first.checkpoint["channel_values"]["messages"]
    b = second.checkpoint["channel_values"]["messages"]
    assert a is not b and a == b
    assert all(x is y for x, y in zip(a, b, strict=True))
    a.append("changed")
    third = saver.get_tuple(thread_config("t"))
    assert third is not None and "changed" not in third.checkpoint["channel_values"]["messages"]
