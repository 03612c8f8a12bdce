"""`StateGraph`: the builder API, its build-time errors, node signatures and state schemas.

Expected values are LangGraph 1.2.22's observed behaviour (shared_notes/lg_facts.md §16, §17, §19).
"""

from __future__ import annotations

import dataclasses
import logging
import operator
from typing import Annotated, Any, Optional, TypedDict

import msgspec
import pytest

from checkpoints import InMemorySaver
from engine import (
    END,
    START,
    MessagesState,
    Runtime,
    Send,
    StateGraph,
    get_config,
    get_store,
    get_stream_writer,
)


class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def inc(s: S) -> dict:
    return {"x": s["x"] + 1, "log": ["inc"]}


def noop(s: S) -> None:
    return None


def chain(*names: str, state: Any = S) -> StateGraph:
    g = StateGraph(state)
    for name in names:
        g.add_node(name, lambda s, _n=name: {"log": [_n]})
    g.add_edge(START, names[0])
    for a, b in zip(names, names[1:]):
        g.add_edge(a, b)
    g.add_edge(names[-1], END)
    return g


# -- build-time errors (lg_facts §16) -----------------------------------------------------------


def test_edge_to_unknown_node() -> None:
    g = StateGraph(S)
    g.add_node("a", noop)
    g.add_edge(START, "a")
    g.add_edge("a", "zzz")
    with pytest.raises(ValueError) as info:
        g.compile()
    assert str(info.value) == "Found edge ending at unknown node `zzz`"


def test_edge_from_unknown_node() -> None:
    g = StateGraph(S)
    g.add_node("a", noop)
    g.add_edge(START, "a")
    g.add_edge("zzz", "a")
    with pytest.raises(ValueError) as info:
        g.compile()
    assert str(info.value) == "Found edge starting at unknown node 'zzz'"


@pytest.mark.parametrize("name", [START, END])
def test_reserved_node_names(name: str) -> None:
    g = StateGraph(S)
    with pytest.raises(ValueError) as info:
        g.add_node(name, noop)
    assert str(info.value) == f"Node `{name}` is reserved."


@pytest.mark.parametrize("char", ["|", ":"])
def test_reserved_characters_in_node_names(char: str) -> None:
    g = StateGraph(S)
    with pytest.raises(ValueError) as info:
        g.add_node(f"a{char}b", noop)
    assert str(info.value) == (
        f"'{char}' is a reserved character and is not allowed in the node names."
    )


def test_duplicate_node() -> None:
    g = StateGraph(S)
    g.add_node("a", noop)
    with pytest.raises(ValueError) as info:
        g.add_node("a", inc)
    assert str(info.value) == "Node `a` already present."


def test_no_entrypoint() -> None:
    g = StateGraph(S)
    g.add_node("a", noop)
    with pytest.raises(ValueError) as info:
        g.compile()
    assert str(info.value) == (
        "Graph must have an entrypoint: add at least one edge from START to another node"
    )


def test_empty_graph_has_no_entrypoint() -> None:
    with pytest.raises(ValueError) as info:
        StateGraph(S).compile()
    assert str(info.value) == (
        "Graph must have an entrypoint: add at least one edge from START to another node"
    )


def test_end_cannot_be_a_start_node() -> None:
    g = StateGraph(S)
    g.add_node("a", noop)
    with pytest.raises(ValueError) as info:
        g.add_edge(END, "a")
    assert str(info.value) == "END cannot be a start node"


def test_start_cannot_be_an_end_node() -> None:
    g = StateGraph(S)
    g.add_node("a", noop)
    with pytest.raises(ValueError) as info:
        g.add_edge("a", START)
    assert str(info.value) == "START cannot be an end node"


def test_path_map_to_unknown_node() -> None:
    def condition(s: S) -> str:
        return "x"

    g = StateGraph(S)
    g.add_node("a", noop)
    g.add_edge(START, "a")
    g.add_conditional_edges("a", condition, {"x": "nope"})
    with pytest.raises(ValueError) as info:
        g.compile()
    assert str(info.value) == "At 'a' node, 'condition' branch found unknown target 'nope'"


