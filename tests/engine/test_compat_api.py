"""LangGraph 1.x API details ported programs rely on (issue 29): `with_config` merging as
LangGraph merges configs, its deprecation warnings, a Send's own timeout, refusing a
non-saver at compile, and LangSmith's current run inside a node."""

from __future__ import annotations

import asyncio
import uuid
import warnings
from typing import Any

import anyio
import pytest
from typing_extensions import TypedDict

from engine import END, START, NodeTimeoutError, Send, StateGraph, TimeoutPolicy, entrypoint
from engine.types import GraphOutput
from engine.warnings import LangGraphDeprecatedSinceV10, LangGraphDeprecatedSinceV11


class S(TypedDict, total=False):
    x: int
    seen: Any


def _recorder(seen: list[dict[str, Any]]) -> Any:
    def node(state: S, config: Any) -> S:
        seen.append(config)
        return {}

    builder = StateGraph(S)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    return builder.compile()


def test_with_config_merges_under_the_call_config() -> None:
    """Bound tags, metadata and configurable keys survive a call that brings its own."""
    seen: list[dict[str, Any]] = []
    graph = _recorder(seen).with_config(
        {"tags": ["bound"], "metadata": {"user": "u1"}, "configurable": {"agent": "root"}})
    graph.invoke({"x": 1}, {"tags": ["call"], "metadata": {"trace": "t1"},
                            "configurable": {"thread_id": "T1"}})
    config = seen[0]
    assert config["tags"][:2] == ["bound", "call"]
    assert config["metadata"]["user"] == "u1" and config["metadata"]["trace"] == "t1"
    assert config["configurable"]["agent"] == "root"
    assert config["configurable"]["thread_id"] == "T1"


def test_with_config_chains_and_later_values_win() -> None:
    graph = _recorder([]).with_config(recursion_limit=7)
    assert graph.with_config(tags=["t"]).config["recursion_limit"] == 7
    assert graph.with_config(recursion_limit=3).config["recursion_limit"] == 3
    assert graph.with_config({"recursion_limit": 1}, recursion_limit=9).config["recursion_limit"] == 9
    assert graph.with_config(tags=["a"]).with_config(tags=["b"]).config["tags"] == ["a", "b"]


def test_with_config_callbacks_join_the_call_callbacks() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.callbacks import BaseCallbackHandler

    class Starts(BaseCallbackHandler):
        def __init__(self) -> None:
            self.count = 0

        def on_chain_start(self, *args: Any, **kwargs: Any) -> None:
            self.count += 1

    bound, given = Starts(), Starts()
    graph = _recorder([]).with_config({"callbacks": [bound]})
    graph.invoke({"x": 1}, {"callbacks": [given]})
    assert bound.count > 0 and given.count > 0
    batch = graph.batch([{"x": 1}, {"x": 2}])
    assert batch == [{"x": 1}, {"x": 2}]


def test_config_schema_methods_warn_as_langgraph() -> None:
    with pytest.warns(LangGraphDeprecatedSinceV10, match="`config_schema` is deprecated and"):
        StateGraph(S, config_schema=S)
    graph = StateGraph(S, context_schema=S)
    graph.add_node("node", lambda s: {})
    graph.add_edge(START, "node")
    compiled = graph.compile()
    assert compiled.context_schema is S
    with pytest.warns(LangGraphDeprecatedSinceV10, match="Use `get_context_jsonschema` for"):
        model = compiled.config_schema()
    assert "configurable" in model.model_fields
    with pytest.warns(LangGraphDeprecatedSinceV10, match="`get_config_jsonschema` is deprecated"):
        schema = compiled.get_config_jsonschema()
    assert "configurable" in schema["properties"]

    @entrypoint(context_schema=S)
    def ep(value: int) -> int:
        return value

    with pytest.warns(LangGraphDeprecatedSinceV10):
        assert ep.config_schema() is not None
    assert ep.context_schema is S


def test_old_constant_imports_warn_each_time() -> None:
    import engine.constants as constants

    for _ in range(2):
        with pytest.warns(LangGraphDeprecatedSinceV10, match="Importing Send from"):
            from engine.constants import Send as old_send
        assert old_send is Send
    assert constants.START == START and constants.END == END
    assert constants.DEFAULT_RECURSION_LIMIT == 10007


def test_graph_output_item_access_warns_since_v11() -> None:
    output = GraphOutput(value={"a": 1})
    with pytest.warns(LangGraphDeprecatedSinceV11, match=r"via `result\[key\]`"):
        assert output["a"] == 1
    with pytest.warns(LangGraphDeprecatedSinceV11, match="via `key in result`"):
        assert "a" in output


def test_compile_refuses_an_object_that_is_no_saver() -> None:
    builder = StateGraph(S)
    builder.add_node("node", lambda s: {})
    builder.add_edge(START, "node")

    class NotASaver:
        pass

    with pytest.raises(TypeError, match="Invalid checkpointer provided.*NotASaver"):
        builder.compile(checkpointer=NotASaver())
    for accepted in (None, True, False):
        builder.compile(checkpointer=accepted)


def test_send_timeout_replaces_the_node_timeout() -> None:
    """The node would wait forever under its own (long) timeout; the Send's idle timeout fires."""

    async def stuck(state: S) -> S:
        await anyio.Event().wait()
        return {}

    builder = StateGraph(S)
    builder.add_node("stuck", stuck, timeout=TimeoutPolicy(idle_timeout=3600))
    builder.add_conditional_edges(
        START, lambda s: [Send("stuck", s, timeout=TimeoutPolicy(idle_timeout=0.05))])
    builder.add_edge("stuck", END)
    with pytest.raises(NodeTimeoutError) as caught:
        asyncio.run(builder.compile().ainvoke({"x": 1}))
    assert caught.value.node == "stuck" and caught.value.idle_timeout == 0.05


def test_send_timeout_shape() -> None:
    plain = Send("n", 1)
    timed = Send("n", 1, timeout=2)
    assert plain.timeout is None and repr(plain) == "Send(node='n', arg=1)"
    assert timed.timeout == TimeoutPolicy(run_timeout=2.0)
    assert plain != timed and plain == Send("n", 1)


def test_send_timeout_on_a_sync_node_is_refused() -> None:
    builder = StateGraph(S)
    builder.add_node("sync", lambda s: {})
    builder.add_conditional_edges(START, lambda s: [Send("sync", s, timeout=1)])
    with pytest.raises(ValueError, match="only supported for async nodes"):
        builder.compile().invoke({"x": 1})


@pytest.mark.parametrize("is_async", [False, True])
def test_langsmith_current_run_tree_is_the_node_run(is_async: bool) -> None:
    """With LangSmith tracing on (no callbacks given), a node sees its own run as current."""
    langsmith = pytest.importorskip("langsmith")
    pytest.importorskip("langchain_core")
    from unittest.mock import MagicMock, patch

    def node(state: S) -> S:
        return {"seen": langsmith.get_current_run_tree().id}

    async def anode(state: S) -> S:
        return node(state)

    builder = StateGraph(S)
    builder.add_node("node", anode if is_async else node)
    builder.add_edge(START, "node")
    graph = builder.compile()
    client = MagicMock(spec=langsmith.Client)
    with patch("langchain_core.tracers.langchain.get_client", return_value=client), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")  # langsmith's own warnings about the mock client
        with langsmith.tracing_context(enabled=True):
            out = asyncio.run(graph.ainvoke({"x": 1})) if is_async else graph.invoke({"x": 1})
    assert isinstance(out["seen"], uuid.UUID)
