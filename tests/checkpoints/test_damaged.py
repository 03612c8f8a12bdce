"""A record damaged outside the saver (issue 16): the error names the thread and checkpoint, and
the rest of the history still reads.

The policy: `get_tuple` (and so `get_state`) of a damaged checkpoint raises
`DamagedCheckpointError`; `list` (and so `get_state_history`) leaves it out and logs the same
error. The files here are real SQLite files, edited with the sqlite3 module as a person would.
"""

from __future__ import annotations

import logging
import operator
import sqlite3
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from checkpoints import DamagedCheckpointError, InMemorySaver, SqliteSaver
from checkpoints.base import thread_config
from engine import END, START, StateGraph


class State(TypedDict):
    items: Annotated[list, operator.add]
    n: int


def graph(saver: Any) -> Any:
    def add(state: State) -> dict:
        return {"items": [f"item {state['n']}"], "n": state["n"] + 1}

    builder = StateGraph(State)
    builder.add_node("add", add)
    builder.add_edge(START, "add")
    builder.add_conditional_edges("add", lambda s: END if s["n"] >= 6 else "add")
    return builder.compile(checkpointer=saver)


CONFIG = {"configurable": {"thread_id": "t"}}


def written(path: Path) -> list[Any]:
    """Run the graph into a file; the history's configs and values, newest first."""
    with SqliteSaver(path) as saver:
        g = graph(saver)
        g.invoke({"items": [], "n": 0}, CONFIG)
        return [(s.config, s.values) for s in g.get_state_history(CONFIG)]


def edit(path: Path, sql: str, *params: Any) -> int:
    with sqlite3.connect(path) as conn:
        changed = conn.execute(sql, params).rowcount
    conn.close()
    return changed


def checkpoint_id(config: dict[str, Any]) -> str:
    return config["configurable"]["checkpoint_id"]


@pytest.mark.parametrize("column", ["checkpoint", "metadata"])
def test_a_damaged_checkpoint_row_is_named_and_left_out_of_the_history(
    tmp_path: Path, column: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "damaged.db"
    history = written(path)
    victim = history[3][0]
    assert edit(path, f"UPDATE checkpoints SET {column} = ? WHERE checkpoint_id = ?",
                b"\xc1\xc1 not msgpack", checkpoint_id(victim)) == 1

    with SqliteSaver(path) as saver, caplog.at_level(logging.ERROR, "checkpoints"):
        g = graph(saver)
        read = [(s.config, s.values) for s in g.get_state_history(CONFIG)]
        assert read == history[:3] + history[4:]
        assert f"checkpoint {checkpoint_id(victim)} of thread t cannot be read" in caplog.text
        with pytest.raises(DamagedCheckpointError) as raised:
            saver.get_tuple(victim)
        assert (raised.value.thread_id, raised.value.checkpoint_id) == ("t", checkpoint_id(victim))
        assert g.get_state(CONFIG).values == history[0][1]  # the latest is intact


def test_a_damaged_value_leaves_out_only_the_checkpoints_that_read_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The `n` value of one step is garbage: that checkpoint fails, and the next one (which
    holds a newer `n`) still reads."""
    path = tmp_path / "damaged.db"
    history = written(path)
    with SqliteSaver(path) as saver:
        found = saver.get_tuple(history[2][0])
        assert found is not None
        versions = found.checkpoint["channel_versions"]
    assert edit(path, "UPDATE blobs SET value = ? WHERE channel = 'n' AND version = ?",
                b"\xc1", versions["n"]) == 1

    with SqliteSaver(path) as saver, caplog.at_level(logging.ERROR, "checkpoints"):
        read = [(s.config, s.values) for s in graph(saver).get_state_history(CONFIG)]
        damaged = [c for c, _ in history if c not in [r for r, _ in read]]
        assert damaged == [history[2][0]]
        assert read == history[:2] + history[3:]
        assert caplog.text.count("cannot be read") == 1


def test_a_deleted_delta_base_is_damage_not_an_empty_channel(tmp_path: Path) -> None:
    """Every later `items` is a delta on the first non-empty one (issue 32: the input's empty
    list is no base): deleting that row by hand makes them unreadable, named, instead of
    silently losing the channel."""
    path = tmp_path / "damaged.db"
    history = written(path)
    assert edit(path, "DELETE FROM blobs WHERE channel = 'items' AND version = (SELECT "
                "MIN(version) FROM blobs WHERE channel = 'items' AND value != x'90')") == 1

    with SqliteSaver(path) as saver:
        with pytest.raises(DamagedCheckpointError, match="of thread t cannot be read"):
            saver.get_tuple(thread_config("t"))
        read = [s.config for s in graph(saver).get_state_history(CONFIG)]
        # Only the checkpoints holding no item (the input's) still read.
        assert read == [c for c, values in history if not values.get("items")]


def test_memory_saver_same_policy(caplog: pytest.LogCaptureFixture) -> None:
    saver = InMemorySaver()
    g = graph(saver)
    g.invoke({"items": [], "n": 0}, CONFIG)
    history = [s.config for s in g.get_state_history(CONFIG)]
    key = next(k for k in saver.blobs if k[2] == "n")
    saver.blobs[key] = b"\xc1"
    with caplog.at_level(logging.ERROR, "checkpoints"):
        read = [s.config for s in g.get_state_history(CONFIG)]
    assert len(read) == len(history) - 1
    assert "of thread t cannot be read" in caplog.text
