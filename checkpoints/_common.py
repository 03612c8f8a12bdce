"""Rules every saver back end shares, kept in one place so memory and SQLite agree."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

import msgspec

from ._deltas import Stored, dump_list, dump_write, remember
from .base import (
    INTERRUPT,
    RESUME,
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    DamagedCheckpointError,
)
from .serde import SerializationError, Serializer

_encode_plain = msgspec.msgpack.Encoder().encode

__all__ = [
    "SerializedPut",
    "by_namespace",
    "checkpoints_to_drop",
    "damaged",
    "kept_versions",
    "matches_filter",
    "prune_cutoff",
    "serialize_put",
    "serialize_writes",
    "skipped",
    "thread_is_idle",
]

_log = logging.getLogger("checkpoints")


class SerializedPut(NamedTuple):
    """What a back end stores for one `put` (SPEC §2: only the changed channels' values)."""

    blobs: list[tuple[str, Any, bytes | None]]  # channel, version, value (None: emptied)
    checkpoint: bytes  # the checkpoint without channel_values
    metadata: bytes


_new_put = tuple.__new__  # builds a `SerializedPut` in C (its generated __new__ is a frame)


def serialize_put(
    serde: Serializer,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    new_versions: ChannelVersions,
    lineage: Stored | None = None,
    parent_id: str | None = None,
) -> SerializedPut:
    """Serialize on the caller's thread, so the stored copy is taken at `put` time.

    With `lineage` (the saver's `Lineage.channels` for this thread and namespace) a list channel
    that only grew since the version its parent checkpoint `parent_id` holds is written as an
    append delta (`_deltas`); without the parent's id, or when the parent is not the last
    checkpoint stored there (a fork), values are written in full."""
    values = checkpoint["channel_values"]
    if lineage is None:
        blobs = [
            (ch, v, _dump_channel(serde, ch, values[ch]) if ch in values else None)
            for ch, v in new_versions.items()
        ]
    else:
        blobs = _dump_with_lineage(serde, checkpoint, new_versions, lineage, parent_id)
    # The bookkeeping around the values (ids, versions, seen versions, channel names) is plain
    # msgpack data by construction: encode it directly, skipping the type-preserving walk
    # (the walk made this O(channels) in Python per step). `serde.loads` reads it unchanged.
    rest = dict(checkpoint)  # a C copy, then one delete: 2x cheaper than a filtering dictcomp
    del rest["channel_values"]
    try:
        meta = serde.dumps(metadata)
    except SerializationError:
        meta = _dump_metadata(serde, metadata)  # raises the error naming the key
    return _new_put(SerializedPut, (blobs, _encode_plain(rest), meta))


_ABSENT: Any = object()  # `channel_values.get` default: None is a stored value, not absence


def _dump_with_lineage(
    serde: Serializer,
    checkpoint: Checkpoint,
    new_versions: ChannelVersions,
    lineage: Stored,
    parent_id: str | None,
) -> list[tuple[str, Any, bytes | None]]:
    # One loop with the serializer call inline (no per-channel helper): this runs per channel
    # per step, and the helper frames were a fifth of a long thread's put.
    values = checkpoint["channel_values"]
    bases = lineage.bases(parent_id)
    dumps = serde.dumps
    blobs: list[tuple[str, Any, bytes | None]] = []
    new = {}
    for ch, v in new_versions.items():
        value = values.get(ch, _ABSENT)
        try:
            if value is _ABSENT:
                blob = None
            elif type(value) is list:
                blob, new[ch] = dump_list(bases, ch, v, value, dumps)
            else:
                blob = dumps(value)
        except SerializationError:
            _dump_channel(serde, ch, value)  # raises the error naming the channel
            raise
        blobs.append((ch, v, blob))
    # Only once every value serialized: nothing unstored is remembered.
    remember(lineage, checkpoint["id"], checkpoint["channel_versions"], bases, new)
    return blobs


def serialize_writes(
    serde: Serializer,
    writes: Sequence[tuple[str, Any]],
    lineage: Stored | None = None,
    checkpoint_id: str | None = None,
) -> list[tuple[int, str, bytes]]:
    """(idx, channel, value) per write; special channels get their fixed negative index.

    With `lineage`, a list written to a state channel that starts with a list the checkpoint
    `checkpoint_id` holds is stored as a reference to it plus its new items (`_deltas`)."""
    rows = []
    dumps = serde.dumps
    special_index = WRITES_IDX_MAP.get
    for idx, (ch, v) in enumerate(writes):
        special = special_index(ch)
        blob = None
        if type(v) is list and lineage is not None and special is None:
            try:
                blob = dump_write(lineage, checkpoint_id, v, dumps)  # type: ignore[arg-type]
            except SerializationError:
                blob = None  # the full value below raises the error naming the channel
        if blob is None:
            try:
                blob = dumps(v)
            except SerializationError:
                _dump_channel(serde, ch, v)  # raises the error naming the channel
                raise
        rows.append((idx if special is None else special, ch, blob))
    return rows


# Internal channels, named in errors by what the user wrote (the channel follows in brackets).
_INPUT = "__start__"  # the graph input: one dict keyed by state channel
_TASKS = "__pregel_tasks"  # Send packets
_CALLED = {INTERRUPT: "the interrupt value", RESUME: "the resume value"}


def _dump_channel(serde: Serializer, channel: str, value: Any) -> bytes:
    """Serialize one channel's value; a failure names the channel as well as the type."""
    try:
        return serde.dumps(value)
    except SerializationError as error:
        raise SerializationError(f"Cannot save {_where(serde, channel, value)}: {error}") from None


def _dump_metadata(serde: Serializer, metadata: CheckpointMetadata) -> bytes:
    try:
        return serde.dumps(metadata)
    except SerializationError as error:
        key = _failing_key(serde, metadata)
        where = "checkpoint metadata" if key is None else f"checkpoint metadata key {key!r}"
        raise SerializationError(f"Cannot save {where}: {error}") from None


def _where(serde: Serializer, channel: str, value: Any) -> str:
    if channel == _INPUT and isinstance(value, Mapping):
        key = _failing_key(serde, value)
        if key is not None:
            return f"channel {key!r} (in the graph input)"
    if channel == _TASKS and isinstance(getattr(value, "node", None), str):
        return f"the Send to node {value.node!r} (channel {channel!r})"
    if channel in _CALLED:
        return f"{_CALLED[channel]} (channel {channel!r})"
    return f"channel {channel!r}"


def _failing_key(serde: Serializer, value: Mapping[Any, Any]) -> str | None:
    """The first key whose value cannot be serialized (only called once saving failed)."""
    for key, item in value.items():
        try:
            serde.dumps(item)
        except SerializationError:
            return str(key)
    return None


def matches_filter(metadata: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """`list(filter=...)` keeps checkpoints whose metadata equals every filter value."""
    return not filter or all(metadata.get(k) == v for k, v in filter.items())


def prune_cutoff(older_than_seconds: float | None) -> float | None:
    """The POSIX time before which `prune` may drop checkpoints (None: any age)."""
    return None if older_than_seconds is None else time.time() - older_than_seconds


def _timestamp(ts: str) -> float:
    return datetime.fromisoformat(ts).timestamp()


def by_namespace(
    serde: Serializer, rows: Iterable[Sequence[Any]]
) -> dict[str, dict[str, Checkpoint]]:
    """A thread's stored (namespace, id, checkpoint) rows decoded and grouped as `prune` reads
    them, so the SQL back ends share one reading."""
    namespaces: dict[str, dict[str, Checkpoint]] = {}
    for ns, cid, blob in rows:
        namespaces.setdefault(ns, {})[cid] = serde.loads(blob)
    return namespaces


def checkpoints_to_drop(
    checkpoints: Mapping[str, Checkpoint], keep_last: int, cutoff: float | None
) -> list[str]:
    """Ids of one namespace's checkpoints (id to checkpoint) that "keep_latest" pruning removes.

    The newest `keep_last` (at least one) always stay; with a cutoff, so does every checkpoint
    made after it.
    """
    stamps = {cid: c["ts"] for cid, c in checkpoints.items()}
    older = sorted(stamps, reverse=True)[max(keep_last, 1) :]
    if cutoff is None:
        return older
    return [cid for cid in older if _timestamp(stamps[cid]) < cutoff]


def kept_versions(
    checkpoints: Mapping[str, Checkpoint], drop: Iterable[str]
) -> set[tuple[str, Any]]:
    """The (channel, version) pairs the checkpoints that pruning keeps name; deltas' bases are
    added by `_deltas.closure`."""
    dropped = set(drop)
    return {
        (ch, v)
        for cid, c in checkpoints.items()
        if cid not in dropped
        for ch, v in c["channel_versions"].items()
    }


def thread_is_idle(
    namespaces: Mapping[str, Mapping[str, Checkpoint]], cutoff: float | None
) -> bool:
    """Whether "delete" pruning removes a thread (its checkpoints per namespace): always without
    a cutoff, else when its newest checkpoint is older than the cutoff."""
    return cutoff is None or all(
        _timestamp(c["ts"]) < cutoff for cps in namespaces.values() for c in cps.values()
    )


def damaged(
    thread_id: str, ns: str, checkpoint_id: str, error: Exception
) -> DamagedCheckpointError:
    """The error a read of a checkpoint whose stored record cannot be decoded ends with."""
    if isinstance(error, DamagedCheckpointError):
        return error
    return DamagedCheckpointError(thread_id, ns, checkpoint_id, f"{type(error).__name__}: {error}")


def skipped(error: DamagedCheckpointError) -> None:
    """`list` leaves a damaged checkpoint out and says so in the log (issue 16: the rest of the
    history still reads)."""
    _log.error("%s; list() leaves it out", error)
