"""Stream modes and output shapes (SPEC §1 "Stream output shapes"; lg_facts §1, §9, §10, §11).

Transcripts are compared after `_normalize` (ids -> `<id:N>`, timestamps -> `<ts>`), both
against literal expectations and syrupy snapshots (`--snapshot-update` to rewrite them).
"""

from __future__ import annotations

import asyncio
import operator
import threading
import time
from typing import Annotated, Any, TypedDict

import pytest
from ._normalize import normalize

from checkpoints import InMemorySaver
from engine import END, START, StateGraph, get_stream_writer

ALL_MODES = ["values", "updates", "debug", "tasks", "checkpoints"]


class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def a(s: S) -> dict:
    return {"x": s["x"] + 1, "log": ["a"]}


def b(s: S) -> dict:
    return {"x": s["x"] * 10, "log": ["b"]}


async def a_async(s: S) -> dict:
    await asyncio.sleep(0)
    return {"x": s["x"] + 1, "log": ["a"]}


async def b_async(s: S) -> dict:
    await asyncio.sleep(0)
    return {"x": s["x"] * 10, "log": ["b"]}


def chain(checkpointer: Any = None, use_async: bool = False) -> Any:
    g = StateGraph(S)
    g.add_node("a", a_async if use_async else a)
    g.add_node("b", b_async if use_async else b)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", END)
    return g.compile(checkpointer=checkpointer)


CFG = {"configurable": {"thread_id": "t1"}}


def _ckpt(own: str, parent: str | None, values: dict, source: str, step: int,
          tasks: list[tuple[str, str]]) -> dict:
    def conf(cid: str) -> dict:
        return {"configurable": {"checkpoint_ns": "", "thread_id": "t1", "checkpoint_id": cid}}

    return {
        "config": conf(own),
        "parent_config": conf(parent) if parent else None,
        "values": values,
        "metadata": {"source": source, "step": step, "parents": {}},
        "next": [name for _, name in tasks],
        "tasks": [{"id": tid, "name": name, "interrupts": (), "state": None} for tid, name in tasks],
    }


def _debug(step: int, kind: str, payload: dict) -> tuple:
    return ("debug", {"step": step, "timestamp": "<ts>", "type": kind, "payload": payload})


# Ids by first appearance: <id:0> input ckpt, <id:1> __start__ task, <id:2> step-0 ckpt,
# <id:3> task a, <id:4> step-1 ckpt, <id:5> task b, <id:6> step-2 ckpt.
_C = [
    _ckpt("<id:0>", None, {"log": []}, "input", -1, [("<id:1>", "__start__")]),
    _ckpt("<id:2>", "<id:0>", {"x": 1, "log": []}, "loop", 0, [("<id:3>", "a")]),
    _ckpt("<id:4>", "<id:2>", {"x": 2, "log": ["a"]}, "loop", 1, [("<id:5>", "b")]),
    _ckpt("<id:6>", "<id:4>", {"x": 20, "log": ["a", "b"]}, "loop", 2, []),
]
_TA = {"id": "<id:3>", "name": "a", "input": {"x": 1, "log": []}, "triggers": ("branch:to:a",)}
_RA = {"id": "<id:3>", "name": "a", "error": None, "result": {"x": 2, "log": ["a"]}, "interrupts": []}
_TB = {"id": "<id:5>", "name": "b", "input": {"x": 2, "log": ["a"]}, "triggers": ("branch:to:b",)}
_RB = {"id": "<id:5>", "name": "b", "error": None, "result": {"x": 20, "log": ["b"]}, "interrupts": []}

