"""Scenarios in the shapes LangGraph's docs teach; each runs against `lib` ("lg" or "gr").

Every scenario builds its graphs with names from `lib` only and returns a normalized transcript
(a list of `(label, item)`). Where tasks of one step race, the scenario either sleeps long enough
to fix the finish order or records that part sorted, so the transcript does not depend on timing.
Strings written by nodes avoid ":" and "|" so they never look like namespaces.
"""

import asyncio
import operator
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Optional, TypedDict

from .harness import Transcript

Scenario = Callable[[Any], list[Any]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(fn: Scenario) -> Scenario:
    SCENARIOS[fn.__name__] = fn
    return fn


class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def cfg(thread: str, **extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}, **extra}


def logger(name: str, sleep: float = 0.0) -> Callable[[Any], dict[str, Any]]:
    def node(state: Any) -> dict[str, Any]:
        if sleep:
            time.sleep(sleep)
        return {"log": [name]}

    node.__name__ = name
    return node


def chain_graph(lib: Any, names: str = "ab", checkpointer: Any = None, **compile_kw: Any) -> Any:
    b = lib.StateGraph(S)
    for n in names:
        b.add_node(n, logger(n))
    b.add_edge(lib.START, names[0])
    for src, dst in zip(names, names[1:]):
        b.add_edge(src, dst)
    b.add_edge(names[-1], lib.END)
    return b.compile(checkpointer=checkpointer, **compile_kw)


ALL_MODES = ["values", "updates", "debug", "tasks", "checkpoints"]
LAG = 0.1  # seconds a node sleeps so that its sibling in the same step finishes first


# --- sequential chain -------------------------------------------------------------------------


@scenario
def chain_all_modes(lib: Any) -> list[Any]:
    """a -> b with a checkpointer, every structural stream mode at once."""
    t = Transcript()

    def a(s: S) -> dict[str, Any]:
        return {"x": s["x"] + 1, "log": ["a"]}

    def b_(s: S) -> dict[str, Any]:
        return {"x": s["x"] * 10, "log": ["b"]}

    b = lib.StateGraph(S)
    b.add_node("a", a)
    b.add_node("b", b_)
    b.add_edge(lib.START, "a")
    b.add_edge("a", "b")
    b.add_edge("b", lib.END)
    g = b.compile(checkpointer=lib.InMemorySaver())
    t.stream("stream", g, {"x": 1}, cfg("t1"), stream_mode=ALL_MODES)
    t.call("invoke", g.invoke, {"x": 1}, cfg("t2"))
    t.state("state", g, cfg("t2"))
    return t.items


@scenario
def chain_no_checkpointer(lib: Any) -> list[Any]:
    """Without a checkpointer: debug has no checkpoint events, checkpoints mode is empty."""
    t = Transcript()
    g = chain_graph(lib, "abc")
    t.stream("debug", g, {"x": 1}, stream_mode="debug")
    t.stream("tasks", g, {"x": 1}, stream_mode="tasks")
    t.stream("checkpoints", g, {"x": 1}, stream_mode="checkpoints")
    t.stream("default", g, {"x": 1})
    t.stream("values", g, {"x": 1}, stream_mode="values")
    t.call("invoke", g.invoke, {"x": 1})
    t.call("invoke_updates", g.invoke, {"x": 1}, stream_mode="updates")
    return t.items


@scenario
def async_chain(lib: Any) -> list[Any]:
    """Async nodes through astream / ainvoke."""
    t = Transcript()

    async def a(s: S) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"x": s["x"] + 1, "log": ["a"]}

    async def b_(s: S) -> dict[str, Any]:
        return {"log": ["b"]}

    b = lib.StateGraph(S)
    b.add_node("a", a)
    b.add_node("b", b_)
    b.add_edge(lib.START, "a")
    b.add_edge("a", "b")
    g = b.compile(checkpointer=lib.InMemorySaver())

    async def main() -> None:
        async for item in g.astream({"x": 1}, cfg("t"), stream_mode=["updates", "values"]):
            t.add("astream", item)
        t.add("ainvoke", await g.ainvoke({"x": 5}, cfg("t2")))
        t.add("abatch", await g.abatch([{"x": 1}, {"x": 2}], [cfg("b1"), cfg("b2")]))

    asyncio.run(main())
    return t.items


# --- node return shapes -------------------------------------------------------------------------


@scenario
def return_shapes(lib: Any) -> list[Any]:
    """{} / None / unknown keys / Command / list of Commands / bad returns; input with unknown keys."""
    t = Transcript()
    returns: list[tuple[str, Any]] = [
        ("empty", {}),
        ("none", None),
        ("unknown", {"unknown": 1}),
        ("mixed", {"x": 5, "unknown": 1}),
        ("command", lib.Command(update={"x": 3})),
        ("command_tuples", lib.Command(update=[("x", 4), ("log", ["t"])])),
        ("commands", [lib.Command(update={"x": 7}), lib.Command(update={"log": ["c2"]})]),
        ("commands_clash", [lib.Command(update={"x": 7}), lib.Command(update={"x": 8})]),
        ("int", 5),
        ("str", "text"),
        ("list_of_dicts", [{"x": 2}]),
    ]
    for label, ret in returns:

        def a(s: S, ret: Any = ret) -> Any:
            return ret

        b = lib.StateGraph(S)
        b.add_node("a", a)
        b.add_node("b", logger("b"))
        b.add_edge(lib.START, "a")
        b.add_edge("a", "b")
        g = b.compile()
        t.stream(label, g, {"x": 1}, stream_mode=["updates", "values"])
    g = chain_graph(lib, "ab")
    t.stream("input_unknown_key", g, {"x": 1, "bogus": 2}, stream_mode=["updates", "values"])
    t.stream("input_only_unknown", g, {"bogus": 2}, stream_mode=["updates", "values"])
    t.stream("input_empty", g, {}, stream_mode=["updates", "values"])
    return t.items


@scenario
def concurrent_write_error(lib: Any) -> list[Any]:
    """Two tasks of one step write the same plain key (equal values) -> InvalidUpdateError."""
    t = Transcript()

    def p(s: S) -> dict[str, Any]:
        return {"x": 1, "log": ["p"]}

    def q(s: S) -> dict[str, Any]:
        time.sleep(LAG)
        return {"x": 1, "log": ["q"]}

    b = lib.StateGraph(S)
    b.add_node("p", p)
    b.add_node("q", q)
    b.add_edge(lib.START, "p")
    b.add_edge(lib.START, "q")
    g = b.compile()
    t.stream("stream", g, {"x": 0}, stream_mode=["updates", "values"])
    try:
        g.invoke({"x": 0})
    except lib.InvalidUpdateError as e:
        t.add("caught_as_InvalidUpdateError", e)
    return t.items


# --- recursion limit ----------------------------------------------------------------------------


