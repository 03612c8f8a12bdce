"""Checkpoint savers: the protocol, an in-memory and a SQLite back end, and the serializer."""

from .base import BaseCheckpointSaver, Checkpoint, CheckpointMetadata, CheckpointTuple
from .memory import InMemorySaver, MemorySaver
from .serde import SerializationError, Serializer
from .sqlite import SqliteSaver

__all__ = [
    "BaseCheckpointSaver",
    "Checkpoint",
    "CheckpointMetadata",
    "CheckpointTuple",
    "InMemorySaver",
    "MemorySaver",
    "SerializationError",
    "Serializer",
    "SqliteSaver",
]
