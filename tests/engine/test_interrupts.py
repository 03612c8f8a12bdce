"""`interrupt()` / `Command(resume=...)` and static interrupts (SPEC §1; lg_facts §5, §6, §9)."""

from __future__ import annotations

import operator
import re
from typing import Annotated, Any, TypedDict

import pytest
from ._normalize import normalize

from checkpoints import InMemorySaver
from engine import END, START, Command, Interrupt, Send, StateGraph, interrupt

MULTIPLE = (
    "When there are multiple pending interrupts, you must specify the interrupt id when resuming."
)


class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def cfg(thread: str = "t") -> dict:
    return {"configurable": {"thread_id": thread}}


def _is_interrupt_id(value: str) -> bool:
    return bool(re.fullmatch(r"[0-9a-f]{32}", value))


# -- one interrupt -----------------------------------------------------------------------------


def _ask_graph(calls: list[str] | None = None, use_async: bool = False, **compile_kw: Any) -> Any:
    calls = [] if calls is None else calls

    if use_async:
        async def ask(s: S) -> dict:
            calls.append("ask")
            ans = interrupt({"question": "ok?", "x": s["x"]})
            return {"log": [f"ask:{ans}"]}
    else:
        def ask(s: S) -> dict:
            calls.append("ask")
            ans = interrupt({"question": "ok?", "x": s["x"]})
            return {"log": [f"ask:{ans}"]}

    def after(s: S) -> dict:
        calls.append("after")
        return {"log": ["after"]}

    g = StateGraph(S)
    g.add_node("ask", ask)
    g.add_node("after", after)
    g.add_edge(START, "ask")
    g.add_edge("ask", "after")
    g.add_edge("after", END)
    compile_kw.setdefault("checkpointer", InMemorySaver())
    return g.compile(**compile_kw)


QUESTION = {"question": "ok?", "x": 1}


def test_invoke_returns_interrupt_list() -> None:
    app = _ask_graph()
    out = app.invoke({"x": 1}, cfg())
    assert list(out) == ["x", "log", "__interrupt__"]
    assert out["x"] == 1 and out["log"] == []
    assert isinstance(out["__interrupt__"], list)
    (intr,) = out["__interrupt__"]
    assert isinstance(intr, Interrupt)
    assert intr.value == QUESTION
    assert _is_interrupt_id(intr.id)
    assert intr.response_schema is None


def test_stream_updates_and_values_when_interrupted() -> None:
    app = _ask_graph()
    items = list(app.stream({"x": 1}, cfg(), stream_mode=["updates", "values"]))
    intr = items[1][1]["__interrupt__"][0]
    assert items == [
        ("values", {"x": 1, "log": []}),
        ("updates", {"__interrupt__": (intr,)}),  # a tuple in the stream
        ("values", {"x": 1, "log": [], "__interrupt__": (intr,)}),
    ]
    assert intr.value == QUESTION


def test_stream_updates_only_and_values_only() -> None:
    app = _ask_graph()
    updates = list(app.stream({"x": 1}, cfg("u"), stream_mode="updates"))
    values = list(app.stream({"x": 1}, cfg("v"), stream_mode="values"))
    assert len(updates) == 1 and list(updates[0]) == ["__interrupt__"]
    assert isinstance(updates[0]["__interrupt__"], tuple)
    assert [i.value for i in updates[0]["__interrupt__"]] == [QUESTION]
    assert values[0] == {"x": 1, "log": []}
    assert values[1]["__interrupt__"][0].value == QUESTION
    assert len(values) == 2


def test_tasks_mode_when_interrupted() -> None:
    app = _ask_graph()
    items = normalize(list(app.stream({"x": 1}, cfg(), stream_mode="tasks")))
    assert items == [
        {"id": "<id:0>", "name": "ask", "input": {"x": 1, "log": []}, "triggers": ("branch:to:ask",)},
        {"id": "<id:0>", "name": "ask", "error": None, "result": {},
         "interrupts": [{"value": QUESTION, "id": "<id:1>", "response_schema": None}]},
    ]


