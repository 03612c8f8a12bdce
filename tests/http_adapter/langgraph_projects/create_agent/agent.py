"""A LangChain 1.x agent: create_agent, one tool behind a human approval, a scripted model."""

import itertools
import json
from collections.abc import Iterator
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import tool


class ScriptedModel(GenericFakeChatModel):
    """Answers from a script; tools are accepted and ignored (the script calls them). A
    scripted tool call streams as one chunk (the generic fake streams only text)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedModel":
        return self

    def _stream(self, messages: Any, stop: Any = None, run_manager: Any = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        message = next(self.messages)
        if not message.tool_calls:
            self.messages = itertools.chain([message], self.messages)
            yield from super()._stream(messages, stop, run_manager, **kwargs)
            return
        calls = [{"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
                 for i, c in enumerate(message.tool_calls)]
        yield ChatGenerationChunk(message=AIMessageChunk(
            content="", tool_call_chunks=calls, chunk_position="last"))


@tool
def lookup_weather(city: str) -> str:
    """The weather in a city."""
    return f"It is sunny in {city}."


SCRIPT = [
    AIMessage(content="", tool_calls=[
        {"name": "lookup_weather", "args": {"city": "Oslo"}, "id": "call-1", "type": "tool_call"}]),
    AIMessage(content="Oslo is sunny today."),
    AIMessage(content="You are welcome."),
    AIMessage(content="Then I will not look it up."),  # a fork that rejects the call (parity)
]

agent = create_agent(
    ScriptedModel(messages=iter(SCRIPT)),
    tools=[lookup_weather],
    system_prompt="You report the weather.",
    middleware=[HumanInTheLoopMiddleware(interrupt_on={"lookup_weather": True})],
)
