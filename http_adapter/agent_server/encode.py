"""JSON encoding of state values and stream chunks for the wire (encoders built once).

LangChain messages and pydantic models go out as their `model_dump()`; an `Interrupt` in a chunk
or a `/wait` body as `{"value", "id", "response_schema"}` (what the LangGraph server sends in
`values`/`updates` events and `__interrupt__`), in a ThreadState as `{"id", "value"}`;
exceptions as `{"error", "message"}`; everything else as msgspec encodes it.
"""

from __future__ import annotations

import operator
import threading
from collections import OrderedDict
from typing import Any

import msgspec

from engine import Interrupt

from .kept_lists import KeptLists, box_json

__all__ = [
    "dumps", "dumps_parts", "interrupt_json", "interrupts_json", "plain", "sse_frame",
    "to_jsonable",
]


def _hook(obj: Any) -> Any:
    raw = _known(obj)
    if raw is not None:
        return raw
    if isinstance(obj, Interrupt):
        return interrupt_json(obj)
    dump = getattr(obj, "model_dump", None)
    if dump is not None:
        return _fragment(obj, dump)
    if isinstance(obj, BaseException):
        return {"error": type(obj).__name__, "message": str(obj)}
    if isinstance(obj, (set, frozenset)):
        return list(obj)
    to_json = getattr(obj, "to_json", None)
    if to_json is not None:
        return to_json()
    return repr(obj)


# A long thread's state goes out whole after every turn (`/runs/wait`, the thread record, the
# values stream): thousands of LangChain messages whose `model_dump` cost most of a turn
# (issue 32). The saver hands back the same message objects turn after turn, so each one's JSON
# is kept, checked against the object and its fields by identity (a field assigned anew is
# encoded again) and against the JSON of its dict and list fields (`additional_kwargs`,
# `tool_calls`: changed in place, they are the same objects), least recently used dropped past
# `_FRAGMENT_BYTES`.
_FRAGMENT_BYTES = 64 << 20
_Kept = tuple[Any, tuple[Any, ...], tuple[Any, ...], bytes, msgspec.Raw]
_fragments: OrderedDict[int, _Kept] = OrderedDict()
_fragment_bytes = 0
_fragment_lock = threading.Lock()
_is = operator.is_


def _fragment(obj: Any, dump: Any) -> Any:
    """`obj`'s JSON as a raw fragment, encoded once while its fields stay the same objects
    with the same contents."""
    global _fragment_bytes
    fields = getattr(obj, "__dict__", None)
    if fields is None:
        return dump()
    values = tuple(fields.values())  # `_hook` has looked for a kept one already
    boxes = tuple(v for v in values if type(v) is dict or type(v) is list)
    extra = getattr(obj, "__pydantic_extra__", None)  # `msg.foo = 1` changes it in place
    if extra is not None:
        boxes += (extra,)
    contents = box_json(boxes)
    raw = msgspec.Raw(msgspec.json.encode(dump(), enc_hook=_hook))
    if not contents:
        return raw
    with _fragment_lock:
        old = _fragments.pop(id(obj), None)
        if old is not None:
            _fragment_bytes -= len(old[4])
        _fragments[id(obj)] = (obj, values, boxes, contents, raw)
        _fragment_bytes += len(raw)
        while _fragment_bytes > _FRAGMENT_BYTES:
            _fragment_bytes -= len(_fragments.popitem(last=False)[1][4])
    return raw


def _known(obj: Any) -> msgspec.Raw | None:
    """`obj`'s kept JSON while its fields are still the same objects with the same contents
    (their dicts and lists encoded again: ~1 µs a message), else None: the hook's
    first look, without the lock (a dict read is atomic) or the type tests. A long thread's
    answer is thousands of kept messages: 2,000 of them encode in ~2 ms instead of ~6 (issue
    32)."""
    key = id(obj)
    found = _fragments.get(key)
    if found is None or found[0] is not obj:
        return None
    fields = getattr(obj, "__dict__", None)
    if fields is None or len(found[1]) != len(fields) or not all(
            map(_is, found[1], fields.values())) or box_json(found[2]) != found[3]:
        return None
    try:
        _fragments.move_to_end(key)
    except KeyError:  # dropped by another thread meanwhile: it is still this object's JSON
        pass
    return found[4]


