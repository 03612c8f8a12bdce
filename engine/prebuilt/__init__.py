"""Prebuilt tool agents, as LangGraph's `langgraph.prebuilt` (issue 17).

`ToolNode`, `tools_condition`, `create_react_agent` and the tool injection markers need
langchain-core (tools, messages, chat models): install the `langchain` extra,
``pip install 'graphrun[langchain]'``. Importing `engine` itself never needs it.
"""

try:
    import langchain_core  # noqa: F401
except ImportError as error:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "engine.prebuilt needs langchain-core, which is not installed: "
        "pip install 'graphrun[langchain]' (the `langchain` extra; from a clone: "
        "pip install -e '.[langchain]')"
    ) from error

from ._react_agent import (
    AgentState,
    AgentStatePydantic,
    AgentStateWithStructuredResponse,
    AgentStateWithStructuredResponsePydantic,
    create_react_agent,
)
from ._tool_node import (
    TOOL_CALL_ERROR_TEMPLATE,
    InjectedState,
    InjectedStore,
    ToolCallRequest,
    ToolCallWithContext,
    ToolInvocationError,
    ToolNode,
    ToolRuntime,
    tools_condition,
)
from ._validation_node import ValidationNode

__all__ = [
    "AgentState",
    "AgentStatePydantic",
    "AgentStateWithStructuredResponse",
    "AgentStateWithStructuredResponsePydantic",
    "InjectedState",
    "InjectedStore",
    "TOOL_CALL_ERROR_TEMPLATE",
    "ToolCallRequest",
    "ToolCallWithContext",
    "ToolInvocationError",
    "ToolNode",
    "ToolRuntime",
    "ValidationNode",
    "create_react_agent",
    "tools_condition",
]
