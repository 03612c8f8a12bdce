"""Checkpoint savers: the protocol, an in-memory and a SQLite back end, and the serializer."""

from ._schema_versions import SchemaError
from .base import (
    BaseCheckpointSaver,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DamagedCheckpointError,
)
from .cache import BaseCache, InMemoryCache
from .memory import InMemorySaver, MemorySaver
from .serde import SerializationError, Serializer
from .sqlite import SqliteSaver

__all__ = [
    "BaseCache",
    "BaseCheckpointSaver",
    "Checkpoint",
    "CheckpointMetadata",
    "CheckpointTuple",
    "DamagedCheckpointError",
    "InMemoryCache",
    "InMemorySaver",
    "MemorySaver",
    "SchemaError",
    "SerializationError",
    "Serializer",
    "SqliteSaver",
]
