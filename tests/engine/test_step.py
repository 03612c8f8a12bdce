"""Super-step semantics: what runs in a step, how its writes combine, node return values,
Command, Send and the recursion limit (SPEC §1 "Super-step semantics"; lg_facts §2-§4, §7, §8, §20).
"""

from __future__ import annotations

import logging
import operator
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from checkpoints import InMemorySaver
from engine import (
    END,
    START,
    Command,
    EmptyInputError,
    GraphRecursionError,
    InvalidUpdateError,
    Send,
    StateGraph,
)

CONCURRENT = (
    "At key 'x': Can receive only one value per step. Use an Annotated key to handle multiple "
    "values."
)
RECURSION = (
    "Recursion limit of {} reached without hitting a stop condition. You can increase the limit "
    "by setting the `recursion_limit` config key."
)


class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def two_node(ret_a: Any) -> StateGraph:
    g = StateGraph(S)
    g.add_node("a", lambda s: ret_a)
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    return g


def chain_of(n: int, ran: list[str]) -> StateGraph:
    g = StateGraph(S)
    names = [f"n{i}" for i in range(n)]
    for name in names:
        g.add_node(name, lambda s, _n=name: ran.append(_n) or {"log": [_n]})
    g.add_edge(START, names[0])
    for a, b in zip(names, names[1:]):
        g.add_edge(a, b)
    return g


# -- node return values (lg_facts §3) ----------------------------------------------------------


@pytest.mark.parametrize("ret", [{}, None, {"unknown": 1}], ids=["empty", "none", "unknown"])
def test_returns_that_write_nothing(ret: Any) -> None:
    app = two_node(ret).compile()
    assert list(app.stream({"x": 1}, stream_mode=["updates", "values"])) == [
        ("values", {"x": 1, "log": []}),
        ("updates", {"a": None}),
        ("updates", {"b": {"log": ["b"]}}),
        ("values", {"x": 1, "log": ["b"]}),
    ]


def test_unknown_keys_are_dropped_from_the_update() -> None:
    app = two_node({"x": 5, "unknown": 1}).compile()
    assert list(app.stream({"x": 1}, stream_mode="updates")) == [
        {"a": {"x": 5}},
        {"b": {"log": ["b"]}},
    ]


def test_unknown_input_keys_are_ignored() -> None:
    app = two_node(None).compile()
    assert app.invoke({"x": 1, "bogus": 2}) == {"x": 1, "log": ["b"]}


@pytest.mark.parametrize("inp", [{}, {"bogus": 2}], ids=["empty", "unknown-only"])
def test_input_that_writes_nothing_emits_no_first_values(inp: dict) -> None:
    app = two_node({"x": 5}).compile()
    assert list(app.stream(inp, stream_mode="values")) == [
        {"x": 5, "log": []},
        {"x": 5, "log": ["b"]},
    ]


def test_none_input_on_a_fresh_thread() -> None:
    app = two_node(None).compile(checkpointer=InMemorySaver())
    with pytest.raises(EmptyInputError):
        app.invoke(None, {"configurable": {"thread_id": "fresh"}})


@pytest.mark.parametrize(
    "ret, shown", [(5, "5"), ("str", "str"), ([{"x": 2}], "[{'x': 2}]")],
    ids=["int", "str", "list-of-dict"],
)
def test_non_dict_return(ret: Any, shown: str) -> None:
    app = two_node(ret).compile()
    items = []
    with pytest.raises(InvalidUpdateError) as info:
        for item in app.stream({"x": 1}, stream_mode=["updates", "values"]):
            items.append(item)
    assert str(info.value).startswith(f"Expected dict, got {shown}")
    assert items == [("values", {"x": 1, "log": []})]


@pytest.mark.anyio
async def test_non_dict_return_async() -> None:
    async def a(s: S) -> Any:
        return 5

    g = StateGraph(S)
    g.add_node(a)
    g.add_edge(START, "a")
    with pytest.raises(InvalidUpdateError) as info:
        await g.compile().ainvoke({"x": 1})
    assert str(info.value).startswith("Expected dict, got 5")


# -- Command (lg_facts §3, §8) ------------------------------------------------------------------