def test_path_map_list_to_unknown_node() -> None:
    def condition(s: S) -> str:
        return "a"

    g = StateGraph(S)
    g.add_node("a", noop)
    g.add_edge(START, "a")
    g.add_conditional_edges("a", condition, ["nope", END])
    with pytest.raises(ValueError) as info:
        g.compile()
    assert str(info.value) == "At 'a' node, 'condition' branch found unknown target 'nope'"


def test_router_result_missing_from_path_map_raises_key_error_at_run_time() -> None:
    g = StateGraph(S)
    g.add_node("a", noop)
    g.add_node("b", noop)
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "nope", {"yes": "b"})
    app = g.compile()
    with pytest.raises(KeyError) as info:
        app.invoke({"x": 1})
    assert str(info.value) == "'nope'"


def test_interrupt_node_not_found() -> None:
    g = chain("a")
    with pytest.raises(ValueError) as info:
        g.compile(interrupt_before=["nope"])
    assert str(info.value) == "Interrupt node `nope` not found"
    with pytest.raises(ValueError) as info:
        g.compile(interrupt_after=["nope"])
    assert str(info.value) == "Interrupt node `nope` not found"


def test_join_edge_with_unknown_source() -> None:
    g = StateGraph(S)
    g.add_node("a", noop)
    with pytest.raises(ValueError) as info:
        g.add_edge(["a", "zz"], "a")
    assert str(info.value) == "Need to add_node `zz` first"


def test_join_edge_from_start() -> None:
    g = StateGraph(S)
    g.add_node("a", noop)
    with pytest.raises(ValueError) as info:
        g.add_edge([START, "a"], END)
    assert str(info.value) == "Need to add_node `__start__` first"


def test_set_finish_point_unknown() -> None:
    g = chain("a")
    g.set_finish_point("zz")
    with pytest.raises(ValueError) as info:
        g.compile()
    assert str(info.value) == "Found edge starting at unknown node 'zz'"


def test_set_entry_point_unknown() -> None:
    g = StateGraph(S)
    g.add_node("a", noop)
    g.set_entry_point("zz")
    with pytest.raises(ValueError) as info:
        g.compile()
    assert str(info.value) == "Found edge ending at unknown node `zz`"


def test_add_node_with_a_non_callable() -> None:
    g = StateGraph(S)
    with pytest.raises(TypeError) as info:
        g.add_node("a", 5)
    assert str(info.value) == (
        "Expected a Runnable, callable or dict.Instead got an unsupported type: <class 'int'>"
    )


def test_state_graph_needs_a_state_schema() -> None:
    with pytest.raises(TypeError):
        StateGraph()  # type: ignore[call-arg]


def test_add_sequence_empty() -> None:
    with pytest.raises(ValueError) as info:
        StateGraph(S).add_sequence([])
    assert str(info.value) == "Sequence requires at least one node."


def test_add_node_after_compile_logs_and_leaves_compiled_graph_alone(
    caplog: pytest.LogCaptureFixture,
) -> None:
    g = chain("a")
    app = g.compile()
    with caplog.at_level(logging.WARNING):
        g.add_node("late", noop)
    assert (
        "Adding a node to a graph that has already been compiled. This will not be reflected "
        "in the compiled graph."
    ) in caplog.text
    assert app.invoke({"x": 1}) == {"x": 1, "log": ["a"]}
    assert "late" not in app.get_graph().nodes


@pytest.mark.parametrize(
    "name", ["__root__", "messages", "a b", "x"]
)
def test_unusual_but_allowed_node_names(name: str) -> None:
    g = StateGraph(S)
    g.add_node(name, inc)
    g.add_edge(START, name)
    assert g.compile().invoke({"x": 1}) == {"x": 2, "log": ["inc"]}


def test_duplicate_identical_edges_are_allowed() -> None:
    g = chain("a", "b")
    g.add_edge("a", "b")
    assert g.compile().invoke({"x": 0}) == {"x": 0, "log": ["a", "b"]}


def test_compile_twice_gives_distinct_graphs() -> None:
    g = chain("a")
    first, second = g.compile(), g.compile()
    assert first is not second
    assert first.invoke({"x": 1}) == second.invoke({"x": 1})


