"""`JsonPlusSerializer`: LangGraph's serializer surface over graphrun's msgpack encoding (issue 29).

Code written for LangGraph builds savers with `serde=JsonPlusSerializer(...)` or subclasses it
(overriding `dumps_typed`/`loads_typed`). Here it is graphrun's `Serializer` with:
- LangGraph's typed formats: `"msgpack"` (graphrun's), `"null"`, `"bytes"`, `"bytearray"`,
  `"json"` (what LangGraph wrote before its msgpack format: plain JSON whose LangChain
  constructor objects `{"lc": 2, "type": "constructor", "id": [...], "kwargs": {...}}` are
  rebuilt when `allowed_json_modules` allows them), `"pickle"` with `pickle_fallback=True`;
- `allowed_msgpack_modules`: True (the default) rebuilds every class graphrun stores; None or a
  list of classes / `(module, name)` tuples rebuilds only those and the registered safe ones
  (`_safe_types.py`);
- `dumps`/`loads`, which graphrun's savers call, going through `dumps_typed`/`loads_typed`, so a
  subclass's override is what a saver runs.
"""

from __future__ import annotations

import copy
import importlib
import json
import pickle
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from ._safe_types import is_allowed, normalize_allowlist, register_safe_types
from .serde import TYPE_MSGPACK, SerializationError, Serializer, _loaders

__all__ = ["JsonPlusSerializer", "register_safe_types"]

# Ext codes whose payload names a class: [import path, field values, ...] (see `serde.py`).
_CLASS_CODES = frozenset((13, 14, 15, 16, 17))
_PLAIN = {"null": lambda data: None, "bytes": bytes, "bytearray": bytearray}


def _gated_decoder(allowed: frozenset[str] | bool) -> Callable[[bytes], Any]:
    """graphrun's msgpack decoder, rebuilding only the classes `allowed` lets through."""

    def hook(code: int, data: memoryview) -> Any:
        loader = _loaders.get(code)
        if loader is None:
            raise SerializationError(f"Unknown graphrun msgpack extension code {code}")
        payload = decode(data)
        if code in _CLASS_CODES and not is_allowed(payload[0], allowed):
            return payload[1]
        return loader(payload)

    decode = msgspec.msgpack.Decoder(ext_hook=hook).decode
    return decode


class JsonPlusSerializer(Serializer):
    """graphrun's serializer under LangGraph's name and constructor (see the module docstring)."""

    def __init__(
        self,
        *,
        pickle_fallback: bool = False,
        allowed_json_modules: Iterable[tuple[str, ...]] | bool | None = None,
        allowed_msgpack_modules: Iterable[tuple[str, ...] | type] | bool | None = True,
    ) -> None:
        self.pickle_fallback = pickle_fallback
        self._json_allowed = allowed_json_modules is True or (
            frozenset(tuple(m) for m in allowed_json_modules or ()))
        self._msgpack_allowed = normalize_allowlist(allowed_msgpack_modules)
        self._decode = (
            super().loads if self._msgpack_allowed is True else _gated_decoder(self._msgpack_allowed)
        )

    def with_msgpack_allowlist(self, extra: Iterable[tuple[str, ...] | type]) -> JsonPlusSerializer:
        """A copy that also rebuilds the classes in `extra`."""
        if self._msgpack_allowed is True:
            return self
        clone = copy.copy(self)
        clone._msgpack_allowed = self._msgpack_allowed | normalize_allowlist(extra)  # type: ignore[operator]
        clone._decode = _gated_decoder(clone._msgpack_allowed)
        return clone

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        if obj is None:
            return "null", b""
        if isinstance(obj, (bytes, bytearray)):
            return type(obj).__name__, bytes(obj)
        try:
            return TYPE_MSGPACK, Serializer.dumps(self, obj)
        except SerializationError:
            if not self.pickle_fallback:
                raise
            return "pickle", pickle.dumps(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        kind, payload = data
        if kind == TYPE_MSGPACK:
            return self._decode(payload)
        if kind in _PLAIN:
            return _PLAIN[kind](payload)
        if kind == "json":
            return self._revive(json.loads(payload))
        if kind == "pickle" and self.pickle_fallback:
            return pickle.loads(payload)  # noqa: S301 - the caller opted in (LangGraph's option)
        raise SerializationError(f"Unknown serialization format {kind!r}")

    def dumps(self, obj: Any) -> bytes:
        kind, payload = self.dumps_typed(obj)
        if kind != TYPE_MSGPACK:  # None, bytes: graphrun's own untyped encoding holds them
            return Serializer.dumps(self, self.loads_typed((kind, payload)))
        return payload

    def loads(self, data: bytes) -> Any:
        return self.loads_typed((TYPE_MSGPACK, data))

    def _revive(self, value: Any) -> Any:
        """JSON with LangChain constructor objects rebuilt, innermost first."""
        if isinstance(value, list):
            return [self._revive(v) for v in value]
        if not isinstance(value, dict):
            return value
        value = {k: self._revive(v) for k, v in value.items()}
        if value.get("lc") == 2 and value.get("type") == "constructor" and value.get("id"):
            return self._construct(value)
        return value

    def _construct(self, value: dict[str, Any]) -> Any:
        *module, name = value["id"]
        allowed = self._json_allowed is True or any(
            tuple(module[: len(prefix)]) == prefix for prefix in self._json_allowed)  # type: ignore[union-attr]
        if not allowed and not is_allowed(f"{'.'.join(module)}:{name}", frozenset()):
            return value
        cls = getattr(importlib.import_module(".".join(module)), name)
        return cls(*value.get("args", ()), **value.get("kwargs", {}))
