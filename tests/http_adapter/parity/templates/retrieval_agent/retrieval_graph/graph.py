"""Question -> search query -> retrieved documents -> an answer from them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from langchain_core.documents import Document

from fake_chat import load_chat_model
from retrieval_graph.context import Context
from retrieval_graph.lib import Runtime, StateGraph
from retrieval_graph.state import InputState, State


async def generate_query(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """The first question is the query; later ones are rewritten by the query model."""
    if len(state.messages) == 1:
        return {"queries": [str(state.messages[-1].content)]}
    model = load_chat_model(runtime.context.query_model)
    answer = await model.ainvoke([*state.messages[-1:]])
    return {"queries": [str(answer.content)]}


async def retrieve(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """The user's documents for the latest query (by key: store search order is not fixed)."""
    found = await runtime.store.asearch(("docs", runtime.context.user_id),
                                        query=state.queries[-1], **runtime.context.search_kwargs)
    docs = [Document(page_content=item.value["page_content"], metadata=item.value["metadata"])
            for item in sorted(found, key=lambda item: item.key)]
    return {"retrieved_docs": docs}


async def respond(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """The response model, given the documents in its system prompt."""
    listed = "".join(f"\n- {doc.page_content}" for doc in state.retrieved_docs)
    system = runtime.context.response_system_prompt.format(
        retrieved_docs=listed, system_time=datetime.now(tz=UTC).isoformat())
    model = load_chat_model(runtime.context.response_model)
    answer = await model.ainvoke([{"role": "system", "content": system}, *state.messages])
    return {"messages": [answer]}


builder = StateGraph(State, input_schema=InputState, context_schema=Context)
builder.add_node(generate_query)
builder.add_node(retrieve)
builder.add_node(respond)
builder.add_edge("__start__", "generate_query")
builder.add_edge("generate_query", "retrieve")
builder.add_edge("retrieve", "respond")
graph = builder.compile(name="RetrievalGraph")
