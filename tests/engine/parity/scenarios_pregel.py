"""Parity scenarios for the behaviour LangGraph's own pregel tests check (issues 27, 29):
answers validated by `interrupt(response_schema=...)`, the JSON Schemas of a compiled graph and
an `@entrypoint`. Registered into `scenarios.SCENARIOS`.
"""

from __future__ import annotations

import dataclasses
import types
import operator
import time
from typing import Annotated, Any, TypedDict

import pydantic

from .harness import Transcript
from .scenarios import LAG, cfg, scenario


class Decision(pydantic.BaseModel):
    approved: bool


class Answer(TypedDict):
    answer: Any


class Ctx(TypedDict):
    model: str


@dataclasses.dataclass
class Record:
    name: str
    note: str | None
    count: int = 3
    log: Annotated[list[str], operator.add] = dataclasses.field(default_factory=list)


@scenario
def interrupt_response_schema(lib: Any) -> list[Any]:
    """The schema surfaces as JSON Schema; a bad answer fails and can be given again."""
    t = Transcript()

    def node(state: Answer) -> dict[str, Any]:
        return {"answer": lib.interrupt("approve?", response_schema=Decision)}

    g = lib.StateGraph(Answer).add_node("node", node).add_edge(lib.START, "node")
    g = g.compile(checkpointer=lib.InMemorySaver())
    t.call("ask", g.invoke, {"answer": None}, cfg("1"))
    t.state("state", g, cfg("1"))
    t.call("bad", g.invoke, lib.Command(resume={"approved": "nope"}), cfg("1"))
    t.call("good", g.invoke, lib.Command(resume={"approved": False}), cfg("1"))
    return t.items


@scenario
def graph_json_schemas(lib: Any) -> list[Any]:
    """get_input/output/context_jsonschema of a StateGraph (TypedDict, dataclass) and of an
    @entrypoint (its parameter and return types, `entrypoint.final`)."""
    t = Transcript()
    typed = lib.StateGraph(Answer, context_schema=Ctx).add_node("n", lambda s: s)
    typed = typed.add_edge(lib.START, "n").compile()
    data = lib.StateGraph(Record).add_node("n", lambda s: {}).add_edge(lib.START, "n").compile()
    for label, g in (("typed", typed), ("dataclass", data)):
        t.call(f"{label}_in", g.get_input_jsonschema)
        t.call(f"{label}_out", g.get_output_jsonschema)
        t.call(f"{label}_ctx", g.get_context_jsonschema)

    @lib.entrypoint(context_schema=Ctx)
    def listed(numbers: list[int]) -> list[str]:
        return [str(n) for n in numbers]

    def returns_final(value: Any, *, previous: Any) -> Any:
        return lib.entrypoint.final(value="x", save=1)

    # set, not written: this module's annotations are strings LangGraph does not resolve
    returns_final.__annotations__["return"] = lib.entrypoint.final[str, int]
    final = lib.entrypoint()(returns_final)

    for label, g in (("listed", listed), ("final", final)):
        t.call(f"{label}_in", g.get_input_jsonschema)
        t.call(f"{label}_out", g.get_output_jsonschema)
        t.call(f"{label}_ctx", g.get_context_jsonschema)
    return t.items


@scenario
def root_value_state(lib: Any) -> list[Any]:
    """A state that is one value (`Annotated[list, add]`): nodes read and return it, a list
    mixing updates and Commands applies in order, updates stream per write; interrupt, state,
    update_state and resume on it."""
    t = Transcript()

    def mixed(state: list) -> Any:
        return [lib.Command(update=["a"]), ["b"]]

    def twice(state: list) -> Any:
        return [lib.Command(update=["c1"]), lib.Command(update=["c2"])]

    def ask(state: list) -> Any:
        return [f"ask={lib.interrupt('q')}"]

    b = lib.StateGraph(Annotated[list, operator.add])
    b.add_node("mixed", mixed).add_node("twice", twice).add_node("ask", ask)
    b.add_edge(lib.START, "mixed").add_edge("mixed", "twice").add_edge("twice", "ask")
    g = b.compile(checkpointer=lib.InMemorySaver())
    t.call("invoke", g.invoke, ["x"], cfg("1"))
    t.state("state", g, cfg("1"))
    t.call("update", lambda: g.update_state(cfg("1"), ["u"]) and None)
    t.state("updated", g, cfg("1"))
    t.call("resume", g.invoke, lib.Command(resume="yes"), cfg("1"))
    t.stream("updates", g, ["y"], cfg("2"), stream_mode="updates")
    t.stream("values", g, lib.Command(resume="no"), cfg("2"), stream_mode="values")
    t.call("schema", g.get_input_jsonschema)
    return t.items


