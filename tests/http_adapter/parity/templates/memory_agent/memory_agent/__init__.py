"""A memory agent project's shape (issue 31): memories per user in the long-term store."""