def test_command_update() -> None:
    app = two_node(Command(update={"x": 3})).compile()
    assert list(app.stream({"x": 1}, stream_mode="updates"))[0] == {"a": {"x": 3}}
    assert app.invoke({"x": 1}) == {"x": 3, "log": ["b"]}


def test_command_update_as_pairs() -> None:
    app = two_node(Command(update=[("x", 4), ("log", ["t"])])).compile()
    assert list(app.stream({"x": 1}, stream_mode="updates"))[0] == {"a": {"x": 4, "log": ["t"]}}


def test_list_of_commands_merges_into_one_update() -> None:
    app = two_node([Command(update={"x": 7}), Command(update={"log": ["c2"]})]).compile()
    assert list(app.stream({"x": 1}, stream_mode="updates")) == [
        {"a": {"x": 7, "log": ["c2"]}},
        {"b": {"log": ["b"]}},
    ]


def test_list_of_commands_writing_one_plain_key_twice() -> None:
    app = two_node([Command(update={"x": 7}), Command(update={"x": 8})]).compile()
    with pytest.raises(InvalidUpdateError) as info:
        app.invoke({"x": 1})
    assert str(info.value).startswith(CONCURRENT)


class Loop(TypedDict):
    count: int
    log: Annotated[list, operator.add]


def test_command_goto_loop() -> None:
    def supervisor(s: Loop) -> Command:
        if s.get("count", 0) >= 2:
            return Command(goto=END, update={"log": ["sup:done"]})
        return Command(goto="worker", update={"log": [f"sup:{s.get('count', 0)}"]})

    def worker(s: Loop) -> Command:
        return Command(goto="supervisor", update={"count": s.get("count", 0) + 1, "log": ["work"]})

    g = StateGraph(Loop)
    g.add_node(supervisor)
    g.add_node(worker)
    g.add_edge(START, "supervisor")
    app = g.compile()
    assert app.invoke({"count": 0}) == {
        "count": 2, "log": ["sup:0", "work", "sup:1", "work", "sup:done"],
    }
    tasks = [c for c in app.stream({"count": 1}, stream_mode="tasks") if "input" in c]
    assert [(t["name"], t["triggers"]) for t in tasks] == [
        ("supervisor", ("branch:to:supervisor",)),
        ("worker", ("branch:to:worker",)),
        ("supervisor", ("branch:to:supervisor",)),
    ]


def test_command_goto_named_target_before_send() -> None:
    g = StateGraph(Loop)
    g.add_node("fan", lambda s: Command(goto=[Send("w2", {"count": 10}), "w3"], update={"log": ["fan"]}))
    g.add_node("w2", lambda s: {"log": [f"w2:{s['count']}"]})
    g.add_node("w3", lambda s: {"log": [f"w3:{s['count']}"]})
    g.add_edge(START, "fan")
    assert g.compile().invoke({"count": 0}) == {"count": 0, "log": ["fan", "w3:0", "w2:10"]}


def test_command_goto_unknown_node_is_ignored(caplog: pytest.LogCaptureFixture) -> None:
    g = StateGraph(S)
    g.add_node("bad", lambda s: Command(goto="nope", update={"x": 2}))
    g.add_edge(START, "bad")
    with caplog.at_level(logging.WARNING):
        assert g.compile().invoke({"x": 1}) == {"x": 2, "log": []}
    assert "nope" in caplog.text


