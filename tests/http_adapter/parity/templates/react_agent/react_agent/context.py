"""The agent's runtime context: defaults, overridable per run and from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Annotated

SYSTEM_PROMPT = "You are a helpful AI assistant.\n\nSystem time: {system_time}"


@dataclass(kw_only=True)
class Context:
    """The context of one run (`context=` on the run; the assistant's context)."""

    system_prompt: str = field(default=SYSTEM_PROMPT, metadata={
        "description": "The system prompt for the agent's interactions."})
    model: Annotated[str, {"__template_metadata__": {"kind": "llm"}}] = field(
        default="fake/echo", metadata={"description": "provider/model-name of the chat model."})
    max_search_results: int = field(default=10, metadata={
        "description": "How many results the search tool returns."})

    def __post_init__(self) -> None:
        """A field left at its default takes the environment variable of its name, if set."""
        for f in fields(self):
            if not f.init:
                continue
            if getattr(self, f.name) == f.default:
                setattr(self, f.name, os.environ.get(f.name.upper(), f.default))
