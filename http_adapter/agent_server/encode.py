"""JSON encoding of state values and stream chunks for the wire (encoders built once).

LangChain messages and pydantic models go out as their `model_dump()`; `Interrupt`s as
`{"value", "id"}`; exceptions as `{"error", "message"}`; everything else msgspec knows.
"""

from __future__ import annotations

from typing import Any

import msgspec

from engine import Interrupt

__all__ = ["dumps", "interrupts_json", "to_jsonable"]


def _hook(obj: Any) -> Any:
    dump = getattr(obj, "model_dump", None)
    if dump is not None:
        return dump()
    if isinstance(obj, BaseException):
        return {"error": type(obj).__name__, "message": str(obj)}
    if isinstance(obj, (set, frozenset)):
        return list(obj)
    to_json = getattr(obj, "to_json", None)
    if to_json is not None:
        return to_json()
    return repr(obj)


_encoder = msgspec.json.Encoder(enc_hook=_hook)


def to_jsonable(value: Any) -> Any:
    """Interrupts as plain dicts, recursively through the containers a chunk uses."""
    if isinstance(value, Interrupt):
        return {"value": to_jsonable(value.value), "id": value.id}
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return value


def dumps(value: Any) -> bytes:
    """Compact JSON; a value with Interrupts inside is converted first."""
    try:
        return _encoder.encode(value)
    except TypeError:
        return _encoder.encode(to_jsonable(value))


def interrupts_json(interrupts: Any) -> list[dict[str, Any]]:
    return [{"value": to_jsonable(i.value), "id": i.id} for i in interrupts]
