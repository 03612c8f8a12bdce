"""Managed values, Overwrite and bulk_update_state (issue 17) beyond the parity transcripts:
state classes other than TypedDict, what a router sees, and what is stored."""

from __future__ import annotations

import dataclasses
import operator
from typing import Annotated, Any, TypedDict

import pytest

from checkpoints import InMemorySaver
from engine import END, START, InvalidUpdateError, Overwrite, StateGraph, StateUpdate
from engine.managed import IsLastStep, RemainingSteps


@dataclasses.dataclass
class DataState:
    log: Annotated[list, operator.add] = dataclasses.field(default_factory=list)
    left: RemainingSteps = 0
    last: IsLastStep = False


def test_dataclass_state_reads_managed_values_which_are_never_stored() -> None:
    g = StateGraph(DataState)
    g.add_node("a", lambda s: {"log": [(s.left, s.last)]})
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: END if s.last else "a")
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "d"}, "recursion_limit": 4}
    out = g.compile(checkpointer=saver).invoke(DataState(), config)
    assert out == {"log": [(3, False), (2, False), (1, True)]}
    for saved in saver.list(config):
        assert not {"left", "last"} & set(saved.checkpoint["channel_values"])


def test_router_sees_an_overwrite_its_node_wrote() -> None:
    class S(TypedDict):
        log: Annotated[list, operator.add]

    seen: list[Any] = []
    g = StateGraph(S)
    g.add_node("a", lambda s: {"log": Overwrite(["only"])})
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: seen.append(list(s["log"])) or END)
    assert g.compile().invoke({"log": ["x", "y"]}) == {"log": ["only"]}
    assert seen == [["only"]]


def test_bulk_update_applies_one_checkpoint_per_super_step() -> None:
    class S(TypedDict):
        log: Annotated[list, operator.add]

    g = StateGraph(S)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    app = g.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "bulk"}}
    app.invoke({"log": []}, config)
    before = len(list(app.get_state_history(config)))
    app.bulk_update_state(config, [
        [StateUpdate({"log": ["x"]}, "a"), StateUpdate({"log": ["y"]}, "b")],
        [StateUpdate({"log": Overwrite(["z"])}, "b")],
    ])
    assert len(list(app.get_state_history(config))) == before + 2
    assert app.get_state(config).values == {"log": ["z"]}
    with pytest.raises(InvalidUpdateError, match="as_node is required"):
        app.bulk_update_state(config, [[StateUpdate({}), StateUpdate({}, "a")]])
    with pytest.raises(ValueError, match="No supersteps provided"):
        app.bulk_update_state(config, [])