# -- node names and edges ----------------------------------------------------------------------


def test_node_name_inferred_from_function() -> None:
    g = StateGraph(S)
    g.add_node(inc)
    g.add_edge(START, "inc")
    assert list(g.nodes) == ["inc"]
    assert g.compile().invoke({"x": 1}) == {"x": 2, "log": ["inc"]}


def test_lambda_node_name() -> None:
    g = StateGraph(S)
    g.add_node(lambda s: {"x": 7})
    g.add_edge(START, "<lambda>")
    assert list(g.nodes) == ["<lambda>"]
    assert g.compile().invoke({"x": 1}) == {"x": 7, "log": []}


def test_compiled_graph_node_name_is_its_name() -> None:
    child = chain("c1").compile(name="child")
    g = StateGraph(S)
    g.add_node(child)
    g.add_edge(START, "child")
    assert list(g.nodes) == ["child"]
    assert g.compile().invoke({"x": 1}) == {"x": 1, "log": ["c1"]}


def test_add_sequence_names_and_edges() -> None:
    def s1(s: S) -> dict:
        return {"log": ["s1"]}

    def s2(s: S) -> dict:
        return {"log": ["s2"]}

    g = StateGraph(S)
    g.add_sequence([s1, ("named", s2)])
    assert list(g.nodes) == ["s1", "named"]
    assert ("s1", "named") in g.edges
    assert not any(src == START for src, _ in g.edges)
    g.add_edge(START, "s1")
    assert g.compile().invoke({"x": 0}) == {"x": 0, "log": ["s1", "s2"]}


def test_set_entry_and_finish_point_are_edges() -> None:
    g = StateGraph(S)
    g.add_node("a", inc)
    g.add_node("b", inc)
    g.add_edge("a", "b")
    g.set_entry_point("a")
    g.set_finish_point("b")
    assert (START, "a") in g.edges
    assert ("b", END) in g.edges
    assert g.compile().invoke({"x": 0}) == {"x": 2, "log": ["inc", "inc"]}


# -- conditional edges -------------------------------------------------------------------------


def _routed(path: Any, path_map: Any) -> StateGraph:
    g = StateGraph(S)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_node("c", lambda s: {"log": ["c"]})
    g.add_edge(START, "a")
    g.add_conditional_edges("a", path, path_map)
    return g


def test_conditional_edges_path_map_dict() -> None:
    app = _routed(lambda s: "big" if s["x"] > 5 else "small", {"big": "b", "small": "c"}).compile()
    assert app.invoke({"x": 10}) == {"x": 10, "log": ["a", "b"]}
    assert app.invoke({"x": 1}) == {"x": 1, "log": ["a", "c"]}


def test_conditional_edges_path_map_dict_to_end() -> None:
    app = _routed(lambda s: "stop", {"stop": END, "go": "b"}).compile()
    assert app.invoke({"x": 1}) == {"x": 1, "log": ["a"]}


def test_conditional_edges_path_map_list() -> None:
    app = _routed(lambda s: "c", ["b", "c"]).compile()
    assert app.invoke({"x": 1}) == {"x": 1, "log": ["a", "c"]}


def test_conditional_edges_no_path_map() -> None:
    app = _routed(lambda s: "b", None).compile()
    assert app.invoke({"x": 1}) == {"x": 1, "log": ["a", "b"]}


def test_conditional_edges_list_of_names_runs_them_in_one_step() -> None:
    app = _routed(lambda s: ["c", "b"], None).compile()
    chunks = list(app.stream({"x": 1}))
    assert chunks[0] == {"a": {"log": ["a"]}}
    assert sorted(map(str, chunks[1:])) == ["{'b': {'log': ['b']}}", "{'c': {'log': ['c']}}"]
    assert app.invoke({"x": 1}) == {"x": 1, "log": ["a", "b", "c"]}  # applied by node name


def test_conditional_edges_end_in_a_list_is_dropped() -> None:
    app = _routed(lambda s: [END, "b"], None).compile()
    assert app.invoke({"x": 1}) == {"x": 1, "log": ["a", "b"]}


