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


@pytest.mark.parametrize("where", ["memory", "sqlite"])
def test_subgraph_checkpoint_metadata_names_its_task(tmp_path: Path, where: str) -> None:
    saver = server_saver(tmp_path / "db.sqlite" if where == "sqlite" else None)
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