@scenario
def recursion_limit(lib: Any) -> list[Any]:
    """Which nodes run under each limit; the error and its type; limit < 1; limit on resume."""
    t = Transcript()
    g = chain_graph(lib, "abc", checkpointer=lib.InMemorySaver())
    for limit in range(0, 6):
        config = cfg(f"r{limit}", recursion_limit=limit)
        t.stream(f"limit{limit}", g, {"x": 0}, config)
        if limit:
            snap = g.get_state(config)
            t.add(f"limit{limit}_state", (snap.values, snap.next, snap.metadata["step"]))
    try:
        g.invoke({"x": 0}, {"recursion_limit": 2, "configurable": {"thread_id": "e"}})
    except lib.GraphRecursionError as e:
        t.add("is_RecursionError", isinstance(e, RecursionError))
    # a resumed run counts its own steps
    names = "abcdefgh"
    paused = chain_graph(lib, names, checkpointer=lib.InMemorySaver(), interrupt_before=["b"])
    for limit in (1, 2, 3):
        config = cfg(f"resume{limit}", recursion_limit=20)
        paused.invoke({"x": 0}, config)
        t.stream(f"resume_limit{limit}", paused, None, {**config, "recursion_limit": limit})
    return t.items


# --- map-reduce with Send -----------------------------------------------------------------------


class MapState(TypedDict):
    items: list
    out: Annotated[list, operator.add]


DURATIONS = {"a": 0.3, "b": 0.0, "c": 0.2, "d": 0.1}


def _work(arg: dict[str, Any]) -> dict[str, Any]:
    time.sleep(DURATIONS.get(arg["item"], 0))
    return {"out": [arg["item"]]}


@scenario
def map_reduce_send(lib: Any) -> list[Any]:
    """Sends finish in random order; state applies pull tasks by name, then Sends in send order."""
    t = Transcript()

    def fanout(s: MapState) -> list[Any]:
        return [lib.Send("work", {"item": i}) for i in s["items"]]

    b = lib.StateGraph(MapState)
    b.add_node("start", lambda s: {})
    b.add_node("work", _work)
    b.add_node("zz", lambda s: {"out": ["zz"]})
    b.add_node("aa", lambda s: {"out": ["aa"]})
    b.add_node("reduce", lambda s: {"out": ["reduce"]})
    b.add_edge(lib.START, "start")
    b.add_conditional_edges("start", fanout, ["work"])
    b.add_edge("start", "zz")
    b.add_edge("start", "aa")
    b.add_edge("work", "reduce")
    g = b.compile()
    inp = {"items": ["a", "b", "c", "d"]}
    t.stream("values", g, inp, stream_mode="values")
    updates = [u for u in g.stream(inp, stream_mode="updates")]
    t.add("updates_sorted", sorted(updates, key=repr))
    t.add("updates_first_last", (updates[0], updates[-1]))
    # the tasks stream: which tasks start in each step and with what input/triggers
    starts = [
        (c["name"], c["input"], c["triggers"])
        for c in g.stream(inp, stream_mode="tasks")
        if "input" in c
    ]
    t.add("task_starts", starts)
    t.call("invoke", g.invoke, inp)
    return t.items


@scenario
def map_reduce_finish_order(lib: Any) -> list[Any]:
    """The updates stream follows finish order (sleeps 0/0.1/0.2/0.3 s fix that order)."""
    t = Transcript()

    def fanout(s: MapState) -> list[Any]:
        return [lib.Send("work", {"item": i}) for i in s["items"]]

    b = lib.StateGraph(MapState)
    b.add_node("work", _work)
    b.add_conditional_edges(lib.START, fanout)
    g = b.compile()
    t.stream("updates", g, {"items": ["a", "b", "c", "d"]}, stream_mode=["updates", "values"])
    return t.items


@scenario
def send_mixed_router(lib: Any) -> list[Any]:
    """A router returning Sends mixed with node names; Command(goto=[Send, name])."""
    t = Transcript()

    def fan(s: MapState) -> list[Any]:
        return [lib.Send("work", {"item": "b"}), "zz", lib.Send("work", {"item": "d"}), "aa"]

    b = lib.StateGraph(MapState)
    b.add_node("start", lambda s: {})
    b.add_node("work", _work)
    b.add_node("zz", lambda s: {"out": ["zz"]})
    b.add_node("aa", lambda s: {"out": ["aa"]})
    b.add_edge(lib.START, "start")
    b.add_conditional_edges("start", fan)
    g = b.compile()
    t.call("invoke", g.invoke, {"items": []})

    def cmd(s: MapState) -> Any:
        return lib.Command(goto=[lib.Send("work", {"item": "b"}), "zz"], update={"out": ["cmd"]})

    b = lib.StateGraph(MapState)
    b.add_node("cmd", cmd)
    b.add_node("work", _work)
    b.add_node("zz", lambda s: {"out": ["zz"]})
    b.add_edge(lib.START, "cmd")
    t.call("invoke_command", b.compile().invoke, {"items": []})
    t.add("send_eq", lib.Send("w", {"a": 1}) == lib.Send("w", {"a": 1}))
    return t.items


# --- human in the loop --------------------------------------------------------------------------


def _ask_graph(lib: Any, checkpointer: Any = "memory") -> Any:
    def ask(s: S) -> dict[str, Any]:
        answer = lib.interrupt({"question": "ok?", "x": s["x"]})
        return {"log": [f"ask={answer}"]}

    b = lib.StateGraph(S)
    b.add_node("ask", ask)
    b.add_node("after", logger("after"))
    b.add_edge(lib.START, "ask")
    b.add_edge("ask", "after")
    return b.compile(checkpointer=lib.InMemorySaver() if checkpointer == "memory" else checkpointer)


@scenario
def hitl_single(lib: Any) -> list[Any]:
    """interrupt() then Command(resume=...): invoke result, streams, snapshots."""
    t = Transcript()
    g = _ask_graph(lib)
    t.call("invoke", g.invoke, {"x": 1}, cfg("1"))
    t.state("state", g, cfg("1"))
    t.call("resume_invoke", g.invoke, lib.Command(resume="yes"), cfg("1"))
    t.state("state_done", g, cfg("1"))
    t.stream("stream", g, {"x": 1}, cfg("2"), stream_mode=["updates", "values"])
    t.stream("resume_stream", g, lib.Command(resume="yes"), cfg("2"), stream_mode=["updates", "values"])
    t.stream("values_only", g, {"x": 1}, cfg("3"), stream_mode="values")
    t.stream("updates_only", g, {"x": 1}, cfg("4"))
    t.stream("tasks", g, {"x": 1}, cfg("5"), stream_mode="tasks")
    # fresh input on a paused thread starts again from START
    t.stream("fresh_input", g, {"x": 2}, cfg("4"), stream_mode=["updates", "values"])
    t.state("fresh_state", g, cfg("4"))
    # invoke(None) on a dynamically interrupted thread re-runs the node, which interrupts again
    t.stream("none_resume", g, None, cfg("4"), stream_mode=["updates", "values"])
    return t.items