def test_get_state_while_interrupted() -> None:
    app = _ask_graph()
    out = app.invoke({"x": 1}, cfg())
    state = app.get_state(cfg())
    assert state.values == {"x": 1, "log": []}
    assert state.next == ("ask",)
    assert state.metadata == {"source": "loop", "step": 0, "parents": {}}
    assert state.interrupts == tuple(out["__interrupt__"])
    (task,) = state.tasks
    assert task.name == "ask"
    assert task.path == ("__pregel_pull", "ask")
    assert task.error is None
    assert task.interrupts == tuple(out["__interrupt__"])
    assert task.state is None
    assert task.result is None


def test_resume() -> None:
    calls: list[str] = []
    app = _ask_graph(calls)
    app.invoke({"x": 1}, cfg())
    items = list(app.stream(Command(resume="yes"), cfg(), stream_mode=["updates", "values"]))
    assert items == [
        ("values", {"x": 1, "log": []}),  # the current state first
        ("updates", {"ask": {"log": ["ask:yes"]}}),
        ("values", {"x": 1, "log": ["ask:yes"]}),
        ("updates", {"after": {"log": ["after"]}}),
        ("values", {"x": 1, "log": ["ask:yes", "after"]}),
    ]
    assert calls == ["ask", "ask", "after"]  # the node re-ran from its start
    state = app.get_state(cfg())
    assert (state.next, state.tasks, state.interrupts) == ((), (), ())
    assert state.metadata["step"] == 2


def test_invoke_resume_returns_the_final_state() -> None:
    app = _ask_graph()
    app.invoke({"x": 1}, cfg())
    assert app.invoke(Command(resume="yes"), cfg()) == {"x": 1, "log": ["ask:yes", "after"]}


def test_resume_by_id() -> None:
    app = _ask_graph()
    (intr,) = app.invoke({"x": 1}, cfg())["__interrupt__"]
    assert app.invoke(Command(resume={intr.id: "by-id"}), cfg()) == {
        "x": 1, "log": ["ask:by-id", "after"],
    }


@pytest.mark.anyio
async def test_interrupt_and_resume_async() -> None:
    calls: list[str] = []
    app = _ask_graph(calls, use_async=True)
    out = await app.ainvoke({"x": 1}, cfg())
    assert [i.value for i in out["__interrupt__"]] == [QUESTION]
    assert (await app.aget_state(cfg())).next == ("ask",)
    items = [i async for i in app.astream(Command(resume="yes"), cfg(), stream_mode="updates")]
    assert items == [{"ask": {"log": ["ask:yes"]}}, {"after": {"log": ["after"]}}]
    assert calls == ["ask", "ask", "after"]


def test_sync_api_over_an_async_interrupting_node() -> None:
    app = _ask_graph(use_async=True)
    assert [i.value for i in app.invoke({"x": 1}, cfg())["__interrupt__"]] == [QUESTION]
    assert app.invoke(Command(resume="s"), cfg()) == {"x": 1, "log": ["ask:s", "after"]}


def test_interrupt_ids_are_stable_across_reruns() -> None:
    app = _ask_graph()
    first = app.invoke({"x": 1}, cfg())["__interrupt__"][0]
    again = app.invoke(None, cfg())["__interrupt__"][0]  # re-runs the node: same interrupt
    assert again == first
    assert app.get_state(cfg()).next == ("ask",)


def test_interrupt_without_checkpointer_still_reports() -> None:
    app = _ask_graph(checkpointer=None)
    out = app.invoke({"x": 1})
    assert out["log"] == []
    assert [i.value for i in out["__interrupt__"]] == [QUESTION]


def test_interrupt_with_output_schema() -> None:
    class O(TypedDict):
        x: int

    g = StateGraph(S, output_schema=O)
    g.add_node("ask", lambda s: {"log": [interrupt("q")]})
    g.add_edge(START, "ask")
    app = g.compile(checkpointer=InMemorySaver())
    out = app.invoke({"x": 1}, cfg())
    assert list(out) == ["x", "__interrupt__"]
    assert out["x"] == 1
    assert [i.value for i in out["__interrupt__"]] == ["q"]