CHAIN_TRANSCRIPT = [  # lg_facts §1, ids normalized
    ("checkpoints", _C[0]),
    _debug(-1, "checkpoint", _C[0]),
    ("values", {"x": 1, "log": []}),
    ("checkpoints", _C[1]),
    _debug(0, "checkpoint", _C[1]),
    ("tasks", _TA),
    _debug(1, "task", _TA),
    ("updates", {"a": {"x": 2, "log": ["a"]}}),
    ("tasks", _RA),
    _debug(1, "task_result", _RA),
    ("values", {"x": 2, "log": ["a"]}),
    ("checkpoints", _C[2]),
    _debug(1, "checkpoint", _C[2]),
    ("tasks", _TB),
    _debug(2, "task", _TB),
    ("updates", {"b": {"x": 20, "log": ["b"]}}),
    ("tasks", _RB),
    _debug(2, "task_result", _RB),
    ("values", {"x": 20, "log": ["a", "b"]}),
    ("checkpoints", _C[3]),
    _debug(2, "checkpoint", _C[3]),
]


# -- the 2-node chain in every mode ------------------------------------------------------------


def test_chain_transcript_all_modes(snapshot: Any) -> None:
    items = normalize(list(chain(InMemorySaver()).stream({"x": 1}, CFG, stream_mode=ALL_MODES)))
    assert items == CHAIN_TRANSCRIPT
    assert items == snapshot


@pytest.mark.anyio
@pytest.mark.parametrize("use_async", [False, True], ids=["sync-nodes", "async-nodes"])
async def test_chain_transcript_all_modes_async(use_async: bool) -> None:
    app = chain(InMemorySaver(), use_async=use_async)
    items = [i async for i in app.astream({"x": 1}, CFG, stream_mode=ALL_MODES)]
    assert normalize(items) == CHAIN_TRANSCRIPT


def test_chain_transcript_sync_api_over_async_nodes() -> None:
    items = list(chain(InMemorySaver(), use_async=True).stream({"x": 1}, CFG, stream_mode=ALL_MODES))
    assert normalize(items) == CHAIN_TRANSCRIPT


def test_chain_ids_are_consistent() -> None:
    items = list(chain(InMemorySaver()).stream({"x": 1}, CFG, stream_mode=ALL_MODES))
    ckpts = [c for m, c in items if m == "checkpoints"]
    debug_ckpts = [c["payload"] for m, c in items if m == "debug" and c["type"] == "checkpoint"]
    assert debug_ckpts == ckpts
    for previous, current in zip(ckpts, ckpts[1:]):
        assert current["parent_config"] == previous["config"]
        # the task announced by a checkpoint is the one the tasks stream then runs
    starts = [c for m, c in items if m == "tasks" and "input" in c]
    assert [c["tasks"][0]["id"] for c in ckpts[1:3]] == [t["id"] for t in starts]
    ids = [c["config"]["configurable"]["checkpoint_id"] for c in ckpts]
    assert ids == sorted(ids)  # time-ordered


def test_chain_snapshot_checkpoints_match_the_saver() -> None:
    saver = InMemorySaver()
    app = chain(saver)
    items = list(app.stream({"x": 1}, CFG, stream_mode="checkpoints"))
    history = list(app.get_state_history(CFG))[::-1]
    assert [c["config"] for c in items] == [h.config for h in history]
    assert [c["metadata"] for c in items] == [h.metadata for h in history]
    assert [c["values"] for c in items] == [h.values for h in history]


def test_chain_without_checkpointer(snapshot: Any) -> None:
    items = normalize(list(chain().stream({"x": 1}, stream_mode=ALL_MODES)))
    # no checkpoint events; debug only task / task_result (lg_facts §1)
    ta, ra = {**_TA, "id": "<id:0>"}, {**_RA, "id": "<id:0>"}
    tb, rb = {**_TB, "id": "<id:1>"}, {**_RB, "id": "<id:1>"}
    assert items == [
        ("values", {"x": 1, "log": []}),
        ("tasks", ta),
        _debug(1, "task", ta),
        ("updates", {"a": {"x": 2, "log": ["a"]}}),
        ("tasks", ra),
        _debug(1, "task_result", ra),
        ("values", {"x": 2, "log": ["a"]}),
        ("tasks", tb),
        _debug(2, "task", tb),
        ("updates", {"b": {"x": 20, "log": ["b"]}}),
        ("tasks", rb),
        _debug(2, "task_result", rb),
        ("values", {"x": 20, "log": ["a", "b"]}),
    ]
    assert items == snapshot


