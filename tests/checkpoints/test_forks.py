"""Time travel keeps a thread's history readable (issue 16), on every back end, as LangGraph.

The issue's program: `first -> inner(a -> b) -> last`, each node returning `trail + [x]`; fork
from a checkpoint of the history with `update_state`, run on from it, read the whole history
back. Before the fix a fork stored writes referring to the other branch's list (identical item
objects: small ints are shared), and `get_state_history` raised `LookupError` for good.

Every test runs the program on LangGraph 1.2.22's `InMemorySaver`, graphrun's `InMemorySaver`
and `SqliteSaver` with and without storage shortcuts, and a fresh `SqliteSaver` on the same
file (`Reopen`), comparing every checkpoint of every thread after every operation
(`differential.Worlds`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .differential import (
    Copy,
    Delete,
    Fork,
    Goto,
    Invoke,
    Node,
    Prune,
    Reopen,
    Resume,
    Spec,
    Stage,
    Update,
    run_program,
)


def issue_spec(labels: tuple[object, ...], ask: bool = False) -> Spec:
    first, a, b, last = labels
    inner = (
        Stage("node", (Node("a", "extend", a),)),
        Stage("node", (Node("b", "ask" if ask else "extend", b),)),
    )
    return Spec((
        Stage("node", (Node("first", "extend", first),)),
        Stage("subgraph", (Node("inner", "", None),), inner=inner),
        Stage("node", (Node("last", "extend", last),)),
    ))


LABELS = {"ints": (1, 2, 3, 4), "strings": ("first", "a", "b", "last")}


@pytest.mark.parametrize("labels", sorted(LABELS))
@pytest.mark.parametrize("back", range(5))
def test_fork_with_update_state_then_run_on(tmp_path: Path, labels: str, back: int) -> None:
    """The issue's steps, forking from each checkpoint of the history in turn."""
    run_program(issue_spec(LABELS[labels]), [
        Invoke("t0", {"trail": []}),
        Fork("t0", back, values={"text": "u"}),
        Reopen(),
        Fork("t0", back + 2, how="replay"),
    ], tmp_path)


@pytest.mark.parametrize("as_node", [None, "first", "inner", "last"])
def test_update_state_as_node_on_an_old_checkpoint(tmp_path: Path, as_node: str | None) -> None:
    run_program(issue_spec(LABELS["ints"]), [
        Invoke("t0", {"trail": [0]}),
        Update("t0", 2, {"trail": [7, 8]}, as_node=as_node),
        Update("t0", 3, {"items": [5]}, as_node=as_node),
        Fork("t0", 0),
        Fork("t0", 4, values={"trail": [1]}, as_node=as_node),
    ], tmp_path)


@pytest.mark.parametrize("back", range(4))
def test_fork_mid_subgraph_with_pending_writes(tmp_path: Path, back: int) -> None:
    """`b` inside the subgraph interrupts: the parent's checkpoint has the subgraph task
    pending with its interrupt; fork from there and from around it, resume each branch."""
    run_program(issue_spec(LABELS["ints"], ask=True), [
        Invoke("t0", {"trail": []}),
        Fork("t0", back, values={"text": "u"}),
        Resume("t0", 9),
        Fork("t0", back + 1),
        Resume("t0", 3),
        Reopen(),
        Update("t0", 1, {"trail": [2]}),
    ], tmp_path)


@pytest.mark.parametrize("goto", ["first", "last", "inner"])
def test_command_goto_after_a_fork(tmp_path: Path, goto: str) -> None:
    run_program(issue_spec(LABELS["ints"]), [
        Invoke("t0", {"trail": [1]}),
        Fork("t0", 2, values={"trail": [2, 3]}),
        Goto("t0", goto),
        Fork("t0", 6, values={"items": [4]}, as_node="first"),
        Goto("t0", goto, durability="async"),
        Reopen(),
        Goto("t0", goto),
    ], tmp_path)


def test_copy_and_prune_a_thread_with_forks(tmp_path: Path) -> None:
    run_program(issue_spec(LABELS["ints"]), [
        Invoke("t0", {"trail": []}),
        Fork("t0", 2, values={"text": "u"}),
        Copy("t0", "t1"),
        Fork("t1", 3, values={"trail": [4]}, durability="async"),
        Prune(("t0",), keep_last=2),
        Fork("t0", 1),
        Reopen(),
        Copy("t1", "t2"),
        Delete("t1"),
        Fork("t2", 4),
        Prune(("t2",), keep_last=1),
        Invoke("t2", {"trail": [5]}),
        Reopen(),
    ], tmp_path)


@pytest.mark.parametrize("action", ["mutate_set", "mutate_append", "mutate_pop", "mutate_silent"])
def test_a_list_changed_in_place_reads_back_as_langgraph_saved_it(
    tmp_path: Path, action: str
) -> None:
    """A node edits the state's own list and returns it (or not): every checkpoint reads back
    what was saved at its step. Found while reading `_deltas` for issue 16: a replaced item was
    lost, as the delta compared items with the stored (since changed) object itself."""
    spec = Spec((
        Stage("node", (Node("first", "extend", "a"),)),
        Stage("node", (Node("edit", action, "z"),)),
        Stage("node", (Node("last", "extend", "b"),)),
        Stage("node", (Node("copy", "take_items", "c"),)),
    ))
    run_program(spec, [
        Invoke("t0", {"trail": ["s", "t"], "items": [1]}),
        Fork("t0", 2, values={"trail": ["u"]}),
        Invoke("t0", {"items": [2]}, durability="async"),
        Reopen(),
        Fork("t0", 3),
    ], tmp_path)