def test_fresh_input_on_a_paused_thread_restarts_from_start() -> None:
    calls: list[str] = []
    app = _ask_graph(calls)
    app.invoke({"x": 1}, cfg())
    out = app.invoke({"x": 2}, cfg())
    assert [i.value for i in out["__interrupt__"]] == [{"question": "ok?", "x": 2}]
    assert calls == ["ask", "ask"]
    history = [(s.metadata["source"], s.metadata["step"]) for s in app.get_state_history(cfg())]
    assert history == [("loop", 2), ("input", 1), ("loop", 0), ("input", -1)]
    state = app.get_state(cfg())
    assert state.values == {"x": 2, "log": []}
    assert state.next == ("ask",)
    assert app.invoke(Command(resume="two"), cfg()) == {"x": 2, "log": ["ask:two", "after"]}


# -- two interrupts in one node ----------------------------------------------------------------


def test_two_sequential_interrupts_in_one_node() -> None:
    runs: list[int] = []

    def two(s: S) -> dict:
        runs.append(1)
        first = interrupt("first")
        second = interrupt("second")
        return {"log": [f"{first}+{second}"]}

    g = StateGraph(S)
    g.add_node(two)
    g.add_edge(START, "two")
    app = g.compile(checkpointer=InMemorySaver())

    leg1 = app.invoke({"x": 1}, cfg())
    (i1,) = leg1["__interrupt__"]
    assert i1.value == "first"

    leg2 = app.invoke(Command(resume="A"), cfg())
    (i2,) = leg2["__interrupt__"]
    assert i2.value == "second"
    assert i2.id != i1.id and _is_interrupt_id(i2.id)
    state = app.get_state(cfg())
    assert state.next == ("two",)
    assert state.metadata["step"] == 0  # no new checkpoint for a resume in the same step
    assert len(list(app.get_state_history(cfg()))) == 2

    assert app.invoke(Command(resume="B"), cfg()) == {"x": 1, "log": ["A+B"]}
    assert len(runs) == 3


# -- two parallel interrupts -------------------------------------------------------------------


def _parallel(use_async: bool = False) -> Any:
    def make(name: str, question: str):
        if use_async:
            async def fn(s: S) -> dict:
                return {"log": [f"{name}:{interrupt(question)}"]}
        else:
            def fn(s: S) -> dict:
                return {"log": [f"{name}:{interrupt(question)}"]}
        return fn

    g = StateGraph(S)
    g.add_node("p1", make("p1", "q1"))
    g.add_node("p2", make("p2", "q2"))
    g.add_edge(START, "p1")
    g.add_edge(START, "p2")
    return g.compile(checkpointer=InMemorySaver())


def test_two_parallel_interrupts_stream() -> None:
    app = _parallel()
    items = list(app.stream({"x": 1}, cfg(), stream_mode=["updates", "values"]))
    assert items[0] == ("values", {"x": 1, "log": []})
    rest = items[1:]
    assert len(rest) == 4
    values = sorted(i.value for mode, c in rest if mode == "updates" for i in c["__interrupt__"])
    assert values == ["q1", "q2"]
    for (m1, upd), (m2, val) in zip(rest[::2], rest[1::2]):
        assert (m1, m2) == ("updates", "values")
        assert val == {"x": 1, "log": [], "__interrupt__": upd["__interrupt__"]}


def test_two_parallel_interrupts_state_and_resume_by_id_map() -> None:
    app = _parallel()
    out = app.invoke({"x": 1}, cfg())
    assert sorted(i.value for i in out["__interrupt__"]) == ["q1", "q2"]
    state = app.get_state(cfg())
    assert state.next == ("p1", "p2")
    assert [i.value for i in state.interrupts] == ["q1", "q2"]
    by_task = {t.name: t.interrupts for t in state.tasks}
    assert [i.value for i in by_task["p1"]] == ["q1"]
    assert [i.value for i in by_task["p2"]] == ["q2"]
    ids = {i.value: i.id for i in state.interrupts}
    resume = {ids["q1"]: "v-q1", ids["q2"]: "v-q2"}
    assert app.invoke(Command(resume=resume), cfg()) == {"x": 1, "log": ["p1:v-q1", "p2:v-q2"]}
    assert app.get_state(cfg()).metadata["step"] == 1


def test_plain_resume_with_two_pending_raises() -> None:
    app = _parallel()
    app.invoke({"x": 1}, cfg())
    before = app.get_state(cfg())
    items = []
    with pytest.raises(RuntimeError) as info:
        for item in app.stream(Command(resume="plain"), cfg(), stream_mode="updates"):
            items.append(item)
    assert str(info.value).startswith(MULTIPLE)
    assert items == []
    after = app.get_state(cfg())
    assert (after.values, after.next, after.interrupts) == (
        before.values, before.next, before.interrupts,
    )


