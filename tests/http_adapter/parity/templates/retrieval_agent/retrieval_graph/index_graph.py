"""Indexes documents into the store, under the run's user."""

from __future__ import annotations

from typing import Any

from retrieval_graph.context import Context
from retrieval_graph.lib import Runtime, StateGraph
from retrieval_graph.state import IndexState


async def index_docs(state: IndexState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Each document becomes a store item; the state's documents are then cleared."""
    for i, doc in enumerate(state.docs):
        await runtime.store.aput(("docs", runtime.context.user_id), f"doc-{i}",
                                 {"page_content": doc.page_content, "metadata": doc.metadata})
    return {"docs": "delete"}


builder = StateGraph(IndexState, context_schema=Context)
builder.add_node(index_docs)
builder.add_edge("__start__", "index_docs")
graph = builder.compile(name="IndexGraph")
