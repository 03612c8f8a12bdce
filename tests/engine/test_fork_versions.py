"""A fork must not overwrite what older branches stored: channel versions are unique per thread."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

import pytest

from checkpoints import InMemorySaver, SqliteSaver
from engine import START, StateGraph


class S(TypedDict):
    x: int


@pytest.fixture(params=["memory", "sqlite"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "memory":
        yield InMemorySaver()
    else:
        with SqliteSaver(str(tmp_path / "cp.sqlite")) as sqlite:
            yield sqlite


def test_history_of_the_abandoned_branch_is_unchanged_after_a_fork(saver: Any) -> None:
    g = StateGraph(S)
    g.add_node("a", lambda s: {"x": s["x"] + 1})
    g.add_node("b", lambda s: {"x": s["x"] * 10})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    app = g.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "1"}}
    app.invoke({"x": 1}, cfg)
    after_a = next(h for h in app.get_state_history(cfg) if h.next == ("b",))
    app.invoke(None, app.update_state(after_a.config, {"x": 50}, as_node="a"))
    history = [(h.metadata["source"], h.metadata["step"], h.values.get("x"))
               for h in app.get_state_history(cfg)]
    assert history == [
        ("loop", 3, 500), ("update", 2, 50), ("loop", 2, 20), ("loop", 1, 2), ("loop", 0, 1),
        ("input", -1, None),
    ]