@scenario
def hitl_no_checkpointer(lib: Any) -> list[Any]:
    """interrupt() without a checkpointer still surfaces __interrupt__ (no error in 1.2.22)."""
    t = Transcript()
    g = _ask_graph(lib, checkpointer=None)
    t.call("invoke", g.invoke, {"x": 1})
    t.stream("stream", g, {"x": 1}, stream_mode=["updates", "values"])
    return t.items


@scenario
def hitl_two_sequential(lib: Any) -> list[Any]:
    """Two interrupt() calls in one node: the node re-runs from the top on each resume."""
    t = Transcript()
    calls: list[str] = []

    def two(s: S) -> dict[str, Any]:
        calls.append("start")
        a = lib.interrupt("first")
        calls.append(f"a={a}")
        b_ = lib.interrupt("second")
        calls.append(f"b={b_}")
        return {"log": [f"{a}+{b_}"]}

    b = lib.StateGraph(S)
    b.add_node("two", two)
    b.add_edge(lib.START, "two")
    g = b.compile(checkpointer=lib.InMemorySaver())
    r1 = t.call("leg1", g.invoke, {"x": 1}, cfg("1"))
    t.state("leg1_state", g, cfg("1"))
    r2 = t.call("leg2", g.invoke, lib.Command(resume="A"), cfg("1"))
    t.state("leg2_state", g, cfg("1"))
    t.add("ids_differ", r1["__interrupt__"][0].id != r2["__interrupt__"][0].id)
    t.add("ids_are_32_hex", [len(r["__interrupt__"][0].id) for r in (r1, r2)])
    t.stream("leg3", g, lib.Command(resume="B"), cfg("1"), stream_mode=["updates", "values"])
    t.add("calls", calls)
    return t.items


def _parallel_interrupts(lib: Any) -> Any:
    def p1(s: S) -> dict[str, Any]:
        return {"log": [f"p1={lib.interrupt('q1')}"]}

    def p2(s: S) -> dict[str, Any]:
        time.sleep(LAG)  # p2 always finishes (or interrupts) after p1
        return {"log": [f"p2={lib.interrupt('q2')}"]}

    b = lib.StateGraph(S)
    b.add_node("p1", p1)
    b.add_node("p2", p2)
    b.add_edge(lib.START, "p1")
    b.add_edge(lib.START, "p2")
    return b.compile(checkpointer=lib.InMemorySaver())


@scenario
def hitl_parallel_by_id(lib: Any) -> list[Any]:
    """Two parallel interrupts resumed together with {interrupt id: value}."""
    t = Transcript()
    g = _parallel_interrupts(lib)
    t.stream("leg1", g, {"x": 1}, cfg("1"), stream_mode=["updates", "values"])
    snap = t.state("leg1_state", g, cfg("1"))
    resume = {i.id: f"v-{i.value}" for i in snap.interrupts}
    t.stream("resume", g, lib.Command(resume=resume), cfg("1"), stream_mode=["updates", "values"])
    t.state("done", g, cfg("1"))
    return t.items


@scenario
def hitl_parallel_partial(lib: Any) -> list[Any]:
    """Resume without an id while two are pending (error); then resume only one of them."""
    t = Transcript()
    g = _parallel_interrupts(lib)
    r = t.call("leg1", g.invoke, {"x": 1}, cfg("1"))
    t.stream("plain_resume", g, lib.Command(resume="plain"), cfg("1"), stream_mode=["updates"])
    t.state("after_plain", g, cfg("1"))
    first = r["__interrupt__"][0]
    t.stream("resume_one", g, lib.Command(resume={first.id: "only"}), cfg("1"),
             stream_mode=["updates", "values"])
    snap = t.state("after_one", g, cfg("1"))
    rest = {i.id: "rest" for i in snap.interrupts}
    t.stream("resume_rest", g, lib.Command(resume=rest), cfg("1"), stream_mode=["updates", "values"])
    return t.items


# --- static interrupts --------------------------------------------------------------------------


@scenario
def static_interrupts(lib: Any) -> list[Any]:
    """interrupt_before/after at compile time and per run; resume with invoke(None)."""
    t = Transcript()
    variants: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
        ("compile_before", {"interrupt_before": ["b"]}, {}),
        ("compile_after", {"interrupt_after": ["b"]}, {}),
        ("run_before", {}, {"interrupt_before": ["b"]}),
        ("run_after_ab", {}, {"interrupt_after": ["a", "b"]}),
        ("before_all", {"interrupt_before": "*"}, {}),
    ]
    for label, compile_kw, run_kw in variants:
        g = chain_graph(lib, "abc", checkpointer=lib.InMemorySaver(), **compile_kw)
        t.call(f"{label}_invoke", g.invoke, {"x": 1}, cfg("1"), **run_kw)
        t.state(f"{label}_state", g, cfg("1"))
        t.stream(f"{label}_stream", g, {"x": 1}, cfg("2"), stream_mode=["updates", "values"], **run_kw)
        for leg in range(4):
            if not g.get_state(cfg("2")).next:
                break
            t.stream(f"{label}_resume{leg}", g, None, cfg("2"), stream_mode=["updates", "values"], **run_kw)
    return t.items


@scenario
def static_interrupt_debug(lib: Any) -> list[Any]:
    """Debug events around a static interrupt_before."""
    t = Transcript()
    g = chain_graph(lib, "abc", checkpointer=lib.InMemorySaver(), interrupt_before=["b"])
    t.stream("debug", g, {"x": 1}, cfg("1"), stream_mode=["debug", "updates"])
    t.stream("resume", g, None, cfg("1"), stream_mode=["debug", "updates"])
    return t.items


# --- Command ------------------------------------------------------------------------------------


class Sup(TypedDict):
    count: int
    log: Annotated[list, operator.add]


@scenario
def supervisor_command(lib: Any) -> list[Any]:
    """A supervisor loop driven by Command(goto=..., update=...)."""
    t = Transcript()

    def supervisor(s: Sup) -> Any:
        if s["count"] >= 2:
            return lib.Command(goto=lib.END, update={"log": ["sup-end"]})
        return lib.Command(goto="worker", update={"log": [f"sup{s['count']}"]})

    def worker(s: Sup) -> Any:
        return lib.Command(goto="supervisor", update={"count": s["count"] + 1, "log": ["work"]})

    b = lib.StateGraph(Sup)
    b.add_node("supervisor", supervisor, destinations=("worker", lib.END))
    b.add_node("worker", worker, destinations=("supervisor",))
    b.add_edge(lib.START, "supervisor")
    g = b.compile(checkpointer=lib.InMemorySaver())
    t.stream("stream", g, {"count": 0}, cfg("1"), stream_mode=["updates", "values", "tasks"])
    t.call("invoke", g.invoke, {"count": 0}, cfg("2"))
    t.add("history", [(c.metadata["step"], c.next) for c in g.get_state_history(cfg("2"))])

    def bad(s: Sup) -> Any:
        return lib.Command(goto="nope")

    b = lib.StateGraph(Sup)
    b.add_node("bad", bad)
    b.add_edge(lib.START, "bad")
    t.call("goto_unknown", b.compile().invoke, {"count": 0})
    return t.items