def test_conditional_edges_router_returns_end() -> None:
    app = _routed(lambda s: END, None).compile()
    assert app.invoke({"x": 1}) == {"x": 1, "log": ["a"]}


def test_conditional_entry_point() -> None:
    g = StateGraph(S)
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_node("c", lambda s: {"log": ["c"]})
    g.set_conditional_entry_point(lambda s: "c" if s["x"] else "b", ["b", "c"])
    app = g.compile()
    assert app.invoke({"x": 1}) == {"x": 1, "log": ["c"]}
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["b"]}


def test_router_sees_only_its_own_tasks_writes() -> None:
    seen: dict[str, list] = {}

    def route_a(s: S) -> str:
        seen["a"] = list(s["log"])
        return END

    def route_b(s: S) -> str:
        seen["b"] = list(s["log"])
        return END

    g = StateGraph(S)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    g.add_conditional_edges("a", route_a)
    g.add_conditional_edges("b", route_b)
    assert g.compile().invoke({"x": 1, "log": ["in"]}) == {"x": 1, "log": ["in", "a", "b"]}
    assert seen == {"a": ["in", "a"], "b": ["in", "b"]}


def test_router_returning_sends() -> None:
    g = StateGraph(S)
    g.add_node("fan", lambda s: None)
    g.add_node("work", lambda arg: {"log": [arg["item"]]})
    g.add_edge(START, "fan")
    g.add_conditional_edges("fan", lambda s: [Send("work", {"item": i}) for i in "abc"])
    assert g.compile().invoke({"x": 1}) == {"x": 1, "log": ["a", "b", "c"]}


def test_router_returning_one_send() -> None:
    g = StateGraph(S)
    g.add_node("work", lambda arg: {"log": [arg]})
    g.add_conditional_edges(START, lambda s: Send("work", "only"))
    assert g.compile().invoke({"x": 1}) == {"x": 1, "log": ["only"]}


# -- join edges --------------------------------------------------------------------------------


def test_join_edge_runs_target_once_after_all_sources() -> None:
    calls: list[tuple[str, list]] = []

    def record(name: str):
        def fn(s: S) -> dict:
            calls.append((name, list(s["log"])))
            return {"log": [name]}
        return fn

    g = StateGraph(S)
    for name in ("a", "b1", "b2", "c"):
        g.add_node(name, record(name))
    g.add_edge(START, "a")
    g.add_edge(START, "b1")
    g.add_edge("b1", "b2")
    g.add_edge(["a", "b2"], "c")
    app = g.compile()
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["a", "b1", "b2", "c"]}
    assert [name for name, _ in calls].count("c") == 1
    assert calls[-1] == ("c", ["a", "b1", "b2"])
    names = [next(iter(chunk)) for chunk in app.stream({"x": 0})]
    assert sorted(names[:2]) == ["a", "b1"]  # one step: finish order
    assert names[2:] == ["b2", "c"]


def test_join_edge_waits_again_on_each_run() -> None:
    g = StateGraph(S)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_node("c", lambda s: {"x": s["x"] + 1, "log": ["c"]})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    g.add_edge(["a", "b"], "c")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    assert app.invoke({"x": 0}, cfg) == {"x": 1, "log": ["a", "b", "c"]}
    assert app.invoke({"x": 5}, cfg) == {"x": 6, "log": ["a", "b", "c", "a", "b", "c"]}


# -- node signatures: injected keyword arguments -----------------------------------------------


class Ctx(TypedDict):
    user: str


def _single(fn: Any, **compile_kwargs: Any):
    g = StateGraph(S, context_schema=Ctx)
    g.add_node("n", fn)
    g.add_edge(START, "n")
    return g.compile(**compile_kwargs)


def test_config_injection() -> None:
    got: dict[str, Any] = {}

    def n(s: S, config) -> dict:
        got.update(config["configurable"])
        got["tags"] = config.get("tags")
        return {"x": 1}

    app = _single(n)
    app.invoke({"x": 0}, {"configurable": {"user": "u1", "num": 3}, "tags": ["t1"]})
    assert got["user"] == "u1"
    assert got["num"] == 3
    assert got["tags"] == ["t1"]


