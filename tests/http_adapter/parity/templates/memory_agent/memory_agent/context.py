"""Who the memories belong to, and which model answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

SYSTEM_PROMPT = "You are a helpful and friendly chatbot.\n\n{user_info}\n\nSystem Time: {time}"


@dataclass(kw_only=True)
class Context:
    """The run's context: memories are kept under `("memories", user_id)`."""

    user_id: str = "default"
    model: Annotated[str, {"__template_metadata__": {"kind": "llm"}}] = field(
        default="fake/memo", metadata={"description": "provider/model-name of the chat model."})
    system_prompt: str = SYSTEM_PROMPT
