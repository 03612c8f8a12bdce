"""A scripted chat model for prebuilt-agent tests: no network, deterministic ids.

`FakeToolModel(script=[AIMessage(...), ...])` answers each call with the next scripted message
(cycling), supports `bind_tools` (tools recorded as OpenAI-style dicts, as real providers do)
and so LangChain's default `with_structured_output`, which calls a tool named after the schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool

__all__ = ["FakeToolModel", "ai"]


def ai(content: str = "", *calls: tuple[str, dict[str, Any], str], id: str) -> AIMessage:
    """An AIMessage with tool calls given as (name, args, call id)."""
    tool_calls = [{"name": n, "args": a, "id": i, "type": "tool_call"} for n, a, i in calls]
    return AIMessage(content=content, tool_calls=tool_calls, id=id)


class FakeToolModel(BaseChatModel):
    """Returns its script's messages in turn; `seen` records the messages of every call."""

    script: list[AIMessage]
    index: int = 0
    seen: list[list[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return "fake-tool-model"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        message = self.script[self.index % len(self.script)]
        self.index += 1
        return ChatResult(generations=[ChatGeneration(message=message.model_copy())])

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)