def test_get_config_inside_a_node_is_the_injected_config() -> None:
    got: list[Any] = []

    def n(s: S, config) -> None:
        got.append(config["configurable"]["user"])
        got.append(get_config()["configurable"]["user"])

    _single(n).invoke({"x": 0}, {"configurable": {"user": "u2"}})
    assert got == ["u2", "u2"]


def test_runtime_injection_with_context_and_store() -> None:
    store = object()
    got: list[Any] = []

    def n(s: S, runtime: Runtime[Ctx]) -> dict:
        got.append(runtime.context)
        got.append(runtime.store)
        return {"x": 2}

    app = _single(n, store=store)
    assert app.invoke({"x": 0}, context={"user": "ada"}) == {"x": 2, "log": []}
    assert got == [{"user": "ada"}, store]


def test_store_injection_and_get_store() -> None:
    store = object()
    got: list[Any] = []

    def n(s: S, store) -> None:
        got.append(store)
        got.append(get_store())

    _single(n, store=store).invoke({"x": 0})
    assert got == [store, store]


def test_store_is_none_without_one() -> None:
    got: list[Any] = []

    def n(s: S, store) -> None:
        got.append(store)

    _single(n).invoke({"x": 0})
    assert got == [None]


def test_writer_injection() -> None:
    def n(s: S, writer) -> dict:
        writer({"progress": 1})
        writer("plain-string")
        return {"x": 1}

    app = _single(n)
    assert list(app.stream({"x": 0}, stream_mode="custom")) == [{"progress": 1}, "plain-string"]


def test_keyword_only_injection() -> None:
    got: list[Any] = []

    def n(s: S, *, config, writer) -> None:
        got.append(config["configurable"]["user"])
        writer("w")

    chunks = list(_single(n).stream({"x": 0}, {"configurable": {"user": "k"}}, stream_mode="custom"))
    assert got == ["k"]
    assert chunks == ["w"]


def test_writer_is_a_noop_without_custom_mode() -> None:
    def n(s: S, writer) -> dict:
        writer("dropped")
        get_stream_writer()("dropped too")
        return {"x": 3}

    assert list(_single(n).stream({"x": 0}, stream_mode="updates")) == [{"n": {"x": 3}}]


@pytest.mark.anyio
async def test_async_node_injection() -> None:
    got: list[Any] = []

    async def n(s: S, config, runtime: Runtime[Ctx], writer) -> dict:
        got.append(config["configurable"]["user"])
        got.append(runtime.context)
        writer("async-w")
        return {"x": 9}

    app = _single(n)
    chunks = [
        c async for c in app.astream(
            {"x": 0}, {"configurable": {"user": "z"}}, stream_mode=["custom", "updates"],
            context={"user": "ctx"},
        )
    ]
    assert chunks == [("custom", "async-w"), ("updates", {"n": {"x": 9}})]
    assert got == ["z", {"user": "ctx"}]


# -- state schemas -----------------------------------------------------------------------------


class In(TypedDict):
    question: str


class Out(TypedDict):
    answer: str


class Full(TypedDict):
    question: str
    answer: str
    scratch: str


def _io_graph(received: list) -> StateGraph:
    def think(s: Full) -> dict:
        received.append(dict(s))
        return {"answer": s["question"].upper(), "scratch": "tmp"}

    g = StateGraph(Full, input_schema=In, output_schema=Out)
    g.add_node(think)
    g.add_edge(START, "think")
    return g


def test_input_and_output_schemas() -> None:
    received: list = []
    app = _io_graph(received).compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "io"}}
    out = app.invoke({"question": "hi", "scratch": "ignored?", "answer": "pre"}, cfg)
    assert out == {"answer": "HI"}
    assert received == [{"question": "hi"}]
    assert app.get_state(cfg).values == {"question": "hi", "answer": "HI", "scratch": "tmp"}


def test_output_schema_does_not_filter_the_values_stream() -> None:
    app = _io_graph([]).compile()
    assert list(app.stream({"question": "hi"}, stream_mode="values")) == [
        {"question": "hi"},
        {"question": "hi", "answer": "HI", "scratch": "tmp"},
    ]


