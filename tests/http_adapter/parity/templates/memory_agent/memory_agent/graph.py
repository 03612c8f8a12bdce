"""A chatbot that stores what it is told per user and reads it back into its prompt."""

from __future__ import annotations

import asyncio
import os
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import AIMessage

from fake_chat import load_chat_model
from memory_agent import tools
from memory_agent.context import Context

if os.environ.get("PARITY_LIB") == "langgraph":
    from langgraph.graph import END, StateGraph
    from langgraph.graph.message import MessagesState
    from langgraph.runtime import Runtime
else:
    from engine import END, MessagesState, Runtime, StateGraph


async def call_model(state: MessagesState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The model, told the user's memories that match the recent conversation."""
    user_id = runtime.context.user_id
    memories = await runtime.store.asearch(
        ("memories", user_id),
        query=str([m.content for m in state["messages"][-3:]]),
        limit=10,
    )
    formatted = "\n".join(f"[{m.key}]: {m.value['content']} (similarity: {m.score})"
                          for m in memories)
    info = f"\n<memories>\n- {formatted.replace(chr(10), chr(10) + '- ')}\n</memories>" \
        if formatted else ""
    system = runtime.context.system_prompt.format(
        user_info=info, time=datetime.now(tz=UTC).isoformat())
    model = load_chat_model(runtime.context.model).bind_tools([tools.upsert_memory])
    message = await model.ainvoke([{"role": "system", "content": system}, *state["messages"]])
    return {"messages": [message]}


async def store_memory(state: MessagesState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Run the model's memory tool calls (all at once) and report each back."""
    calls = state["messages"][-1].tool_calls
    saved = await asyncio.gather(*(
        tools.upsert_memory(**call["args"], user_id=runtime.context.user_id,
                            store=runtime.store)
        for call in calls
    ))
    return {"messages": [{"type": "tool", "content": text, "tool_call_id": call["id"]}
                         for text, call in zip(saved, calls, strict=True)]}


def route_message(state: MessagesState) -> str:
    """Store memories when the model asked to, else the end."""
    last = state["messages"][-1]
    return "store_memory" if isinstance(last, AIMessage) and last.tool_calls else END


builder = StateGraph(MessagesState, context_schema=Context)
builder.add_node(call_model)
builder.add_node(store_memory)
builder.add_edge("__start__", "call_model")
builder.add_conditional_edges("call_model", route_message, ["store_memory", END])
builder.add_edge("store_memory", "call_model")
graph = builder.compile(name="MemoryAgent")
