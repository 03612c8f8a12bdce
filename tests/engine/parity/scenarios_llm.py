"""LLM token streaming scenarios (issue 17): every way applications call a LangChain chat model.

Each scenario calls one streaming fake chat model (`Talker`, a small `BaseChatModel` with
`_stream`/`_astream`, so it streams through callbacks exactly as a real provider does) in one
of the shapes applications write: bare, `.with_config(tags=...)`, `.bind_tools`, `.with_retry()`,
`with_structured_output`, `prompt | model`, without passing `config`, from a subgraph, from a
tool. Each shape runs in sync and async nodes through stream, astream, invoke, ainvoke, batch and
astream_events (v2), in `messages`, multi-mode and events. A token seen twice or not at all shows
up as a transcript difference with LangGraph 1.2.22.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from langchain_core.runnables import RunnableConfig

from .harness import Transcript
from .scenarios import scenario

TOKENS = ["Hel", "lo", " there"]


def _talker_class() -> Any:
    """The fake model class, built on first use (langchain-core is imported only by these tests)."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, AIMessageChunk
    from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
    from langchain_core.utils.function_calling import convert_to_openai_tool

    class Talker(BaseChatModel):
        """Streams TOKENS; with tools bound, streams one call of the first tool instead."""

        @property
        def _llm_type(self) -> str:
            return "talker"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

        def _chunks(self, kwargs: dict[str, Any]) -> list[Any]:
            tools = kwargs.get("tools")
            if not tools:
                return [AIMessageChunk(content=t) for t in TOKENS]
            function = tools[0]["function"]
            field = next(iter(function["parameters"]["properties"]))
            args = json.dumps({field: "a b"})
            half = len(args) // 2
            call = {"name": function["name"], "id": "call-1", "index": 0}
            return [
                AIMessageChunk(content="", tool_call_chunks=[{**call, "args": args[:half]}]),
                AIMessageChunk(content="", tool_call_chunks=[{"index": 0, "args": args[half:]}]),
            ]

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                      **kwargs: Any) -> Any:
            merged = self._chunks(kwargs)[0]
            for chunk in self._chunks(kwargs)[1:]:
                merged = merged + chunk
            message = AIMessage(content=merged.content, tool_calls=merged.tool_calls)
            return ChatResult(generations=[ChatGeneration(message=message)])

        def _stream(self, messages: Any, stop: Any = None, run_manager: Any = None,
                    **kwargs: Any) -> Iterator[Any]:
            for message in self._chunks(kwargs):
                chunk = ChatGenerationChunk(message=message)
                if run_manager is not None:
                    run_manager.on_llm_new_token(str(message.content), chunk=chunk)
                yield chunk

        async def _astream(self, messages: Any, stop: Any = None, run_manager: Any = None,
                           **kwargs: Any) -> AsyncIterator[Any]:
            for message in self._chunks(kwargs):
                chunk = ChatGenerationChunk(message=message)
                if run_manager is not None:
                    await run_manager.on_llm_new_token(str(message.content), chunk=chunk)
                yield chunk

    return Talker


def _lookup_tool() -> Any:
    from langchain_core.tools import tool

    @tool
    def lookup(query: str) -> str:
        """Look something up."""
        return f"found {query}"

    return lookup


def _answer_schema() -> Any:
    from pydantic import BaseModel

    class Answer(BaseModel):
        """The final answer."""

        text: str

    return Answer


def _as_message(result: Any) -> Any:
    """What a node stores: the model's message, or a structured answer as an AI message."""
    from langchain_core.messages import AIMessage, BaseMessage

    if isinstance(result, BaseMessage):
        return result
    return AIMessage(content=f"answer {result.text}", id="structured")


# Each way of calling a model: name -> (runnable factory, whether it is called with config).
def _callers() -> dict[str, tuple[Callable[[], Any], bool, Callable[[Any], Any]]]:
    from langchain_core.prompts import ChatPromptTemplate

    talker = _talker_class()
    by_messages: Callable[[Any], Any] = lambda messages: messages  # noqa: E731
    by_dict: Callable[[Any], Any] = lambda messages: {"messages": messages}  # noqa: E731
    prompt = ChatPromptTemplate.from_messages([("system", "be brief"), ("placeholder", "{messages}")])
    return {
        "bare": (lambda: talker(), True, by_messages),
        "with_config": (lambda: talker().with_config(tags=["tagged"]), True, by_messages),
        "bind_tools": (lambda: talker().bind_tools([_lookup_tool()]), True, by_messages),
        "with_retry": (lambda: talker().with_retry(), True, by_messages),
        "structured": (lambda: talker().with_structured_output(_answer_schema()), True, by_messages),
        "prompt_chain": (lambda: prompt | talker().with_config(tags=["tagged"]), True, by_dict),
        "no_config": (lambda: talker(), False, by_messages),
        "no_config_bound": (lambda: talker().with_config(tags=["tagged"]), False, by_messages),
        "nostream": (lambda: talker().with_config(tags=["nostream"]), True, by_messages),
        "streaming_call": (lambda: _Streamed(talker()), True, by_messages),
        "chain_streamed": (lambda: _Streamed(prompt | talker()), True, by_dict),
    }


