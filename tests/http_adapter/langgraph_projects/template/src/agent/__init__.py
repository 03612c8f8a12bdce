"""A notes agent (a project shaped like the new-langgraph-project template)."""