@scenario
def node_subgraphs(lib: Any) -> list[Any]:
    """`nodes[n].subgraphs` and `get_subgraphs()` find the graph a node is or calls through a
    closure, a global or an attribute path; not one compiled with `checkpointer=False`."""
    t = Transcript()

    def leaf(tag: str, **kw: Any) -> Any:
        b = lib.StateGraph(LogState).add_node(tag, lambda s: {"log": [tag]})
        g = b.add_edge(lib.START, tag).compile(**kw)
        g.name = tag
        return g

    captured = leaf("captured")
    holder = types.SimpleNamespace(inner=types.SimpleNamespace(graph=leaf("chained")))
    hidden = leaf("hidden", checkpointer=False)

    def calls_captured(state: LogState) -> Any:
        return captured.invoke(state)

    def calls_chain(state: LogState) -> Any:
        return holder.inner.graph.invoke(state)

    def calls_hidden(state: LogState) -> Any:
        return hidden.invoke(state)

    def plain(state: LogState) -> Any:
        return {"log": ["plain"]}

    b = lib.StateGraph(LogState)
    for name, fn in (("direct", leaf("direct")), ("captured", calls_captured),
                     ("chain", calls_chain), ("hidden", calls_hidden), ("plain", plain)):
        b.add_node(name, fn)
        b.add_edge(lib.START, name)
    g = b.compile()
    t.add("node_subgraphs", {n: [s.name for s in g.nodes[n].subgraphs] for n in sorted(b.nodes)})
    t.add("get_subgraphs", sorted((ns, s.name) for ns, s in g.get_subgraphs()))
    t.add("one", [(ns, s.name) for ns, s in g.get_subgraphs(namespace="chain")])
    return t.items


class LogState(TypedDict):
    log: Annotated[list, operator.add]


def _asking_subgraph(lib: Any, called: list[str]) -> Any:
    """START -> executor (a `checkpointer=True` subgraph: step_a, then two questions)."""

    def step(name: str, question: str | None = None) -> Any:
        def node(state: LogState) -> dict[str, Any]:
            called.append(name)
            answer = lib.interrupt(question) if question else "done"
            return {"log": [f"{name}:{answer}"]}

        return node

    sub = lib.StateGraph(LogState)
    sub.add_node("step_a", step("step_a")).add_node("ask_1", step("ask_1", "Q1?"))
    sub.add_node("ask_2", step("ask_2", "Q2?"))
    sub.add_edge(lib.START, "step_a").add_edge("step_a", "ask_1").add_edge("ask_1", "ask_2")
    executor = sub.compile(checkpointer=True)
    b = lib.StateGraph(LogState).add_node("executor", executor)
    return b.add_edge(lib.START, "executor").compile(checkpointer=lib.InMemorySaver())


@scenario
def subgraph_time_travel(lib: Any) -> list[Any]:
    """Time travel through a subgraph checkpoint's config (get_state(subgraphs=True)): the
    subgraph starts from it (nothing before it re-runs), its answered question is asked again,
    and new answers go on from there; history shows the fork."""
    t = Transcript()
    called: list[str] = []
    g = _asking_subgraph(lib, called)
    g.invoke({"log": []}, cfg("1"))
    at_first = g.get_state(cfg("1"), subgraphs=True).tasks[0].state.config
    g.invoke(lib.Command(resume="one"), cfg("1"))
    g.invoke(lib.Command(resume="two"), cfg("1"))
    called.clear()
    t.call("replay", g.invoke, None, at_first)
    t.add("replay_called", list(called))
    t.add("history", [(s.metadata["source"], s.next) for s in g.get_state_history(cfg("1"))])
    t.call("resume_1", g.invoke, lib.Command(resume="new1"), cfg("1"))
    t.call("resume_2", g.invoke, lib.Command(resume="new2"), cfg("1"))
    return t.items