class _Streamed:
    """A node that consumes `model.stream()` / `astream()` itself and keeps the sum."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def invoke(self, arg: Any, config: Any = None) -> Any:
        chunks = list(self.model.stream(arg, config))
        return _sum(chunks)

    async def ainvoke(self, arg: Any, config: Any = None) -> Any:
        return _sum([c async for c in self.model.astream(arg, config)])


def _sum(chunks: list[Any]) -> Any:
    from langchain_core.messages import AIMessage

    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return AIMessage(content=total.content, id=total.id)


def _talk_nodes(runnable: Any, with_config: bool, shape: Callable[[Any], Any]) -> tuple[Any, Any]:
    """A sync and an async node calling `runnable` on the state's messages."""

    def talk(state: Any, config: RunnableConfig) -> dict[str, Any]:
        arg = shape(state["messages"])
        result = runnable.invoke(arg, config) if with_config else runnable.invoke(arg)
        return {"messages": [_as_message(result)]}

    async def atalk(state: Any, config: RunnableConfig) -> dict[str, Any]:
        arg = shape(state["messages"])
        result = await (runnable.ainvoke(arg, config) if with_config else runnable.ainvoke(arg))
        return {"messages": [_as_message(result)]}

    return talk, atalk


def _one_node(lib: Any, node: Any, name: str = "talk") -> Any:
    b = lib.StateGraph(lib.MessagesState)
    b.add_node(name, node)
    b.add_edge(lib.START, name)
    return b.compile()


def _inputs() -> dict[str, Any]:
    from langchain_core.messages import HumanMessage

    return {"messages": [HumanMessage(content="hi", id="h1")]}


def _chat_events(events: list[dict[str, Any]]) -> list[Any]:
    """Every event of an astream_events transcript: the graph's, its nodes', the chat model's
    and those of the LangChain runnables around it (RunnableRetry, RunnableSequence, prompts,
    parsers, tools), with run ids and parent ids (normalized: the same structure must show)."""
    return [
        (e["event"], e["name"], e["tags"], e["metadata"], e["data"], e["run_id"], e["parent_ids"])
        for e in events
    ]


async def _collect(agen: AsyncIterator[Any]) -> list[Any]:
    return [item async for item in agen]


def _drive(t: Transcript, sync_graph: Any, async_graph: Any) -> None:
    """Run both graphs through every driver and record what each streams or returns."""
    inp = _inputs()
    t.stream("stream", sync_graph, inp, stream_mode="messages")
    t.stream("stream_multi", sync_graph, inp, stream_mode=["messages", "updates"])
    t.call("invoke", sync_graph.invoke, inp)
    t.call("invoke_messages", sync_graph.invoke, inp, stream_mode="messages")
    t.call("batch", sync_graph.batch, [inp, inp], stream_mode="messages")
    for label, graph in (("sync_node", sync_graph), ("async_node", async_graph)):
        t.call(f"astream_{label}", lambda g=graph: asyncio.run(
            _collect(g.astream(inp, stream_mode="messages"))))
        t.call(f"astream_multi_{label}", lambda g=graph: asyncio.run(
            _collect(g.astream(inp, stream_mode=["updates", "messages"]))))
        t.call(f"events_{label}", lambda g=graph: _chat_events(asyncio.run(
            _collect(g.astream_events(inp, version="v2")))))
    t.call("ainvoke", lambda: asyncio.run(async_graph.ainvoke(inp)))
    t.call("ainvoke_messages", lambda: asyncio.run(async_graph.ainvoke(inp, stream_mode="messages")))
    t.call("abatch", lambda: asyncio.run(async_graph.abatch([inp, inp], stream_mode="messages")))


def _caller_scenario(kind: str) -> None:
    def run(lib: Any) -> list[Any]:
        t = Transcript()
        make, with_config, shape = _callers()[kind]
        talk, atalk = _talk_nodes(make(), with_config, shape)
        _drive(t, _one_node(lib, talk), _one_node(lib, atalk))
        return t.items

    run.__name__ = f"llm_{kind}"
    run.__doc__ = f"A chat model called as `{kind}` in a node, every driver and mode."
    scenario(run)


for _kind in ("bare", "with_config", "bind_tools", "with_retry", "structured", "prompt_chain",
              "no_config", "no_config_bound", "nostream", "streaming_call", "chain_streamed"):
    _caller_scenario(_kind)


