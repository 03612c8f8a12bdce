"""`push_message`, `add_messages(format=...)` and a `ToolNode` called directly (issue 29).

The LangGraph parity of the same programs is in `parity/scenarios_messages.py`; these tests
cover what a transcript does not: where the pushed write lands among the node's own, the
reducer's fast path for its own output, and a direct `ToolNode` call handed its state.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_core.tools import tool
from typing_extensions import TypedDict

from engine import START, MessagesState, StateGraph, add_messages, push_message
from engine import _messages
from engine.prebuilt import ToolNode


def test_push_message_outside_a_run_is_an_error() -> None:
    with pytest.raises(RuntimeError):
        push_message(AIMessage("hi", id="1"))


def test_pushed_message_lands_before_the_nodes_own_update() -> None:
    def chat(state: MessagesState) -> dict[str, Any]:
        push_message(AIMessage("pushed", id="p"))
        return {"messages": [AIMessage("returned", id="r")]}

    graph = StateGraph(MessagesState).add_node(chat).add_edge(START, "chat").compile()
    streamed = [m.id for m, _ in graph.stream({"messages": []}, stream_mode="messages")]
    final = graph.invoke({"messages": [HumanMessage("hi", id="h")]})

    assert streamed == ["p", "r"]  # each once: the returned state does not repeat "p"
    assert [m.id for m in final["messages"]] == ["h", "p", "r"]


def test_pushed_chunk_streams_as_a_chunk_and_is_stored_whole() -> None:
    def chat(state: MessagesState) -> dict[str, Any]:
        push_message(AIMessageChunk("part", id="c"))
        return {}

    graph = StateGraph(MessagesState).add_node(chat).add_edge(START, "chat").compile()
    parts = list(graph.stream({"messages": []}, stream_mode=["messages", "values"]))

    assert type(parts[1][1][0]) is AIMessageChunk
    assert type(parts[-1][1]["messages"][0]) is AIMessage


def test_formatted_reducer_in_a_state() -> None:
    class State(TypedDict):
        messages: Annotated[list, add_messages(format="langchain-openai")]

    def node(state: State) -> dict[str, Any]:
        text = {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}
        image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                             "data": "AAA"}}
        return {"messages": [HumanMessage([text, image])]}

    graph = StateGraph(State).add_node(node).add_edge(START, "node").compile()

    assert graph.invoke({"messages": []})["messages"][0].content == [
        {"type": "text", "text": "hi"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}},
    ]


def test_reducer_converts_a_foreign_left_but_not_its_own_output() -> None:
    own = add_messages([], [AIMessage("a", id="1")])
    assert add_messages(own, [AIMessage("b", id="2")])[0] is own[0]
    foreign = [AIMessageChunk("a", id="1")]  # not this reducer's output: converted
    assert type(add_messages(foreign, [AIMessage("b", id="2")])[0]) is AIMessage
    # a list the reducer returned is recognized by identity, without reading its types
    assert _messages._settled(own)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_direct_tool_node_call_takes_the_state_its_config_hands_over() -> None:
    seen = []

    def wrap(request: Any, execute: Any) -> Any:
        seen.append(request.state)
        return execute(request)

    values = {"messages": [AIMessage("from channels")], "files": {"/a": "b"}}

    def read(scratchpad: Any, channels: Any, managed: Any, task: Any, select: Any,
             fresh: bool) -> Any:
        return {k: values[k] for k in select}

    reader = functools.partial(read, None, dict.fromkeys(values), {}, None)
    call = {"name": "add", "args": {"a": 1, "b": 2}, "id": "c1", "type": "tool_call"}
    node = ToolNode([add], wrap_tool_call=wrap)
    node.invoke([call], {"configurable": {"__pregel_read": reader}})
    node.invoke([call], {"configurable": {"__pregel_read_state": lambda: {"k": 1}}})
    node.invoke([call])

    assert seen == [values, {"k": 1}, {}]
