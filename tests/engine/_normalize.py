"""Stable forms of stream transcripts: ids and timestamps replaced by placeholders.

Every uuid-like id (checkpoint ids, task ids, also inside `"node:<task id>"` namespaces) and
every 32-hex interrupt id becomes `<id:N>`, numbered by first appearance, so the same id maps to
the same placeholder throughout one transcript (a task id and the namespace built from it stay
visibly equal). ISO timestamps become `<ts>`. Exceptions become their repr, `Interrupt`s dicts.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from engine import Interrupt

__all__ = ["Normalizer", "normalize"]

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_HEX32 = re.compile(r"^[0-9a-f]{32}$")
_TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(\+00:00|Z)$")


class Normalizer:
    """Keeps one id -> placeholder map, so several calls share numbering."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def placeholder(self, raw: str) -> str:
        if raw not in self.ids:
            self.ids[raw] = f"<id:{len(self.ids)}>"
        return self.ids[raw]

    def text(self, value: str) -> str:
        if _TS.match(value):
            return "<ts>"
        if _HEX32.match(value):
            return self.placeholder(value)
        return _UUID.sub(lambda m: self.placeholder(m.group(0)), value)

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self(k): self(v) for k, v in value.items()}
        if isinstance(value, tuple) and hasattr(value, "_fields"):  # NamedTuple snapshots
            return type(value)(*(self(v) for v in value))
        if isinstance(value, tuple):
            return tuple(self(v) for v in value)
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, Interrupt):
            return {"Interrupt": {"value": self(value.value), "id": self(value.id)}}
        if isinstance(value, BaseException):
            return f"{type(value).__name__}({', '.join(repr(a) for a in value.args)})"
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return self({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
        return value


def normalize(value: Any) -> Any:
    """Normalize one value with a fresh id map."""
    return Normalizer()(value)