def test_output_schema_applies_to_batch() -> None:
    app = _io_graph([]).compile()
    assert app.batch([{"question": "a"}, {"question": "b"}]) == [{"answer": "A"}, {"answer": "B"}]


def test_node_level_input_schema() -> None:
    class Private(TypedDict):
        question: str

    received: list = []

    def narrow(s: Private) -> dict:
        received.append(dict(s))
        return {"answer": "ok"}

    g = StateGraph(Full)
    g.add_node("narrow", narrow, input_schema=Private)
    g.add_edge(START, "narrow")
    out = g.compile().invoke({"question": "q", "scratch": "s"})
    assert received == [{"question": "q"}]
    assert out == {"question": "q", "scratch": "s", "answer": "ok"}


@dataclasses.dataclass
class D:
    x: int = 0
    log: Annotated[list, operator.add] = dataclasses.field(default_factory=list)
    name: str = "dflt"


def _dataclass_graph(received: list) -> StateGraph:
    def dn(s: D) -> dict:
        received.append(s)
        return {"x": s.x + 1, "log": ["dn"]}

    g = StateGraph(D)
    g.add_node(dn)
    g.add_edge(START, "dn")
    return g


def test_dataclass_state_nodes_receive_instances() -> None:
    received: list = []
    app = _dataclass_graph(received).compile()
    assert app.invoke({"x": 1}) == {"x": 2, "log": ["dn"]}
    assert received == [D(x=1, log=[], name="dflt")]
    assert isinstance(received[0], D)


def test_dataclass_state_instance_input_writes_every_field() -> None:
    app = _dataclass_graph([]).compile()
    assert app.invoke(D(x=2)) == {"x": 3, "log": ["dn"], "name": "dflt"}


def test_parallel_nodes_of_one_schema_share_one_validated_input_per_step() -> None:
    """LangGraph 1.2.22 builds a step's input once per (schema, keys) and hands every node a
    shallow copy: a pydantic state is validated once for the parallel pair, each node still
    gets its own object, and a node with another input schema gets its own input."""
    pydantic = pytest.importorskip("pydantic")
    validated: list[int] = []

    class P(pydantic.BaseModel):
        n: int = 0
        log: Annotated[list, operator.add] = []

        @pydantic.field_validator("n")
        @classmethod
        def count(cls, value: int) -> int:
            validated.append(value)
            return value

    class Narrow(TypedDict):
        n: int

    received: dict[str, Any] = {}

    def node(name: str) -> Any:
        def run(s: Any) -> dict:
            received[name] = s
            if name == "a":
                s.n = 99  # rebinding a field of its own copy: the sibling does not see it
            return {"log": [name]}

        return run

    g = StateGraph(P)
    g.add_node("z", lambda s: {"n": s.n + 1})
    for name in ("a", "b", "c"):
        g.add_node(name, node(name))
    g.add_node("narrow", node("narrow"), input_schema=Narrow)
    g.add_edge(START, "z")
    for name in ("a", "b", "c", "narrow"):
        g.add_edge("z", name)
    out = g.compile().invoke({"n": 1})

    assert out == {"n": 2, "log": ["a", "b", "c", "narrow"]}
    # z's input, then one model for a, b and c (the others get copies); as LangGraph 1.2.22
    assert validated == [1, 2]
    assert received["b"].n == received["c"].n == 2 and received["a"].n == 99
    assert len({id(received[name]) for name in ("a", "b", "c")}) == 3
    assert received["narrow"] == {"n": 2}


def test_dataclass_state_snapshot_values_are_a_dict() -> None:
    app = _dataclass_graph([]).compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "dc"}}
    app.invoke({"x": 1}, cfg)
    assert app.get_state(cfg).values == {"x": 2, "log": ["dn"]}


def test_dataclass_required_field_missing() -> None:
    @dataclasses.dataclass
    class D2:
        x: int
        y: int = 0

    g = StateGraph(D2)
    g.add_node("n", lambda s: {"y": 1})
    g.add_edge(START, "n")
    with pytest.raises(TypeError) as info:
        g.compile().invoke({"y": 5})
    assert "__init__() missing 1 required positional argument: 'x'" in str(info.value)


