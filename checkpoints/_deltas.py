"""Append deltas: a list channel that only grew is stored as its new items, not again in full.

Issue 32 (long threads in linear space): a version is stored as the versions it builds on plus
what is new, and nothing is ever written twice::

    b"\\xc1" + msgpack([4, base, length, tail, source])

reads as the first `length` items of the same channel's version `base` (None: no base), then
the serialized new items `tail`, or, when `tail` is None, the whole value of `source` (another
channel's [channel, version], see below). A delta names only its direct base, so chains have no
cap and each version costs what it adds; a reader walks a chain iteratively, and the SQL
readers fetch a channel's blobs in one query when a chain goes deeper than one round. Every
version a delta names is one its checkpoint's parent chain holds (the rule below), so a chain is
as long as the history it stands for and pruning keeps it whole (`closure`).

The formats below it (issues 3, 16) are still read, so files written before issue 32 read the
same; no new blob is written in them.

Identity is what makes a version a delta on its parent's: a saver remembers the lists a
checkpoint holds, both the one it last stored and the one it last read (`Stored.latest`,
`Stored.loaded`), and hands the very same item objects back when that checkpoint is read again
and is still the one the database names (`Stored.held`: proven by the checkpoint id). A thread's
next turn then starts from those objects, and its checkpoints store only the new items.

Before issue 32 (still read):

A message list or an ``operator.add`` list grows by a few items per step. Storing every version
in full writes O(n) per step and O(n^2) per thread; LangGraph's savers do that. A saver here
remembers, per (thread, namespace, channel), the items of the list its last stored checkpoint
holds; when the new value starts with exactly those objects (checked by identity, in C) only
the tail is serialized, as a delta blob naming the versions it builds on::

    b"\\xc1" + msgpack([chain, tail])   chain: the versions to read first, oldest (a full blob)
                                         first; tail: the serialized new items

``0xc1`` is the one byte msgpack never uses, so a delta cannot be mistaken for a full value.
Chains are capped at `MAX_CHAIN` deltas, after which a full value is stored again, so a read
fetches a bounded number of blobs.

When the new items are exactly another list channel's last stored value (a node returning
``{"log": state["messages"]}`` to an ``operator.add`` channel: every item is an object that
channel already holds), they are not serialized again but named as that channel's version::

    b"\xc1" + msgpack([chain, None, source, needs])   source: [channel, version] whose full
                                                       value the new items are; needs: every
                                                       other (channel, version) a read fetches

A delta built on such a one carries its `needs` too (as ``[chain, tail, None, needs]``), so a
reader fetches everything in one more round, and pruning keeps it. `MAX_NEEDS` bounds them: a
version that would need more is written out instead.

A task's write of a list that starts with a list the checkpoint it was computed from holds (a
node returning ``state["items"]``, or ``state["items"] + [new]`` to a plain channel) is stored the
same way, as a reference to that channel plus the serialized new items::

    b"\xc1" + msgpack([channel, length, tail])   the checkpoint's value of `channel` (whose
                                                  length was `length`), then the new items

A reader resolves it from the checkpoint's own values, which it has loaded anyway.

What may be referred to (issue 16): only what the checkpoint a blob or write belongs to can
reach. A saver remembers, per (thread, namespace), the last checkpoint it stored and the lists
that checkpoint holds (`Stored.latest`, each with the version it holds). A put builds deltas
and sources only on those, and only when the new checkpoint's parent is that very checkpoint;
a fork, an update of an older checkpoint, a copy or a second saver on the file stores full
values instead. A write refers only to a list its own checkpoint holds at that version. So
every version a delta names is held by the checkpoint's parent chain (and kept by `closure`
when pruning), and every write reference resolves from its checkpoint's values. Deleting,
pruning or copying a thread forgets what was remembered for it, and marks it `dead` so a put
serialized concurrently is redone in full before it is stored (`Stored.dead`).

Identity is checked against a snapshot (a tuple) of each list taken when it was stored, not
against the list object itself: a node that appends to, pops from or assigns into the stored
list in place changes the object but not the snapshot, so what was stored is what a delta
builds on. What identity cannot see is an item object mutated in place (a dict inside the
list edited): that change is not stored (a LangGraph full blob would store it). Nodes are meant
to return updates rather than mutate state.

`MISSING` is what a blob lookup returns for a (channel, version) with no stored row (``None``
is an emptied channel): reading one raises, as a damaged record, instead of dropping the
channel silently.
"""