def test_command_goto_and_static_edge_both_fire() -> None:
    g = StateGraph(S)
    g.add_node("a", lambda s: Command(goto="c", update={"log": ["a"]}))
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_node("c", lambda s: {"log": ["c"]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    assert g.compile().invoke({"x": 0}) == {"x": 0, "log": ["a", "b", "c"]}


def test_command_parent_from_a_root_node_raises() -> None:
    g = StateGraph(S)
    g.add_node("a", lambda s: Command(graph=Command.PARENT, goto="x"))
    g.add_edge(START, "a")
    with pytest.raises(BaseException) as info:
        g.compile().invoke({"x": 0})
    assert type(info.value).__name__ in ("ParentCommand", "InvalidUpdateError")


# -- concurrent writes (lg_facts §4) ------------------------------------------------------------


def _parallel(ret_p: Any, ret_q: Any) -> StateGraph:
    g = StateGraph(S)
    g.add_node("p", lambda s: ret_p)
    g.add_node("q", lambda s: ret_q)
    g.add_edge(START, "p")
    g.add_edge(START, "q")
    return g


def test_two_writes_to_a_plain_key_even_if_equal() -> None:
    app = _parallel({"x": 1, "log": ["p"]}, {"x": 1, "log": ["q"]}).compile()
    items = []
    with pytest.raises(InvalidUpdateError) as info:
        for item in app.stream({"x": 1}, stream_mode=["values", "updates"]):
            items.append(item)
    assert str(info.value).startswith(CONCURRENT)
    assert info.value.args[0].startswith(CONCURRENT)
    assert items[0] == ("values", {"x": 1, "log": []})
    assert sorted(str(i) for i in items[1:]) == sorted(
        [str(("updates", {"p": {"x": 1, "log": ["p"]}})), str(("updates", {"q": {"x": 1, "log": ["q"]}}))]
    )


@pytest.mark.anyio
async def test_two_writes_to_a_plain_key_async() -> None:
    async def p(s: S) -> dict:
        return {"x": 2}

    async def q(s: S) -> dict:
        return {"x": 3}

    g = StateGraph(S)
    g.add_node(p)
    g.add_node(q)
    g.add_edge(START, "p")
    g.add_edge(START, "q")
    with pytest.raises(InvalidUpdateError) as info:
        await g.compile().ainvoke({"x": 1})
    assert str(info.value).startswith(CONCURRENT)


def test_get_state_after_invalid_update_reraises() -> None:
    app = _parallel({"x": 1}, {"x": 2}).compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "iu"}}
    with pytest.raises(InvalidUpdateError):
        app.invoke({"x": 0}, cfg)
    with pytest.raises(InvalidUpdateError) as info:
        app.get_state(cfg)
    assert str(info.value).startswith(CONCURRENT)


def test_parallel_writes_to_a_reducer_key_apply_by_node_name() -> None:
    g = StateGraph(S)
    for name in ("z", "m", "a"):
        g.add_node(name, lambda s, _n=name: {"log": [_n]})
        g.add_edge(START, name)
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "order"}}
    assert app.invoke({"x": 0}, cfg) == {"x": 0, "log": ["a", "m", "z"]}
    step0 = [s for s in app.get_state_history(cfg) if s.metadata["step"] == 0][0]
    assert step0.next == ("z", "m", "a")  # node-definition order (lg_facts §20)


def test_tasks_stream_start_items_are_in_name_order() -> None:
    g = StateGraph(S)
    for name in ("z", "m", "a"):
        g.add_node(name, lambda s, _n=name: {"log": [_n]})
        g.add_edge(START, name)
    starts = [c["name"] for c in g.compile().stream({"x": 0}, stream_mode="tasks") if "input" in c]
    assert starts == ["a", "m", "z"]


# -- Send (lg_facts §7) -------------------------------------------------------------------------


class Work(TypedDict):
    out: Annotated[list, operator.add]


def _map_reduce(route: Any) -> StateGraph:
    g = StateGraph(Work)
    g.add_node("start", lambda s: None)
    g.add_node("work", lambda arg: {"out": [arg["item"]]})
    g.add_node("zz", lambda s: {"out": ["zz"]})
    g.add_node("aa", lambda s: {"out": ["aa"]})
    g.add_edge(START, "start")
    g.add_edge("start", "zz")
    g.add_edge("start", "aa")
    g.add_conditional_edges("start", route)
    return g


def test_send_writes_come_after_edge_writes() -> None:
    app = _map_reduce(lambda s: [Send("work", {"item": i}) for i in "abcd"]).compile()
    assert app.invoke({"out": []}) == {"out": ["aa", "zz", "a", "b", "c", "d"]}


def test_mixed_router_result_names_and_sends() -> None:
    def route(s: Work) -> list:
        return [Send("work", {"item": "a"}), "zz", Send("work", {"item": "b"}), "aa"]

    g = StateGraph(Work)
    g.add_node("start", lambda s: None)
    g.add_node("work", lambda arg: {"out": [arg["item"]]})
    g.add_node("zz", lambda s: {"out": ["zz"]})
    g.add_node("aa", lambda s: {"out": ["aa"]})
    g.add_edge(START, "start")
    g.add_conditional_edges("start", route)
    assert g.compile().invoke({"out": []}) == {"out": ["aa", "zz", "a", "b"]}


