"""An in-process checkpoint saver, for tests and short-lived runs.

Everything is stored serialized, exactly as a database would hold it: a stored checkpoint is a
copy, so user code mutating its state later cannot rewrite history, and a value that would not
survive a real back end fails here too. One lock guards the maps because sync runs call the saver
from worker threads.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any, Literal, NamedTuple

from ._common import (
    checkpoints_to_drop,
    damaged,
    kept_versions,
    matches_filter,
    prune_cutoff,
    serialize_put,
    serialize_writes,
    skipped,
    thread_is_idle,
)
from ._deltas import MISSING, Lineage, Stored, closure, load_write, resolve
from .base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DamagedCheckpointError,
    get_checkpoint_id,
    thread_config,
)
from .serde import Serializer, default_serializer

__all__ = ["InMemorySaver", "MemorySaver"]


class _Raw(tuple):  # type: ignore[type-arg]
    """An immutable scalar kept as is (its only item): it needs no defensive copy, so no
    serialization. A tuple subclass so it is built in C (a class with __init__ cost a frame per
    scalar stored)."""

    __slots__ = ()


_IMMUTABLE = frozenset({type(None), bool, int, float, str, bytes})


class _Codec:
    """The saver's serializer, except that immutable scalars are stored without encoding."""

    __slots__ = ("dumps", "serde")

    def __init__(self, serde: Serializer) -> None:
        self.serde = serde
        dumps = serde.dumps
        # A closure over the bound method, set per instance: one attribute lookup less per value.
        self.dumps = lambda value: _Raw((value,)) if type(value) in _IMMUTABLE else dumps(value)

    def loads(self, blob: Any) -> Any:
        return blob[0] if type(blob) is _Raw else self.serde.loads(blob)


class _Saved(NamedTuple):
    checkpoint: bytes  # the checkpoint without channel_values
    metadata: bytes
    parent_id: str | None


_new_saved = tuple.__new__  # builds a `_Saved` in C (its generated __new__ is a frame)
_Tuples = list[CheckpointTuple]  # spelled outside the class, where `list` is a method
# (task_id, idx) -> (task_id, channel, value, task_path)
_Writes = dict[tuple[str, int], tuple[str, str, bytes, str]]
_BlobKey = tuple[str, str, str, int]  # thread_id, checkpoint_ns, channel, version


