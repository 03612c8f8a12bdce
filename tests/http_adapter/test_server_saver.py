"""The server's saver stores a subgraph checkpoint's parent task in its metadata, as the Agent
Server does (issue 18); root checkpoints stay as the library saver stores them."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from engine import START, StateGraph, interrupt
from http_adapter.agent_server.saver import server_saver


class State(TypedDict):
    log: Annotated[list, operator.add]


def _nested(saver: Any) -> Any:
    inner = StateGraph(State)
    inner.add_node("ask", lambda s: {"log": [interrupt("ok?")]})
    inner.add_edge(START, "ask")
    outer = StateGraph(State)
    outer.add_node("outer", inner.compile())
    outer.add_edge(START, "outer")
    return outer.compile(checkpointer=saver)


def _saver(where: str, tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    if where == "postgres":  # the cluster back end's saver (issue 19)
        return server_saver(request.getfixturevalue("pg_url"), pool_size=3)
    return server_saver(tmp_path / "db.sqlite" if where == "sqlite" else None)


@pytest.mark.parametrize("where", ["memory", "sqlite", "postgres"])
def test_subgraph_checkpoint_metadata_names_its_task(
    tmp_path: Path, where: str, request: pytest.FixtureRequest
) -> None:
    saver = _saver(where, tmp_path, request)
    request.addfinalizer(getattr(saver, "close", lambda: None))
    graph = _nested(saver)
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"log": []}, config)
    root = graph.get_state(config, subgraphs=True)
    sub = root.tasks[0].state
    meta = sub.metadata
    ns = sub.config["configurable"]["checkpoint_ns"]
    assert meta["langgraph_node"] == "outer"
    assert meta["langgraph_checkpoint_ns"] == meta["checkpoint_ns"] == ns
    assert meta["langgraph_step"] == 1
    assert list(meta["langgraph_path"]) == ["__pregel_pull", "outer"]
    assert list(meta["langgraph_triggers"]) == ["branch:to:outer"]
    assert meta["checkpoint_map"] == {"": root.config["configurable"]["checkpoint_id"]}
    assert meta["thread_id"] == "t"
    assert not any(k.startswith("langgraph_") or k == "checkpoint_map" for k in root.metadata)


def test_the_postgres_saver_reports_its_read_pool(pg_url: str) -> None:
    """What /metrics shows as `graphrun_db_pool_*{pool="checkpoints"}` (issue 19 §10)."""
    saver = server_saver(pg_url, pool_size=3, prepared_statements=False)
    try:
        graph = _nested(saver)
        graph.invoke({"log": []}, {"configurable": {"thread_id": "t"}})
        stats = saver.pool_stats()
    finally:
        saver.close()
    assert stats["max"] == 3 and 1 <= stats["size"] <= 3 and stats["in_use"] == 0
