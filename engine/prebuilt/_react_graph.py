"""The graph `create_react_agent` builds: nodes, edges and routers (LangGraph 1.2.22's shape)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from ..graph import StateGraph
from ..types import END, Send
from ._react_agent import _Agent, _value, input_schema_for, make_node
from ._tool_node import ToolNode

__all__ = ["build_graph"]


def build_graph(
    agent: _Agent,
    tool_node: ToolNode,
    state_schema: Any,
    context_schema: Any,
    pre_model_hook: Any,
    post_model_hook: Any,
    version: str,
) -> StateGraph[Any]:
    graph: StateGraph[Any] = StateGraph(state_schema, context_schema=context_schema)
    graph.add_node(
        "agent", make_node(agent.call, agent.acall, "agent"),
        input_schema=input_schema_for(state_schema, pre_model_hook),
    )
    entry = "agent"
    if pre_model_hook is not None:
        graph.add_node("pre_model_hook", pre_model_hook)
        graph.add_edge("pre_model_hook", "agent")
        entry = "pre_model_hook"
    graph.set_entry_point(entry)
    if agent.response_format is not None:
        graph.add_node(
            "generate_structured_response",
            make_node(agent.structured, agent.astructured, "generate_structured_response"),
        )
        # implicit in LangGraph (a node without edges ends the run); explicit here so the
        # drawn graph shows the same edge to END
        graph.add_edge("generate_structured_response", END)
    if not agent.tool_calling:
        _without_tools(graph, agent, post_model_hook)
        return graph
    graph.add_node("tools", tool_node)
    _agent_routes(graph, agent, entry, post_model_hook, version)
    if agent.return_direct:
        graph.add_conditional_edges("tools", _tool_router(agent, entry), path_map=[entry, END])
    else:
        graph.add_edge("tools", entry)
    return graph


def _without_tools(graph: StateGraph[Any], agent: _Agent, post_model_hook: Any) -> None:
    last = "agent"
    if post_model_hook is not None:
        graph.add_node("post_model_hook", post_model_hook)
        graph.add_edge("agent", "post_model_hook")
        last = "post_model_hook"
    if agent.response_format is not None:
        graph.add_edge(last, "generate_structured_response")


def _agent_routes(
    graph: StateGraph[Any], agent: _Agent, entry: str, post_model_hook: Any, version: str
) -> None:
    structured = agent.response_format is not None
    finish = "generate_structured_response" if structured else END
    agent_paths = ["post_model_hook" if post_model_hook is not None else "tools"]
    if post_model_hook is None:
        agent_paths.append(finish)

    def should_continue(state: Any) -> str | list[Send]:
        last = _value(state, "messages")[-1]
        if not isinstance(last, AIMessage) or not last.tool_calls:
            return "post_model_hook" if post_model_hook is not None else finish
        if version == "v1":
            return "tools"
        if post_model_hook is not None:
            return "post_model_hook"
        return agent.tool_sends(state, last)

    if post_model_hook is not None:
        graph.add_node("post_model_hook", post_model_hook)
        graph.add_edge("agent", "post_model_hook")
        graph.add_conditional_edges(
            "post_model_hook", _post_hook_router(agent, entry, finish),
            path_map=[entry, "tools", finish],
        )
    graph.add_conditional_edges("agent", should_continue, path_map=agent_paths)


def _post_hook_router(agent: _Agent, entry: str, finish: str) -> Any:
    def post_model_hook_router(state: Any) -> str | list[Send]:
        """Tools for calls still unanswered; back to the model after tool results."""
        messages = _value(state, "messages")
        answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
        last_ai = next(m for m in reversed(messages) if isinstance(m, AIMessage))
        pending = [c for c in last_ai.tool_calls if c["id"] not in answered]
        if pending:
            return agent.tool_sends(state, AIMessage(content="", tool_calls=pending))
        if isinstance(messages[-1], ToolMessage):
            return entry
        return finish

    return post_model_hook_router


def _tool_router(agent: _Agent, entry: str) -> Any:
    def route_tool_responses(state: Any) -> str:
        """END after a `return_direct` tool ran, else back to the model."""
        message = None
        for message in reversed(_value(state, "messages")):
            if not isinstance(message, ToolMessage):
                break
            if message.name in agent.return_direct:
                return END
        if isinstance(message, AIMessage) and message.tool_calls:
            if any(c["name"] in agent.return_direct for c in message.tool_calls):
                return END
        return entry

    return route_tool_responses
