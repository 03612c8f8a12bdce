"""A ReAct agent: the model answers or calls a tool; tools' results go back to the model."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal, cast

from langchain_core.messages import AIMessage

from fake_chat import load_chat_model
from react_agent.context import Context
from react_agent.lib import Runtime, StateGraph, ToolNode
from react_agent.state import InputState, State
from react_agent.tools import TOOLS


async def call_model(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """The model, with the tools bound and the context's system prompt."""
    model = load_chat_model(runtime.context.model).bind_tools(TOOLS)
    system = runtime.context.system_prompt.format(system_time=datetime.now(tz=UTC).isoformat())
    response = cast(AIMessage, await model.ainvoke(
        [{"role": "system", "content": system}, *state.messages]))
    if state.is_last_step and response.tool_calls:
        return {"messages": [AIMessage(id=response.id, content="Sorry, no answer in time.")]}
    return {"messages": [response]}


def route_model_output(state: State) -> Literal["__end__", "tools"]:
    """Tools when the model asked for them, else the end."""
    last = state.messages[-1]
    if not isinstance(last, AIMessage):
        raise ValueError(f"Expected AIMessage in output edges, but got {type(last).__name__}")
    return "tools" if last.tool_calls else "__end__"


builder = StateGraph(State, input_schema=InputState, context_schema=Context)
builder.add_node(call_model)
builder.add_node("tools", ToolNode(TOOLS))
builder.add_edge("__start__", "call_model")
builder.add_conditional_edges("call_model", route_model_output)
builder.add_edge("tools", "call_model")
graph = builder.compile(name="ReAct Agent")