@scenario
def stateful_subgraph_replay(lib: Any) -> list[Any]:
    """A parent replayed from an older checkpoint gives its `checkpointer=True` subgraph the
    state it had then, not its latest."""
    t = Transcript()
    seen: list[Any] = []

    def sub_step(state: LogState) -> dict[str, Any]:
        seen.append(list(state["log"]))
        return {"log": ["s"]}

    sub = lib.StateGraph(LogState).add_node("sub_step", sub_step)
    sub = sub.add_edge(lib.START, "sub_step").compile(checkpointer=True)

    def call_sub(state: LogState) -> dict[str, Any]:
        return {"log": [len(sub.invoke({"log": []})["log"])]}

    b = lib.StateGraph(LogState).add_node("call_sub", call_sub)
    g = b.add_edge(lib.START, "call_sub").compile(checkpointer=lib.InMemorySaver())
    for _ in range(3):
        g.invoke({"log": []}, cfg("1"))
    history = list(g.get_state_history(cfg("1")))
    second = [s for s in history if s.next == ("call_sub",)][1]  # the 2nd call's, newest first
    seen.clear()
    t.call("replay", g.invoke, None, second.config)
    t.add("seen", seen)
    return t.items


@scenario
def resume_details(lib: Any) -> list[Any]:
    """A resume's Command(update) lands once however often the task asks again; a goto past an
    interrupt_before does not stop there again; a run stopped by a subgraph's static interrupt
    returns its finished sibling's writes."""
    t = Transcript()

    def ask_three(state: LogState) -> dict[str, Any]:
        return {"log": ["a:" + "".join(lib.interrupt(str(i)) for i in range(1, 4))]}

    g = lib.StateGraph(LogState).add_node("a", ask_three).add_edge(lib.START, "a")
    g = g.compile(checkpointer=lib.InMemorySaver())
    g.invoke({"log": []}, cfg("1"))
    for i in range(1, 4):
        t.call(f"resume_{i}", g.invoke, lib.Command(resume=str(i), update={"log": [f"u{i}"]}),
               cfg("1"))

    b = lib.StateGraph(LogState)
    b.add_node("n1", lambda s: {"log": ["n1"]}).add_node("n2", lambda s: {"log": ["n2"]})
    b.add_edge(lib.START, "n1").add_edge("n1", "n2")
    g = b.compile(checkpointer=lib.InMemorySaver(), interrupt_before=["n1"])
    g.invoke({"log": ["x"]}, cfg("2"))
    t.call("goto", g.invoke, lib.Command(goto=["n2"]), cfg("2"))

    inner = lib.StateGraph(LogState)
    inner.add_node("i1", lambda s: time.sleep(LAG) or {"log": ["i1"]})  # `side` ends first
    inner.add_node("i2", lambda s: {"log": ["i2"]})
    inner.add_edge(lib.START, "i1").add_edge("i1", "i2")
    b = lib.StateGraph(LogState).add_node("inner", inner.compile(interrupt_before=["i2"]))
    b.add_node("side", lambda s: {"log": ["side"]})
    b.add_edge(lib.START, "inner").add_edge(lib.START, "side")
    g = b.compile(checkpointer=lib.InMemorySaver())
    t.call("static", g.invoke, {"log": []}, cfg("3"))
    t.stream("static_stream", g, {"log": []}, cfg("4"), subgraphs=True)
    return t.items