_encoder = msgspec.json.Encoder(enc_hook=_hook)
_decoder = msgspec.json.Decoder()


def interrupt_json(interrupt: Any) -> dict[str, Any]:
    """An interrupt as the server streams it (`__interrupt__` items)."""
    return {
        "value": to_jsonable(interrupt.value),
        "id": interrupt.id,
        "response_schema": to_jsonable(getattr(interrupt, "response_schema", None)),
    }


def to_jsonable(value: Any) -> Any:
    """Interrupts and model objects as plain dicts, through the containers a chunk uses."""
    if isinstance(value, Interrupt):
        return interrupt_json(value)
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if dump is not None and not isinstance(value, type):
        return to_jsonable(dump())
    return value


def plain(value: Any) -> Any:
    """`value` as plain JSON data (what a record can store): encoded once and decoded back."""
    return _decoder.decode(_encoder.encode(value))


_lists = KeptLists(_encoder.encode)


def dumps(value: Any) -> bytes:
    """Compact JSON (Interrupts and model objects through the encoder hook); a state's long
    lists, in a dict or a dict in it (`values`, a ThreadState's `values`), from their kept JSON."""
    if type(value) is dict:
        value = _with_kept_lists(value, 2, None)
    return _encoder.encode(value)


# Where a kept list goes in `dumps_parts`' outer JSON: msgspec never writes a raw NUL itself
# (a string's control characters are escaped), so the outer JSON splits at these.
_SLOT = msgspec.Raw(b"\x00")


def dumps_parts(value: Any) -> list[bytes]:
    """`dumps(value)` as parts whose concatenation it is, each kept long list its own part: the
    kept bytes themselves, not copied into one answer (a long thread's state is 2.3 MB at 1,000
    turns, and a fresh copy of it ~2 ms here; issue 32)."""
    lists: list[bytes] = []
    outer = _encoder.encode(_with_kept_lists(value, 2, lists) if type(value) is dict else value)
    if not lists:
        return [outer]
    pieces = outer.split(b"\x00")
    if len(pieces) != len(lists) + 1:  # another fragment held a NUL after all: one part
        return [dumps(value)]
    parts = [pieces[0]]
    for body, piece in zip(lists, pieces[1:]):
        parts += (body, piece)
    return parts


def _with_kept_lists(value: dict[Any, Any], depth: int, lists: list[bytes] | None
                     ) -> dict[Any, Any]:
    """`value` with its long lists swapped for their kept JSON (a fragment, or with `lists`
    a slot, the JSON appended to `lists` in the order the encoder meets them)."""
    swapped = None
    for key, item in value.items():
        kind = type(item)
        if kind is list:
            body = _lists.json(item)
            if body is None:
                continue
            raw: Any = msgspec.Raw(body) if lists is None else _SLOT
            if lists is not None:
                lists.append(body)
        elif kind is dict and depth > 1:
            raw = _with_kept_lists(item, depth - 1, lists)
            if raw is item:
                continue
        else:
            continue
        if swapped is None:
            swapped = dict(value)
        swapped[key] = raw
    return value if swapped is None else swapped


def interrupts_json(interrupts: Any) -> list[dict[str, Any]]:
    """Interrupts as a ThreadState lists them: `{"id", "value"}` (no `response_schema`)."""
    return [{"id": i.id, "value": to_jsonable(i.value)} for i in interrupts]


def sse_frame(name: str, data: bytes, event_id: str | None = None) -> bytes:
    """One SSE event as the LangGraph server frames it (SPEC §3): CRLF line ends,
    `event:` then `data:` (compact JSON never holds a raw newline) then `id:` when resumable."""
    head = b"event: " + name.encode() + b"\r\ndata: " + data + b"\r\n"
    if event_id is not None:
        head += b"id: " + event_id.encode() + b"\r\n"
    return head + b"\r\n"