def test_send_task_triggers_input_and_start_order() -> None:
    app = _map_reduce(lambda s: [Send("work", {"item": i}) for i in "ab"]).compile()
    starts = [c for c in app.stream({"out": []}, stream_mode="tasks") if "input" in c]
    assert [(c["name"], c["input"], c["triggers"]) for c in starts] == [
        ("start", {"out": []}, ("branch:to:start",)),
        ("work", {"item": "a"}, ("__pregel_push",)),
        ("work", {"item": "b"}, ("__pregel_push",)),
        ("aa", {"out": []}, ("branch:to:aa",)),
        ("zz", {"out": []}, ("branch:to:zz",)),
    ]


def test_send_from_start() -> None:
    g = StateGraph(Work)
    g.add_node("work", lambda arg: {"out": [arg * 2]})
    g.add_conditional_edges(START, lambda s: [Send("work", i) for i in (1, 2, 3)])
    assert g.compile().invoke({"out": []}) == {"out": [2, 4, 6]}


def test_send_to_a_node_twice_in_a_row() -> None:
    g = StateGraph(Work)
    g.add_node("work", lambda arg: {"out": [arg]})
    g.add_node("again", lambda s: None)
    g.add_conditional_edges(START, lambda s: [Send("work", 1)])
    g.add_edge("work", "again")
    g.add_conditional_edges("again", lambda s: [Send("work", 2)] if len(s["out"]) < 2 else END)
    assert g.compile().invoke({"out": []}) == {"out": [1, 2]}


# -- recursion limit (lg_facts §2) --------------------------------------------------------------


@pytest.mark.parametrize("limit, ran", [(1, 1), (2, 2), (3, 3)])
def test_chain_of_n_needs_n_plus_one(limit: int, ran: int) -> None:
    calls: list[str] = []
    app = chain_of(3, calls).compile()
    with pytest.raises(GraphRecursionError) as info:
        app.invoke({"x": 0}, {"recursion_limit": limit})
    assert calls == [f"n{i}" for i in range(ran)]
    assert str(info.value).startswith(RECURSION.format(limit))


def test_chain_of_n_with_limit_n_plus_one_finishes() -> None:
    calls: list[str] = []
    app = chain_of(3, calls).compile()
    assert app.invoke({"x": 0}, {"recursion_limit": 4}) == {"x": 0, "log": ["n0", "n1", "n2"]}


def _looping_graph(steps: list[int]) -> Any:
    """One node that routes back to itself forever: only the recursion limit stops it."""

    def spin(state: S) -> Command:
        steps.append(1)
        return Command(update={"x": state["x"] + 1}, goto="spin")

    builder = StateGraph(S)
    builder.add_node("spin", spin)
    builder.add_edge(START, "spin")
    return builder.compile()


def test_default_recursion_limit_is_langgraphs_10007() -> None:
    """LangGraph 1.2's default (issue 27): long agent loops must not stop at 25 steps."""
    steps: list[int] = []
    with pytest.raises(GraphRecursionError) as info:
        _looping_graph(steps).invoke({"x": 0, "log": []})
    assert len(steps) == 10007
    assert str(info.value).startswith(RECURSION.format(10007))


def test_default_recursion_limit_follows_the_environment() -> None:
    """`LANGGRAPH_DEFAULT_RECURSION_LIMIT`, read when the engine is imported, as LangGraph's."""
    code = (
        "from tests.engine.test_step import _looping_graph\n"
        "steps = []\n"
        "try:\n    _looping_graph(steps).invoke({'x': 0, 'log': []})\n"
        "except Exception as error:\n    print(len(steps), type(error).__name__)\n"
    )
    env = {**os.environ, "LANGGRAPH_DEFAULT_RECURSION_LIMIT": "31"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=Path(__file__).parents[2])
    assert out.stdout.split() == ["31", "GraphRecursionError"]


def test_top_level_ids_move_into_configurable() -> None:
    """`invoke(x, {"thread_id": "t"})` as LangGraph accepts it; None values are dropped."""
    app = chain_of(2, []).compile(checkpointer=InMemorySaver())
    app.invoke({"x": 0}, {"thread_id": "top", "recursion_limit": None, "user": None})
    assert app.get_state({"configurable": {"thread_id": "top"}}).values["log"] == ["n0", "n1"]