def test_resume_only_one_of_two() -> None:
    app = _parallel()
    app.invoke({"x": 1}, cfg())
    ids = {i.value: i.id for i in app.get_state(cfg()).interrupts}
    items = list(app.stream(Command(resume={ids["q1"]: "only"}), cfg(),
                            stream_mode=["updates", "values"]))
    q2 = next(c["__interrupt__"] for m, c in items if m == "updates" and "__interrupt__" in c)
    assert [i.value for i in q2] == ["q2"]
    p1_update = ("updates", {"p1": {"log": ["p1:only"]}})
    q2_items = [("updates", {"__interrupt__": q2}), ("values", {"x": 1, "log": [], "__interrupt__": q2})]
    middle = [p1_update, *q2_items] if items[1] == p1_update else [*q2_items, p1_update]  # finish order
    assert items == [
        ("values", {"x": 1, "log": []}),
        *middle,
        ("values", {"x": 1, "log": ["p1:only"]}),
    ]
    state = app.get_state(cfg())
    assert state.values == {"x": 1, "log": ["p1:only"]}
    assert state.next == ("p2",)
    assert state.metadata["step"] == 0
    tasks = {t.name: t for t in state.tasks}
    assert tasks["p1"].result == {"log": ["p1:only"]}
    assert [i.value for i in tasks["p2"].interrupts] == ["q2"]
    assert app.invoke(Command(resume={ids["q2"]: "last"}), cfg()) == {
        "x": 1, "log": ["p1:only", "p2:last"],
    }


@pytest.mark.anyio
async def test_two_parallel_interrupts_async() -> None:
    app = _parallel(use_async=True)
    out = await app.ainvoke({"x": 1}, cfg())
    ids = {i.value: i.id for i in out["__interrupt__"]}
    with pytest.raises(RuntimeError):
        await app.ainvoke(Command(resume="plain"), cfg())
    result = await app.ainvoke(Command(resume={ids["q1"]: "a", ids["q2"]: "b"}), cfg())
    assert result == {"x": 1, "log": ["p1:a", "p2:b"]}


# -- interrupts inside subgraphs two levels deep -----------------------------------------------


def _nested(calls: list[str], use_async: bool = False) -> Any:
    if use_async:
        async def g1(s: S) -> dict:
            calls.append("g1")
            return {"log": [f"g1:{interrupt('deep?')}"]}
    else:
        def g1(s: S) -> dict:
            calls.append("g1")
            return {"log": [f"g1:{interrupt('deep?')}"]}

    def c1(s: S) -> dict:
        calls.append("c1")
        return {"x": s["x"] + 1}

    def p1(s: S) -> dict:
        calls.append("p1")
        return {"x": s["x"] * 10}

    grand = StateGraph(S)
    grand.add_node("g1", g1)
    grand.add_edge(START, "g1")
    child = StateGraph(S)
    child.add_node("c1", c1)
    child.add_node("grand", grand.compile())
    child.add_edge(START, "c1")
    child.add_edge("c1", "grand")
    parent = StateGraph(S)
    parent.add_node("p1", p1)
    parent.add_node("child", child.compile())
    parent.add_edge(START, "p1")
    parent.add_edge("p1", "child")
    return parent.compile(checkpointer=InMemorySaver())


def test_nested_interrupt_is_reported_at_every_level() -> None:
    calls: list[str] = []
    app = _nested(calls)
    items = list(app.stream({"x": 1}, cfg(), stream_mode="updates", subgraphs=True))
    interrupts = [(ns, c["__interrupt__"]) for ns, c in items if "__interrupt__" in c]
    assert [len(ns) for ns, _ in interrupts] == [2, 1, 0]  # innermost first
    ids = {i.id for _, intrs in interrupts for i in intrs}
    assert len(ids) == 1
    assert [i.value for i in interrupts[0][1]] == ["deep?"]
    child_ns, grand_ns = interrupts[0][0]
    assert child_ns.startswith("child:") and grand_ns.startswith("grand:")


