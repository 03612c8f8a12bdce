"""A chat model that needs no LLM, for the template-shaped projects (issue 31): copied into
each project when it is served, so the project itself stays as a template ships it.

`load_chat_model("fake/<name>")` returns it. It answers deterministically from the last message
and streams its text word by word: `search: X` calls the bound `search` tool, `remember: X`
the bound `upsert_memory` tool, a tool result is summarized, anything else is echoed with the
model's name and how many memories the system prompt lists.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

__all__ = ["FakeChat", "load_chat_model"]

_PREFIXES = {"search": "search: ", "upsert_memory": "remember: "}


class FakeChat(BaseChatModel):
    """Deterministic answers; `bind_tools` remembers the tools' names."""

    name: str = "echo"
    tools: list[str] = []

    @property
    def _llm_type(self) -> str:
        return "fake-chat"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> FakeChat:  # type: ignore[override]
        names = [getattr(t, "name", None) or getattr(t, "__name__", "") for t in tools]
        return self.model_copy(update={"tools": names})

    def _answer(self, messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        text = last.content if isinstance(last.content, str) else json.dumps(last.content)
        step = len(messages)
        for tool in self.tools:
            prefix = _PREFIXES.get(tool, "")
            if prefix and last.type == "human" and text.startswith(prefix):
                args = ({"query": text[len(prefix):]} if tool == "search" else
                        {"content": text[len(prefix):], "context": "said in chat"})
                return AIMessage("", tool_calls=[{"name": tool, "args": args,
                                                  "id": f"call_{step}", "type": "tool_call"}])
        if last.type == "tool":
            return AIMessage(f"Done ({self.name}): {text}")
        memories = sum(m.content.count("\n- ") for m in messages if m.type == "system"
                       and isinstance(m.content, str))
        return AIMessage(f"You said: {text} [{self.name}, {memories} memories]")

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._answer(messages))])

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any
                ) -> Iterator[ChatGenerationChunk]:
        answer = self._answer(messages)
        if answer.tool_calls:
            call = answer.tool_calls[0]
            yield ChatGenerationChunk(message=AIMessageChunk("", tool_call_chunks=[{
                "name": call["name"], "args": json.dumps(call["args"]), "id": call["id"],
                "index": 0, "type": "tool_call_chunk"}]))
            return
        words = str(answer.content).split(" ")
        for i, word in enumerate(words):
            yield ChatGenerationChunk(message=AIMessageChunk(word if i == 0 else " " + word))


def load_chat_model(fully_specified_name: str) -> FakeChat:
    """`provider/model` as the templates name models; every provider is the fake here."""
    _, _, model = fully_specified_name.partition("/")
    return FakeChat(name=model or fully_specified_name)
