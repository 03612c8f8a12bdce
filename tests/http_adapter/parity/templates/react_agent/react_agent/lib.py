"""LangGraph's names from the library the server runs (PARITY_LIB), so one text serves both."""

import os

if os.environ.get("PARITY_LIB") == "langgraph":
    from langgraph.graph import StateGraph, add_messages
    from langgraph.managed import IsLastStep
    from langgraph.prebuilt import ToolNode
    from langgraph.runtime import Runtime, get_runtime
else:
    from engine import IsLastStep, Runtime, StateGraph, add_messages, get_runtime
    from engine.prebuilt import ToolNode

__all__ = ["IsLastStep", "Runtime", "StateGraph", "ToolNode", "add_messages", "get_runtime"]