def test_recursion_error_streams_and_saves_the_steps_that_ran() -> None:
    calls: list[str] = []
    app = chain_of(3, calls).compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "rl"}, "recursion_limit": 2}
    items = []
    with pytest.raises(GraphRecursionError):
        for item in app.stream({"x": 0}, cfg):
            items.append(item)
    assert items == [{"n0": {"log": ["n0"]}}, {"n1": {"log": ["n1"]}}]
    state = app.get_state(cfg)
    assert state.values == {"x": 0, "log": ["n0", "n1"]}
    assert state.next == ("n2",)


@pytest.mark.parametrize("limit", [0, -1])
def test_recursion_limit_below_one(limit: int) -> None:
    calls: list[str] = []
    with pytest.raises(ValueError) as info:
        chain_of(2, calls).compile().invoke({"x": 0}, {"recursion_limit": limit})
    assert str(info.value) == "recursion_limit must be at least 1"
    assert calls == []


def test_recursion_limit_counts_per_invocation() -> None:
    calls: list[str] = []
    app = chain_of(3, calls).compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "per"}, "recursion_limit": 4}
    for _ in range(3):
        app.invoke({"x": 0}, cfg)
    assert len(calls) == 9


@pytest.mark.parametrize("limit, ran", [(1, 3), (2, 4), (3, 5)])
def test_resumed_run_gets_limit_plus_two_steps(limit: int, ran: int) -> None:
    calls: list[str] = []
    app = chain_of(8, calls).compile(checkpointer=InMemorySaver(), interrupt_before=["n1"])
    cfg = {"configurable": {"thread_id": "resume-limit"}}
    app.invoke({"x": 0}, cfg)
    assert calls == ["n0"]
    calls.clear()
    with pytest.raises(GraphRecursionError):
        app.invoke(None, {**cfg, "recursion_limit": limit})
    assert calls == [f"n{i}" for i in range(1, 1 + ran)]


@pytest.mark.anyio
async def test_recursion_limit_async() -> None:
    ran: list[str] = []

    async def loop(s: S) -> dict:
        ran.append("loop")
        return {"x": s["x"] + 1}

    g = StateGraph(S)
    g.add_node(loop)
    g.add_edge(START, "loop")
    g.add_edge("loop", "loop")
    with pytest.raises(GraphRecursionError) as info:
        await g.compile().ainvoke({"x": 0}, {"recursion_limit": 5})
    assert str(info.value).startswith(RECURSION.format(5))
    assert len(ran) == 5


def test_send_with_a_checkpointer() -> None:
    g = StateGraph(Work)
    g.add_node("work", lambda arg: {"out": [arg["item"]]})
    g.add_conditional_edges(START, lambda s: [Send("work", {"item": i}) for i in "ab"])
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "send-saver"}}
    assert app.invoke({"out": []}, cfg) == {"out": ["a", "b"]}
    assert app.get_state(cfg).values == {"out": ["a", "b"]}
    steps = [(s.metadata["step"], s.next) for s in app.get_state_history(cfg)]
    assert steps == [(1, ()), (0, ("work", "work")), (-1, ("__start__",))]


def test_task_ids_hash_on_first_use_and_stream_the_same_as_a_saved_run() -> None:
    """A prepared task hashes its id only when asked; the id and namespace it gets then are the
    deterministic ones a checkpointed run saves its pending writes under."""
    from engine._step import PULL, Task, task_id

    class One(TypedDict):
        x: int

    g = StateGraph(One)
    g.add_node("n", lambda s: {"x": 1})
    g.add_edge(START, "n")
    node = g.compile().plan.nodes["n"]
    key = ("cid", "parent:abc", 3, "n", PULL, "n")
    task = Task(None, node, {}, (PULL, "n"), (), "parent:abc", (0, "n"), key)
    assert task._id is None  # nothing computed at preparation
    assert task.id == task_id(*key)
    assert task.ns == f"parent:abc|n:{task.id}"
    assert Task("given", node, {}, (PULL, "n"), (), "", (0, "n")).ns == "n:given"