class St(msgspec.Struct):
    x: int = 0
    log: Annotated[list, operator.add] = []
    name: str = "dflt"


def test_msgspec_struct_state() -> None:
    received: list = []

    def sn(s: St) -> dict:
        received.append(s)
        return {"x": s.x * 2, "log": ["sn"]}

    g = StateGraph(St)
    g.add_node(sn)
    g.add_edge(START, "sn")
    app = g.compile()
    assert app.invoke({"x": 4}) == {"x": 8, "log": ["sn"]}
    assert received == [St(x=4, log=[], name="dflt")]
    assert isinstance(received[0], St)
    assert app.invoke(St(x=1, name="n")) == {"x": 2, "log": ["sn"], "name": "n"}


def test_node_may_return_a_state_object() -> None:
    def dn(s: D) -> D:
        return D(x=s.x + 10, log=["obj"], name="set")

    g = StateGraph(D)
    g.add_node(dn)
    g.add_edge(START, "dn")
    assert g.compile().invoke({"x": 1}) == {"x": 11, "log": ["obj"], "name": "set"}


# -- reducer defaults (lg_facts §19) -----------------------------------------------------------
# Module level: with `from __future__ import annotations` the reducers must be resolvable globals.

REDUCER_CALLS: list[tuple] = []


def lst(a: list, b: list) -> list:
    REDUCER_CALLS.append(("list", list(a), list(b)))
    return a + b


def r(a: Any, b: Any) -> Any:
    REDUCER_CALLS.append(("int" if isinstance(b, int) else "opt", a, b))
    return a + b if isinstance(b, int) else b


def dct(a: dict, b: dict) -> dict:
    REDUCER_CALLS.append(("dict", dict(a), dict(b)))
    return {**a, **b}


class R(TypedDict):
    l: Annotated[list[str], lst]
    i: Annotated[int, r]
    o: Annotated[Optional[str], r]
    d: Annotated[dict, dct]
    ladd: Annotated[list[str], operator.add]
    iadd: Annotated[int, operator.add]
    s: Annotated[str, operator.add]
    plain: str


@pytest.fixture
def reducer_calls() -> list[tuple]:
    REDUCER_CALLS.clear()
    return REDUCER_CALLS


def test_reducer_defaults_and_first_calls(reducer_calls: list[tuple]) -> None:
    seen: list[dict] = []

    def n1(state: R) -> dict:
        seen.append(dict(state))
        return {"l": ["n"], "i": 5, "o": "n1", "d": {"k": 1}}

    def n2(state: R) -> dict:
        return {"o": "n2"}

    g = StateGraph(R)
    g.add_sequence([n1, n2])
    g.add_edge(START, "n1")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "r"}}
    app.invoke({"plain": "p"}, cfg)
    first = list(app.get_state_history(cfg))[-1]
    assert first.metadata["step"] == -1
    assert first.values == {"l": [], "i": 0, "d": {}, "ladd": [], "iadd": 0, "s": ""}
    assert seen == [{"l": [], "i": 0, "d": {}, "ladd": [], "iadd": 0, "s": "", "plain": "p"}]
    assert reducer_calls == [
        ("list", [], ["n"]), ("int", 0, 5), ("dict", {}, {"k": 1}), ("opt", "n1", "n2"),
    ]


def test_input_values_go_through_the_reducer(reducer_calls: list[tuple]) -> None:
    g = StateGraph(R)
    g.add_node("n", lambda s: {"l": ["n"], "i": 1})
    g.add_edge(START, "n")
    out = g.compile().invoke({"l": ["in"], "i": 2, "o": "in"})
    assert out == {"l": ["in", "n"], "i": 3, "o": "in", "d": {}, "ladd": [], "iadd": 0, "s": ""}
    assert reducer_calls == [("list", [], ["in"]), ("int", 0, 2), ("list", ["in"], ["n"]), ("int", 2, 1)]


