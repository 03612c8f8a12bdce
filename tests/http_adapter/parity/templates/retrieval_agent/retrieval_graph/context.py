"""Whose documents, and the models that write the query and the answer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

RESPONSE_PROMPT = "Answer from these documents:\n{retrieved_docs}\n\nSystem time: {system_time}"


@dataclass(kw_only=True)
class Context:
    """The run's context: documents are kept under `("docs", user_id)`."""

    user_id: str = field(default="default", metadata={"description": "Whose documents."})
    query_model: Annotated[str, {"__template_metadata__": {"kind": "llm"}}] = "fake/query"
    response_model: Annotated[str, {"__template_metadata__": {"kind": "llm"}}] = "fake/respond"
    response_system_prompt: str = RESPONSE_PROMPT
    search_kwargs: dict[str, Any] = field(default_factory=dict)
