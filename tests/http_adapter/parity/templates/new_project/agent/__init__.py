"""A new LangGraph project's shape (issue 31): one node, a TypedDict context, a dataclass state."""

from agent.graph import graph

__all__ = ["graph"]
