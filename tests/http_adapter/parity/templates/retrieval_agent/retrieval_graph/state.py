"""The states of the two graphs; documents travel as LangChain `Document`s."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from langchain_core.documents import Document
from langchain_core.messages import AnyMessage

from retrieval_graph.lib import add_messages


def reduce_docs(existing: Sequence[Document] | None,
                new: Sequence[Document | dict[str, Any] | str] | Literal["delete"]
                ) -> Sequence[Document]:
    """Documents from dicts or strings; "delete" empties the list."""
    if new == "delete":
        return []
    made = []
    for item in new:
        if isinstance(item, str):
            made.append(Document(page_content=item, metadata={"uuid": str(uuid.uuid4())}))
        elif isinstance(item, dict):
            made.append(Document(**item))
        else:
            made.append(item)
    return list(existing or []) + made


def add_queries(existing: Sequence[str], new: Sequence[str]) -> Sequence[str]:
    return list(existing) + list(new)


@dataclass(kw_only=True)
class IndexState:
    """What the indexer is given."""

    docs: Annotated[Sequence[Document], reduce_docs]


@dataclass(kw_only=True)
class InputState:
    """What a question run may carry."""

    messages: Annotated[Sequence[AnyMessage], add_messages]


@dataclass(kw_only=True)
class State(InputState):
    """The question graph's whole state."""

    queries: Annotated[list[str], add_queries] = field(default_factory=list)
    retrieved_docs: list[Document] = field(default_factory=list)