def test_nested_interrupt_invoke_and_resume_reach_the_deepest_node() -> None:
    calls: list[str] = []
    app = _nested(calls)
    out = app.invoke({"x": 1}, cfg())
    assert out["x"] == 10
    assert [i.value for i in out["__interrupt__"]] == ["deep?"]
    assert calls == ["p1", "c1", "g1"]
    final = app.invoke(Command(resume="found"), cfg())
    assert final["x"] == 11
    assert final["log"] == ["g1:found"]
    # the finished nodes before the interrupt did not run again
    assert calls == ["p1", "c1", "g1", "g1"]


@pytest.mark.anyio
async def test_nested_interrupt_async() -> None:
    calls: list[str] = []
    app = _nested(calls, use_async=True)
    out = await app.ainvoke({"x": 1}, cfg())
    assert [i.value for i in out["__interrupt__"]] == ["deep?"]
    final = await app.ainvoke(Command(resume="found"), cfg())
    assert final["log"] == ["g1:found"]
    assert calls == ["p1", "c1", "g1", "g1"]


def test_nested_get_state_with_subgraphs() -> None:
    calls: list[str] = []
    app = _nested(calls)
    app.invoke({"x": 1}, cfg("n"))
    root = app.get_state(cfg("n"), subgraphs=True)
    assert root.next == ("child",)
    assert root.config["configurable"]["checkpoint_ns"] == ""
    root_id = root.config["configurable"]["checkpoint_id"]
    (child_task,) = root.tasks
    child = child_task.state
    assert child is not None and hasattr(child, "values")
    child_ns = f"child:{child_task.id}"
    child_conf = child.config["configurable"]
    assert child_conf["thread_id"] == "n"
    assert child_conf["checkpoint_ns"] == child_ns
    assert child_conf["checkpoint_map"] == {"": root_id, child_ns: child_conf["checkpoint_id"]}
    assert child.metadata["parents"] == {"": root_id}
    assert child.metadata["source"] == "loop"
    assert child.next == ("grand",)
    assert child.values == {"x": 11, "log": []}

    (grand_task,) = child.tasks
    grand = grand_task.state
    grand_ns = f"{child_ns}|grand:{grand_task.id}"
    grand_conf = grand.config["configurable"]
    assert grand_conf["checkpoint_ns"] == grand_ns
    assert set(grand_conf["checkpoint_map"]) == {"", child_ns, grand_ns}
    assert grand.metadata["parents"] == {"": root_id, child_ns: child_conf["checkpoint_id"]}
    assert grand.next == ("g1",)
    assert [i.value for i in grand.interrupts] == ["deep?"]
    assert [i.value for i in grand.tasks[0].interrupts] == ["deep?"]
    assert [i.value for i in root.interrupts] == ["deep?"]


def test_nested_get_state_without_subgraphs() -> None:
    app = _nested([])
    app.invoke({"x": 1}, cfg("n2"))
    (task,) = app.get_state(cfg("n2")).tasks
    assert task.state == {"configurable": {"thread_id": "n2", "checkpoint_ns": f"child:{task.id}"}}


def test_history_lists_only_root_checkpoints() -> None:
    app = _nested([])
    app.invoke({"x": 1}, cfg("h"))
    history = list(app.get_state_history(cfg("h")))
    assert {s.config["configurable"]["checkpoint_ns"] for s in history} == {""}
    assert [s.metadata["step"] for s in history] == [1, 0, -1]


# -- static interrupts (lg_facts §6) -----------------------------------------------------------