def test_checkpoints_mode_without_checkpointer_yields_nothing() -> None:
    assert list(chain().stream({"x": 1}, stream_mode="checkpoints")) == []


def test_default_stream_mode_is_updates() -> None:
    assert list(chain().stream({"x": 1})) == [
        {"a": {"x": 2, "log": ["a"]}},
        {"b": {"x": 20, "log": ["b"]}},
    ]


def test_values_mode() -> None:
    assert list(chain().stream({"x": 1}, stream_mode="values")) == [
        {"x": 1, "log": []},
        {"x": 2, "log": ["a"]},
        {"x": 20, "log": ["a", "b"]},
    ]


def test_values_mode_skips_steps_that_write_nothing() -> None:
    g = StateGraph(S)
    g.add_node("a", lambda s: None)
    g.add_node("b", lambda s: {"x": 5})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    assert list(g.compile().stream({"x": 1}, stream_mode="values")) == [
        {"x": 1, "log": []},
        {"x": 5, "log": []},
    ]


def test_tasks_mode_alone() -> None:
    items = normalize(list(chain().stream({"x": 1}, stream_mode="tasks")))
    assert [sorted(i) for i in items] == [
        ["id", "input", "name", "triggers"],
        ["error", "id", "interrupts", "name", "result"],
    ] * 2
    assert [i["name"] for i in items] == ["a", "a", "b", "b"]


def test_tasks_mode_reports_a_failing_task() -> None:
    g = StateGraph(S)
    g.add_node("bad", lambda s: 1 / 0)
    g.add_edge(START, "bad")
    items = []
    with pytest.raises(ZeroDivisionError):
        for item in g.compile().stream({"x": 1}, stream_mode="tasks"):
            items.append(item)
    assert items[1]["name"] == "bad"
    assert isinstance(items[1]["error"], ZeroDivisionError)
    assert items[1]["result"] == {}


# -- output shapes -----------------------------------------------------------------------------


def _with_child() -> Any:
    child = StateGraph(S)
    child.add_node("c1", lambda s: {"log": ["c1"]})
    child.add_edge(START, "c1")
    g = StateGraph(S)
    g.add_node("p1", lambda s: {"x": 2})
    g.add_node("child", child.compile())
    g.add_edge(START, "p1")
    g.add_edge("p1", "child")
    return g.compile()


def test_shape_single_mode_no_subgraphs() -> None:
    assert list(_with_child().stream({"x": 1}, stream_mode="updates")) == [
        {"p1": {"x": 2}},
        {"child": {"x": 2, "log": ["c1"]}},
    ]


def test_shape_list_modes_no_subgraphs() -> None:
    assert list(_with_child().stream({"x": 1}, stream_mode=["updates"])) == [
        ("updates", {"p1": {"x": 2}}),
        ("updates", {"child": {"x": 2, "log": ["c1"]}}),
    ]


def test_shape_single_mode_with_subgraphs() -> None:
    items = list(_with_child().stream({"x": 1}, stream_mode="updates", subgraphs=True))
    assert [len(i) for i in items] == [2, 2, 2]
    assert items[0] == ((), {"p1": {"x": 2}})
    assert len(items[1][0]) == 1 and items[1][0][0].startswith("child:")
    assert items[1][1] == {"c1": {"log": ["c1"]}}
    assert items[2] == ((), {"child": {"x": 2, "log": ["c1"]}})


def test_shape_list_modes_with_subgraphs() -> None:
    items = list(_with_child().stream({"x": 1}, stream_mode=["updates", "values"], subgraphs=True))
    assert all(len(i) == 3 for i in items)
    assert normalize(items) == [
        ((), "values", {"x": 1, "log": []}),
        ((), "updates", {"p1": {"x": 2}}),
        ((), "values", {"x": 2, "log": []}),
        (("child:<id:0>",), "values", {"x": 2, "log": []}),
        (("child:<id:0>",), "updates", {"c1": {"log": ["c1"]}}),
        (("child:<id:0>",), "values", {"x": 2, "log": ["c1"]}),
        ((), "updates", {"child": {"x": 2, "log": ["c1"]}}),
        ((), "values", {"x": 2, "log": ["c1"]}),
    ]


