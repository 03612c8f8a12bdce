"""Long-term memory for graphs: a key-value store of JSON dicts in namespaces (SPEC §2 Store).

Compatible with LangGraph's `langgraph.store` API: `BaseStore` with sync and async methods,
`InMemoryStore`, and a SQLite store, all with TTL and optional semantic search.
"""

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
