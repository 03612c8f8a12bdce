"""Messages on both libraries (issue 29): `add_messages` on chunks and message-likes and with
`format=`, `push_message`, `MessageGraph`, a child graph invoked on a thread of its own, and a
tool's `ToolRuntime.emit_output_delta` in the `tools` mode."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

from .harness import Transcript
from .scenarios import scenario


def _message_module(lib: Any) -> Any:
    """Where each library keeps `push_message` and `MessageGraph`."""
    return importlib.import_module("langgraph.graph.message" if lib.name == "lg" else "engine")


def _names(ns: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(segment.split(":")[0] for segment in ns)


@scenario
def messages_reducer_conversions(lib: Any) -> list[Any]:
    """Chunks and dicts become messages on both sides, a removed id added again stays, the
    last "remove all" wins, `format=` validates and reformats, a one-sided call fails."""
    from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, RemoveMessage

    t = Transcript()
    add = lib.add_messages
    left = [HumanMessage("hi", id="1"), {"role": "assistant", "content": "yo", "id": "2"}]
    merged = add(left, [AIMessageChunk("chunk", id="3"), ("user", "thanks")])
    t.add("converted", [(type(m).__name__, m.content) for m in merged])
    merged = add([AIMessageChunk("a", id="1")], [AIMessageChunk("b", id="2")])
    t.add("chunks", [(type(m).__name__, m.id) for m in merged])
    merged = add([AIMessage("old", id="1")],
                 [RemoveMessage(id="1"), AIMessage("new", id="1"), AIMessage("newer", id="1")])
    t.add("readded", [(m.id, m.content) for m in merged])
    merged = add([AIMessage("a", id="1")], [
        RemoveMessage(id="__remove_all__"), AIMessage("b", id="2"),
        RemoveMessage(id="__remove_all__"), AIMessage("c", id="3"),
    ])
    t.add("remove_all", [m.id for m in merged])
    t.call("bad_format", add, [], [], format="invalid")
    t.call("one_sided", add, [AIMessage("a", id="1")])
    openai = add(format="langchain-openai")
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "AAA"}}
    merged = openai([HumanMessage("hi", id="1")], [HumanMessage([image], id="2")])
    t.add("openai", [(type(m).__name__, m.content) for m in merged])
    return t.items


def _pushing(lib: Any, state_key: str | None) -> Any:
    from langchain_core.messages import AIMessage

    push = _message_module(lib).push_message

    def chat(state: Any) -> dict[str, Any]:
        try:
            push(AIMessage("no id"), state_key=state_key)
        except ValueError as error:
            push(AIMessage(str(error), id="err"), state_key=state_key)
        push({"role": "user", "content": "as a dict", "id": "d"}, state_key=state_key)
        return {}

    return (lib.StateGraph(lib.MessagesState).add_node(chat)
            .add_edge(lib.START, "chat").compile())


@scenario
def push_message_streams_and_writes(lib: Any) -> list[Any]:
    """Pushed messages stream once and land in the state (or not, `state_key=None`); under a
    parent graph they stream under the subgraph's namespace only with `subgraphs=True`."""
    t = Transcript()
    for key in ("messages", None):
        for mode, chunk in _pushing(lib, key).stream({"messages": []},
                                                     stream_mode=["messages", "values"]):
            data = chunk[0] if mode == "messages" else chunk["messages"]
            t.add(f"{key}:{mode}", [(m.id, m.content) for m in
                                    (data if isinstance(data, list) else [data])])
    parent = (lib.StateGraph(lib.MessagesState).add_node("sub", _pushing(lib, "messages"))
              .add_edge(lib.START, "sub").compile())
    for subgraphs in (False, True):
        parts = parent.stream({"messages": []}, stream_mode="messages", subgraphs=subgraphs,
                              version="v2")
        t.add(f"nested:{subgraphs}", [(_names(p["ns"]), p["data"][0].id) for p in parts])
    return t.items


