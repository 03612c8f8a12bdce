"""Long-term memory for graphs: a key-value store of JSON dicts in namespaces (SPEC §2 Store).

Compatible with LangGraph's `langgraph.store` API: `BaseStore` with sync and async methods,
`InMemoryStore`, a SQLite and a PostgreSQL store, all with TTL and optional semantic search.
`PostgresStore` is imported on first use (it needs the ``postgres`` extra, issue 19), and left
out of `__all__` so that a star import works without it.
"""

from typing import Any

from .base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    NamespacePath,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from .memory import InMemoryStore
from .sqlite import SqliteStore

__all__ = [
    "BaseStore",
    "GetOp",
    "InMemoryStore",
    "IndexConfig",
    "InvalidNamespaceError",
    "Item",
    "ListNamespacesOp",
    "MatchCondition",
    "NOT_PROVIDED",
    "NamespacePath",
    "NotProvided",
    "Op",
    "PutOp",
    "Result",
    "SearchItem",
    "SearchOp",
    "SqliteStore",
    "TTLConfig",
]


def __getattr__(name: str) -> Any:
    if name == "PostgresStore":
        from .postgres import PostgresStore

        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