@scenario
def command_parent(lib: Any) -> list[Any]:
    """Command(graph=PARENT) from a subgraph node; the parent's static edge still fires."""
    t = Transcript()

    def child_node(s: Sup) -> Any:
        return lib.Command(graph=lib.Command.PARENT, goto="target",
                           update={"log": ["from-child"], "count": 99})

    cb = lib.StateGraph(Sup)
    cb.add_node("child_node", child_node)
    cb.add_edge(lib.START, "child_node")
    child = cb.compile()
    for with_edge in (True, False):
        b = lib.StateGraph(Sup)
        b.add_node("child", child)
        b.add_node("target", logger("target", sleep=LAG))  # after finishes first
        b.add_node("after", logger("after"))
        b.add_edge(lib.START, "child")
        if with_edge:
            b.add_edge("child", "after")
        g = b.compile()
        t.stream(f"edge={with_edge}", g, {"count": 0}, stream_mode=["updates", "values"], subgraphs=True)
        t.call(f"edge={with_edge}_invoke", g.invoke, {"count": 0})
    return t.items


# --- subgraphs ----------------------------------------------------------------------------------


def _nested(lib: Any, g1: Callable[[S], Any], checkpointer: Any = None) -> Any:
    gb = lib.StateGraph(S)
    gb.add_node("g1", g1)
    gb.add_edge(lib.START, "g1")
    cb = lib.StateGraph(S)
    cb.add_node("c1", logger("c1"))
    cb.add_node("grand", gb.compile())
    cb.add_edge(lib.START, "c1")
    cb.add_edge("c1", "grand")
    pb = lib.StateGraph(S)
    pb.add_node("p1", logger("p1"))
    pb.add_node("child", cb.compile())
    pb.add_edge(lib.START, "p1")
    pb.add_edge("p1", "child")
    return pb.compile(checkpointer=checkpointer)


@scenario
def subgraph_two_levels(lib: Any) -> list[Any]:
    """stream(subgraphs=True): namespaces ("child:<task id>", "grand:<task id>")."""
    t = Transcript()
    g = _nested(lib, logger("g1"), checkpointer=lib.InMemorySaver())
    t.stream("multi", g, {"x": 1}, cfg("1"), stream_mode=["updates", "values", "tasks"], subgraphs=True)
    t.stream("single", g, {"x": 1}, cfg("2"), stream_mode="updates", subgraphs=True)
    t.stream("no_subgraphs", g, {"x": 1}, cfg("3"), stream_mode="updates")
    t.call("invoke", g.invoke, {"x": 1}, cfg("4"))
    return t.items


@scenario
def subgraph_interrupt_state(lib: Any) -> list[Any]:
    """An interrupt two levels down: streams, get_state(subgraphs=True), resume."""
    t = Transcript()

    def g1(s: S) -> dict[str, Any]:
        return {"log": [f"g1={lib.interrupt('deep')}"]}

    g = _nested(lib, g1, checkpointer=lib.InMemorySaver())
    t.stream("leg1", g, {"x": 1}, cfg("1"), stream_mode=["updates"], subgraphs=True)
    t.state("state_subgraphs", g, cfg("1"), subgraphs=True)
    snap = g.get_state(cfg("1"))
    t.add("state_plain", (snap.values, snap.next, snap.interrupts, snap.tasks[0].state))
    t.stream("resume", g, lib.Command(resume="R"), cfg("1"), stream_mode=["updates"], subgraphs=True)
    t.add("final", g.get_state(cfg("1")).values)
    t.add("history_ns", [c.config["configurable"]["checkpoint_ns"] for c in g.get_state_history(cfg("1"))])
    return t.items


@scenario
def subgraph_in_node_function(lib: Any) -> list[Any]:
    """A compiled graph invoked inside a node function also streams under the node's namespace."""
    t = Transcript()
    ib = lib.StateGraph(S)
    ib.add_node("inner", logger("inner"))
    ib.add_edge(lib.START, "inner")
    inner = ib.compile()

    def caller(s: S) -> dict[str, Any]:
        out = inner.invoke({"x": s["x"], "log": []})
        return {"log": ["caller", *out["log"]]}

    b = lib.StateGraph(S)
    b.add_node("caller", caller)
    b.add_edge(lib.START, "caller")
    g = b.compile()
    t.stream("subgraphs", g, {"x": 1}, stream_mode=["updates", "tasks"], subgraphs=True)
    t.stream("root_only", g, {"x": 1}, stream_mode=["updates"])
    return t.items


# --- edges --------------------------------------------------------------------------------------


@scenario
def join_edges(lib: Any) -> list[Any]:
    """add_edge([a, b2], c): c runs once, after both branches (of different lengths) ran."""
    t = Transcript()
    b = lib.StateGraph(S)
    b.add_node("a", logger("a"))
    b.add_node("b1", logger("b1", sleep=LAG))  # sleeps fix the finish order within a step
    b.add_node("b2", logger("b2"))
    b.add_node("c", logger("c"))
    b.add_edge(lib.START, "a")
    b.add_edge(lib.START, "b1")
    b.add_edge("b1", "b2")
    b.add_edge(["a", "b2"], "c")
    g = b.compile(checkpointer=lib.InMemorySaver())
    t.stream("stream", g, {"x": 0}, cfg("1"), stream_mode=["updates", "values"])
    # Deliberate difference: at the step-1 checkpoint LangGraph lists the join target `c` in
    # `next` although its barrier still waits for b2 (c runs two steps later). graphrun lists
    # only the tasks that will actually run next, so `c` is dropped from that entry here.
    history = [(c.metadata["step"], c.next) for c in g.get_state_history(cfg("1"))]
    t.add("history", [(step, tuple(n for n in nxt if step != 1 or n != "c")) for step, nxt in history])
    return t.items


