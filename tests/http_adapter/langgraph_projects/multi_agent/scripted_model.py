"""A chat model that answers from a script: what the agent libraries bind tools to here."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk


def says(text: str) -> AIMessage:
    return AIMessage(content=text)


def calls(tool: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[
        {"name": tool, "args": args, "id": f"call-{tool}", "type": "tool_call"}])


class ScriptedModel(GenericFakeChatModel):
    """Replies in order; binding tools changes nothing (the script names the calls). A tool
    call streams as one chunk, text word by word."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self

    def _stream(self, messages: Any, stop: Any = None, run_manager: Any = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        message = next(self.messages)
        if message.tool_calls:
            chunks = [{"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"],
                       "index": i} for i, c in enumerate(message.tool_calls)]
            yield ChatGenerationChunk(message=AIMessageChunk(
                content="", tool_call_chunks=chunks, chunk_position="last"))
            return
        for word in message.content.split(" "):
            yield ChatGenerationChunk(message=AIMessageChunk(content=word + " "))


def scripted(*replies: AIMessage) -> ScriptedModel:
    return ScriptedModel(messages=iter(replies))