def _abc(**compile_kw: Any) -> tuple[Any, list[str]]:
    calls: list[str] = []
    g = StateGraph(S)
    for name in ("a", "b", "c"):
        g.add_node(name, lambda s, _n=name: calls.append(_n) or {"log": [_n]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    return g.compile(checkpointer=InMemorySaver(), **compile_kw), calls


@pytest.mark.parametrize("where", ["compile", "run"])
def test_interrupt_before(where: str) -> None:
    if where == "compile":
        app, calls = _abc(interrupt_before=["b"])
        kw: dict = {}
    else:
        app, calls = _abc()
        kw = {"interrupt_before": ["b"]}
    out = app.invoke({"x": 1}, cfg(), **kw)
    assert out == {"x": 1, "log": ["a"]}  # no __interrupt__ key for static interrupts
    state = app.get_state(cfg())
    assert state.next == ("b",)
    assert state.interrupts == ()
    assert [(t.name, t.interrupts) for t in state.tasks] == [("b", ())]
    assert state.metadata["step"] == 1
    assert calls == ["a"]
    assert app.invoke(None, cfg()) == {"x": 1, "log": ["a", "b", "c"]}
    assert calls == ["a", "b", "c"]


def test_interrupt_before_stream() -> None:
    app, _ = _abc(interrupt_before=["b"])
    items = list(app.stream({"x": 1}, cfg(), stream_mode=["updates", "values"]))
    assert items == [
        ("values", {"x": 1, "log": []}),
        ("updates", {"a": {"log": ["a"]}}),
        ("values", {"x": 1, "log": ["a"]}),
        ("updates", {"__interrupt__": ()}),
    ]
    resumed = list(app.stream(None, cfg(), stream_mode=["updates", "values"]))
    assert resumed == [
        ("values", {"x": 1, "log": ["a"]}),
        ("updates", {"b": {"log": ["b"]}}),
        ("values", {"x": 1, "log": ["a", "b"]}),
        ("updates", {"c": {"log": ["c"]}}),
        ("values", {"x": 1, "log": ["a", "b", "c"]}),
    ]


def test_interrupt_before_debug_ends_with_the_checkpoint() -> None:
    app, _ = _abc(interrupt_before=["b"])
    items = list(app.stream({"x": 1}, cfg(), stream_mode="debug"))
    last = items[-1]
    assert last["type"] == "checkpoint"
    assert last["step"] == 1
    assert last["payload"]["next"] == ["b"]


@pytest.mark.parametrize("where", ["compile", "run"])
def test_interrupt_after(where: str) -> None:
    if where == "compile":
        app, calls = _abc(interrupt_after=["b"])
        kw: dict = {}
    else:
        app, calls = _abc()
        kw = {"interrupt_after": ["b"]}
    items = list(app.stream({"x": 1}, cfg(), stream_mode="updates", **kw))
    assert items == [{"a": {"log": ["a"]}}, {"b": {"log": ["b"]}}, {"__interrupt__": ()}]
    state = app.get_state(cfg())
    assert state.next == ("c",)
    assert state.metadata["step"] == 2
    assert app.invoke(None, cfg()) == {"x": 1, "log": ["a", "b", "c"]}


def test_per_run_interrupt_after_passed_again_on_resume() -> None:
    app, calls = _abc()
    app.invoke({"x": 1}, cfg(), interrupt_after=["a", "b"])
    assert app.get_state(cfg()).next == ("b",)
    app.invoke(None, cfg(), interrupt_after=["a", "b"])
    assert app.get_state(cfg()).next == ("c",)
    assert calls == ["a", "b"]


def test_interrupt_before_star_stops_before_every_node() -> None:
    app, calls = _abc(interrupt_before="*")
    assert app.invoke({"x": 1}, cfg()) == {"x": 1, "log": []}
    assert app.get_state(cfg()).next == ("a",)
    assert calls == []
    assert app.invoke(None, cfg()) == {"x": 1, "log": ["a"]}
    assert app.get_state(cfg()).next == ("b",)
    app.invoke(None, cfg())
    app.invoke(None, cfg())
    assert calls == ["a", "b", "c"]
    assert app.get_state(cfg()).next == ()


def test_interrupt_after_star() -> None:
    app, calls = _abc()
    app.invoke({"x": 1}, cfg(), interrupt_after="*")
    assert calls == ["a"]
    assert app.get_state(cfg()).next == ("b",)


@pytest.mark.anyio
async def test_static_interrupts_async() -> None:
    app, calls = _abc(interrupt_before=["c"])
    items = [i async for i in app.astream({"x": 1}, cfg(), stream_mode="updates")]
    assert items[-1] == {"__interrupt__": ()}
    assert calls == ["a", "b"]
    assert (await app.aget_state(cfg())).next == ("c",)
    assert await app.ainvoke(None, cfg()) == {"x": 1, "log": ["a", "b", "c"]}


# -- more interrupt placements -----------------------------------------------------------------


class W(TypedDict):
    out: Annotated[list, operator.add]


def test_interrupts_in_send_tasks_resumed_by_id_map() -> None:
    g = StateGraph(W)
    g.add_node("work", lambda arg: {"out": [f"{arg}:{interrupt(arg)}"]})
    g.add_conditional_edges(START, lambda s: [Send("work", i) for i in ("a", "b")])
    app = g.compile(checkpointer=InMemorySaver())
    out = app.invoke({"out": []}, cfg())
    assert out["out"] == []
    assert [i.value for i in out["__interrupt__"]] == ["a", "b"]
    ids = {i.value: i.id for i in out["__interrupt__"]}
    assert len(set(ids.values())) == 2
    assert app.invoke(Command(resume={ids["a"]: "A", ids["b"]: "B"}), cfg()) == {
        "out": ["a:A", "b:B"],
    }


def test_interrupt_with_a_finished_sibling() -> None:
    runs: list[str] = []

    def ok(s: S) -> dict:
        runs.append("ok")
        return {"log": ["ok"]}

    def ask(s: S) -> dict:
        runs.append("ask")
        return {"log": [interrupt("q")]}

    g = StateGraph(S)
    g.add_node(ok)
    g.add_node(ask)
    g.add_edge(START, "ok")
    g.add_edge(START, "ask")
    app = g.compile(checkpointer=InMemorySaver())
    app.invoke({"x": 1}, cfg())
    state = app.get_state(cfg())
    assert state.values == {"x": 1, "log": ["ok"]}
    assert state.next == ("ask",)
    items = list(app.stream(Command(resume="r"), cfg(), stream_mode=["updates", "values"]))
    assert items == [
        ("values", {"x": 1, "log": []}),
        ("updates", {"ok": {"log": ["ok"]}, "__metadata__": {"cached": True}}),
        ("updates", {"ask": {"log": ["r"]}}),
        ("values", {"x": 1, "log": ["r", "ok"]}),
    ]
    assert sorted(runs[:2]) == ["ask", "ok"] and runs[2:] == ["ask"]


def test_interrupt_is_not_retried() -> None:
    from engine import RetryPolicy

    calls: list[int] = []

    def r(s: S) -> dict:
        calls.append(1)
        return {"log": [interrupt("q")]}

    g = StateGraph(S)
    g.add_node("r", r, retry_policy=RetryPolicy(retry_on=lambda e: True, initial_interval=0.001,
                                                 jitter=False))
    g.add_edge(START, "r")
    app = g.compile(checkpointer=InMemorySaver())
    assert [i.value for i in app.invoke({"x": 1}, cfg())["__interrupt__"]] == ["q"]
    assert calls == [1]


def _child_with_static_interrupt() -> Any:
    child = StateGraph(S)
    child.add_node("c1", lambda s: {"log": ["c1"]})
    child.add_node("c2", lambda s: {"log": ["c2"]})
    child.add_edge(START, "c1")
    child.add_edge("c1", "c2")
    parent = StateGraph(S)
    parent.add_node("child", child.compile(interrupt_before=["c2"]))
    parent.add_node("after", lambda s: {"log": ["after"]})
    parent.add_edge(START, "child")
    parent.add_edge("child", "after")
    return parent.compile(checkpointer=InMemorySaver())


def test_static_interrupt_inside_a_subgraph() -> None:
    # observed on LangGraph 1.2.22: the root reports the pause as {"__interrupt__": ()}
    app = _child_with_static_interrupt()
    items = list(app.stream({"x": 1}, cfg(), stream_mode=["updates", "values"]))
    assert items == [("values", {"x": 1, "log": []}), ("updates", {"__interrupt__": ()})]
    assert app.invoke({"x": 1}, cfg("2")) == {"x": 1, "log": []}
    state = app.get_state(cfg(), subgraphs=True)
    assert state.next == ("child",)
    assert state.interrupts == ()
    assert state.tasks[0].state.next == ("c2",)
    assert state.tasks[0].state.values == {"x": 1, "log": ["c1"]}
    resumed = list(app.stream(None, cfg(), stream_mode=["updates", "values"]))
    assert resumed == [
        ("values", {"x": 1, "log": []}),
        ("updates", {"child": {"x": 1, "log": ["c1", "c2"]}}),
        ("values", {"x": 1, "log": ["c1", "c2"]}),
        ("updates", {"after": {"log": ["after"]}}),
        ("values", {"x": 1, "log": ["c1", "c2", "after"]}),
    ]