@scenario
def plain_fan_in_runs_twice(lib: Any) -> list[Any]:
    """Two plain edges into one node from branches of different length: it runs twice; defer=True once."""
    t = Transcript()
    for defer in (False, True):
        b = lib.StateGraph(S)
        for n in ("a", "b1", "b2"):
            b.add_node(n, logger(n))
        b.add_node("c", logger("c", sleep=LAG))  # c finishes after b1
        b.add_node("join", logger("join", sleep=LAG), defer=defer)  # and join after b2
        b.add_edge(lib.START, "a")
        b.add_edge("a", "b1")
        b.add_edge("b1", "b2")
        b.add_edge("a", "c")
        b.add_edge("b2", "join")
        b.add_edge("c", "join")
        g = b.compile(checkpointer=lib.InMemorySaver())
        t.stream(f"defer={defer}", g, {"x": 0}, cfg(str(defer)), stream_mode=["updates", "values"])
        t.add(f"defer={defer}_history",
              [(c.metadata["step"], c.next) for c in g.get_state_history(cfg(str(defer)))])
    return t.items


class Route(TypedDict):
    x: int
    route: Any
    log: Annotated[list, operator.add]


@scenario
def conditional_edges(lib: Any) -> list[Any]:
    """Routers with a path_map dict, a path_map list, none, returning lists and END."""
    t = Transcript()

    def router(s: Route) -> Any:
        return s["route"]

    def build(path_map: Any) -> Any:
        b = lib.StateGraph(Route)
        b.add_node("start", logger("start"))
        for n in ("left", "right", "other"):
            b.add_node(n, logger(n))
        b.add_edge(lib.START, "start")
        if path_map is None:
            b.add_conditional_edges("start", router)
        else:
            b.add_conditional_edges("start", router, path_map)
        return b.compile()

    dict_map = {"L": "left", "R": "right", "stop": lib.END}
    for route in ("L", "R", "stop", ["L", "R"]):
        t.call(f"dict_{route}", build(dict_map).invoke, {"x": 0, "route": route})
    for route in ("left", "other", lib.END, ["left", "right"], ["left", lib.END]):
        t.call(f"list_{route}", build(["left", "right", "other", lib.END]).invoke, {"x": 0, "route": route})
        t.call(f"none_{route}", build(None).invoke, {"x": 0, "route": route})
    t.call("dict_missing_key", build(dict_map).invoke, {"x": 0, "route": "nope"})

    # a router after a task sees that task's writes only
    seen: list[Any] = []

    def see(s: Route) -> str:
        seen.append(list(s["log"]))
        return lib.END

    b = lib.StateGraph(Route)
    b.add_node("p", logger("p"))
    b.add_node("q", logger("q"))
    b.add_edge(lib.START, "p")
    b.add_edge(lib.START, "q")
    b.add_conditional_edges("p", see)
    b.compile().invoke({"x": 0, "route": None})
    t.add("router_sees", seen)

    # Literal return annotation works as a path map
    def lit(s: Route) -> Literal["left", "right"]:
        return "right"

    b = lib.StateGraph(Route)
    b.add_node("left", logger("left"))
    b.add_node("right", logger("right"))
    b.add_conditional_edges(lib.START, lit)
    t.call("literal_from_start", b.compile().invoke, {"x": 0, "route": None})
    return t.items


# --- custom stream ------------------------------------------------------------------------------


@scenario
def custom_stream_writer(lib: Any) -> list[Any]:
    """get_stream_writer() and the `writer` parameter; custom chunks from a subgraph."""
    t = Transcript()

    def a(s: S) -> dict[str, Any]:
        w = lib.get_stream_writer()
        w({"progress": "a1"})
        w("plain-string")
        w(("tuple", 1))
        return {"x": 1}

    def b_(s: S, writer) -> dict[str, Any]:  # type: ignore[no-untyped-def]  # LangGraph injects only an
        # untyped `writer` or one annotated StreamWriter; `writer: Any` gets no writer (TypeError)
        writer({"progress": "b"})
        return {"x": 2}

    b = lib.StateGraph(S)
    b.add_node("a", a)
    b.add_node("b", b_)
    b.add_edge(lib.START, "a")
    b.add_edge("a", "b")
    g = b.compile()
    t.stream("custom", g, {"x": 0}, stream_mode="custom")
    t.stream("custom_updates", g, {"x": 0}, stream_mode=["custom", "updates"])
    t.stream("updates_only", g, {"x": 0}, stream_mode="updates")

    pb = lib.StateGraph(S)
    pb.add_node("sub", g)

    def outer(s: S) -> None:
        lib.get_stream_writer()("outer")

    pb.add_node("outer", outer)
    pb.add_edge(lib.START, "sub")
    pb.add_edge("sub", "outer")
    pg = pb.compile()
    t.stream("sub_no_subgraphs", pg, {"x": 0}, stream_mode="custom")
    t.stream("sub_subgraphs", pg, {"x": 0}, stream_mode="custom", subgraphs=True)

    def boom(s: S) -> None:
        lib.get_stream_writer()("before-boom")
        raise ValueError("boom")

    fb = lib.StateGraph(S)
    fb.add_node("boom", boom)
    fb.add_edge(lib.START, "boom")
    t.stream("then_error", fb.compile(), {"x": 0}, stream_mode="custom")
    return t.items


# --- failures and retries -----------------------------------------------------------------------


@scenario
def partial_failure_resume(lib: Any) -> list[Any]:
    """A failing task next to a finished sibling; get_state; resume re-runs only the failed one."""
    t = Transcript()
    runs: list[str] = []
    fail = {"on": True}

    def ok(s: S) -> dict[str, Any]:
        runs.append("ok")
        return {"log": ["ok"]}

    def bad(s: S) -> dict[str, Any]:
        runs.append("bad")
        time.sleep(LAG)
        if fail["on"]:
            raise ValueError("bad failed")
        return {"log": ["bad"]}

    b = lib.StateGraph(S)
    b.add_node("ok", ok)
    b.add_node("bad", bad)
    b.add_node("after", logger("after"))
    b.add_edge(lib.START, "ok")
    b.add_edge(lib.START, "bad")
    b.add_edge(["ok", "bad"], "after")
    g = b.compile(checkpointer=lib.InMemorySaver())
    t.stream("first", g, {"x": 1}, cfg("1"), stream_mode=["updates", "values", "tasks"])
    t.state("state", g, cfg("1"))
    t.add("history", [(c.metadata["source"], c.metadata["step"], c.next) for c in g.get_state_history(cfg("1"))])
    fail["on"] = False
    runs.clear()
    t.stream("resume", g, None, cfg("1"), stream_mode=["updates", "values"])
    t.add("runs_on_resume", runs)
    t.state("final", g, cfg("1"))
    return t.items