@scenario
def update_details(lib: Any) -> list[Any]:
    """bulk_update_state's updates show as their tasks' results in history; update_state on a
    fresh @entrypoint thread; a pydantic partial update writes only what it was given; a root
    graph's Command(graph=PARENT) leaves the run."""
    t = Transcript()

    class Num(TypedDict):
        num: int
        text: str

    b = lib.StateGraph(Num).add_node("double", lambda s: {"num": s["num"] * 2})
    g = b.add_edge(lib.START, "double").compile(checkpointer=lib.InMemorySaver())
    g.bulk_update_state(cfg("1"), [
        [lib.StateUpdate(values={}, as_node="__input__")],
        [lib.StateUpdate(values={"num": 1, "text": "one"}, as_node="__start__")],
        [lib.StateUpdate(values={"num": 2}, as_node="double")],
    ])
    t.add("results", [[(x.name, x.result) for x in s.tasks] for s in g.get_state_history(cfg("1"))])

    @lib.entrypoint(checkpointer=lib.InMemorySaver())
    def echo(value: Any, *, previous: Any) -> Any:
        return {"previous": previous, "value": value}

    t.call("entry_update", lambda: echo.update_state(cfg("2"), {"a": 1}) and None)
    t.call("entry_invoke", echo.invoke, {"a": 2}, cfg("2"))

    class Partial(pydantic.BaseModel):
        text: str | None = None
        num: int | None = None

    b = lib.StateGraph(Num).add_node("part", lambda s: Partial(text="t"))
    g = b.add_edge(lib.START, "part").compile()
    t.call("partial", g.invoke, {"num": 5, "text": "x"})

    b = lib.StateGraph(Num).add_node("up", lambda s: lib.Command(graph="__parent__", goto="x"))
    g = b.add_edge(lib.START, "up").compile()
    try:
        g.invoke({"num": 1, "text": "x"})
    except BaseException as error:  # noqa: BLE001 - ParentCommand is a BaseException
        t.add("parent_command", (type(error).__name__, error.args[0].goto))
    return t.items


class Overall(TypedDict):
    foo: Annotated[int, operator.add]
    bar: str


class Private(TypedDict):
    baz: str


@scenario
def router_input_schema(lib: Any) -> list[Any]:
    """A router annotated with a schema (the state schema too) reads only its keys, not the
    private keys a node's input schema added to the state."""
    t = Transcript()
    seen: list[Any] = []

    def typed_router(state: Overall) -> str:
        seen.append(dict(state))
        return "n3" if state["foo"] == 2 else "__end__"

    def n2(state: Private) -> dict[str, Any]:
        return {"foo": 1, "bar": state["baz"]}

    b = lib.StateGraph(Overall)
    b.add_node("n1", lambda s: {"foo": 1, "baz": "bar"}).add_node("n2", n2)
    b.add_node("n3", lambda s: {"foo": 1})
    b.add_edge(lib.START, "n1").add_edge("n1", "n2").add_conditional_edges("n2", typed_router)
    t.call("invoke", b.compile().invoke, {"foo": 0})
    t.add("seen", seen)
    return t.items


@scenario
def grandchild_static_interrupt(lib: Any) -> list[Any]:
    """A grandchild's interrupt_before stops the run: with subgraphs=True only the root streams
    the empty `__interrupt__` update (a dynamic interrupt shows at every level)."""
    t = Transcript()
    grand = lib.StateGraph(LogState)
    grand.add_node("g1", lambda s: {"log": ["g1"]}).add_node("g2", lambda s: {"log": ["g2"]})
    grand = grand.add_edge(lib.START, "g1").add_edge("g1", "g2").compile(interrupt_before=["g2"])
    child = lib.StateGraph(LogState).add_node("grand", grand).add_edge(lib.START, "grand")
    b = lib.StateGraph(LogState).add_node("child", child.compile())
    g = b.add_edge(lib.START, "child").compile(checkpointer=lib.InMemorySaver())
    t.stream("stream", g, {"log": []}, cfg("1"), subgraphs=True)
    t.stream("resume", g, None, cfg("1"), subgraphs=True)
    return t.items


@scenario
def router_sees_extra_keys(lib: Any) -> list[Any]:
    """An unannotated router of a dict state also sees keys its node returned beyond the state
    (not saved); a router annotated with a schema does not."""
    t = Transcript()
    seen: list[Any] = []

    def plain(state):  # type: ignore[no-untyped-def]  # unannotated
        seen.append(("plain", dict(state)))
        return "__end__"

    def typed(state: Overall) -> str:
        seen.append(("typed", dict(state)))
        return "__end__"

    b = lib.StateGraph(Overall)
    b.add_node("a", lambda s: {"foo": 1, "extra": "x"}).add_node("b", lambda s: {"extra": "y"})
    b.add_edge(lib.START, "a").add_edge(lib.START, "b")
    b.add_conditional_edges("a", plain).add_conditional_edges("b", typed)
    t.call("invoke", b.compile().invoke, {"foo": 0, "bar": "z"})
    t.add("seen", sorted(seen, key=str))
    return t.items
