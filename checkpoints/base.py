"""The checkpoint saver protocol and the data it stores.

A saver knows checkpoints, their metadata and pending writes as data; it knows nothing of graphs.
The engine calls it through the methods of `BaseCheckpointSaver` (sync and async forms).

Shapes follow SPEC §2 so that code written against LangGraph's saver API reads the same:

- `config`: ``{"configurable": {"thread_id", "checkpoint_ns", "checkpoint_id"}}``
- `Checkpoint`: ``{v, id, ts, channel_values, channel_versions, versions_seen, updated_channels}``
- pending writes: ``(task_id, channel, value)`` saved as each task finishes.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from datetime import datetime, timezone
from typing import Any, Literal, NamedTuple, TypedDict

__all__ = [
    "BaseCheckpointSaver",
    "Checkpoint",
    "CheckpointMetadata",
    "CheckpointTuple",
    "ChannelVersions",
    "DamagedCheckpointError",
    "PendingWrite",
    "WRITES_IDX_MAP",
    "empty_checkpoint",
    "new_checkpoint_id",
    "get_checkpoint_id",
    "thread_config",
]

ChannelVersions = dict[str, int]

# Special channels for writes that are not state updates. Their write index is negative so a
# task's regular writes never collide with them (a saver upserts on (task_id, idx)).
ERROR = "__error__"
INTERRUPT = "__interrupt__"
RESUME = "__resume__"
SCHEDULED = "__scheduled__"
WRITES_IDX_MAP = {ERROR: -1, SCHEDULED: -2, INTERRUPT: -3, RESUME: -4}


class DamagedCheckpointError(RuntimeError):
    """A stored checkpoint cannot be read back: its record was damaged outside the saver (a file
    edited by hand, a row deleted). Names the thread, namespace and checkpoint (issue 16).

    `get_tuple` raises it for that checkpoint; `list` skips it, logging this error, so the rest
    of the history still reads."""

    def __init__(self, thread_id: str, checkpoint_ns: str, checkpoint_id: str, cause: str) -> None:
        where = f"checkpoint {checkpoint_id} of thread {thread_id}"
        if checkpoint_ns:
            where += f" (namespace {checkpoint_ns!r})"
        super().__init__(f"{where} cannot be read: {cause}")
        self.thread_id = thread_id
        self.checkpoint_ns = checkpoint_ns
        self.checkpoint_id = checkpoint_id


class Checkpoint(TypedDict):
    """State of a graph at the end of one super-step."""

    v: int
    id: str
    ts: str
    channel_values: dict[str, Any]
    channel_versions: ChannelVersions
    versions_seen: dict[str, ChannelVersions]
    updated_channels: list[str] | None


class CheckpointMetadata(TypedDict, total=False):
    """Why and when a checkpoint was made (plus scalar configurable/metadata keys)."""

    source: Literal["input", "loop", "update", "fork"]
    step: int
    parents: dict[str, str]
    run_id: str


PendingWrite = tuple[str, str, Any]


class CheckpointTuple(NamedTuple):
    config: dict[str, Any]
    checkpoint: Checkpoint
    metadata: CheckpointMetadata
    parent_config: dict[str, Any] | None = None
    pending_writes: list[PendingWrite] | None = None


_last_ticks = 0
_node_hex = os.urandom(6).hex()  # fixed per process
_sequence = itertools.count(int.from_bytes(os.urandom(2), "big"))
_GREGORIAN_OFFSET = 0x01B21DD213814000  # 100-ns intervals from 1582-10-15 to 1970-01-01


# (ticks >> 12, its text "tttttttt-tttt-6"): the part of an id that changes every 410 us, so
# consecutive ids format only their last 7 hex digits (1.2 us instead of 1.7 us per id).
_prefix: tuple[int, str] = (-1, "")
_suffix = "-" + _node_hex


def new_checkpoint_id() -> str:
    """A time-ordered UUID (version 6 layout), so ids sort by creation like LangGraph's.

    Increasing within a thread even when the clock does not advance; no lock: two threads that
    read the same clock tick still differ in the sequence field (`next` on a count is atomic).
    """
    global _last_ticks, _prefix
    ticks = time.time_ns() // 100 + _GREGORIAN_OFFSET
    if ticks <= _last_ticks:
        ticks = _last_ticks + 1
    _last_ticks = ticks
    # 60 bits of ticks: time_high (8 hex), time_mid (4), version 6, time_low (3); then the
    # variant and sequence (4) and the node (12).
    prefix = _prefix
    if prefix[0] != ticks >> 12:
        high = f"{ticks >> 12:012x}"
        prefix = _prefix = (ticks >> 12, f"{high[:8]}-{high[8:]}-6")
    low = f"{(ticks & 0xFFF) << 16 | 0x8000 | (next(_sequence) & 0x3FFF):07x}"
    return f"{prefix[1]}{low[:3]}-{low[3:]}{_suffix}"


_ISO_SECOND: tuple[int, str] = (-1, "")  # the last whole second `now_iso` formatted


def now_iso() -> str:
    """`datetime.now(timezone.utc).isoformat()`, the same text (microseconds floored, none
    shown when zero), with the date and time of day formatted once per second: 0.7 vs 3.5 µs
    measured, paid by every checkpoint."""
    global _ISO_SECOND
    second, micro = divmod(time.time_ns() // 1000, 1_000_000)
    cached = _ISO_SECOND
    if cached[0] != second:  # threads racing here each store a correct value
        text = datetime.fromtimestamp(second, timezone.utc).isoformat()[:19]
        cached = _ISO_SECOND = (second, text)
    return f"{cached[1]}.{micro:06d}+00:00" if micro else f"{cached[1]}+00:00"


def empty_checkpoint() -> Checkpoint:
    return Checkpoint(
        v=1,
        id=new_checkpoint_id(),
        ts=now_iso(),
        channel_values={},
        channel_versions={},
        versions_seen={},
        updated_channels=None,
    )


def get_checkpoint_id(config: dict[str, Any]) -> str | None:
    return config.get("configurable", {}).get("checkpoint_id")


def thread_config(
    thread_id: str, checkpoint_ns: str = "", checkpoint_id: str | None = None
) -> dict[str, Any]:
    conf: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns}
    if checkpoint_id is not None:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


class BaseCheckpointSaver:
    """The saver protocol. Back ends override the sync or the async methods (or both).

    The default async methods call the sync ones and vice versa is not provided: a sync facade
    over an async-only back end must supply its own sync methods (see `SqliteSaver`).

    `put` receives the whole checkpoint (every channel's live value in `channel_values`) and
    `new_versions`: the channels whose version changed since the parent checkpoint. A back end
    serializes and stores only those values, keyed by (channel, version), and reassembles the
    rest from older blobs on read, so a long thread does not rewrite its whole state each step.
    Values must be copied (serialized) on `put`: the engine may mutate nothing it handed over,
    but user code may.
    """

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        raise NotImplementedError

    def list(
        self,
        config: dict[str, Any] | None,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        raise NotImplementedError

    def put(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        raise NotImplementedError

    def put_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        raise NotImplementedError

    def delete_thread(self, thread_id: str) -> None:
        raise NotImplementedError

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        raise NotImplementedError

    def delete_checkpoints(self, thread_id: str, checkpoint_ids: Sequence[str]) -> None:
        """Delete these checkpoints (every namespace) and their pending writes: a server
        rolling back a cancelled run removes what that run wrote."""
        raise NotImplementedError

    def prune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: Literal["keep_latest", "delete"] = "keep_latest",
        keep_last: int = 1,
        older_than_seconds: float | None = None,
    ) -> None:
        raise NotImplementedError

    # async forms: default to the sync implementation (fine for in-memory back ends)
    async def aget_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        return self.get_tuple(config)

    async def alist(
        self,
        config: dict[str, Any] | None,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        for item in self.list(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        self.delete_thread(thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self.copy_thread(source_thread_id, target_thread_id)

    async def adelete_checkpoints(self, thread_id: str, checkpoint_ids: Sequence[str]) -> None:
        self.delete_checkpoints(thread_id, checkpoint_ids)

    async def aprune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: Literal["keep_latest", "delete"] = "keep_latest",
        keep_last: int = 1,
        older_than_seconds: float | None = None,
    ) -> None:
        self.prune(
            thread_ids, strategy=strategy, keep_last=keep_last, older_than_seconds=older_than_seconds
        )

    def get_delta_channel_history(
        self, *, config: dict[str, Any], channels: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        """Per channel, its pending writes in the ancestors of `config`'s checkpoint since the
        nearest one storing a value (`seed`); LangGraph 1.2's saver API (issue 27)."""
        from ._channel_history import ChannelWalk

        walk = ChannelWalk(channels)
        saved = self.get_tuple(config) if channels else None
        cursor = saved.parent_config if saved is not None else None
        while cursor is not None and (saved := self.get_tuple(cursor)) is not None:
            cursor = walk.visit(saved)
        return walk.result()

    async def aget_delta_channel_history(
        self, *, config: dict[str, Any], channels: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        """Async `get_delta_channel_history`."""
        from ._channel_history import ChannelWalk

        walk = ChannelWalk(channels)
        saved = await self.aget_tuple(config) if channels else None
        cursor = saved.parent_config if saved is not None else None
        while cursor is not None and (saved := await self.aget_tuple(cursor)) is not None:
            cursor = walk.visit(saved)
        return walk.result()

    def get_next_version(self, current: int | None, channel: str | None = None) -> int:
        """Channel versions are plain increasing integers."""
        return 1 if current is None else current + 1

    async def aclose(self) -> None:
        """Release resources (connections, background writers). Idempotent."""

    def close(self) -> None:
        """Release resources (connections, background writers). Idempotent."""
