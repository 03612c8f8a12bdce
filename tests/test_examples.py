"""The example graphs in examples/ (issue 20): the chat model is deterministic and streams its
reply token by token; the approval graph pauses for a person and resumes with their answer."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

from checkpoints import InMemorySaver
from engine import Command

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_chat_model_streams_exactly_its_reply() -> None:
    chat = load("chat")
    chat.model.delay = 0
    graph = chat.builder.compile(checkpointer=InMemorySaver())
    config: dict[str, Any] = {"configurable": {"thread_id": "t"}}
    tokens = [chunk.content if hasattr(chunk, "content") else chunk["content"]
              for chunk, _ in graph.stream({"messages": [{"role": "user", "content": "hi"}]},
                                           config, stream_mode="messages")]
    expected = chat.FakeChatModel().reply([{"role": "user", "content": "hi"}])
    assert "".join(tokens) == expected and len(tokens) == len(expected.split())
    messages = graph.get_state(config).values["messages"]
    assert [m.content for m in messages] == ["hi", expected]
    second = graph.invoke({"messages": [{"role": "user", "content": "again"}]}, config)
    assert "turn 2" in second["messages"][-1].content


def test_the_approval_graph_waits_for_a_person() -> None:
    approval = load("approval")
    graph = approval.builder.compile(checkpointer=InMemorySaver())
    config: dict[str, Any] = {"configurable": {"thread_id": "t"}}
    paused = graph.invoke({"request": "a refund"}, config)
    assert paused["__interrupt__"][0].value["draft"] == "Re: a refund. We will get back to you within a day."
    again = graph.invoke(Command(resume="add a date"), config)
    assert again["__interrupt__"][0].value["draft"].endswith("(add a date)")
    done = graph.invoke(Command(resume="approve"), config)
    assert done["sent"].endswith("(add a date)") and done["revisions"] == 2
    assert graph.get_state(config).next == ()
