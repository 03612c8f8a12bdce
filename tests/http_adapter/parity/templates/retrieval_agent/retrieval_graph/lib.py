"""LangGraph's names from the library the server runs (PARITY_LIB), so one text serves both."""

import os

if os.environ.get("PARITY_LIB") == "langgraph":
    from langgraph.graph import StateGraph, add_messages
    from langgraph.runtime import Runtime
else:
    from engine import Runtime, StateGraph, add_messages

__all__ = ["Runtime", "StateGraph", "add_messages"]
