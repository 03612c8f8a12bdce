"""A ReAct agent project's shape (issue 31): a model that calls a search tool in a loop."""
