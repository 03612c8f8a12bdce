"""The LangChain bridge's callbacks (issue 17): attached once per LLM run, whatever merging.

LangGraph parity of every calling shape is in tests/engine/parity/scenarios_llm.py; these
tests pin the mechanism and what only graphrun has (`stream_mode="events"`, `graph_node`).
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackManager
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config, merge_configs

from engine import START, MessagesState, StateGraph, emit_message, get_config

TOKENS = ["hello", " ", "world"]


def _model() -> Any:
    return GenericFakeChatModel(messages=itertools.cycle([AIMessage("hello world")]))


def _graph(node: Any) -> Any:
    b = StateGraph(MessagesState)
    b.add_node("talk", node)
    b.add_edge(START, "talk")
    return b.compile()


def test_a_task_config_merged_with_itself_keeps_one_handler() -> None:
    """What `with_config`/`bind` do with the inherited and the passed config: one handler."""
    seen: list[Any] = []

    def talk(state: MessagesState) -> dict[str, Any]:
        config = get_config()
        callbacks = config["callbacks"]
        assert isinstance(callbacks, BaseCallbackManager)
        merged = merge_configs(ensure_config(None), config)  # the context's config + passed
        seen.append((len(callbacks.handlers), len(merged["callbacks"].handlers)))
        return {}

    list(_graph(talk).stream({"messages": []}, stream_mode="messages"))
    assert seen == [(1, 1)]


@pytest.mark.parametrize("bind", [
    lambda m: m.with_config(tags=["tagged"]),
    lambda m: m.bind(stop=["never"]),
    lambda m: m.with_config(run_name="named").bind(stop=["never"]).with_retry(),
], ids=["with_config", "bind", "stacked"])
def test_bound_model_tokens_once_sync_and_async(bind: Any) -> None:
    import asyncio

    model = bind(_model())

    def talk(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"], config)]}

    async def atalk(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"], config)]}

    inp = {"messages": [("user", "hi")]}
    sync_tokens = [m.content for m, _ in _graph(talk).stream(inp, stream_mode="messages")]

    async def collect() -> list[str]:
        return [m.content async for m, _ in _graph(atalk).astream(inp, stream_mode="messages")]

    assert sync_tokens == TOKENS
    assert asyncio.run(collect()) == TOKENS


def test_events_mode_from_sync_stream_equals_astream_events() -> None:
    import asyncio

    model = _model().with_config(tags=["tagged"])

    def talk(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"], config)]}

    graph = _graph(talk)
    inp = {"messages": [("user", "hi")]}

    def chat(events: list[dict[str, Any]]) -> list[Any]:
        return [(e["event"], e["tags"], e["data"].get("chunk", AIMessage("")).content)
                for e in events if e["event"].startswith("on_chat_model")]

    sync_events = chat(list(graph.stream(inp, stream_mode="events")))

    async def collect() -> list[dict[str, Any]]:
        return [e async for e in graph.astream_events(inp, version="v2")]

    assert sync_events == chat(asyncio.run(collect()))
    assert [e[0] for e in sync_events] == (
        ["on_chat_model_start"] + ["on_chat_model_stream"] * 3 + ["on_chat_model_end"]
    )
    assert sync_events[1][1:] == (["seq:step:1", "tagged"], "hello")


def test_graph_node_in_messages_metadata_only() -> None:
    model = _model()

    def talk(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        emit_message("direct")
        return {"messages": [model.invoke(state["messages"], config)]}

    items = list(_graph(talk).stream({"messages": [("user", "hi")]},
                                     stream_mode=["messages", "events"]))
    metas = [chunk[1] for mode, chunk in items if mode == "messages"]
    assert len(metas) == 1 + len(TOKENS)
    assert all(meta["graph_node"] == meta["langgraph_node"] == "talk" for meta in metas)
    events = [chunk for mode, chunk in items if mode == "events"]
    assert events and all("graph_node" not in e["metadata"] for e in events)


def test_engine_imports_without_langchain() -> None:
    """The bridge imports langchain-core lazily: `engine` works where it cannot be imported."""
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'langchain_core':\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import engine\n"
        "g = engine.StateGraph(engine.MessagesState)\n"
        "g.add_node('n', lambda s: engine.emit_message('tok') or {})\n"
        "g.add_edge(engine.START, 'n')\n"
        "out = list(g.compile().stream({'messages': []}, stream_mode=['messages', 'events']))\n"
        "assert [c[1][0]['content'] for c in out if c[0] == 'messages'] == ['tok'], out\n"
        "assert 'langchain_core' not in sys.modules\n"
        "try:\n    import langchain_core\nexcept ModuleNotFoundError:\n    pass\n"
        "else:\n    raise SystemExit('langchain_core was not blocked')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0, done.stderr
