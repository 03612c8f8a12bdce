"""The tool the model calls to keep a memory; the store and user come from the graph."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from langchain_core.tools import InjectedToolArg


async def upsert_memory(content: str, context: str, *, memory_id: uuid.UUID | None = None,
                        user_id: Annotated[str, InjectedToolArg],
                        store: Annotated[Any, InjectedToolArg]) -> str:
    """Keep a memory (or change one, given its id)."""
    mem_id = memory_id or uuid.uuid4()
    await store.aput(("memories", user_id), key=str(mem_id),
                     value={"content": content, "context": context})
    return f"Stored memory {mem_id}"