def test_duplicate_modes_in_a_list() -> None:
    items = list(chain().stream({"x": 1}, stream_mode=["updates", "updates"]))
    assert items == [
        ("updates", {"a": {"x": 2, "log": ["a"]}}),
        ("updates", {"b": {"x": 20, "log": ["b"]}}),
    ]


@pytest.mark.anyio
async def test_shapes_async() -> None:
    app = _with_child()
    single = [i async for i in app.astream({"x": 1}, stream_mode="updates")]
    listed = [i async for i in app.astream({"x": 1}, stream_mode=["updates"], subgraphs=True)]
    assert single == list(app.stream({"x": 1}, stream_mode="updates"))
    assert normalize(listed) == normalize(
        list(app.stream({"x": 1}, stream_mode=["updates"], subgraphs=True))
    )


# -- subgraph namespaces two levels deep (lg_facts §9) -----------------------------------------


def g1(s: S) -> dict:
    get_stream_writer()({"progress": "g1"})
    return {"log": ["g1"]}


def _three_levels(checkpointer: Any = None) -> Any:
    grand = StateGraph(S)
    grand.add_node("g1", g1)
    grand.add_edge(START, "g1")
    child = StateGraph(S)
    child.add_node("c1", lambda s: {"log": ["c1"]})
    child.add_node("grand", grand.compile())
    child.add_edge(START, "c1")
    child.add_edge("c1", "grand")

    def p1(s: S) -> dict:
        get_stream_writer()("outer")
        return {"log": ["p1"]}

    parent = StateGraph(S)
    parent.add_node("p1", p1)
    parent.add_node("child", child.compile())
    parent.add_edge(START, "p1")
    parent.add_edge("p1", "child")
    return parent.compile(checkpointer=checkpointer)


THREE_LEVELS = [
    ((), "values", {"x": 1, "log": []}),
    ((), "tasks", {"id": "<id:0>", "name": "p1", "input": {"x": 1, "log": []},
                   "triggers": ("branch:to:p1",)}),
    ((), "custom", "outer"),
    ((), "updates", {"p1": {"log": ["p1"]}}),
    ((), "tasks", {"id": "<id:0>", "name": "p1", "error": None, "result": {"log": ["p1"]},
                   "interrupts": []}),
    ((), "values", {"x": 1, "log": ["p1"]}),
    ((), "tasks", {"id": "<id:1>", "name": "child", "input": {"x": 1, "log": ["p1"]},
                   "triggers": ("branch:to:child",)}),
    (("child:<id:1>",), "values", {"x": 1, "log": ["p1"]}),
    (("child:<id:1>",), "tasks", {"id": "<id:2>", "name": "c1", "input": {"x": 1, "log": ["p1"]},
                                  "triggers": ("branch:to:c1",)}),
    (("child:<id:1>",), "updates", {"c1": {"log": ["c1"]}}),
    (("child:<id:1>",), "tasks", {"id": "<id:2>", "name": "c1", "error": None,
                                  "result": {"log": ["c1"]}, "interrupts": []}),
    (("child:<id:1>",), "values", {"x": 1, "log": ["p1", "c1"]}),
    (("child:<id:1>",), "tasks", {"id": "<id:3>", "name": "grand",
                                  "input": {"x": 1, "log": ["p1", "c1"]},
                                  "triggers": ("branch:to:grand",)}),
    (("child:<id:1>", "grand:<id:3>"), "values", {"x": 1, "log": ["p1", "c1"]}),
    (("child:<id:1>", "grand:<id:3>"), "tasks", {"id": "<id:4>", "name": "g1",
                                                 "input": {"x": 1, "log": ["p1", "c1"]},
                                                 "triggers": ("branch:to:g1",)}),
    (("child:<id:1>", "grand:<id:3>"), "custom", {"progress": "g1"}),
    (("child:<id:1>", "grand:<id:3>"), "updates", {"g1": {"log": ["g1"]}}),
    (("child:<id:1>", "grand:<id:3>"), "tasks", {"id": "<id:4>", "name": "g1", "error": None,
                                                 "result": {"log": ["g1"]}, "interrupts": []}),
    (("child:<id:1>", "grand:<id:3>"), "values", {"x": 1, "log": ["p1", "c1", "g1"]}),
    (("child:<id:1>",), "updates", {"grand": {"x": 1, "log": ["p1", "c1", "g1"]}}),
    (("child:<id:1>",), "tasks", {"id": "<id:3>", "name": "grand", "error": None,
                                  "result": {"x": 1, "log": ["p1", "c1", "g1"]},
                                  "interrupts": []}),
    (("child:<id:1>",), "values", {"x": 1, "log": ["p1", "c1", "p1", "c1", "g1"]}),
    ((), "updates", {"child": {"x": 1, "log": ["p1", "c1", "p1", "c1", "g1"]}}),
    ((), "tasks", {"id": "<id:1>", "name": "child", "error": None,
                   "result": {"x": 1, "log": ["p1", "c1", "p1", "c1", "g1"]}, "interrupts": []}),
    ((), "values", {"x": 1, "log": ["p1", "p1", "c1", "p1", "c1", "g1"]}),
]


