"""`get_delta_channel_history`: a channel's writes along a checkpoint's ancestry, answered by
every saver from the public protocol as LangGraph 1.2's savers answer it (issue 27)."""

from __future__ import annotations

import asyncio
import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from checkpoints import InMemorySaver
from checkpoints.sqlite import SqliteSaver


class S(TypedDict):
    log: Annotated[list, operator.add]
    last: str


def _history(lib: str, saver: Any) -> list[Any]:
    """Three turns of a two-node graph, then each checkpoint's history of `log` and `last`."""
    if lib == "lg":
        from langgraph.graph import START, StateGraph
    else:
        from engine import START, StateGraph
    b = StateGraph(S).add_node("a", lambda s: {"log": ["a"], "last": "a"})
    b = b.add_node("b", lambda s: {"log": ["b"]}).add_edge(START, "a").add_edge("a", "b")
    g = b.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    for turn in range(3):
        g.invoke({"log": [turn]}, config)
    out = []
    for snapshot in g.get_state_history(config):
        found = saver.get_delta_channel_history(config=snapshot.config, channels=["log", "last"])
        again = asyncio.run(
            saver.aget_delta_channel_history(config=snapshot.config, channels=["log", "last"])
        )
        assert found == again
        out.append({
            ch: ([(w[1], w[2]) for w in entry["writes"]], entry.get("seed", "<none>"))
            for ch, entry in found.items()
        })
    assert saver.get_delta_channel_history(config=config, channels=[]) == {}
    return out


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_channel_history_matches_langgraph(backend: str, tmp_path: Path) -> None:
    from langgraph.checkpoint.memory import InMemorySaver as LangGraphSaver

    expected = _history("lg", LangGraphSaver())
    saver = InMemorySaver() if backend == "memory" else SqliteSaver(str(tmp_path / "c.db"))
    try:
        assert _history("gr", saver) == expected
    finally:
        saver.close()