@scenario
def message_graph_runs(lib: Any) -> list[Any]:
    """The deprecated `MessageGraph`: a list of messages in, the merged list out."""
    from langchain_core.messages import AIMessage

    t = Transcript()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        builder = _message_module(lib).MessageGraph()
    t.add("warned", [type(w.message).__name__ for w in caught])
    builder.add_node("chatbot", lambda messages: [AIMessage(f"seen {len(messages)}", id="a")])
    builder.set_entry_point("chatbot")
    builder.set_finish_point("chatbot")
    out = builder.compile().invoke([("user", "hi")])
    t.add("out", [(type(m).__name__, m.content) for m in out])
    return t.items


def _chatting(lib: Any) -> Any:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.tools import tool

    @tool
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    def chat(state: Any) -> dict[str, Any]:
        echo.invoke({"text": "done"})
        return {"messages": [GenericFakeChatModel(messages=iter(["one two"])).invoke("hi")]}

    return (lib.StateGraph(lib.MessagesState).add_node(chat)
            .add_edge(lib.START, "chat").compile())


@scenario
def child_graph_on_its_own_thread(lib: Any) -> list[Any]:
    """A graph invoked in a node with a `configurable` of its own is a root graph: its model
    and tool events reach a caller streaming subgraphs under `()`, its updates never do; a
    graph invoked with the node's config stays a subgraph."""
    t = Transcript()
    child = _chatting(lib)
    for label, config in (("own", {"configurable": {"thread_id": "child"}}),
                          ("caller", {"configurable": {"thread_id": "parent"}}),
                          ("tags", {"tags": ["x"]})):
        def node(state: Any) -> dict[str, Any]:
            child.invoke({"messages": []}, config)
            return {}

        parent = (lib.StateGraph(lib.MessagesState).add_node(node)
                  .add_edge(lib.START, "node").compile(checkpointer=lib.InMemorySaver()))
        for subgraphs in (False, True):
            parts = parent.stream({"messages": []}, {"configurable": {"thread_id": "parent"}},
                                  stream_mode=["messages", "tools", "updates"],
                                  subgraphs=subgraphs, version="v2")
            t.add(f"{label}:{subgraphs}", [(_names(p["ns"]), p["type"]) for p in parts])
    return t.items


@scenario
def tool_emits_output_deltas(lib: Any) -> list[Any]:
    """`ToolRuntime.emit_output_delta` streams `tool-output-delta` events between a call's
    start and finish in the `tools` mode, and is a no-op without it."""
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    def streamer(marker, runtime):  # type: ignore[no-untyped-def]
        """Emits the marker twice."""
        runtime.emit_output_delta(f"{marker}-1")
        runtime.emit_output_delta(f"{marker}-2")
        return marker

    # the library's own ToolRuntime, as a real (not stringified) annotation
    streamer.__annotations__ = {"marker": str, "runtime": lib.ToolRuntime, "return": str}
    streamer = tool(streamer)

    def caller(state: Any) -> dict[str, Any]:
        calls = [{"name": "streamer", "args": {"marker": m}, "id": m} for m in ("A", "B")]
        return {"messages": [AIMessage("", tool_calls=calls, id="ai")]}

    graph = (lib.StateGraph(lib.MessagesState).add_node("caller", caller)
             .add_node("tools", lib.ToolNode([streamer])).add_edge(lib.START, "caller")
             .add_edge("caller", "tools").compile())
    t = Transcript()
    events = [p for _, mode, p in graph.stream({"messages": []}, stream_mode=["tools"],
                                               subgraphs=True) if mode == "tools"]
    t.add("by_call", sorted((p["tool_call_id"], p["event"], p.get("delta")) for p in events))
    t.add("order", [p["event"] for p in events if p["tool_call_id"] == "A"])
    t.add("values", [m.content for m in graph.invoke({"messages": []})["messages"]])
    return t.items


@scenario
def react_agent_state_schemas(lib: Any) -> list[Any]:
    """The prebuilt agent's input and output JSON Schemas: its state is LangGraph's deprecated
    `AgentState`, which pydantic reads on Python < 3.12 too."""
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage

    class Model(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    t = Transcript()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in LangGraph 1.0
        agent = lib.create_react_agent(Model(responses=[AIMessage("x")]), [])
    t.add("input", agent.get_input_jsonschema())
    t.add("output", agent.get_output_jsonschema())
    return t.items
