"""LangGraph's ways to open a SQLite saver work under graphrun's names (issue 27): a program
that wrote `SqliteSaver(sqlite3.connect(path))`, `SqliteSaver.from_conn_string(path)` or
`AsyncSqliteSaver.from_conn_string(path)` ports by changing its imports only."""

from __future__ import annotations

import asyncio
import operator
import sqlite3
from pathlib import Path
from typing import Annotated, TypedDict

import pytest

from checkpoints import AsyncSqliteSaver, SqliteSaver
from engine import START, StateGraph


class State(TypedDict):
    log: Annotated[list, operator.add]


def _graph(saver: SqliteSaver):
    builder = StateGraph(State)
    builder.add_node("step", lambda state: {"log": ["ran"]})
    builder.add_edge(START, "step")
    return builder.compile(checkpointer=saver)


CONFIG = {"configurable": {"thread_id": "t"}}


def test_a_sqlite3_connection_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "graph.sqlite"
    conn = sqlite3.connect(path, check_same_thread=False)
    with SqliteSaver(conn) as saver:
        assert saver.path == str(path)
        _graph(saver).invoke({"log": []}, CONFIG)
    with SqliteSaver(path) as again:  # the same file, opened by path
        assert _graph(again).get_state(CONFIG).values == {"log": ["ran"]}
    conn.close()


def test_an_in_memory_connection_is_an_in_memory_saver() -> None:
    with SqliteSaver(sqlite3.connect(":memory:")) as saver:
        assert saver.path == ":memory:"
        graph = _graph(saver)
        graph.invoke({"log": []}, CONFIG)
        graph.invoke({"log": []}, CONFIG)
        assert graph.get_state(CONFIG).values == {"log": ["ran", "ran"]}


def test_from_conn_string_opens_and_closes(tmp_path: Path) -> None:
    path = str(tmp_path / "cm.sqlite")
    with SqliteSaver.from_conn_string(path) as saver:
        _graph(saver).invoke({"log": []}, CONFIG)
    with pytest.raises(RuntimeError, match="closed"):  # the block closed it
        saver.get_tuple(CONFIG)
    with SqliteSaver.from_conn_string(path) as saver:
        assert len(list(saver.list(CONFIG))) == 3


def test_async_from_conn_string(tmp_path: Path) -> None:
    path = str(tmp_path / "async.sqlite")

    async def main() -> list[str]:
        async with AsyncSqliteSaver.from_conn_string(path) as saver:
            graph = _graph(saver)
            await graph.ainvoke({"log": []}, CONFIG)
            return (await graph.aget_state(CONFIG)).values["log"]

    assert asyncio.run(main()) == ["ran"]
    with SqliteSaver(path) as saver:
        assert saver.get_tuple(CONFIG) is not None
