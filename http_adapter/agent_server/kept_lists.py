"""A long list of messages encoded once: its JSON kept, and a longer list that starts with the
same objects encodes only what it adds (issue 32).

A thread's state goes out whole after every turn (`/runs/wait`, the `values` events), and turn
after turn its message list is the previous list plus a few messages: the saver and the
reducer hand back the very same message objects. `encode`'s per-message fragments already
spare their `model_dump`, but looking 2,000 of them up one by one in Python costs ~6 ms a list,
three lists a turn on a scale-out host. Here a list is checked as a whole in a few C-level
passes: the same objects, each with the same field objects (a field assigned anew is encoded
again) and the same JSON in its dict and list fields and pydantic extras (changed in place,
they are the same objects). Anything else, or a list that does not start with a kept one, is
encoded item by item and kept anew.
"""

from __future__ import annotations

import operator
import threading
from collections import OrderedDict
from collections.abc import Callable
from itertools import chain
from typing import Any

import msgspec

__all__ = ["KeptLists", "box_json"]

_is = operator.is_
_values = dict.values
_containers = msgspec.json.Encoder()


class _Kept:
    """One list's JSON (`body`, brackets included) and what proves it current: its `items`,
    their fields' values in order, each item's field count, its dict and list fields (`boxes`)
    and their JSON."""

    __slots__ = ("body", "boxes", "boxes_json", "fields", "items", "sizes")

    def __init__(self, items: tuple[Any, ...], fields: tuple[Any, ...], sizes: tuple[int, ...],
                 boxes: tuple[Any, ...], boxes_json: bytes, body: bytes) -> None:
        self.items, self.fields, self.sizes = items, fields, sizes
        self.boxes, self.boxes_json, self.body = boxes, boxes_json, body


def _extra(item: Any) -> Any:
    """A pydantic model's extra fields (a dict changed in place by `msg.foo = 1`), or None."""
    return getattr(item, "__pydantic_extra__", None)


def _dicts(items: Any) -> list[dict[str, Any]] | None:
    """Each item's `__dict__`; None when one has none (a plain value, which msgspec encodes
    natively anyway)."""
    try:
        return list(map(vars, items))
    except TypeError:
        return None


def box_json(boxes: tuple[Any, ...]) -> bytes:
    """The JSON of objects' dict and list fields (what identity cannot see change); b"" when
    msgspec cannot encode them alone (then nothing is kept)."""
    try:
        return _containers.encode(boxes)
    except (TypeError, ValueError):
        return b""


def _joined(head: bytes, tail: bytes) -> bytes:
    """Two JSON arrays as one (`[a,b]` and `[c]` make `[a,b,c]`), copying each once."""
    return b"".join((memoryview(head)[:-1], b",", memoryview(tail)[1:]))


def _kept(items: list[Any], dicts: list[dict[str, Any]], body: bytes) -> _Kept | None:
    fields = tuple(chain.from_iterable(map(_values, dicts)))
    boxes = tuple(v for v in fields if type(v) is dict or type(v) is list)
    boxes += tuple(e for e in map(_extra, items) if e is not None)
    boxes_json = box_json(boxes)
    if not boxes_json:
        return None
    return _Kept(tuple(items), fields, tuple(map(len, dicts)), boxes, boxes_json, body)


class KeptLists:
    """Kept list JSON by the list's first object, least recently used dropped past `limit`
    bytes. `encode_items(list)` is the encoder's own JSON of a list (the hook's objects)."""

    def __init__(self, encode_items: Callable[[list[Any]], bytes], *, shortest: int = 64,
                 limit: int = 64 << 20) -> None:
        self._encode = encode_items
        self._shortest = shortest
        self._limit = limit
        self._kept: OrderedDict[int, _Kept] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def raw(self, items: list[Any]) -> msgspec.Raw | None:
        """`items`' JSON as a fragment for an encoder, or None for a list too short to be worth
        keeping."""
        body = self.json(items)
        return None if body is None else msgspec.Raw(body)

    def json(self, items: list[Any]) -> bytes | None:
        """`items`' JSON (the kept bytes themselves), or None for a list too short to be worth
        keeping."""
        if len(items) < self._shortest:
            return None
        kept = self._kept.get(id(items[0]))
        body = self._extend(kept, items) if kept is not None else None
        if body is None:
            body = self._encode(items)
            dicts = _dicts(items)
            if dicts is not None:
                self._store(_kept(items, dicts, body))
        return body

    def _extend(self, kept: _Kept, items: list[Any]) -> bytes | None:
        """The JSON of `items` from `kept`'s, when `items` starts with `kept`'s items unchanged."""
        count = len(kept.items)
        if count > len(items) or not all(map(_is, kept.items, items)):
            return None
        dicts = _dicts(items[:count])
        if dicts is None or tuple(map(len, dicts)) != kept.sizes or not all(
                map(_is, chain.from_iterable(map(_values, dicts)), kept.fields)):
            return None
        if box_json(kept.boxes) != kept.boxes_json:
            return None
        if count == len(items):
            self._touch(items[0])
            return kept.body
        added = items[count:]
        body = _joined(kept.body, self._encode(added))
        more = _dicts(added)
        if more is not None:
            fresh = _kept(added, more, b"")
            if fresh is not None:
                self._store(_Kept(tuple(items), kept.fields + fresh.fields,
                                  kept.sizes + fresh.sizes, kept.boxes + fresh.boxes,
                                  _joined(kept.boxes_json, fresh.boxes_json), body))
        return body

    def _store(self, kept: _Kept | None) -> None:
        if kept is None:
            return
        key = id(kept.items[0])
        with self._lock:
            old = self._kept.pop(key, None)
            if old is not None:
                self._bytes -= len(old.body)
            self._kept[key] = kept
            self._bytes += len(kept.body)
            while self._bytes > self._limit:
                self._bytes -= len(self._kept.popitem(last=False)[1].body)

    def _touch(self, head: Any) -> None:
        try:
            self._kept.move_to_end(id(head))
        except KeyError:  # dropped by another thread meanwhile
            pass