@pytest.mark.parametrize("checkpointer", [None, InMemorySaver], ids=["no-saver", "saver"])
def test_two_level_namespaces(checkpointer: Any, snapshot: Any) -> None:
    app = _three_levels(checkpointer() if checkpointer else None)
    items = list(app.stream({"x": 1}, CFG, stream_mode=["values", "tasks", "custom", "updates"],
                            subgraphs=True))
    # the namespace's task id is the parent's task id from the tasks stream
    child_task = next(c for ns, m, c in items if m == "tasks" and c["name"] == "child")
    grand_task = next(c for ns, m, c in items if m == "tasks" and c["name"] == "grand")
    namespaces = {ns for ns, _, _ in items}
    assert namespaces == {
        (),
        (f"child:{child_task['id']}",),
        (f"child:{child_task['id']}", f"grand:{grand_task['id']}"),
    }
    assert normalize(items) == THREE_LEVELS
    assert normalize(items) == snapshot


@pytest.mark.anyio
async def test_two_level_namespaces_async() -> None:
    app = _three_levels(InMemorySaver())
    items = [i async for i in app.astream(
        {"x": 1}, CFG, stream_mode=["values", "tasks", "custom", "updates"], subgraphs=True
    )]
    assert normalize(items) == THREE_LEVELS


def test_subgraph_items_hidden_without_subgraphs() -> None:
    app = _three_levels()
    items = list(app.stream({"x": 1}, stream_mode=["values", "tasks", "custom", "updates"]))
    expected = [(m, c) for ns, m, c in THREE_LEVELS if ns == ()]
    assert normalize(items) == expected


def test_custom_from_a_subgraph_is_dropped_unless_subgraphs() -> None:
    app = _three_levels()
    assert list(app.stream({"x": 1}, stream_mode="custom")) == ["outer"]
    items = normalize(list(app.stream({"x": 1}, stream_mode="custom", subgraphs=True)))
    assert items == [((), "outer"), (("child:<id:0>", "grand:<id:1>"), {"progress": "g1"})]


def test_subgraph_checkpoints_in_namespaced_debug() -> None:
    app = _three_levels(InMemorySaver())
    items = list(app.stream({"x": 1}, CFG, stream_mode="checkpoints", subgraphs=True))
    by_ns: dict[tuple, list] = {}
    for ns, chunk in items:
        by_ns.setdefault(ns, []).append(chunk)
    assert len(by_ns) == 3
    for ns, chunks in by_ns.items():
        expected_ns = "|".join(ns)
        assert {c["config"]["configurable"]["checkpoint_ns"] for c in chunks} == {expected_ns}
    root = by_ns[()]
    assert [c["metadata"]["step"] for c in root] == [-1, 0, 1, 2]


# -- custom (lg_facts §11) ---------------------------------------------------------------------


