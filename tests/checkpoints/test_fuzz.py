"""Differential fuzzing of the checkpoint savers (issue 16).

Hypothesis draws a graph from a small vocabulary (`differential.ACTIONS`: reducer and
last-value list, dict and str channels; nodes that extend, rewrite, shrink or change lists in
place; parallel branches, `Send`, subgraphs, interrupts) and a sequence of
operations (invoke, resume, `update_state` with and without `as_node`, fork from an earlier
checkpoint, `Command(goto)`, copy, prune, delete, reopen the SQLite files). After every
operation every checkpoint of every thread must read back alike on LangGraph 1.2.22 and on
graphrun's savers with and without storage shortcuts (`differential.Worlds`), and every delta
must build only on what its checkpoint's ancestry holds.

Profiles (`tests/fuzz_profiles.py`): "ci" by default, "long" with GRAPHRUN_FUZZ_PROFILE=long.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz_profiles import fuzz_settings, time_limit

from .differential import (
    ACTIONS,
    MUTATING,
    THREADS,
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
    node_names,
    run_program,
)

# Small ints and one-letter strings are shared objects in CPython: the identity checks of the
# storage shortcuts see them as "the same item" across lists and branches (how issue 16's bug
# hid). The longer labels are distinct objects once they went through a saver.
LABELS = st.sampled_from([0, 1, 2, 7, "a", "b", "q", "xy", 300, 1000.5])
REDUCING = sorted({"add", "add_two", "readd_tail", "add_trail", "tag", "note"})
ANY_ACTION = sorted(ACTIONS)
CALM = sorted(set(ACTIONS) - MUTATING - {"ask"})


@st.composite
def nodes(draw: Any, names: Any, actions: list[str]) -> Node:
    return Node(f"n{next(names)}", draw(st.sampled_from(actions)), draw(LABELS))


@st.composite
def stages(draw: Any, names: Any, depth: int = 0) -> Stage:
    kinds = ["node", "node", "parallel", "send"] + (["subgraph"] if depth == 0 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "node":
        return Stage("node", (draw(nodes(names, ANY_ACTION)),))
    if kind == "parallel":  # tasks of one step: reducer writes only (no conflicts, no races)
        count = draw(st.integers(2, 3))
        return Stage("parallel", tuple(draw(nodes(names, REDUCING)) for _ in range(count)))
    if kind == "send":
        router = draw(nodes(names, CALM))
        fan = tuple(draw(st.lists(LABELS, min_size=1, max_size=3)))
        return Stage("send", (router, Node(f"n{next(names)}", "worker", draw(LABELS))), fan)
    inner = tuple(draw(st.lists(stages(names, depth + 1), min_size=1, max_size=3)))
    return Stage("subgraph", (Node(f"n{next(names)}", "", None),), inner=inner)


@st.composite
def specs(draw: Any) -> Spec:
    names = itertools.count()
    # No static interrupts (`interrupt_before`): new input on a thread paused by one leaves
    # the engines with different next tasks (LangGraph keeps `branch:to:` of the paused node;
    # issue 17, left open; on `Send` targets they now agree); the dynamic `interrupt()` is in
    # the vocabulary ("ask").
    spec = Spec(tuple(draw(st.lists(stages(names), min_size=1, max_size=4))))
    return spec


THREAD = st.sampled_from([THREADS[0], THREADS[0], THREADS[1], THREADS[2]])
DURABILITY = st.sampled_from(["sync", "sync", "async", "exit"])
VALUES = st.fixed_dictionaries({}, optional={
    "items": st.lists(LABELS, max_size=3),
    "trail": st.lists(LABELS, max_size=3),
    "tags": st.dictionaries(st.sampled_from(["k", "l"]), LABELS, max_size=2),
    "text": st.sampled_from(["", "t", "tt"]),
})

INPUT = VALUES  # `{}` too: invoke returns None without a `values` chunk, as LangGraph (issue 17)


def operations(spec: Spec) -> Any:
    # `update_state` without `as_node` credits the last node that ran; with parallel tasks or
    # `Send` the engines credit different ones (outside issue 16): name one there.
    linear = all(stage.kind in ("node", "subgraph") for stage in spec.stages)
    as_node = st.sampled_from([None, *node_names(spec)] if linear else node_names(spec))
    back = st.integers(0, 8)
    return st.one_of(
        st.builds(Invoke, THREAD, INPUT, DURABILITY),
        st.builds(Resume, THREAD, LABELS, DURABILITY),
        st.builds(Update, THREAD, back, VALUES, as_node),
        st.builds(
            Fork, THREAD, back, st.sampled_from(["replay", "input"]),
            st.none() | VALUES, as_node, DURABILITY,
        ),
        st.builds(Goto, THREAD, st.sampled_from(node_names(spec)), DURABILITY),
        st.builds(Copy, THREAD, THREAD).filter(lambda op: op.source != op.target),
        st.builds(
            Prune, st.lists(THREAD, min_size=1, max_size=2, unique=True).map(tuple),
            st.integers(1, 3), st.sampled_from(["keep_latest", "keep_latest", "delete"]),
        ),
        st.builds(Delete, THREAD),
        st.just(Reopen()),
    )


@st.composite
def programs(draw: Any, min_ops: int = 2, max_ops: int = 7) -> tuple[Spec, list[Any]]:
    spec = draw(specs())
    first = draw(st.builds(Invoke, st.just(THREADS[0]), INPUT, DURABILITY))
    rest = draw(st.lists(operations(spec), min_size=min_ops - 1, max_size=max_ops - 1))
    return spec, [first, *rest]


def run(program: tuple[Spec, list[Any]]) -> None:
    spec, ops = program
    with tempfile.TemporaryDirectory() as directory:
        run_program(spec, ops, Path(directory))


@time_limit
@fuzz_settings(ci_examples=90)
@given(programs())
def test_every_back_end_reads_back_the_same_history(program: tuple[Spec, list[Any]]) -> None:
    run(program)


@time_limit
@fuzz_settings(ci_examples=45)
@given(programs(min_ops=5, max_ops=10))
def test_long_sequences_of_forks_copies_and_prunes(program: tuple[Spec, list[Any]]) -> None:
    run(program)


@st.composite
def long_threads(draw: Any) -> tuple[Spec, list[Any]]:
    """Issue 32's shape: one thread invoked turn after turn (each turn adds to the lists, so
    every version is a delta on the last), with forks, updates, copies, prunes, deletes and
    reopened files dropped in between; the other threads see a few turns too."""
    spec = draw(specs())
    turns = draw(st.integers(8, 14))
    ops: list[Any] = [
        Invoke(THREADS[0], draw(st.fixed_dictionaries({"items": st.lists(LABELS, max_size=2)})),
               draw(DURABILITY))
        for _ in range(turns)
    ]
    for op in draw(st.lists(operations(spec), min_size=1, max_size=3)):
        ops.insert(draw(st.integers(1, len(ops))), op)
    return spec, ops


@time_limit
@fuzz_settings(ci_examples=3, long_examples=300)
@given(long_threads())
def test_long_threads_with_forks_copies_and_prunes_in_between(
    program: tuple[Spec, list[Any]],
) -> None:
    run(program)
