"""A chat graph with a fake streaming chat model: deterministic, no network, no API key.

The model answers every message the same way for the same input and streams its reply word by
word (`emit_message`, one token at a time, ~20 ms apart), so the studio's chat view shows
tokens as they arrive. Swap `FakeChatModel` for a real model and nothing else changes.

Served by `graphrun dev --config examples/langgraph.json` as the assistant `chat`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

from engine import START, MessagesState, StateGraph, emit_message


class FakeChatModel:
    """Replies with a fixed template around the last user message, streamed in word tokens."""

    def __init__(self, delay: float = 0.02) -> None:
        self.delay = delay

    def reply(self, messages: list[Any]) -> str:
        said = _text(messages[-1]) if messages else ""
        turn = sum(1 for m in messages if _role(m) == "human")
        return f"You said: {said}. This is turn {turn}, and I am a fake model, so I answer the same way every time."

    def stream(self, messages: list[Any]) -> Iterator[str]:
        for token in re.findall(r"\S+\s*", self.reply(messages)):
            if self.delay:
                time.sleep(self.delay)
            yield token


model = FakeChatModel()


def chat(state: MessagesState) -> dict[str, Any]:
    messages = state["messages"]
    reply_id = f"reply-{len(messages)}"  # one id per turn: the chunks and the message share it
    tokens = []
    for token in model.stream(messages):
        tokens.append(token)
        emit_message({"type": "AIMessageChunk", "content": token, "id": reply_id})
    return {"messages": [{"type": "ai", "content": "".join(tokens), "id": reply_id}]}


def _text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else getattr(message, "content", "")
    return content if isinstance(content, str) else str(content)


def _role(message: Any) -> str:
    if isinstance(message, dict):
        return {"user": "human", "assistant": "ai"}.get(message.get("role", ""), message.get("type", ""))
    return getattr(message, "type", "")


builder = StateGraph(MessagesState)
builder.add_node("chat", chat)
builder.add_edge(START, "chat")
graph = builder.compile()