class InMemorySaver(BaseCheckpointSaver):
    """Checkpoints in dictionaries; behaves like LangGraph's `InMemorySaver`."""

    def __init__(self, *, serde: Serializer | None = None, full_values: bool = False) -> None:
        """`full_values=True` stores every value whole: no append deltas, no references
        (slower on long lists; the fuzz tests use it as the oracle of the shortcuts)."""
        self.serde = serde or default_serializer
        self.full_values = full_values
        self._codec = _Codec(self.serde)
        # thread_id -> checkpoint_ns -> checkpoint_id -> saved
        self.storage: dict[str, dict[str, dict[str, _Saved]]] = {}
        self.blobs: dict[_BlobKey, bytes | None] = {}  # None: the channel was emptied
        self.writes: dict[tuple[str, str, str], _Writes] = {}  # (thread, ns, checkpoint_id)
        self._lock = threading.RLock()
        self._lineage = Lineage()  # lets a list that only grew be stored as its new items

    def __enter__(self) -> InMemorySaver:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> InMemorySaver:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # --- reads --------------------------------------------------------------------------------

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """The checkpoint named by ``checkpoint_id``, or the thread's latest in the namespace."""
        conf = config["configurable"]
        thread_id, ns = conf["thread_id"], conf.get("checkpoint_ns", "")
        with self._lock:
            saved = self.storage.get(thread_id, {}).get(ns)
            if not saved:
                return None
            checkpoint_id = get_checkpoint_id(config) or max(saved)
            if checkpoint_id not in saved:
                return None
            stored = None if self.full_values else self._lineage.channels(thread_id, ns)
            return self._tuple(thread_id, ns, checkpoint_id, saved[checkpoint_id], stored)

    def list(
        self,
        config: dict[str, Any] | None,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Newest first (by checkpoint id); all threads when `config` is None and all namespaces
        of the thread when it names none, as LangGraph's savers do."""
        with self._lock:
            found = self._search(config, filter, before, limit)
        yield from found

    def _search(
        self,
        config: dict[str, Any] | None,
        filter: dict[str, Any] | None,
        before: dict[str, Any] | None,
        limit: int | None,
    ) -> _Tuples:
        conf = config["configurable"] if config else {}
        wanted_ns = conf.get("checkpoint_ns")
        wanted_id = conf.get("checkpoint_id")
        before_id = get_checkpoint_id(before) if before else None
        thread_ids = [conf["thread_id"]] if config else list(self.storage)
        keys = [
            (cid, thread_id, ns)
            for thread_id in thread_ids
            for ns, saved in self.storage.get(thread_id, {}).items()
            if wanted_ns is None or ns == wanted_ns
            for cid in saved
            if (not wanted_id or cid == wanted_id) and (not before_id or cid < before_id)
        ]
        found: _Tuples = []
        memos: dict[tuple[str, str], dict[Any, list[Any]]] = {}  # lists rebuilt, per thread
        for cid, thread_id, ns in sorted(keys, reverse=True):
            if limit is not None and len(found) >= limit:
                break
            try:
                memo = memos.setdefault((thread_id, ns), {})
                item = self._tuple(thread_id, ns, cid, self.storage[thread_id][ns][cid], memo=memo)
            except DamagedCheckpointError as error:
                skipped(error)
                continue
            if matches_filter(item.metadata, filter):
                found.append(item)
        return found

    def _tuple(
        self,
        thread_id: str,
        ns: str,
        checkpoint_id: str,
        saved: _Saved,
        stored: Stored | None = None,
        memo: dict[Any, list[Any]] | None = None,
    ) -> CheckpointTuple:
        """The stored checkpoint decoded; `DamagedCheckpointError` if its record cannot be.
        `stored`: what the saver remembers of the thread; its lists are handed back if they
        are this checkpoint's, else this checkpoint's are remembered (issue 32)."""
        try:
            return self._decode(thread_id, ns, checkpoint_id, saved, stored, memo)
        except Exception as error:
            raise damaged(thread_id, ns, checkpoint_id, error) from error

    def _decode(
        self,
        thread_id: str,
        ns: str,
        checkpoint_id: str,
        saved: _Saved,
        stored: Stored | None,
        memo: dict[Any, list[Any]] | None,
    ) -> CheckpointTuple:
        loads = self._codec.loads
        checkpoint = loads(saved.checkpoint)
        versions = checkpoint["channel_versions"]
        held = stored.held(checkpoint_id) if stored is not None else None
        values = checkpoint["channel_values"] = self._load_blobs(
            thread_id, ns, versions, held, memo
        )
        if stored is not None and held is None:
            stored.remember_read(checkpoint_id, versions, values)
        writes = self.writes.get((thread_id, ns, checkpoint_id), {})
        return CheckpointTuple(
            config=thread_config(thread_id, ns, checkpoint_id),
            checkpoint=checkpoint,
            metadata=loads(saved.metadata),
            parent_config=(
                thread_config(thread_id, ns, saved.parent_id) if saved.parent_id else None
            ),
            pending_writes=[
                (task, ch, load_write(value, values, loads))
                for task, ch, value, _ in writes.values()
            ],
        )

    def _load_blobs(
        self,
        thread_id: str,
        ns: str,
        versions: ChannelVersions,
        held: dict[str, Any] | None = None,
        memo: dict[Any, list[Any]] | None = None,
    ) -> dict[str, Any]:
        blobs = self.blobs
        return resolve(
            versions.items(),
            lambda ch, v: blobs.get((thread_id, ns, ch, v), MISSING),
            self._codec.loads,
            held,
            memo,
        )

    # --- writes -------------------------------------------------------------------------------

    def put(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        """Store the checkpoint and the values of the channels in `new_versions` only."""
        conf = config["configurable"]
        thread_id, ns = conf["thread_id"], conf.get("checkpoint_ns", "")
        parent_id = conf.get("checkpoint_id")
        lineage = None if self.full_values else self._lineage.channels(thread_id, ns)
        data = serialize_put(self._codec, checkpoint, metadata, new_versions, lineage, parent_id)
        saved = _new_saved(_Saved, (data.checkpoint, data.metadata, parent_id))
        with self._lock:
            if lineage is not None and lineage.dead:  # deleted, pruned or copied meanwhile
                data = serialize_put(self._codec, checkpoint, metadata, new_versions)
            for ch, v, blob in data.blobs:
                self.blobs[(thread_id, ns, ch, v)] = blob
            self.storage.setdefault(thread_id, {}).setdefault(ns, {})[checkpoint["id"]] = saved
        return thread_config(thread_id, ns, checkpoint["id"])

    def put_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Record a task's writes. Special channels (errors, interrupts ...) replace an earlier
        write; regular ones keep the first, so a retried save is idempotent."""
        conf = config["configurable"]
        key = (conf["thread_id"], conf.get("checkpoint_ns", ""), conf["checkpoint_id"])
        lineage = None if self.full_values else self._lineage.peek(key[0], key[1])
        rows = serialize_writes(self._codec, writes, lineage, key[2])
        with self._lock:
            stored = self.writes.get(key)
            if stored is None:
                stored = self.writes[key] = {}
            for idx, ch, value in rows:
                if idx < 0 or (task_id, idx) not in stored:
                    stored[(task_id, idx)] = (task_id, ch, value, task_path)

    # The hand-over API of `SqliteSaver`, so the engine drives both back ends the same way. A
    # dictionary update is as fast as handing over, so these just store at once.

    def put_nowait(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        """Same as `put` (see `SqliteSaver.put_nowait`)."""
        return self.put(config, checkpoint, metadata, new_versions)

    def put_writes_nowait(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Same as `put_writes` (see `SqliteSaver.put_writes_nowait`)."""
        self.put_writes(config, writes, task_id, task_path)

    def flush(self) -> None:
        """Nothing is ever pending here."""

    async def aflush(self) -> None:
        """Nothing is ever pending here."""

    def delete_thread(self, thread_id: str) -> None:
        """Forget every checkpoint, blob and write of the thread."""
        with self._lock:
            self._lineage.forget(thread_id)
            self.storage.pop(thread_id, None)
            self.blobs = {k: v for k, v in self.blobs.items() if k[0] != thread_id}
            self.writes = {k: v for k, v in self.writes.items() if k[0] != thread_id}

    def delete_checkpoints(self, thread_id: str, checkpoint_ids: Sequence[str]) -> None:
        """Drop these checkpoints and their writes; blobs go with the next prune."""
        drop = set(checkpoint_ids)
        with self._lock:
            self._lineage.forget(thread_id)
            for saved in self.storage.get(thread_id, {}).values():
                for cid in drop & saved.keys():
                    del saved[cid]
            self.writes = {
                k: v for k, v in self.writes.items() if not (k[0] == thread_id and k[2] in drop)
            }

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy all namespaces, checkpoints, blobs and writes (stored bytes are immutable)."""
        with self._lock:
            self._lineage.forget(target_thread_id)
            source = self.storage.get(source_thread_id, {})
            target = self.storage.setdefault(target_thread_id, {})
            for ns, saved in source.items():
                target.setdefault(ns, {}).update(saved)
            for (t, ns, ch, v), blob in list(self.blobs.items()):
                if t == source_thread_id:
                    self.blobs[(target_thread_id, ns, ch, v)] = blob
            for (t, ns, cid), writes in list(self.writes.items()):
                if t == source_thread_id:
                    self.writes[(target_thread_id, ns, cid)] = dict(writes)

    def prune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: Literal["keep_latest", "delete"] = "keep_latest",
        keep_last: int = 1,
        older_than_seconds: float | None = None,
    ) -> None:
        """Drop old checkpoints with their unreferenced blobs and writes.

        "keep_latest": per namespace keep the newest `keep_last` checkpoints, and with
        `older_than_seconds` also any checkpoint younger than that. "delete": delete the threads
        (with `older_than_seconds`, only those whose newest checkpoint is older than that).
        """
        cutoff = prune_cutoff(older_than_seconds)
        with self._lock:
            for thread_id in thread_ids:
                self._lineage.forget(thread_id)
                namespaces = self.storage.get(thread_id, {})
                checkpoints = {
                    ns: {cid: self.serde.loads(s.checkpoint) for cid, s in saved.items()}
                    for ns, saved in namespaces.items()
                }
                if strategy == "delete":
                    if thread_is_idle(checkpoints, cutoff):
                        self.delete_thread(thread_id)
                    continue
                for ns, cps in checkpoints.items():
                    self._prune_namespace(thread_id, ns, cps, keep_last, cutoff)

    def _prune_namespace(
        self,
        thread_id: str,
        ns: str,
        checkpoints: dict[str, Checkpoint],
        keep_last: int,
        cutoff: float | None,
    ) -> None:
        saved = self.storage[thread_id][ns]
        drop = checkpoints_to_drop(checkpoints, keep_last, cutoff)
        if not drop:
            return
        for cid in drop:
            del saved[cid]
            self.writes.pop((thread_id, ns, cid), None)
        referenced = kept_versions(checkpoints, drop)
        closure(referenced, lambda ch, v: self.blobs.get((thread_id, ns, ch, v)))
        for key in [k for k in self.blobs if k[:2] == (thread_id, ns) and k[2:] not in referenced]:
            del self.blobs[key]


MemorySaver = InMemorySaver