def _branch_graph(reducer: Any, parallel: bool = False) -> Any:
    B = TypedDict("B", {"items": Annotated[list, reducer]})  # noqa: N806 - local reducer

    routed: list[list] = []

    def route(state: Any) -> str:
        routed.append(list(state["items"]))
        return END

    g = StateGraph(B)
    g.add_node("a", lambda s: {"items": ["a"]})
    g.add_edge(START, "a")
    g.add_conditional_edges("a", route, [END])
    if parallel:  # a sibling in the same step: the step's fold differs from either preview
        g.add_node("b", lambda s: {"items": ["b"]})
        g.add_edge(START, "b")
        g.add_conditional_edges("b", route, [END])
    return g.compile(), routed


def test_a_pure_reducer_folds_a_routed_task_once_an_impure_one_twice() -> None:
    from engine._channels import mark_pure

    calls: list[tuple] = []

    def impure(left: list, right: list) -> list:
        calls.append((list(left), list(right)))
        return left + right

    def pure(left: list, right: list) -> list:
        calls.append((list(left), list(right)))
        return left + right

    mark_pure(pure)
    app, routed = _branch_graph(impure)
    assert app.invoke({"items": []}) == {"items": ["a"]}
    assert routed == [["a"]]
    assert calls == [([], []), ([], ["a"]), ([], ["a"])]  # input, router's view, apply (as LG)

    calls.clear()
    app, routed = _branch_graph(pure)
    assert app.invoke({"items": []}) == {"items": ["a"]}
    assert routed == [["a"]]
    assert calls == [([], []), ([], ["a"])]  # the router's fold is the step's

    calls.clear()
    app, routed = _branch_graph(pure, parallel=True)
    assert app.invoke({"items": []}) == {"items": ["a", "b"]}
    assert sorted(routed) == [["a"], ["b"]]
    assert calls[-1] == (["a"], ["b"])  # two writers: the step folds again, in task order


def test_router_and_final_state_see_the_same_minted_message_id() -> None:
    ids: list[str] = []

    def route(state: MessagesState) -> str:
        ids.append(_msg_id(state["messages"][-1]))
        return END

    g = StateGraph(MessagesState)
    g.add_node("a", lambda s: {"messages": [{"role": "assistant", "content": "hi"}]})
    g.add_edge(START, "a")
    g.add_conditional_edges("a", route, [END])
    out = g.compile().invoke({"messages": [{"role": "user", "content": "q"}]})
    assert len(out["messages"]) == 2
    assert ids == [_msg_id(out["messages"][-1])] and ids[0]


def _msg_id(message: Any) -> Any:
    return message["id"] if isinstance(message, dict) else message.id


def test_plain_keys_absent_until_written() -> None:
    g = StateGraph(S)
    g.add_node("n", lambda s: {"log": [sorted(s)]})
    g.add_edge(START, "n")
    assert g.compile().invoke({"log": []}) == {"log": [["log"]]}


def test_messages_state_add_messages() -> None:
    from engine import MessagesState

    g = StateGraph(MessagesState)
    g.add_node("n", lambda s: {"messages": [{"type": "ai", "content": "hi", "id": "2"}]})
    g.add_edge(START, "n")
    out = g.compile().invoke({"messages": [{"type": "human", "content": "yo", "id": "1"}]})
    assert [(m["content"] if isinstance(m, dict) else m.content) for m in out["messages"]] == [
        "yo", "hi",
    ]


@pytest.mark.anyio
async def test_async_router() -> None:
    async def route(s: S) -> str:
        return "b" if s["x"] > 0 else "c"

    app = _routed(route, ["b", "c"]).compile()
    assert await app.ainvoke({"x": 1}) == {"x": 1, "log": ["a", "b"]}
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["a", "c"]}


def test_get_runtime_inside_a_node() -> None:
    from engine import get_runtime

    got: list[Any] = []

    def n(s: S) -> None:
        got.append(get_runtime().context)

    _single(n).invoke({"x": 0}, context={"user": "rt"})
    assert got == [{"user": "rt"}]


def test_with_config_supplies_a_default_config() -> None:
    got: list[Any] = []

    def n(s: S, config) -> None:
        got.append(config["configurable"]["user"])

    app = _single(n).with_config({"configurable": {"user": "default"}})
    app.invoke({"x": 0})
    app.invoke({"x": 0}, {"configurable": {"user": "override"}})
    assert got == ["default", "override"]