@scenario
def retry_policy(lib: Any) -> list[Any]:
    """Attempts per exception type under the default retry_on; explicit retry_on; max_attempts."""
    t = Transcript()
    p = lib.RetryPolicy()
    t.add("defaults", (p.initial_interval, p.backoff_factor, p.max_interval, p.max_attempts, p.jitter))

    class MyError(Exception):
        pass

    fast = lib.RetryPolicy(initial_interval=0.001, backoff_factor=1.0, jitter=False)
    cases: list[tuple[str, Callable[[], Exception], Any]] = [
        ("ValueError", lambda: ValueError("v"), fast),
        ("KeyError", lambda: KeyError("k"), fast),
        ("RuntimeError", lambda: RuntimeError("r"), fast),
        ("OSError", lambda: OSError("o"), fast),
        ("TimeoutError", lambda: TimeoutError("t"), fast),
        ("ConnectionError", lambda: ConnectionError("c"), fast),
        ("MyError", lambda: MyError("m"), fast),
        ("AttributeError", lambda: AttributeError("a"), fast),
        ("no_policy", lambda: MyError("m"), None),
        ("max1", lambda: MyError("m"), lib.RetryPolicy(max_attempts=1, initial_interval=0.001)),
        ("max5", lambda: MyError("m"), lib.RetryPolicy(max_attempts=5, initial_interval=0.001, jitter=False)),
        ("on_ValueError", lambda: ValueError("v"),
         lib.RetryPolicy(retry_on=ValueError, initial_interval=0.001, jitter=False)),
        ("on_tuple", lambda: ValueError("v"),
         lib.RetryPolicy(retry_on=(KeyError,), initial_interval=0.001, jitter=False)),
        ("on_callable", lambda: ValueError("v"),
         lib.RetryPolicy(retry_on=lambda e: "v" in str(e), initial_interval=0.001, jitter=False)),
    ]
    for label, make, policy in cases:
        calls: list[int] = []

        def f(s: S, make: Any = make, calls: list[int] = calls) -> Any:
            calls.append(1)
            raise make()

        b = lib.StateGraph(S)
        b.add_node("f", f, retry_policy=policy)
        b.add_edge(lib.START, "f")
        t.call(label, b.compile().invoke, {"x": 0})
        t.add(f"{label}_attempts", len(calls))

    flaky = {"n": 0}

    def sometimes(s: S) -> dict[str, Any]:
        flaky["n"] += 1
        if flaky["n"] < 3:
            raise ConnectionError("flaky")
        return {"log": [f"ok-after-{flaky['n']}"]}

    b = lib.StateGraph(S)
    b.add_node("sometimes", sometimes, retry_policy=fast)
    b.add_edge(lib.START, "sometimes")
    t.stream("recovers", b.compile(), {"x": 0}, stream_mode=["updates", "values"])
    return t.items


# --- state updates and history ------------------------------------------------------------------


def _history(g: Any, config: Any) -> list[Any]:
    return [
        (c.metadata, c.next, c.values, c.config, c.parent_config)
        for c in g.get_state_history(config)
    ]


@scenario
def update_state_as_node(lib: Any) -> list[Any]:
    """update_state with and without as_node: metadata, next, history."""
    t = Transcript()
    g = chain_graph(lib, "abc", checkpointer=lib.InMemorySaver())
    g.invoke({"x": 1}, cfg("1"), interrupt_before=["b"])
    t.add("history_paused", _history(g, cfg("1")))
    t.call("update_default", g.update_state, cfg("1"), {"log": ["u"]})
    t.state("after_default", g, cfg("1"))
    t.call("update_as_b", g.update_state, cfg("1"), {"x": 5}, as_node="b")
    t.state("after_as_b", g, cfg("1"))
    t.call("update_as_c", g.update_state, cfg("1"), {"x": 6}, as_node="c")
    t.state("after_as_c", g, cfg("1"))
    t.add("history", _history(g, cfg("1")))
    t.call("update_unknown_node", g.update_state, cfg("1"), {"x": 1}, as_node="nope")
    t.call("update_empty_thread", g.update_state, cfg("2"), {"x": 9})
    t.state("empty_thread_state", g, cfg("2"))
    t.stream("continue_after_update", g, None, cfg("2"), stream_mode=["updates", "values"])
    t.state("unknown_thread", g, cfg("nope"))

    b = lib.StateGraph(S)
    for n in "pqr":
        b.add_node(n, logger(n))
    b.add_edge(lib.START, "p")
    b.add_edge(lib.START, "q")
    b.add_edge(["p", "q"], "r")
    g2 = b.compile(checkpointer=lib.InMemorySaver(), interrupt_before=["r"])
    g2.invoke({"x": 1}, cfg("3"))
    t.call("ambiguous", g2.update_state, cfg("3"), {"x": 3})
    return t.items


@scenario
def history_and_fork(lib: Any) -> list[Any]:
    """Replay from an old checkpoint writes a "fork" checkpoint; update_state on an old one."""
    t = Transcript()
    g = chain_graph(lib, "abc", checkpointer=lib.InMemorySaver())
    g.invoke({"x": 1}, cfg("1"))
    t.add("history", _history(g, cfg("1")))
    before_b = next(c for c in g.get_state_history(cfg("1")) if c.next == ("b",))
    t.stream("replay", g, None, before_b.config, stream_mode=["updates", "values"])
    t.add("history_after_replay", _history(g, cfg("1")))
    t.add("limit2", [c.metadata["step"] for c in g.get_state_history(cfg("1"), limit=2)])
    t.add("filter_input", [c.metadata["step"] for c in g.get_state_history(cfg("1"), filter={"source": "input"})])

    g.invoke({"x": 1}, cfg("2"))
    old = next(c for c in g.get_state_history(cfg("2")) if c.next == ("b",))
    new_config = t.call("update_old", g.update_state, old.config, {"x": 100})
    t.stream("continue", g, None, new_config, stream_mode=["updates"])
    t.add("history_after_update", _history(g, cfg("2")))
    return t.items


# --- schemas ------------------------------------------------------------------------------------


@dataclass
class DState:
    x: int = 0
    log: Annotated[list, operator.add] = field(default_factory=list)
    name: str = "dflt"


@scenario
def dataclass_state(lib: Any) -> list[Any]:
    """Nodes receive dataclass instances; outputs and snapshots are dicts."""
    t = Transcript()
    seen: list[Any] = []

    def dn(s: DState) -> dict[str, Any]:
        seen.append(s)
        return {"x": s.x + 1, "log": ["dn"]}

    b = lib.StateGraph(DState)
    b.add_node("dn", dn)
    b.add_edge(lib.START, "dn")
    g = b.compile(checkpointer=lib.InMemorySaver())
    t.call("invoke_dict", g.invoke, {"x": 1}, cfg("1"))
    t.add("node_received", seen)
    t.state("state", g, cfg("1"))
    t.stream("values", g, {"x": 5}, cfg("2"), stream_mode=["values", "updates"])
    t.call("invoke_instance", g.invoke, DState(x=2), cfg("3"))
    return t.items


class In(TypedDict):
    question: str


class Out(TypedDict):
    answer: str


class Full(TypedDict):
    question: str
    answer: str
    scratch: str


