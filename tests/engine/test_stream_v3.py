"""`stream_events(version="v3")` run streams and `stream_mode="tools"` (issue 29)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest

from engine import END, START, MessagesState, StateGraph, get_stream_writer
from engine.stream import (
    AsyncGraphRunStream,
    CustomTransformer,
    GraphRunStream,
    StreamChannel,
    StreamTransformer,
    UpdatesTransformer,
)


class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def _step(name: str) -> Any:
    def node(s: S) -> dict:
        get_stream_writer()({"at": name})
        return {"x": s["x"] + 1, "log": [name]}

    return node


def _chain(*names: str, inner: Any = None) -> Any:
    b = StateGraph(S)
    for name in names:
        b.add_node(name, _step(name))
    if inner is not None:
        b.add_node("inner", inner)
        names = (*names, "inner")
    b.add_edge(START, names[0])
    for first, then in zip(names, names[1:]):
        b.add_edge(first, then)
    b.add_edge(names[-1], END)
    return b.compile()


def test_output_and_the_values_projection() -> None:
    run = _chain("a", "b").stream_events({"x": 0, "log": []}, version="v3")
    assert isinstance(run, GraphRunStream)
    assert [v["x"] for v in run.values] == [0, 1, 2]
    assert run.output == {"x": 2, "log": ["a", "b"]}
    assert run.interrupted is False


def test_raw_events_are_numbered_protocol_events() -> None:
    events = list(_chain("a").stream_events({"x": 0, "log": []}, version="v3"))
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert {e["method"] for e in events} == {"values"}  # only the modes transformers need


def test_opt_in_projections_ask_the_run_for_their_modes() -> None:
    run = _chain("a", "b").stream_events(
        {"x": 0, "log": []}, version="v3", transformers=[UpdatesTransformer, CustomTransformer]
    )
    updates, custom = iter(run.updates), iter(run.custom)
    assert run.output["x"] == 2
    assert [list(u) for u in updates] == [["a"], ["b"]]
    assert list(custom) == [{"at": "a"}, {"at": "b"}]


def test_subgraph_handles_and_lifecycle_events() -> None:
    outer = _chain("a", inner=_chain("b", "c"))
    run = outer.stream_events({"x": 0, "log": []}, version="v3")
    lifecycle = iter(run.lifecycle)
    handles = [(h.graph_name, [v["log"] for v in h.values], h.status) for h in run.subgraphs]
    assert handles == [("inner", [["a", "b"], ["a", "b", "c"]], "completed")]
    assert [e["event"] for e in lifecycle] == ["started", "completed"]
    assert run.output["log"] == ["a", "a", "b", "c"]  # the inner run returns its whole log


class Counter(StreamTransformer):
    """Counts the values events of its scope into a named channel."""

    _native = True
    required_stream_modes = ("values",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self.channel: StreamChannel[int] = StreamChannel("count")
        self.seen = 0

    def init(self) -> dict[str, Any]:
        return {"count": self.channel}

    def process(self, event: Any) -> bool:
        if event["method"] == "values" and event["params"]["namespace"] == list(self.scope):
            self.seen += 1
            self.channel.push(self.seen)
        return True


def test_a_custom_transformer_projects_and_forwards_into_the_log() -> None:
    run = _chain("a").stream_events({"x": 0, "log": []}, version="v3", transformers=[Counter])
    events = list(run)
    assert [e["params"]["data"] for e in events if e["method"] == "count"] == [1, 2]
    assert run.extensions["count"] is run.count


def test_v3_refuses_what_it_decides_itself_and_prebuilt_transformers() -> None:
    graph = _chain("a")
    with pytest.raises(TypeError, match="stream_mode"):
        graph.stream_events({"x": 0, "log": []}, version="v3", stream_mode="values")
    with pytest.raises(TypeError, match="pre-built instance"):
        graph.stream_events({"x": 0, "log": []}, version="v3", transformers=[Counter()])


def test_a_failing_node_fails_the_projections() -> None:
    def boom(s: S) -> dict:
        raise ValueError("boom")

    b = StateGraph(S)
    b.add_node("boom", boom)
    b.add_edge(START, "boom")
    run = b.compile().stream_events({"x": 0, "log": []}, version="v3")
    with pytest.raises(ValueError, match="boom"):
        list(run.values)


@pytest.mark.anyio
async def test_async_run_read_from_two_tasks() -> None:
    """Readers in different tasks share the run: it advances from one task of its own (the
    run's cancel scopes must be left by the task that entered them)."""
    import anyio

    run = await _chain("a", "b").astream_events({"x": 0, "log": []}, version="v3")
    assert isinstance(run, AsyncGraphRunStream)
    seen: list[int] = []

    async def read_values() -> None:
        async for v in run.values:
            seen.append(v["x"])

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_values)
    assert seen == [0, 1, 2]
    assert (await run.output())["log"] == ["a", "b"]


def test_chat_model_calls_become_message_streams() -> None:
    lc = pytest.importorskip("langchain_core.language_models")
    from langchain_core.messages import AIMessage

    model = lc.GenericFakeChatModel(messages=iter([AIMessage(content="hello world")]))

    def call(s: MessagesState) -> dict:
        return {"messages": [model.invoke(s["messages"])]}

    b = StateGraph(MessagesState)
    b.add_node("call", call)
    b.add_edge(START, "call")
    run = b.compile().stream_events({"messages": "hi"}, version="v3")
    streams = [(s.node, "".join(s.text)) for s in run.messages]
    assert streams == [("call", "hello world")]


def test_tools_mode_streams_a_tool_call_lifecycle() -> None:
    tools = pytest.importorskip("langchain_core.tools")

    @tools.tool
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    def node(s: MessagesState) -> dict:
        echo.invoke({"text": "hi"})
        return {}

    b = StateGraph(MessagesState)
    b.add_node("node", node)
    b.add_edge(START, "node")
    events = [p["data"] for p in b.compile().stream({"messages": []}, stream_mode="tools",
                                                    version="v2")]
    assert [(e["event"], e["tool_name"] if "tool_name" in e else e["output"]) for e in events] \
        == [("tool-started", "echo"), ("tool-finished", "hi")]
    assert events[0]["input"] == {"text": "hi"}


def test_tool_call_transformer_gives_one_handle_per_call() -> None:
    tools = pytest.importorskip("langchain_core.tools")
    from engine.stream import ToolCallTransformer

    @tools.tool
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    def node(s: MessagesState) -> dict:
        echo.invoke({"text": "hi"})
        return {}

    b = StateGraph(MessagesState)
    b.add_node("node", node)
    b.add_edge(START, "node")
    run = b.compile().stream_events({"messages": []}, version="v3",
                                    transformers=[ToolCallTransformer])
    calls = [(c.tool_name, c.input, list(c), c.output, c.completed) for c in run.tool_calls]
    assert calls == [("echo", {"text": "hi"}, [], "hi", True)]


def test_checkpoint_events_of_a_v3_run_show_only_the_callers_config() -> None:
    from checkpoints import InMemorySaver
    from engine.stream import CheckpointsTransformer

    b = StateGraph(S)
    b.add_node("a", _step("a"))
    b.add_edge(START, "a")
    graph = b.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t", "user": "u"}}
    run = graph.stream_events({"x": 0, "log": []}, config, version="v3",
                              transformers=[CheckpointsTransformer])
    checkpoints = iter(run.checkpoints)
    assert run.output["x"] == 1
    keys = {k for c in checkpoints for k in c["config"]["configurable"]}
    assert keys == {"thread_id", "user", "checkpoint_ns", "checkpoint_id"}
