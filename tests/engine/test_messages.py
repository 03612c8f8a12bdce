"""`messages` stream mode: framework-free API, node-returned messages, the LangChain bridge,
and `add_messages` — compared with LangGraph 1.2.22 where it defines the behaviour."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage

import engine
from checkpoints import InMemorySaver
from engine import START, MessagesState, StateGraph, add_messages, emit_message

lg_graph = pytest.importorskip("langgraph.graph")


def _strip(meta: dict[str, Any]) -> dict[str, Any]:
    """Task ids differ between engines; everything else must match."""
    return {
        k: (v.split(":")[0] if k in ("langgraph_checkpoint_ns", "checkpoint_ns") else v)
        for k, v in meta.items()
    }


def _transcript(lib: Any, model_factory: Any, **stream_kwargs: Any) -> list[Any]:
    model = model_factory()

    def n(state: dict) -> dict:
        return {"messages": [model.invoke(state["messages"]), AIMessage("extra", id="x1")]}

    g = lib.StateGraph(lib.MessagesState)
    g.add_node("n", n)
    g.add_edge(lib.START, "n")
    items = g.compile(checkpointer=stream_kwargs.pop("saver", None)).stream(
        {"messages": [HumanMessage("hi", id="h1")]}, stream_mode="messages", **stream_kwargs
    )
    rows = [(type(m).__name__, m.content, m.id, _strip(meta)) for m, meta in items]
    if lib is not engine:  # graphrun adds `graph_node` (docs/differences.md)
        for *_, meta in rows:
            meta["graph_node"] = meta["langgraph_node"]
    return rows


def _fake() -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage("hello world", id="m1")]))


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"config": {"tags": ["outer"], "metadata": {"mkey": "v"}}},
    ],
)
def test_langchain_model_tokens_match_langgraph(kwargs: dict[str, Any]) -> None:
    ours = _transcript(engine, _fake, **dict(kwargs))
    theirs = _transcript(lg_graph, _fake, **dict(kwargs))
    assert ours == theirs
    assert [c for _, c, _, _ in ours] == ["hello", " ", "world", "extra"]


def test_thread_id_in_metadata_with_a_checkpointer_matches_langgraph() -> None:
    from langgraph.checkpoint.memory import InMemorySaver as LgSaver

    cfg = {"configurable": {"thread_id": "t"}}
    ours = _transcript(engine, _fake, saver=InMemorySaver(), config=cfg)
    theirs = _transcript(lg_graph, _fake, saver=LgSaver(), config=cfg)
    assert ours == theirs
    assert all(meta["thread_id"] == "t" for *_, meta in ours)


def test_messages_tuple_alias_and_mode_list() -> None:
    g = StateGraph(MessagesState)
    g.add_node("n", lambda s: {"messages": [AIMessage("a", id="a1")]})
    g.add_edge(START, "n")
    app = g.compile()
    alias = list(app.stream({"messages": []}, stream_mode="messages-tuple"))
    assert [(m.content, meta["langgraph_node"]) for m, meta in alias] == [("a", "n")]
    both = list(app.stream({"messages": []}, stream_mode=["messages", "updates"]))
    assert [mode for mode, _ in both] == ["messages", "updates"]


def test_framework_free_tokens_then_returned_message_is_not_repeated() -> None:
    def n(state: dict) -> dict:
        for token in ("to", "ken"):
            emit_message({"type": "AIMessageChunk", "content": token, "id": "m9"}, tags=["t"])
        return {"messages": [{"type": "ai", "content": "token", "id": "m9"}]}

    g = StateGraph(MessagesState)
    g.add_node("n", n)
    g.add_edge(START, "n")
    items = list(g.compile().stream({"messages": []}, stream_mode="messages"))
    assert [(m["content"], meta["tags"], meta["langgraph_node"]) for m, meta in items] == [
        ("to", ["t"], "n"),
        ("ken", ["t"], "n"),
    ]


def test_plain_string_tokens_share_one_message_id() -> None:
    def n(state: dict) -> None:
        emit_message("a")
        emit_message("b")

    g = StateGraph(MessagesState)
    g.add_node("n", n)
    g.add_edge(START, "n")
    items = list(g.compile().stream({"messages": []}, stream_mode="messages"))
    assert [m["content"] for m, _ in items] == ["a", "b"]
    assert items[0][0]["id"] == items[1][0]["id"]
    assert items[0][0]["type"] == "AIMessageChunk"


def test_input_messages_are_not_emitted_and_missing_ids_are_filled() -> None:
    def n(state: dict) -> dict:
        return {"messages": [*state["messages"], AIMessage("new"),
                             {"type": "ai", "content": "a dict is not streamed (issue 27)"}]}

    class S(TypedDict):
        messages: Annotated[list, operator.add]

    g = StateGraph(S)
    g.add_node("n", n)
    g.add_edge(START, "n")
    items = list(
        g.compile().stream({"messages": [HumanMessage("x", id="h")]}, stream_mode="messages")
    )
    assert [m.content for m, _ in items] == ["new"]
    assert items[0][0].id


def test_subgraph_tokens_only_with_subgraphs() -> None:
    def inner(state: dict) -> dict:
        emit_message({"type": "AIMessageChunk", "content": "sub tok", "id": "s1"})
        return {"messages": [AIMessage("sub tok", id="s1")]}

    sub = StateGraph(MessagesState)
    sub.add_node("inner", inner)
    sub.add_edge(START, "inner")
    parent = StateGraph(MessagesState)
    parent.add_node("sub", sub.compile())
    parent.add_edge(START, "sub")
    app = parent.compile()
    flat = list(app.stream({"messages": []}, stream_mode="messages"))
    assert [(m.content, meta["langgraph_node"]) for m, meta in flat] == [("sub tok", "sub")]
    nested = list(app.stream({"messages": []}, stream_mode="messages", subgraphs=True))
    assert len(nested) == 1
    ns, (message, meta) = nested[0]
    assert ns[0].startswith("sub:") and meta["langgraph_node"] == "inner"
    assert message["content"] == "sub tok"


@pytest.mark.anyio
async def test_async_model_streams_tokens() -> None:
    model = _fake()

    async def n(state: dict) -> dict:
        return {"messages": [await model.ainvoke(state["messages"])]}

    g = StateGraph(MessagesState)
    g.add_node("n", n)
    g.add_edge(START, "n")
    items = [m.content async for m, _ in g.compile().astream({"messages": []},
                                                             stream_mode="messages")]
    assert items == ["hello", " ", "world"]


def test_emit_message_outside_a_run() -> None:
    with pytest.raises(RuntimeError):
        emit_message("x")


# -- add_messages -----------------------------------------------------------------------------


@pytest.mark.parametrize("impl", [add_messages, lg_graph.add_messages], ids=["graphrun", "lg"])
def test_add_messages_append_replace_remove(impl: Any) -> None:
    left = [HumanMessage("a", id="1"), AIMessage("b", id="2")]
    merged = impl(left, [AIMessage("b2", id="2"), HumanMessage("c", id="3")])
    assert [(m.id, m.content) for m in merged] == [("1", "a"), ("2", "b2"), ("3", "c")]
    removed = impl(merged, [RemoveMessage(id="1")])
    assert [m.id for m in removed] == ["2", "3"]


def test_add_messages_dicts_and_strings_become_messages_with_ids() -> None:
    merged = add_messages([], [{"role": "user", "content": "hi"}, "plain"])
    assert [type(m).__name__ for m in merged] == ["HumanMessage", "HumanMessage"]
    assert all(m.id for m in merged)


def test_add_messages_remove_unknown_id_fails() -> None:
    with pytest.raises(ValueError, match="doesn't exist"):
        add_messages([HumanMessage("a", id="1")], [RemoveMessage(id="zz")])


_CALL = {"name": "search", "args": {"q": "x"}, "id": "c1"}
_SHAPES = [
    {"role": "user", "content": "hi"},
    {"role": "user", "content": "hi", "id": "u1", "name": "ann"},
    {"type": "human", "content": [{"type": "text", "text": "hi"}]},
    {"role": "assistant", "content": "", "tool_calls": [_CALL], "id": "a1"},
    {"role": "assistant", "content": None, "tool_calls": [dict(_CALL, type="tool_call")]},
    {"type": "ai", "content": "answer", "tool_calls": []},
    {"role": "tool", "content": "3 kB", "tool_call_id": "c1", "id": "t1"},
    {"role": "tool", "content": "3 kB", "tool_call_id": "c1", "name": "search"},
    {"role": "system", "content": "be brief"},
    # the shapes `_direct` leaves to LangChain itself
    {"role": "developer", "content": "be brief"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}
    ]},
    {"role": "user", "type": "human", "content": "both keys"},
    {"role": "assistant", "content": "x", "response_metadata": {"model": "m"}},
    {"role": "tool", "content": "x", "tool_call_id": "c1", "artifact": {"raw": 1}},
    {"role": "function", "content": "x", "name": "f"},
]


@pytest.mark.parametrize("shape", _SHAPES, ids=lambda s: s.get("role") or s.get("type"))
def test_dict_messages_convert_exactly_as_langchain_does(shape: dict[str, Any]) -> None:
    """The direct constructor path for plain shapes builds what `convert_to_messages` does."""
    from langchain_core.messages import convert_to_messages

    from engine._messages import _langchain

    from engine._messages import _direct, _load_langchain

    direct = _direct(dict(shape), _load_langchain()[0])
    assert (direct is not None) == (_SHAPES.index(shape) < 9)  # which path it took
    ours, theirs = _langchain(dict(shape)), convert_to_messages([dict(shape)])[0]
    assert type(ours) is type(theirs)
    assert ours.model_dump() == theirs.model_dump()


def test_add_messages_id_index_kept_between_turns_gives_langgraphs_results() -> None:
    """Issue 32: the ids of a thread's messages are indexed once and found again by the next
    turn (a new list of the same message objects, as the saver hands back); replacing,
    removing and appending after that give what LangGraph's reducer gives."""
    from langgraph.graph.message import add_messages as lg_add

    ours: list[Any] = [HumanMessage(content=f"m{i}", id=f"id{i}") for i in range(50)]
    theirs = list(ours)
    turns: list[Any] = [
        [AIMessage(content="reply", id="new1")],  # indexed from here on
        [AIMessage(content="again", id="new2")],
        [AIMessage(content="replaced", id="id3")],  # an id the index holds: replaced
        [AIMessage(content="replaced too", id="new1")],  # one the index learned: replaced
        [RemoveMessage(id="id7")],
        [AIMessage(content="after", id="new3"), HumanMessage(content="no id")],
    ]
    for right in turns:
        ours = add_messages(list(ours), right)  # a new list of the same objects, each turn
        theirs = lg_add(list(theirs), right)
        assert [(m.id, m.content) for m in ours[:-1]] == [(m.id, m.content) for m in theirs[:-1]]
        assert ours[-1].content == theirs[-1].content
    # A message swapped in the list since it was indexed: the index is not used for it.
    ours[5] = theirs[5] = AIMessage(content="swapped", id="mid")
    right = [AIMessage(content="x", id="mid")]
    assert [m.content for m in add_messages(ours, right)] == [
        m.content for m in lg_add(theirs, right)
    ]


def test_add_messages_reads_the_ids_of_earlier_messages_once_per_thread() -> None:
    """Issue 32: a reply with an id read the id of every earlier message, each turn (O(thread)
    per turn); now the next turn finds them indexed."""

    class Counted(dict):  # a dict message that counts the reads of its fields
        reads = 0

        def get(self, key: Any, default: Any = None) -> Any:
            Counted.reads += 1
            return super().get(key, default)

    history: list[Any] = [Counted(type="human", content=str(i), id=f"c{i}") for i in range(200)]
    history = add_messages(history, [AIMessage(content="a", id="n1")])  # reads them: indexed
    Counted.reads = 0
    for turn in range(5):  # each turn starts from a new list of the same objects
        history = add_messages(list(history), [AIMessage(content="b", id=f"t{turn}")])
    assert Counted.reads <= 5 * 2, Counted.reads
    assert [m.get("id") if isinstance(m, dict) else m.id for m in history][-6:] == [
        "n1", "t0", "t1", "t2", "t3", "t4"
    ]