@scenario
def io_schemas(lib: Any) -> list[Any]:
    """input_schema filters the input, output_schema filters invoke/batch output only."""
    t = Transcript()
    seen: list[Any] = []

    def think(s: Full) -> dict[str, Any]:
        seen.append(dict(s))
        return {"scratch": "tmp", "answer": s["question"].upper()}

    b = lib.StateGraph(Full, input_schema=In, output_schema=Out)
    b.add_node("think", think)
    b.add_edge(lib.START, "think")
    g = b.compile(checkpointer=lib.InMemorySaver())
    t.call("invoke", g.invoke, {"question": "hi", "scratch": "ignored", "answer": "pre"}, cfg("1"))
    t.add("node_saw", seen)
    t.add("state_values", g.get_state(cfg("1")).values)
    t.stream("stream", g, {"question": "hi"}, cfg("2"), stream_mode=["values", "updates"])
    t.call("batch", g.batch, [{"question": "a"}, {"question": "b"}], [cfg("3"), cfg("4")])

    class Private(TypedDict):
        question: str

    narrow_saw: list[Any] = []

    def narrow(s: Private) -> dict[str, Any]:
        narrow_saw.append(dict(s))
        return {"answer": "n"}

    nb = lib.StateGraph(Full)
    nb.add_node("narrow", narrow)
    nb.add_edge(lib.START, "narrow")
    t.call("node_input_schema", nb.compile().invoke, {"question": "q", "scratch": "s"})
    t.add("narrow_saw", narrow_saw)
    return t.items


@scenario
def reducer_defaults(lib: Any) -> list[Any]:
    """What the first reducer call receives for list/int/dict/Optional fields."""
    t = Transcript()
    calls: list[Any] = []

    def lst(a: list, b: list) -> list:
        calls.append(("list", a, b))
        return a + b

    def num(a: int, b: int) -> int:
        calls.append(("int", a, b))
        return a + b

    def opt(a: Optional[str], b: Optional[str]) -> str:
        calls.append(("opt", a, b))
        return f"{a}+{b}"

    def dct(a: dict, b: dict) -> dict:
        calls.append(("dict", a, b))
        return {**a, **b}

    class R(TypedDict):
        l: Annotated[list[str], lst]
        i: Annotated[int, num]
        o: Annotated[Optional[str], opt]
        d: Annotated[dict, dct]
        ladd: Annotated[list[str], operator.add]
        iadd: Annotated[int, operator.add]
        s: Annotated[str, operator.add]
        plain: str

    seen: list[Any] = []

    def w(s: R) -> dict[str, Any]:
        seen.append(dict(s))
        return {"l": ["n"], "i": 5, "o": "n1", "d": {"k": 1}}

    def w2(s: R) -> dict[str, Any]:
        return {"o": "n2", "i": 1}

    b = lib.StateGraph(R)
    b.add_node("w", w)
    b.add_node("w2", w2)
    b.add_edge(lib.START, "w")
    b.add_edge("w", "w2")
    g = b.compile(checkpointer=lib.InMemorySaver())
    t.call("invoke_plain", g.invoke, {"plain": "p"}, cfg("1"))
    t.add("calls", list(calls))
    t.add("node_saw", seen)
    t.add("input_checkpoint", list(g.get_state_history(cfg("1")))[-1].values)
    calls.clear()
    t.call("invoke_with_reducer_input", g.invoke, {"l": ["in"], "i": 2, "o": "in"}, cfg("2"))
    t.add("calls2", list(calls))
    return t.items


# --- builder ------------------------------------------------------------------------------------


@scenario
def builder_errors(lib: Any) -> list[Any]:
    """ValueError (and other) messages raised while building or compiling."""
    t = Transcript()

    def f(s: S) -> dict[str, Any]:
        return {}

    def new() -> Any:
        return lib.StateGraph(S)

    def edge_unknown_target() -> Any:
        b = new()
        b.add_node("a", f)
        b.add_edge(lib.START, "a")
        b.add_edge("a", "zzz")
        return b.compile()

    def edge_unknown_source() -> Any:
        b = new()
        b.add_node("a", f)
        b.add_edge(lib.START, "a")
        b.add_edge("zzz", "a")
        return b.compile()

    def node_named(name: str) -> Callable[[], Any]:
        def go() -> Any:
            b = new()
            b.add_node(name, f)
            return list(b.nodes)

        return go

    def duplicate() -> Any:
        b = new()
        b.add_node("a", f)
        b.add_node("a", f)

    def no_entry() -> Any:
        b = new()
        b.add_node("a", f)
        return b.compile()

    def edge_from_end() -> Any:
        b = new()
        b.add_node("a", f)
        b.add_edge(lib.END, "a")

    def edge_to_start() -> Any:
        b = new()
        b.add_node("a", f)
        b.add_edge("a", lib.START)

    def path_map_unknown() -> Any:
        b = new()
        b.add_node("a", f)
        b.add_edge(lib.START, "a")
        b.add_conditional_edges("a", lambda s: "x", {"x": "nope"})
        return b.compile()

    def interrupt_unknown() -> Any:
        b = new()
        b.add_node("a", f)
        b.add_edge(lib.START, "a")
        return b.compile(interrupt_before=["nope"])

    def join_unknown() -> Any:
        b = new()
        b.add_node("a", f)
        b.add_edge(lib.START, "a")
        b.add_edge(["a", "zz"], lib.END)

    def not_callable() -> Any:
        b = new()
        b.add_node("a", 5)

    def inferred_names() -> Any:
        b = new()
        b.add_node(f)
        b.add_node(lambda s: {})
        return list(b.nodes)

    def sequence() -> Any:
        b = new()

        def s1(s: S) -> dict[str, Any]:
            return {"log": ["s1"]}

        def s2(s: S) -> dict[str, Any]:
            return {"log": ["s2"]}

        b.add_sequence([s1, ("named", s2)])
        b.add_edge(lib.START, "s1")
        return list(b.nodes), b.compile().invoke({"x": 0})

    def empty_sequence() -> Any:
        new().add_sequence([])

    def entry_finish() -> Any:
        b = new()
        b.add_node("a", logger("a"))
        b.add_node("b", logger("b"))
        b.set_entry_point("a")
        b.add_edge("a", "b")
        b.set_finish_point("b")
        return b.compile().invoke({"x": 0})

    def finish_unknown() -> Any:
        b = new()
        b.add_node("a", f)
        b.set_entry_point("a")
        b.set_finish_point("zz")
        return b.compile()

    def node_named_like_key() -> Any:
        b = new()
        b.add_node("x", f)
        b.add_edge(lib.START, "x")
        return b.compile().invoke({"x": 1})

    checks: list[tuple[str, Callable[[], Any]]] = [
        ("edge_unknown_target", edge_unknown_target),
        ("edge_unknown_source", edge_unknown_source),
        ("node_start", node_named(lib.START)),
        ("node_end", node_named(lib.END)),
        ("node_pipe", node_named("a|b")),
        ("node_colon", node_named("a:b")),
        ("duplicate", duplicate),
        ("no_entry", no_entry),
        ("edge_from_end", edge_from_end),
        ("edge_to_start", edge_to_start),
        ("path_map_unknown", path_map_unknown),
        ("interrupt_unknown", interrupt_unknown),
        ("join_unknown", join_unknown),
        ("not_callable", not_callable),
        ("inferred_names", inferred_names),
        ("sequence", sequence),
        ("empty_sequence", empty_sequence),
        ("entry_finish", entry_finish),
        ("finish_unknown", finish_unknown),
        ("node_named_like_key", node_named_like_key),
    ]
    for label, fn in checks:
        t.call(label, fn)
    return t.items


