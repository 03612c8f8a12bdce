"""Which classes a strict serializer rebuilds when loading msgpack (issue 29).

graphrun's decoder only rebuilds Enum, dataclass, namedtuple, msgspec Struct and pydantic
classes from their fields, never an arbitrary callable. A strict `JsonPlusSerializer`
(`allowed_msgpack_modules=None` or a list, LangGraph's option) narrows that to the classes
registered here as safe (a package registers its own value types, e.g. the engine's `Send`)
and the ones its caller allows; any other comes back as its plain field values, with a
warning once per class.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

__all__ = ["is_allowed", "normalize_allowlist", "register_safe_types"]

logger = logging.getLogger(__name__)

# langchain-core's message and document classes: plain data a graph's state commonly holds.
_SAFE: set[str] = {
    f"langchain_core.messages.{module}:{name}{chunk}"
    for module, name in (
        ("base", "BaseMessage"), ("human", "HumanMessage"), ("ai", "AIMessage"),
        ("system", "SystemMessage"), ("chat", "ChatMessage"), ("tool", "ToolMessage"),
        ("function", "FunctionMessage"),
    )
    for chunk in ("", "Chunk")
} | {"langchain_core.messages.modifier:RemoveMessage", "langchain_core.documents.base:Document"}
_warned: set[str] = set()


def _path(item: type | tuple[str, ...] | str) -> str:
    if isinstance(item, type):
        return f"{item.__module__}:{item.__qualname__}"
    if isinstance(item, str):
        return item
    *module, name = item  # LangGraph's spelling: ("package.module", "Name")
    return f"{'.'.join(module)}:{name}"


def register_safe_types(*types: type) -> None:
    """Let strict serializers rebuild `types` (plain value classes with no side effects)."""
    _SAFE.update(_path(t) for t in types)


def normalize_allowlist(allowed: Any) -> frozenset[str] | bool:
    """True (every class), or the class paths allowed beyond the safe ones."""
    if allowed is True:
        return True
    return frozenset(_path(item) for item in (allowed or ()))


def is_allowed(path: str, allowed: frozenset[str] | bool) -> bool:
    if allowed is True or path in _SAFE or path in allowed:  # type: ignore[operator]
        return True
    if path not in _warned:
        _warned.add(path)
        logger.warning("Blocked rebuilding %s from a checkpoint: not in allowed_msgpack_modules;"
                       " its field values are returned instead", path)
    return False