def test_custom_items_pass_through_and_precede_the_update() -> None:
    def n(s: S) -> dict:
        writer = get_stream_writer()
        writer({"progress": "a-1"})
        writer("plain-string")
        writer(("tuple", 1))
        return {"x": 2}

    g = StateGraph(S)
    g.add_node("n", n)
    g.add_edge(START, "n")
    assert list(g.compile().stream({"x": 1}, stream_mode=["custom", "updates"])) == [
        ("custom", {"progress": "a-1"}),
        ("custom", "plain-string"),
        ("custom", ("tuple", 1)),
        ("updates", {"n": {"x": 2}}),
    ]


def test_custom_items_before_a_failure_are_delivered() -> None:
    def n(s: S) -> dict:
        get_stream_writer()("before")
        raise RuntimeError("after")

    g = StateGraph(S)
    g.add_node("n", n)
    g.add_edge(START, "n")
    items = []
    with pytest.raises(RuntimeError, match="after"):
        for item in g.compile().stream({"x": 1}, stream_mode="custom"):
            items.append(item)
    assert items == ["before"]


def _live(use_async: bool) -> tuple[Any, threading.Event, list[bool]]:
    """A node that writes, then waits for the consumer to have seen the write."""
    seen = threading.Event()
    result: list[bool] = []

    if use_async:
        async def n(s: S) -> dict:
            get_stream_writer()("ping")
            for _ in range(100):
                if seen.is_set():
                    break
                await asyncio.sleep(0.01)
            result.append(seen.is_set())
            return {"x": 2}
    else:
        def n(s: S) -> dict:
            get_stream_writer()("ping")
            result.append(seen.wait(1.0))
            return {"x": 2}

    g = StateGraph(S)
    g.add_node("n", n)
    g.add_edge(START, "n")
    return g.compile(), seen, result


# `stream` over an async node runs the graph in a portal; `astream` over a sync node runs it
# in a worker thread: chunks must stay live across both hand-overs too.
@pytest.mark.parametrize("use_async", [False, True])
def test_custom_chunks_are_live(use_async: bool) -> None:
    app, seen, result = _live(use_async)
    for item in app.stream({"x": 1}, stream_mode="custom"):
        if item == "ping":
            seen.set()
    assert result == [True]


@pytest.mark.anyio
@pytest.mark.parametrize("use_async", [True, False])
async def test_custom_chunks_are_live_async(use_async: bool) -> None:
    app, seen, result = _live(use_async)
    async for item in app.astream({"x": 1}, stream_mode="custom"):
        if item == "ping":
            seen.set()
    assert result == [True]


def _writers(use_async: bool, count: int) -> Any:
    """Two sibling nodes writing `count` custom chunks each, then a third reading their log."""

    def body(name: str) -> Any:
        def write(s: S) -> dict:
            writer = get_stream_writer()
            for index in range(count):
                writer((name, index))
            return {"log": [name]}

        if not use_async:
            return write

        async def write_async(s: S) -> dict:
            return write(s)

        return write_async

    g = StateGraph(S)
    g.add_node("p", body("p"))
    g.add_node("q", body("q"))
    g.add_node("r", body("r"))
    g.add_edge(START, "p")
    g.add_edge(START, "q")
    g.add_edge(["p", "q"], "r")
    return g.compile()


def _check_writers(items: list[Any], count: int) -> None:
    """Every chunk arrives once; each writer's in its order; a step's after the step before."""
    custom = [chunk for mode, chunk in items if mode == "custom"]
    for name in "pqr":
        assert [i for n, i in custom if n == name] == list(range(count))
    assert len(custom) == 3 * count
    first_r = custom.index(("r", 0))
    assert all(n == "r" for n, _ in custom[first_r:])
    updates = [chunk for mode, chunk in items if mode == "updates"]
    assert sorted(next(iter(u)) for u in updates) == ["p", "q", "r"]
    assert items.index(("updates", {"r": {"log": ["r"]}})) == len(items) - 1


