"""A retrieval agent project's shape (issue 31): an indexer graph and a question graph that
share documents through the long-term store."""
