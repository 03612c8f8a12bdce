"""Checkpoint savers: the protocol, in-memory, SQLite and PostgreSQL back ends, the serializer.

`PostgresSaver` is imported on first use (``from checkpoints import PostgresSaver``): it needs
the ``postgres`` extra (asyncpg), and the default install stays SQLite-only (issue 19). It is
left out of `__all__` so that a star import works without the extra.
"""

from typing import Any

from ._schema_versions import SchemaError
from .base import (
    BaseCheckpointSaver,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DamagedCheckpointError,
)
from .cache import BaseCache, InMemoryCache
from .fence import Fence, FenceRefused
from .memory import InMemorySaver, MemorySaver
from .serde import SerializationError, Serializer
from .sqlite import AsyncSqliteSaver, SqliteSaver

__all__ = [
    "AsyncSqliteSaver",
    "BaseCache",
    "BaseCheckpointSaver",
    "Checkpoint",
    "CheckpointMetadata",
    "CheckpointTuple",
    "DamagedCheckpointError",
    "Fence",
    "FenceRefused",
    "InMemoryCache",
    "InMemorySaver",
    "MemorySaver",
    "SchemaError",
    "SerializationError",
    "Serializer",
    "SqliteSaver",
]


def __getattr__(name: str) -> Any:
    if name == "PostgresSaver":
        from .postgres import PostgresSaver

        return PostgresSaver
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