@pytest.mark.parametrize("use_async", [False, True])
def test_concurrent_writers_deliver_every_chunk_in_order(use_async: bool) -> None:
    app = _writers(use_async, 2000)
    items = []
    for item in app.stream({"x": 0}, stream_mode=["custom", "updates"]):
        items.append(item)
        if len(items) % 50 == 0:
            time.sleep(0)  # let the writers' threads append while the consumer drains
    _check_writers(items, 2000)


@pytest.mark.anyio
@pytest.mark.parametrize("use_async", [False, True])
async def test_concurrent_writers_deliver_every_chunk_in_order_async(use_async: bool) -> None:
    app = _writers(use_async, 2000)
    items = []
    async for item in app.astream({"x": 0}, stream_mode=["custom", "updates"]):
        items.append(item)
        if len(items) % 50 == 0:
            time.sleep(0)  # as above, for the worker thread of a sync graph
            await asyncio.sleep(0)
    _check_writers(items, 2000)


def test_updates_are_live_while_a_sibling_runs() -> None:
    fast_seen = threading.Event()
    result: list[bool] = []

    def fast(s: S) -> dict:
        return {"log": ["fast"]}

    def slow(s: S) -> dict:
        result.append(fast_seen.wait(1.0))
        return {"log": ["slow"]}

    g = StateGraph(S)
    g.add_node(fast)
    g.add_node(slow)
    g.add_edge(START, "fast")
    g.add_edge(START, "slow")
    for chunk in g.compile().stream({"x": 1}, stream_mode="updates"):
        if "fast" in chunk:
            fast_seen.set()
    assert result == [True]


# -- messages (SPEC §1: "messages", alias "messages-tuple") ------------------------------------


def _messages_graph() -> Any:
    from langchain_core.messages import AIMessage

    from engine import MessagesState

    g = StateGraph(MessagesState)
    g.add_node("n", lambda s: {"messages": [AIMessage(content="hi", id="1")]})
    g.add_edge(START, "n")
    return g.compile(checkpointer=InMemorySaver())


@pytest.mark.parametrize("mode", ["messages", "messages-tuple"])
def test_messages_mode_emits_returned_messages(mode: str) -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.messages import AIMessage, HumanMessage

    app = _messages_graph()
    items = list(app.stream({"messages": [HumanMessage("yo", id="h")]},
                            {"configurable": {"thread_id": mode}}, stream_mode=mode))
    assert len(items) == 1
    message, meta = items[0]
    assert message == AIMessage(content="hi", id="1")
    assert meta["thread_id"] == mode
    assert meta["langgraph_step"] == 1
    assert meta["langgraph_node"] == "n"
    assert meta["langgraph_triggers"] == ("branch:to:n",)
    assert meta["langgraph_path"] == ("__pregel_pull", "n")
    assert meta["langgraph_checkpoint_ns"].startswith("n:")


def test_messages_tuple_is_an_alias_of_messages() -> None:
    pytest.importorskip("langchain_core")
    app = _messages_graph()
    listed = list(app.stream({"messages": []}, {"configurable": {"thread_id": "l"}},
                             stream_mode=["messages-tuple", "updates"]))
    assert [mode for mode, _ in listed] == ["messages", "updates"]


# -- stopping early ----------------------------------------------------------------------------


def test_breaking_out_of_a_stream_leaves_the_thread_usable() -> None:
    app = chain(InMemorySaver())
    for chunk in app.stream({"x": 1}, CFG, stream_mode="updates"):
        assert chunk == {"a": {"x": 2, "log": ["a"]}}
        break
    state = app.get_state(CFG)
    assert state.values == {"x": 2, "log": ["a"]}
    assert state.next == ("b",)
    assert app.invoke(None, CFG) == {"x": 20, "log": ["a", "b"]}


@pytest.mark.anyio
async def test_breaking_out_of_an_async_stream() -> None:
    app = chain(InMemorySaver(), use_async=True)
    stream = app.astream({"x": 1}, CFG, stream_mode="updates")
    async for chunk in stream:
        assert chunk == {"a": {"x": 2, "log": ["a"]}}
        break
    await stream.aclose()
    assert (await app.aget_state(CFG)).values == {"x": 2, "log": ["a"]}
    assert await app.ainvoke(None, CFG) == {"x": 20, "log": ["a", "b"]}