# --- batch and invoke output --------------------------------------------------------------------


@scenario
def batch_and_interrupt_output(lib: Any) -> list[Any]:
    """batch/abatch outputs, return_exceptions, and the __interrupt__ list in invoke output."""
    t = Transcript()

    def a(s: S) -> dict[str, Any]:
        if s["x"] < 0:
            raise ValueError(f"neg {s['x']}")
        return {"x": s["x"] * 2}

    b = lib.StateGraph(S)
    b.add_node("a", a)
    b.add_edge(lib.START, "a")
    g = b.compile()
    t.call("batch", g.batch, [{"x": 1}, {"x": 2}])
    t.call("batch_error", g.batch, [{"x": 1}, {"x": -1}])
    t.call("batch_return_exceptions", g.batch, [{"x": 1}, {"x": -1}], return_exceptions=True)
    t.call("abatch", lambda: asyncio.run(g.abatch([{"x": 3}, {"x": 4}])))

    class O(TypedDict):
        x: int

    def ask(s: S) -> dict[str, Any]:
        return {"x": lib.interrupt("q")}

    for label, out_schema in (("full", None), ("output_schema", O)):
        ib = lib.StateGraph(S, output_schema=out_schema)
        ib.add_node("ask", ask)
        ib.add_edge(lib.START, "ask")
        ig = ib.compile(checkpointer=lib.InMemorySaver())
        t.call(f"{label}_invoke", ig.invoke, {"x": 1}, cfg("1"))
        t.call(f"{label}_batch", ig.batch, [{"x": 1}, {"x": 2}], [cfg("b1"), cfg("b2")])
        t.call(f"{label}_invoke_updates", ig.invoke, {"x": 1}, cfg("u"), stream_mode="updates")
    return t.items


# --- messages -----------------------------------------------------------------------------------


@scenario
def messages_from_node_return(lib: Any) -> list[Any]:
    """messages mode without an LLM: messages a node returns are emitted whole, once per id."""
    from langchain_core.messages import AIMessage, HumanMessage

    t = Transcript()

    def n(s: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(content="hi", id="1")]}

    def echo(s: Any) -> dict[str, Any]:
        return {"messages": [s["messages"][0], AIMessage(content="new", id="2")]}

    b = lib.StateGraph(lib.MessagesState)
    b.add_node("n", n)
    b.add_node("echo", echo)
    b.add_edge(lib.START, "n")
    b.add_edge("n", "echo")
    g = b.compile(checkpointer=lib.InMemorySaver())
    config = {"configurable": {"thread_id": "t1", "user": "u"}, "metadata": {"mkey": "mval"}}
    t.stream("checkpointer", g, {"messages": [HumanMessage(content="q", id="h1")]}, config,
             stream_mode="messages")
    t.stream("with_updates", g, {"messages": [HumanMessage(content="q", id="h1")]}, cfg("t2"),
             stream_mode=["messages", "updates"])
    t.call("invoke", g.invoke, {"messages": [HumanMessage(content="q", id="h1")]}, cfg("t3"))
    return t.items


@scenario
def config_metadata_in_events_and_checkpoints(lib: Any) -> list[Any]:
    """The caller's metadata, tags and configurable where LangGraph shows them: task events
    (metadata + tags), checkpoint events (the run's configurable; a subgraph's with its
    checkpoint_map; a subgraph task's state), checkpoint metadata (configurable scalars).
    Issue 18 found each of these differing over HTTP."""
    t = Transcript()
    inner = chain_graph(lib, "cd")
    b = lib.StateGraph(S)
    b.add_node("a", logger("a"))
    b.add_node("sub", inner)
    b.add_edge(lib.START, "a")
    b.add_edge("a", "sub")
    b.add_edge("sub", lib.END)
    saver = lib.InMemorySaver()
    g = b.compile(checkpointer=saver)
    config = cfg("t1", metadata={"m": 1}, tags=["mine"])
    config["configurable"].update({"user_id": "u1", "graph_id": "g", "n": 3, "obj": {"k": 1}})
    t.stream("stream", g, {"x": 1}, config, stream_mode=ALL_MODES, subgraphs=True)
    t.state("state", g, cfg("t1"))
    t.call("history", lambda: [c.metadata for c in g.get_state_history(cfg("t1"))])
    t.call("every namespace", lambda: sorted(
        (c.config["configurable"]["checkpoint_ns"].partition(":")[0], c.metadata["step"],
         sorted((k, v) for k, v in c.metadata.items() if k != "parents"))
        for c in saver.list(cfg("t1"))))
    return t.items


# --- time travel through a subgraph that rewrites a list (issue 16) ------------------------------


class Trail(TypedDict, total=False):
    trail: list
    note: str


def _trail_graph(lib: Any) -> Any:
    def step(label: int) -> Callable[[Trail], dict[str, Any]]:
        def node(s: Trail) -> dict[str, Any]:
            return {"trail": s.get("trail", []) + [label]}

        return node

    inner = lib.StateGraph(Trail)
    inner.add_node("a", step(2))
    inner.add_node("b", step(3))
    inner.add_edge(lib.START, "a")
    inner.add_edge("a", "b")
    b = lib.StateGraph(Trail)
    b.add_node("first", step(1))
    b.add_node("inner", inner.compile())
    b.add_node("last", step(4))
    b.add_edge(lib.START, "first")
    b.add_edge("first", "inner")
    b.add_edge("inner", "last")
    return b.compile(checkpointer=lib.InMemorySaver())


@scenario
def fork_through_a_subgraph_rewriting_a_list(lib: Any) -> list[Any]:
    """first -> inner(a -> b) -> last, each returning `trail + [x]`: fork every checkpoint of
    the history with update_state, run on, read the whole history back (issue 16)."""
    t = Transcript()
    g = _trail_graph(lib)
    t.call("invoke", g.invoke, {"trail": []}, cfg("1"))
    for back in range(1, 5):
        old = list(g.get_state_history(cfg("1")))[back]
        forked = t.call(f"update_{back}", g.update_state, old.config, {"note": f"n{back}"})
        t.call(f"run_{back}", g.invoke, None, forked)
        t.add(f"history_{back}", _history(g, cfg("1")))
    return t.items