from __future__ import annotations

import operator
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import msgspec

__all__ = [
    "MAX_NEEDS",
    "MISSING",
    "Lineage",
    "Stored",
    "closure",
    "dump_list",
    "dump_write",
    "is_delta",
    "load_write",
    "needs_of",
    "remember",
    "resolve",
    "whole_channels",
]

MAX_NEEDS = 64  # pre-issue-32 sourced deltas: the reads one header may list
_V4 = 4  # the first field of an issue-32 delta (older headers start with a list)
_STEP = object()  # memo key suffix: one delta's (length, own items, base), decoded once
_is = operator.is_
_MARK = b"\xc1"
_encode = msgspec.msgpack.Encoder().encode
_decode_header = msgspec.msgpack.Decoder(list[Any]).decode
_decode_ref = msgspec.msgpack.Decoder(tuple[str, int, bytes]).decode
# (thread, namespace) pairs remembered per saver, least recently used dropped first: the bound
# of the per-thread cache of latest states (issue 32); each entry keeps its last lists alive.
_THREADS = 64


class _Missing:
    """The blob lookup's answer for a (channel, version) that has no stored row."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()

_Pair = tuple[str, Any]  # (channel, version)


class _Last(NamedTuple):
    version: Any
    items: tuple[Any, ...]  # the list as stored (a snapshot): identity against it is the check
    # Unused since issue 32 (a delta names its direct base only); kept so the tuple's shape,
    # built in C by `_new_last`, stays as it was.
    chain: tuple[Any, ...] = ()
    extra: frozenset[_Pair] = frozenset()


_NONE: frozenset[_Pair] = frozenset()
_new_last = tuple.__new__  # builds a `_Last` in C: its generated __new__ is a Python frame


class _Header(NamedTuple):
    """A delta of any format: `chain` (pre-32: versions read first, oldest a full value) or
    `base` and `length` (issue 32: a prefix of one version), then `tail` or `source`."""

    chain: list[Any]
    tail: bytes | None  # the serialized new items, or None when `source` stands for them
    source: _Pair | None
    needs: list[_Pair]  # pre-32: beyond the chain (sourced deltas and deltas built on them)
    base: Any = None
    length: int = 0
    v4: bool = False


def is_delta(blob: Any) -> bool:
    return type(blob) is bytes and blob[:1] == _MARK


def _header(blob: bytes) -> _Header:
    fields = _decode_header(memoryview(blob)[1:])
    first = fields[0]
    if type(first) is int:  # [4, base, length, tail, source]
        _, base, length, tail, source = fields
        return _Header([], tail, tuple(source) if source is not None else None, [], base, length,
                       True)
    if len(fields) == 2:  # [chain, tail]
        return _Header(first, fields[1], None, [])
    chain, tail, source, needs = fields
    return _Header(
        chain, tail, tuple(source) if source is not None else None, [tuple(p) for p in needs]
    )


def needs_of(blob: bytes, channel: str) -> list[_Pair]:
    """The (channel, version) pairs a delta blob of `channel` reads directly (an issue-32 delta:
    its base and source, each read in turn through its own; older ones list every read)."""
    header = _header(blob)
    if header.v4:
        direct = [] if header.base is None else [(channel, header.base)]
        return direct if header.source is None else [*direct, header.source]
    return [(channel, v) for v in header.chain] + header.needs


def whole_channels(blob: bytes, channel: str) -> list[str]:
    """The channels a read of this delta may walk deep into (issue 32: its base's and source's,
    which a SQL reader then fetches whole instead of one version per round trip)."""
    header = _header(blob)
    if not header.v4:
        return []
    found = [] if header.base is None else [channel]
    return found if header.source is None else [*found, header.source[0]]


def _fetched(fetch: Callable[[str, Any], Any], channel: str, version: Any) -> Any:
    """A blob a delta builds on; it must exist and hold a value (not an emptied channel)."""
    part = fetch(channel, version)
    if part is None or part is MISSING:
        raise LookupError(f"the stored value of channel {channel!r} version {version!r} is missing")
    return part


def _items(
    header: _Header, channel: str, fetch: Callable[[str, Any], Any], loads: Callable[[Any], Any],
    memo: dict[Any, Any],
) -> list[Any]:
    """The full list a pre-32 delta of `channel` stands for (its chain is capped, so short)."""
    value: list[Any] = []
    for index, version in enumerate(header.chain):
        part = _fetched(fetch, channel, version)
        if is_delta(part):
            value.extend(_own_items(_header(part), fetch, loads, memo))
        elif index == 0:
            value = loads(part)
            if type(value) is not list:
                raise TypeError("a delta chain must start with a stored list")
        else:
            raise ValueError(f"checkpoint blob version {version!r} is not a delta")
    value.extend(_own_items(header, fetch, loads, memo))
    return value


def _own_items(
    header: _Header, fetch: Callable[[str, Any], Any], loads: Callable[[Any], Any],
    memo: dict[Any, Any],
) -> list[Any]:
    """The items one delta adds: its tail, or the whole value of its source."""
    if header.source is None:
        return loads(header.tail)
    return _value(header.source, fetch, loads, memo)


def _value(
    pair: _Pair, fetch: Callable[[str, Any], Any], loads: Callable[[Any], Any],
    memo: dict[Any, Any],
) -> list[Any]:
    """A stored list channel value, read once per `resolve` (a source may be named often).

    An issue-32 chain is walked back to a full value (or one already read), then rebuilt
    forward in one list: no recursion, however long the thread. Each delta's own items are
    decoded once per memo (kept under ``(channel, version, _STEP)``), so the checkpoints of a
    history page, each a version of the same chain, cost pointer copies, not decoding."""
    found = memo.get(pair)
    if found is not None:
        return found  # type: ignore[no-any-return]
    channel = pair[0]
    steps: list[tuple[int, list[Any], Any]] = []
    at = pair
    while True:
        known = memo.get(at)
        if known is not None:
            value = list(known)
            break
        step = memo.get((*at, _STEP))
        if step is None:
            blob = _fetched(fetch, *at)
            header = _header(blob) if is_delta(blob) else None
            if header is None or not header.v4:
                full = (
                    loads(blob) if header is None else _items(header, channel, fetch, loads, memo)
                )
                if type(full) is not list:
                    raise TypeError("a delta chain must start with a stored list")
                memo[at] = full
                value = list(full)
                break
            step = memo[(*at, _STEP)] = (
                header.length, _own_items(header, fetch, loads, memo), header.base
            )
        steps.append(step)
        if step[2] is None:
            value = []
            break
        at = (channel, step[2])
    for length, items, _ in reversed(steps):
        if length > len(value):
            raise LookupError(f"a delta of channel {channel!r} builds on a shorter version")
        del value[length:]
        value.extend(items)
    memo[pair] = value
    return value


def resolve(
    wanted: Iterable[tuple[str, Any]],
    blob: Callable[[str, Any], Any],
    loads: Callable[[Any], Any],
    held: Mapping[str, _Last] | None = None,
    memo: dict[Any, Any] | None = None,
) -> dict[str, Any]:
    """Channel values for (channel, version) pairs; None blobs (emptied channels) are left out,
    a `MISSING` one raises `LookupError` (the record is damaged). `held`: the lists this
    checkpoint holds that the saver remembers (`Stored.held`), handed back as new lists of the
    same items instead of being read (issue 32). `memo`: lists already rebuilt, shared by the
    checkpoints of one page of the same thread and namespace."""
    values: dict[str, Any] = {}
    if memo is None:
        memo = {}
    for channel, version in wanted:
        if held:
            entry = held.get(channel)
            if entry is not None and entry.version == version:
                values[channel] = list(entry.items)
                continue
        found = blob(channel, version)
        if found is None:
            continue
        if found is MISSING:
            raise LookupError(f"channel {channel!r} version {version!r} has no stored value")
        if is_delta(found):
            # A copy of the memo's list: a source or another checkpoint of the same read may
            # hold it too, and the caller may change its own.
            values[channel] = list(_value((channel, version), blob, loads, memo))
        else:
            values[channel] = loads(found)
    return values


def closure(referenced: set[tuple[str, Any]], blob: Callable[[str, Any], Any]) -> None:
    """Add to `referenced` every (channel, version) a referenced delta builds on, however deep
    (pruning)."""
    todo = list(referenced)
    while todo:
        channel, version = todo.pop()
        found = blob(channel, version)
        if is_delta(found):
            for need in needs_of(found, channel):
                if need not in referenced:
                    referenced.add(need)
                    todo.append(need)


class Stored:
    """One thread and namespace of one saver.

    `latest` is the id of the last checkpoint stored here with the lists it holds, per channel
    (one tuple, replaced whole, so a reader on another thread never sees the lists of one
    checkpoint with the id of another); `loaded` the same for the last one read (issue 32).
    `dead` is set once the thread's data was deleted, pruned or copied over: a put serialized
    against it must be serialized again in full, and nothing read before is remembered.
    """

    __slots__ = ("dead", "latest", "loaded")

    def __init__(self) -> None:
        self.latest: tuple[str, dict[str, _Last]] | None = None
        self.loaded: tuple[str, dict[str, _Last]] | None = None
        self.dead = False

    def held(self, checkpoint_id: str | None) -> dict[str, _Last] | None:
        """The lists checkpoint `checkpoint_id` holds, if remembered (stored or read here)."""
        if checkpoint_id is None:
            return None
        for entry in (self.latest, self.loaded):
            if entry is not None and entry[0] == checkpoint_id:
                return entry[1]
        return None

    def bases(self, parent_id: str | None) -> dict[str, _Last]:
        """The lists a child of `parent_id` may build on: those of that very checkpoint when it
        is remembered, else none (issue 16: never the lists of another branch)."""
        return self.held(parent_id) or {}

    def remember_read(
        self, checkpoint_id: str, versions: Mapping[str, Any], values: Mapping[str, Any]
    ) -> None:
        """Remember the lists a checkpoint just read holds, so a child of it (the thread's next
        turn, a fork, an update) is stored as deltas on them (issue 32)."""
        if self.dead:
            return
        lists = {
            ch: _new_last(_Last, (versions[ch], tuple(v), (), _NONE))
            for ch, v in values.items()
            if type(v) is list and ch in versions
        }
        self.loaded = (checkpoint_id, lists)


class Lineage:
    """Per saver: the lists the last stored (and the last read) checkpoint of each (thread,
    namespace) holds, so the next version can be stored as a delta on them.

    Thread-safe; bounded to the most recently used `_THREADS` (thread, namespace) pairs, and
    forgotten for a thread whenever its stored data is deleted, pruned or copied over.
    """

    def __init__(self) -> None:
        self._last: OrderedDict[tuple[str, str], Stored] = OrderedDict()
        self._lock = threading.Lock()
        # The pair the last `channels` call returned, already the most recent: a run's next
        # step skips the lock and the reordering (most of the call's 1 us).
        self._recent: tuple[str, str, Stored] | None = None

    def channels(self, thread_id: str, ns: str) -> Stored:
        recent = self._recent
        if recent is not None and recent[0] == thread_id and recent[1] == ns:
            return recent[2]
        key = (thread_id, ns)
        with self._lock:
            found = self._last.get(key)
            if found is None:
                found = self._last[key] = Stored()
                if len(self._last) > _THREADS:
                    self._last.popitem(last=False)
            else:
                self._last.move_to_end(key)
            self._recent = (thread_id, ns, found)
            return found

    def peek(self, thread_id: str, ns: str) -> Stored | None:
        """What is remembered for a thread and namespace, without creating or refreshing it."""
        return self._last.get((thread_id, ns))

    def forget(self, thread_id: str) -> None:
        with self._lock:
            self._recent = None
            for key in [k for k in self._last if k[0] == thread_id]:
                self._last.pop(key).dead = True

    def clear(self) -> None:
        with self._lock:
            self._recent = None
            for stored in self._last.values():
                stored.dead = True
            self._last.clear()


def dump_list(
    last: Mapping[str, _Last],
    channel: str,
    version: Any,
    value: list[Any],
    dumps: Callable[[Any], bytes],
) -> tuple[bytes, _Last]:
    """Serialize a list channel's new version, as a delta on `last` (the lists the parent
    checkpoint holds, `Stored.bases`) when it keeps a prefix of the parent's version (issue 32:
    an append, or add_messages replacing a recent message by id).

    Returns the blob and what to remember once the whole checkpoint has been serialized."""
    prev = last.get(channel)
    items = tuple(value)
    base = None
    start = 0
    if prev is not None:
        start = _prefix(prev.items, items)
        if start:
            base = prev.version
    # With this channel the only list held, no other one can be the source.
    source = None if prev is not None and len(last) == 1 else _source(last, channel, value, start)
    remembered = _new_last(_Last, (version, items, (), _NONE))
    if source is not None:
        pair = [source, last[source].version]
        return _MARK + _encode((_V4, base, start, None, pair)), remembered
    if base is None:
        return dumps(value), remembered
    return _MARK + _encode((_V4, base, start, dumps(value[start:]), None)), remembered


def _prefix(old: tuple[Any, ...], new: tuple[Any, ...]) -> int:
    """How many leading items `new` shares with `old`, by identity (all of `old`, checked in
    C, in the common case of an append)."""
    if len(new) >= len(old) and all(map(_is, old, new)):
        return len(old)
    for index, (a, b) in enumerate(zip(old, new)):  # noqa: B905 - the shorter bounds it
        if a is not b:
            return index
    return min(len(old), len(new))


def _source(last: Mapping[str, _Last], channel: str, value: list[Any], start: int) -> str | None:
    """Another channel whose stored list is exactly `value[start:]`, item by item."""
    count = len(value) - start
    if count <= 0:
        return None
    first = value[start]
    for name, entry in last.items():
        items = entry.items
        if (
            len(items) == count
            and name != channel
            and items[0] is first
            and all(map(_is, items, value[start:]))
        ):
            return name
    return None


def remember(
    stored: Stored,
    checkpoint_id: str,
    versions: Mapping[str, Any],
    bases: Mapping[str, _Last],
    new: Mapping[str, _Last],
) -> None:
    """Record the lists checkpoint `checkpoint_id` holds (its channel `versions`): those just
    stored (`new`) and the bases it kept unchanged."""
    if bases.keys() <= new.keys():  # every list held was stored anew (the usual step)
        stored.latest = (checkpoint_id, dict(new))
        return
    held = {ch: e for ch, e in bases.items() if ch not in new and versions.get(ch) == e.version}
    held.update(new)
    stored.latest = (checkpoint_id, held)


def dump_write(
    stored: Stored, checkpoint_id: str, value: list[Any], dumps: Callable[[Any], bytes]
) -> bytes | None:
    """A list write as a reference to the channel value it starts with, or None if it starts
    with none of them (or the lists of `checkpoint_id` are not remembered)."""
    held = stored.held(checkpoint_id)
    if not held or not value:
        return None
    best: tuple[str, int] | None = None
    first = value[0]
    for channel, last in held.items():
        base = last.items
        length = len(base)
        if (
            length
            and len(value) >= length
            and base[0] is first
            and (best is None or length > best[1])
            and all(map(_is, base, value))
        ):
            best = (channel, length)
    if best is None:
        return None
    channel, length = best
    return _MARK + _encode((channel, length, dumps(value[length:])))


def load_write(blob: Any, values: Mapping[str, Any], loads: Callable[[Any], Any]) -> Any:
    """A stored write's value; `values` are the channel values of the write's checkpoint."""
    if not is_delta(blob):
        return loads(blob)
    channel, length, tail = _decode_ref(memoryview(blob)[1:])
    base = values.get(channel)
    if type(base) is not list or len(base) != length:
        raise LookupError(
            f"a pending write builds on channel {channel!r}, which its checkpoint does not hold"
        )
    value = base[:length]
    value.extend(loads(tail))
    return value