@scenario
def llm_in_subgraph(lib: Any) -> list[Any]:
    """A bound model in a subgraph node: tokens only with subgraphs=True, once each."""
    t = Transcript()
    make, with_config, shape = _callers()["with_config"]
    talk, atalk = _talk_nodes(make(), with_config, shape)
    for label, node in (("sync", talk), ("async", atalk)):
        inner = _one_node(lib, node, "inner_talk")
        b = lib.StateGraph(lib.MessagesState)
        b.add_node("sub", inner)
        b.add_edge(lib.START, "sub")
        outer = b.compile()
        inp = _inputs()
        for subgraphs in (False, True):
            t.call(f"{label}_astream_subgraphs={subgraphs}", lambda: asyncio.run(_collect(
                outer.astream(inp, stream_mode="messages", subgraphs=subgraphs))))
            t.call(f"{label}_astream_multi_subgraphs={subgraphs}", lambda: asyncio.run(_collect(
                outer.astream(inp, stream_mode=["messages", "updates"], subgraphs=subgraphs))))
        t.call(f"{label}_events", lambda: _chat_events(asyncio.run(
            _collect(outer.astream_events(inp, version="v2")))))
        if label == "sync":
            t.stream("sync_stream", outer, inp, stream_mode="messages")
            t.stream("sync_stream_subgraphs", outer, inp, stream_mode="messages", subgraphs=True)
    return t.items


@scenario
def llm_subgraph_in_node_function(lib: Any) -> list[Any]:
    """A node that invokes a subgraph whose node calls a bound model, passing its config."""
    t = Transcript()
    make, with_config, shape = _callers()["bind_tools"]
    talk, atalk = _talk_nodes(make(), with_config, shape)
    inner_sync = _one_node(lib, talk, "inner_talk")
    inner_async = _one_node(lib, atalk, "inner_talk")

    def outer_node(state: Any, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": inner_sync.invoke(state, config)["messages"][-1:]}

    async def aouter_node(state: Any, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": (await inner_async.ainvoke(state, config))["messages"][-1:]}

    inp = _inputs()
    sync_outer, async_outer = _one_node(lib, outer_node, "outer"), _one_node(lib, aouter_node, "outer")
    for subgraphs in (False, True):
        t.stream(f"stream_subgraphs={subgraphs}", sync_outer, inp, stream_mode="messages",
                 subgraphs=subgraphs)
        t.call(f"astream_subgraphs={subgraphs}", lambda: asyncio.run(_collect(
            async_outer.astream(inp, stream_mode="messages", subgraphs=subgraphs))))
    return t.items


@scenario
def llm_inside_tool(lib: Any) -> list[Any]:
    """A tool that calls a bound model, run from a node (sync and async), with and without config."""
    from langchain_core.tools import tool

    t = Transcript()
    make, _, _ = _callers()["with_config"]
    model = make()

    @tool
    def summarize(text: str) -> str:
        """Summarize text with the model."""
        return str(model.invoke([("user", text)]).content)

    @tool
    async def asummarize(text: str) -> str:
        """Summarize text with the model (async)."""
        return str((await model.ainvoke([("user", text)])).content)

    def use(state: Any, config: RunnableConfig) -> dict[str, Any]:
        out = summarize.invoke({"text": "hi"}, config)
        return {"messages": [("ai", out)]}

    async def ause(state: Any, config: RunnableConfig) -> dict[str, Any]:
        out = await asummarize.ainvoke({"text": "hi"}, config)
        return {"messages": [("ai", out)]}

    def use_no_config(state: Any) -> dict[str, Any]:
        return {"messages": [("ai", summarize.invoke({"text": "hi"}))]}

    _drive(t, _one_node(lib, use), _one_node(lib, ause))
    t.stream("no_config", _one_node(lib, use_no_config), _inputs(), stream_mode="messages")
    return t.items


@scenario
def llm_parallel_nodes_and_two_calls(lib: Any) -> list[Any]:
    """Two nodes of one step each call a bound model (the second after the first is done), and a
    node that calls it twice: each LLM run's tokens once, under its own node."""
    import time

    from .scenarios import LAG

    t = Transcript()
    model = _callers()["with_config"][0]()

    def first(state: Any, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"], config)]}

    def second(state: Any, config: RunnableConfig) -> dict[str, Any]:
        time.sleep(LAG)
        return {"messages": [model.invoke(state["messages"], config)]}

    def twice(state: Any, config: RunnableConfig) -> dict[str, Any]:
        one = model.invoke(state["messages"], config)
        return {"messages": [one, model.invoke([*state["messages"], one], config)]}

    b = lib.StateGraph(lib.MessagesState)
    b.add_node("first", first)
    b.add_node("second", second)
    b.add_node("twice", twice)
    b.add_edge(lib.START, "first")
    b.add_edge(lib.START, "second")
    b.add_edge("second", "twice")
    g = b.compile()
    t.stream("stream", g, _inputs(), stream_mode="messages")
    t.call("astream", lambda: asyncio.run(_collect(
        g.astream(_inputs(), stream_mode=["messages", "updates"]))))
    return t.items