def _team(checkpointer: Any = None) -> Any:
    """`team` is a subgraph running two sync nodes in parallel (one 10x slower), then `after`."""

    def node(name: str, delay: float) -> Any:
        def run(s: S) -> dict:
            time.sleep(delay)
            get_stream_writer()({"done": name})
            return {"log": [name]}

        return run

    inner = StateGraph(S)
    inner.add_node("quick", node("quick", 0.02))
    inner.add_node("long", node("long", 0.2))
    inner.add_edge(START, "quick")
    inner.add_edge(START, "long")
    outer = StateGraph(S)
    outer.add_node("team", inner.compile())
    outer.add_node("after", lambda s: {"log": ["after"]})
    outer.add_edge(START, "team")
    outer.add_edge("team", "after")
    return outer.compile(checkpointer=checkpointer)


def _check_team(items: list[Any], subgraphs: bool, mode: str) -> None:
    """The whole run streamed: the subgraph's both nodes, its update, then `after`'s."""
    outer = [(k, v["log"]) for ns, m, c in items if not ns and m == "updates" for k, v in c.items()]
    assert outer == [("team", ["long", "quick"]), ("after", ["after"])]
    inner = sorted(next(iter(chunk)) for ns, m, chunk in items if ns and m == "updates")
    assert inner == (["long", "quick"] if subgraphs else [])
    custom = sorted(chunk["done"] for ns, m, chunk in items if m == "custom")
    assert custom == (["long", "quick"] if subgraphs and mode == "custom" else [])


def _team_args(saver: bool, subgraphs: bool, mode: str) -> tuple[Any, dict[str, Any]]:
    app = _team(InMemorySaver() if saver else None)
    kwargs = {"stream_mode": ["updates", mode], "subgraphs": subgraphs, "config": _cfg("team")}
    return app, kwargs


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _check_team_run(app: Any, items: list[Any], saver: bool, subgraphs: bool, mode: str) -> None:
    if not subgraphs:  # the root's chunks only, as `subgraphs=False` shows them
        items = [item for item in items if not item[0]]
    _check_team(items, subgraphs, mode)
    if saver:
        assert app.get_state(_cfg("team")).values["log"] == ["long", "quick", "after"]


TEAM_CASES = [
    (saver, subgraphs, mode)
    for saver in (False, True)
    for subgraphs in (False, True)
    for mode in ("custom", "messages")
]


@pytest.mark.parametrize(("saver", "subgraphs", "mode"), TEAM_CASES)
def test_subgraph_parallel_sync_nodes_stream_whole_run(
    saver: bool, subgraphs: bool, mode: str
) -> None:
    # a subgraph's parallel step took the root's live queue: the stream ended (or hung with a
    # saver) once its first task finished (issue 17)
    app, kwargs = _team_args(saver, subgraphs, mode)
    started = time.monotonic()
    items = list(app.stream({"x": 0, "log": []}, **kwargs))
    assert time.monotonic() - started >= 0.2  # the long node ran to its end
    if not subgraphs:
        items = [((), m, chunk) for m, chunk in items]
    _check_team_run(app, items, saver, subgraphs, mode)


@pytest.mark.anyio
@pytest.mark.parametrize(("saver", "subgraphs", "mode"), TEAM_CASES)
async def test_subgraph_parallel_sync_nodes_stream_whole_run_async(
    saver: bool, subgraphs: bool, mode: str
) -> None:
    app, kwargs = _team_args(saver, subgraphs, mode)
    items = [item async for item in app.astream({"x": 0, "log": []}, **kwargs)]
    if not subgraphs:
        items = [((), m, chunk) for m, chunk in items]
    _check_team_run(app, items, saver, subgraphs, mode)


def test_subgraph_parallel_sync_nodes_invoke_applies_every_write() -> None:
    app = _team(InMemorySaver())
    assert app.invoke({"x": 0, "log": []}, _cfg("i"))["log"] == ["long", "quick", "after"]
