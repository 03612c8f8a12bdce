"""Thread state: get_state, history, update_state, forks and resuming after a partial failure
(SPEC §1; lg_facts §14, §15).
"""

from __future__ import annotations

import operator
import time
from typing import Annotated, Any, TypedDict

import pytest

from checkpoints import InMemorySaver
from engine import END, START, InvalidUpdateError, StateGraph, StateSnapshot


class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def cfg(thread: str = "1") -> dict:
    return {"configurable": {"thread_id": thread}}


def _abc(calls: list[str] | None = None, **compile_kw: Any) -> Any:
    calls = [] if calls is None else calls
    g = StateGraph(S)
    for name in ("a", "b", "c"):
        g.add_node(name, lambda s, _n=name: calls.append(_n) or {"log": [_n]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    return g.compile(checkpointer=InMemorySaver(), **compile_kw)


def _steps(app: Any, config: dict, **kw: Any) -> list[tuple[str, int, tuple]]:
    return [(s.metadata["source"], s.metadata["step"], s.next)
            for s in app.get_state_history(config, **kw)]


# -- get_state ---------------------------------------------------------------------------------


def test_get_state_after_a_run() -> None:
    app = _abc()
    app.invoke({"x": 1}, cfg())
    state = app.get_state(cfg())
    assert isinstance(state, StateSnapshot)
    assert state.values == {"x": 1, "log": ["a", "b", "c"]}
    assert state.next == ()
    assert state.tasks == ()
    assert state.interrupts == ()
    assert state.metadata == {"source": "loop", "step": 3, "parents": {}}
    conf = state.config["configurable"]
    assert conf["thread_id"] == "1" and conf["checkpoint_ns"] == ""
    assert state.parent_config["configurable"]["checkpoint_id"] < conf["checkpoint_id"]
    assert isinstance(state.created_at, str) and state.created_at.endswith("+00:00")


def test_get_state_of_an_unknown_thread() -> None:
    app = _abc()
    assert app.get_state(cfg("nope")) == StateSnapshot(
        values={}, next=(), config={"configurable": {"thread_id": "nope"}}, metadata=None,
        created_at=None, parent_config=None, tasks=(), interrupts=(),
    )


def test_get_state_at_a_checkpoint_id() -> None:
    app = _abc(interrupt_before=["b"])
    app.invoke({"x": 1}, cfg())
    paused = app.get_state(cfg())
    app.invoke(None, cfg())
    again = app.get_state(paused.config)
    assert again.values == {"x": 1, "log": ["a"]}
    assert again.next == ("b",)
    assert again.config == paused.config


def test_get_state_needs_a_checkpointer() -> None:
    g = StateGraph(S)
    g.add_node("a", lambda s: None)
    g.add_edge(START, "a")
    with pytest.raises(ValueError):
        g.compile().get_state(cfg())


@pytest.mark.anyio
async def test_aget_state() -> None:
    app = _abc()
    await app.ainvoke({"x": 1}, cfg())
    assert (await app.aget_state(cfg())).values == {"x": 1, "log": ["a", "b", "c"]}


# -- history -----------------------------------------------------------------------------------


def test_history_is_newest_first_and_chained() -> None:
    app = _abc()
    app.invoke({"x": 1}, cfg())
    history = list(app.get_state_history(cfg()))
    assert _steps(app, cfg()) == [
        ("loop", 3, ()),
        ("loop", 2, ("c",)),
        ("loop", 1, ("b",)),
        ("loop", 0, ("a",)),
        ("input", -1, ("__start__",)),
    ]
    for newer, older in zip(history, history[1:]):
        assert newer.parent_config == older.config
    assert history[-1].parent_config is None
    assert history[-1].values == {"log": []}  # the input checkpoint: state before the input
    assert history[-2].values == {"x": 1, "log": []}


def test_history_limit_filter_before() -> None:
    app = _abc()
    app.invoke({"x": 1}, cfg())
    assert [s for _, s, _ in _steps(app, cfg(), limit=2)] == [3, 2]
    assert [s for _, s, _ in _steps(app, cfg(), filter={"source": "input"})] == [-1]
    assert [s for _, s, _ in _steps(app, cfg(), filter={"step": 1})] == [1]
    step1 = next(s for s in app.get_state_history(cfg()) if s.metadata["step"] == 1)
    assert [s for _, s, _ in _steps(app, cfg(), before=step1.config)] == [0, -1]
    assert [s for _, s, _ in _steps(app, cfg(), before=step1.config, limit=1)] == [0]


def test_history_of_two_runs_on_one_thread() -> None:
    app = _abc()
    app.invoke({"x": 1}, cfg())
    app.invoke({"x": 2}, cfg())
    assert [(src, step) for src, step, _ in _steps(app, cfg())] == [
        ("loop", 8), ("loop", 7), ("loop", 6), ("loop", 5), ("input", 4),
        ("loop", 3), ("loop", 2), ("loop", 1), ("loop", 0), ("input", -1),
    ]
    assert app.get_state(cfg()).values == {"x": 2, "log": ["a", "b", "c"] * 2}


@pytest.mark.anyio
async def test_aget_state_history() -> None:
    app = _abc()
    await app.ainvoke({"x": 1}, cfg())
    steps = [s.metadata["step"] async for s in app.aget_state_history(cfg(), limit=3)]
    assert steps == [3, 2, 1]


@pytest.mark.parametrize("second", ["asks", "fails"])
def test_history_shows_pending_results_errors_and_interrupts_without_applying_them(
    second: str,
) -> None:
    """As LangGraph 1.2.22: a history entry's tasks carry what their pending writes say
    (result, error, interrupts), while its values and `next` stay as checkpointed; `get_state`
    applies the finished ones. Checked side by side with LangGraph."""
    from engine import interrupt

    def asks(s: S) -> dict:
        return {"log": [interrupt("q")]}

    def fails(s: S) -> dict:
        raise ValueError("boom")

    g = StateGraph(S)
    g.add_node("fine", lambda s: {"log": ["fine"]})
    g.add_node("second", asks if second == "asks" else fails)
    g.add_edge(START, "fine")
    g.add_edge(START, "second")
    app = g.compile(checkpointer=InMemorySaver())
    if second == "asks":
        app.invoke({"x": 1}, cfg())
    else:
        with pytest.raises(ValueError):
            app.invoke({"x": 1}, cfg())
    latest = app.get_state(cfg())
    entry = next(iter(app.get_state_history(cfg())))
    assert entry.config == latest.config
    assert latest.values == {"x": 1, "log": ["fine"]} and latest.next == ("second",)
    assert entry.values == {"x": 1, "log": []} and entry.next == ("fine", "second")
    for snap in (latest, entry):
        fine, other = snap.tasks
        assert (fine.name, fine.result, fine.error) == ("fine", {"log": ["fine"]}, None)
        assert other.result is None
        if second == "asks":
            assert [i.value for i in other.interrupts] == ["q"] and other.error is None
            assert [i.value for i in snap.interrupts] == ["q"]
        else:
            assert other.error == "ValueError('boom')" and other.interrupts == ()
            assert snap.interrupts == ()


# -- update_state (lg_facts §15) ----------------------------------------------------------------


def _paused_before_b() -> Any:
    app = _abc(interrupt_before=["b"])
    app.invoke({"x": 1}, cfg())
    return app


def test_update_state_acts_as_the_last_node() -> None:
    app = _paused_before_b()
    returned = app.update_state(cfg(), {"log": ["u"]})
    conf = returned["configurable"]
    assert set(conf) == {"thread_id", "checkpoint_ns", "checkpoint_id"}
    assert (conf["thread_id"], conf["checkpoint_ns"]) == ("1", "")
    state = app.get_state(cfg())
    assert state.config["configurable"]["checkpoint_id"] == conf["checkpoint_id"]
    assert state.values == {"x": 1, "log": ["a", "u"]}
    assert state.next == ("b",)
    assert state.metadata == {"source": "update", "step": 2, "parents": {}}


def test_update_state_as_node() -> None:
    app = _paused_before_b()
    app.update_state(cfg(), {"log": ["ub"]}, as_node="b")
    state = app.get_state(cfg())
    assert state.next == ("c",)
    assert state.metadata["step"] == 2
    app.update_state(cfg(), {"log": ["uc"]}, as_node="c")
    state = app.get_state(cfg())
    assert state.next == ()
    assert state.metadata["step"] == 3
    assert state.values == {"x": 1, "log": ["a", "ub", "uc"]}


def test_each_update_adds_one_checkpoint() -> None:
    app = _paused_before_b()
    before = len(list(app.get_state_history(cfg())))
    app.update_state(cfg(), {"x": 5})
    app.update_state(cfg(), {"x": 6})
    history = _steps(app, cfg())
    assert len(history) == before + 2
    assert history[:2] == [("update", 3, ("b",)), ("update", 2, ("b",))]


def test_update_state_then_continue() -> None:
    calls: list[str] = []
    app = _abc(calls, interrupt_before=["b"])
    app.invoke({"x": 1}, cfg())
    app.update_state(cfg(), {"x": 42})
    assert app.invoke(None, cfg()) == {"x": 42, "log": ["a", "b", "c"]}
    assert calls == ["a", "b", "c"]


def test_update_state_unknown_node() -> None:
    app = _paused_before_b()
    with pytest.raises(InvalidUpdateError) as info:
        app.update_state(cfg(), {"x": 2}, as_node="nope")
    assert str(info.value) == "Node nope does not exist"


def test_update_state_ambiguous() -> None:
    g = StateGraph(S)
    g.add_node("p", lambda s: {"log": ["p"]})
    g.add_node("q", lambda s: {"log": ["q"]})
    g.add_edge(START, "p")
    g.add_edge(START, "q")
    app = g.compile(checkpointer=InMemorySaver())
    app.invoke({"x": 1}, cfg())
    with pytest.raises(InvalidUpdateError) as info:
        app.update_state(cfg(), {"x": 2})
    assert str(info.value) == "Ambiguous update, specify as_node"
    app.update_state(cfg(), {"x": 2}, as_node="p")
    assert app.get_state(cfg()).values == {"x": 2, "log": ["p", "q"]}


def test_update_state_on_an_empty_thread() -> None:
    calls: list[str] = []
    app = _abc(calls)
    app.update_state(cfg("empty"), {"x": 9})
    state = app.get_state(cfg("empty"))
    assert state.values == {"x": 9, "log": []}
    assert state.next == ("a",)
    assert state.metadata == {"source": "update", "step": 0, "parents": {}}
    assert app.invoke(None, cfg("empty")) == {"x": 9, "log": ["a", "b", "c"]}


def test_update_state_on_an_old_checkpoint() -> None:
    app = _abc()
    app.invoke({"x": 1}, cfg())
    old = next(s for s in app.get_state_history(cfg()) if s.metadata["step"] == 1)
    returned = app.update_state(old.config, {"x": 100})
    state = app.get_state(returned)
    assert state.metadata == {"source": "update", "step": 2, "parents": {}}
    assert state.parent_config == old.config
    assert state.next == ("b",)
    assert app.invoke(None, returned) == {"x": 100, "log": ["a", "b", "c"]}


@pytest.mark.anyio
async def test_aupdate_state() -> None:
    app = _paused_before_b()
    await app.aupdate_state(cfg(), {"log": ["au"]})
    assert (await app.aget_state(cfg())).values == {"x": 1, "log": ["a", "au"]}


# -- fork / replay (lg_facts §15) ---------------------------------------------------------------


def test_replay_from_an_old_checkpoint_forks() -> None:
    calls: list[str] = []
    app = _abc(calls)
    app.invoke({"x": 1}, cfg())
    old = next(s for s in app.get_state_history(cfg()) if s.metadata["step"] == 1)
    assert old.next == ("b",)
    calls.clear()
    items = list(app.stream(None, old.config, stream_mode="values"))
    assert items[0] == {"x": 1, "log": ["a"]}  # the state at that checkpoint first
    assert items[-1] == {"x": 1, "log": ["a", "b", "c"]}
    assert calls == ["b", "c"]
    history = list(app.get_state_history(cfg()))
    assert [(s.metadata["source"], s.metadata["step"], s.next) for s in history] == [
        ("loop", 4, ()),
        ("loop", 3, ("c",)),
        ("fork", 2, ("b",)),
        ("loop", 3, ()),
        ("loop", 2, ("c",)),
        ("loop", 1, ("b",)),
        ("loop", 0, ("a",)),
        ("input", -1, ("__start__",)),
    ]
    assert history[2].parent_config == old.config
    assert history[1].parent_config == history[2].config


# -- partial failure, then resume (lg_facts §14) ------------------------------------------------


def _partial(runs: list[str], fail: list[bool], use_async: bool = False) -> Any:
    if use_async:
        import asyncio

        async def ok(s: S) -> dict:
            runs.append("ok")
            return {"log": ["ok"]}

        async def bad(s: S) -> dict:
            runs.append("bad")
            await asyncio.sleep(0.05)
            if fail[0]:
                raise ValueError("bad failed")
            return {"log": ["bad"]}
    else:
        def ok(s: S) -> dict:
            runs.append("ok")
            return {"log": ["ok"]}

        def bad(s: S) -> dict:
            runs.append("bad")
            time.sleep(0.05)
            if fail[0]:
                raise ValueError("bad failed")
            return {"log": ["bad"]}

    def after(s: S) -> dict:
        runs.append("after")
        return {"log": ["after"]}

    g = StateGraph(S)
    g.add_node("ok", ok)
    g.add_node("bad", bad)
    g.add_node("after", after)
    g.add_edge(START, "ok")
    g.add_edge(START, "bad")
    g.add_edge(["ok", "bad"], "after")
    return g.compile(checkpointer=InMemorySaver())


def test_partial_failure_first_run() -> None:
    runs: list[str] = []
    app = _partial(runs, [True])
    items = []
    with pytest.raises(ValueError, match="bad failed"):
        for item in app.stream({"x": 1}, cfg(), stream_mode=["values", "updates", "tasks"]):
            items.append(item)
    assert items[0] == ("values", {"x": 1, "log": []})
    starts = [c["name"] for m, c in items if m == "tasks" and "input" in c]
    assert starts == ["bad", "ok"]
    assert ("updates", {"ok": {"log": ["ok"]}}) in items
    bad_result = next(c for m, c in items if m == "tasks" and c["name"] == "bad" and "error" in c)
    assert isinstance(bad_result["error"], ValueError)
    assert bad_result["result"] == {}


def test_partial_failure_state() -> None:
    runs: list[str] = []
    app = _partial(runs, [True])
    with pytest.raises(ValueError):
        app.invoke({"x": 1}, cfg())
    state = app.get_state(cfg())
    assert state.values == {"x": 1, "log": ["ok"]}  # includes ok's pending write
    assert state.next == ("bad",)
    assert state.metadata == {"source": "loop", "step": 0, "parents": {}}
    tasks = {t.name: t for t in state.tasks}
    assert tasks["ok"].result == {"log": ["ok"]}
    assert tasks["ok"].error is None
    assert tasks["bad"].error == "ValueError('bad failed')"
    assert tasks["bad"].result is None
    assert [t.name for t in state.tasks] == ["ok", "bad"]
    assert _steps(app, cfg()) == [("loop", 0, ("ok", "bad")), ("input", -1, ("__start__",))]


def test_resume_after_partial_failure_does_not_rerun_the_finished_sibling() -> None:
    runs: list[str] = []
    fail = [True]
    app = _partial(runs, fail)
    with pytest.raises(ValueError):
        app.invoke({"x": 1}, cfg())
    assert sorted(runs) == ["bad", "ok"]
    runs.clear()
    fail[0] = False
    items = list(app.stream(None, cfg(), stream_mode=["updates", "values"]))
    assert items == [
        ("values", {"x": 1, "log": []}),
        ("updates", {"ok": {"log": ["ok"]}, "__metadata__": {"cached": True}}),
        ("updates", {"bad": {"log": ["bad"]}}),
        ("values", {"x": 1, "log": ["bad", "ok"]}),
        ("updates", {"after": {"log": ["after"]}}),
        ("values", {"x": 1, "log": ["bad", "ok", "after"]}),
    ]
    assert runs == ["bad", "after"]


@pytest.mark.anyio
async def test_resume_after_partial_failure_async() -> None:
    runs: list[str] = []
    fail = [True]
    app = _partial(runs, fail, use_async=True)
    with pytest.raises(ValueError):
        await app.ainvoke({"x": 1}, cfg())
    assert (await app.aget_state(cfg())).values == {"x": 1, "log": ["ok"]}
    runs.clear()
    fail[0] = False
    items = [i async for i in app.astream(None, cfg(), stream_mode="updates")]
    assert items == [
        {"ok": {"log": ["ok"]}, "__metadata__": {"cached": True}},
        {"bad": {"log": ["bad"]}},
        {"after": {"log": ["after"]}},
    ]
    assert runs == ["bad", "after"]


def test_resume_after_failure_invoke() -> None:
    runs: list[str] = []
    fail = [True]
    app = _partial(runs, fail)
    with pytest.raises(ValueError):
        app.invoke({"x": 1}, cfg())
    fail[0] = False
    assert app.invoke(None, cfg()) == {"x": 1, "log": ["bad", "ok", "after"]}
    assert runs.count("ok") == 1
