"""graphrun's saver and store offered to LangGraph's runtime (issue 28 item 1).

A graph built with the real `langgraph` package runs on LangGraph's own runtime; its threads,
history, forks and store items still live in the server's storage (SQLite, or PostgreSQL), so
thread copy, TTL, rollback and every other server feature see them as they see graphrun's. These
classes are LangGraph's `BaseCheckpointSaver` / `BaseStore` subclasses that forward to ours: the
shapes already agree (SPEC §2), only LangGraph's own classes are translated on the way (its
`Send`, which our serializer does not know, and its store ops and items).

`langgraph` is the project's dependency, not graphrun's: it is imported when the first LangGraph
graph is served (`saver_for`, `store_for`), never by `import http_adapter`.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from checkpoints.store import base as ours

__all__ = ["SavedSend", "saver_for", "store_for"]

_TASKS = "__pregel_tasks"  # LangGraph's channel of pending `Send`s (kept in checkpoints)
_ERROR = "__error__"  # a failed task's write: its exception, which our serializer does not keep
# run metadata the Agent Server's saver keeps in checkpoints and LangGraph's helper drops
_SERVER_KEYS = ("thread_id", "checkpoint_id")


@dataclasses.dataclass(slots=True)
class SavedSend:
    """A LangGraph `Send` as our serializer stores it (a dataclass, named by import path)."""

    node: str
    arg: Any
    timeout: Any = None


def _send_class() -> type:
    from langgraph.types import Send

    return Send


def _to_saved(value: Any) -> Any:
    send = _send_class()
    if isinstance(value, send):
        return SavedSend(value.node, value.arg, getattr(value, "timeout", None))
    if isinstance(value, list):
        return [_to_saved(v) for v in value]
    return value


def _from_saved(value: Any) -> Any:
    if isinstance(value, SavedSend):
        send = _send_class()
        return send(value.node, value.arg) if value.timeout is None else send(
            value.node, value.arg, timeout=value.timeout)
    if isinstance(value, list):
        return [_from_saved(v) for v in value]
    return value


def _checkpoint_out(checkpoint: Any) -> Any:
    values = checkpoint.get("channel_values") or {}
    if _TASKS not in values:
        return checkpoint
    return {**checkpoint, "channel_values": {**values, _TASKS: _to_saved(values[_TASKS])}}


def _checkpoint_in(checkpoint: Any) -> Any:
    values = checkpoint.get("channel_values") or {}
    if _TASKS not in values:
        return checkpoint
    return {**checkpoint, "channel_values": {**values, _TASKS: _from_saved(values[_TASKS])}}


def _write_out(channel: str, value: Any) -> Any:
    if channel == _TASKS:
        return _to_saved(value)
    if channel == _ERROR and isinstance(value, BaseException):
        return repr(value)  # as graphrun's engine stores a task's error (what state shows)
    return value


def _writes_out(writes: Sequence[tuple[str, Any]]) -> list[tuple[str, Any]]:
    return [(c, _write_out(c, v)) for c, v in writes]


@functools.cache
def _saver_class() -> type:
    from langgraph.checkpoint.base import (
        BaseCheckpointSaver, CheckpointTuple, get_checkpoint_metadata,
    )

    def _metadata(config: Any, metadata: Any) -> Any:
        """As LangGraph's savers: the run's metadata and scalar configurable keys join the
        checkpoint's (the server finds a run's checkpoints by `run_id`); and, as the Agent
        Server's saver, the run's `thread_id` and `checkpoint_id` (LangGraph drops them)."""
        merged = get_checkpoint_metadata(config, metadata)
        given = config.get("metadata") or {}
        for key in _SERVER_KEYS:
            if given.get(key) is not None and key not in merged:
                merged[key] = given[key]
        return merged

    def tuple_in(saved: Any) -> Any:
        if saved is None:
            return None
        writes = saved.pending_writes
        if writes:
            writes = [(t, c, _from_saved(v) if c == _TASKS else v) for t, c, v in writes]
        return CheckpointTuple(saved.config, _checkpoint_in(saved.checkpoint), saved.metadata,
                               saved.parent_config, writes)

    class GraphrunSaver(BaseCheckpointSaver):  # type: ignore[misc]
        """LangGraph's saver interface over one of graphrun's savers (`inner`)."""

        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def get_next_version(self, current: Any, channel: Any = None) -> Any:
            """A version no other branch of the thread has, as LangGraph's own savers make
            them: LangGraph forks reuse the parent's counters, and a blob is stored under
            (channel, version), so plain integers of two branches would overwrite each other."""
            number = 0 if current is None else int(str(current).split(".")[0])
            return f"{number + 1:032}.{random.random():016}"

        def get_tuple(self, config: Any) -> Any:
            return tuple_in(self.inner.get_tuple(config))

        async def aget_tuple(self, config: Any) -> Any:
            return tuple_in(await self.inner.aget_tuple(config))

        def list(self, config: Any, *, filter: Any = None, before: Any = None,
                 limit: Any = None) -> Iterator[Any]:
            for saved in self.inner.list(config, filter=filter, before=before, limit=limit):
                yield tuple_in(saved)

        async def alist(self, config: Any, *, filter: Any = None, before: Any = None,
                        limit: Any = None) -> AsyncIterator[Any]:
            async for saved in self.inner.alist(config, filter=filter, before=before,
                                                limit=limit):
                yield tuple_in(saved)

        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            metadata = _metadata(config, metadata)
            return self.inner.put(config, _checkpoint_out(checkpoint), metadata, new_versions)

        async def aput(self, config: Any, checkpoint: Any, metadata: Any,
                       new_versions: Any) -> Any:
            metadata = _metadata(config, metadata)
            return await self.inner.aput(config, _checkpoint_out(checkpoint), metadata,
                                         new_versions)

        def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
            self.inner.put_writes(config, _writes_out(writes), task_id, task_path)

        async def aput_writes(self, config: Any, writes: Any, task_id: str,
                              task_path: str = "") -> None:
            await self.inner.aput_writes(config, _writes_out(writes), task_id, task_path)

        def delete_thread(self, thread_id: str) -> None:
            self.inner.delete_thread(thread_id)

        async def adelete_thread(self, thread_id: str) -> None:
            await self.inner.adelete_thread(thread_id)

        def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
            self.inner.copy_thread(source_thread_id, target_thread_id)

        async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
            await self.inner.acopy_thread(source_thread_id, target_thread_id)

    return GraphrunSaver


def saver_for(inner: Any) -> Any:
    """`inner` (a graphrun saver, or None) as a LangGraph `BaseCheckpointSaver`."""
    return None if inner is None else _saver_class()(inner)


# -- the store ---------------------------------------------------------------------------------


def _op_out(op: Any) -> Any:
    """A LangGraph store op as ours (the same NamedTuple fields, by class name)."""
    kind = type(op).__name__
    if kind == "ListNamespacesOp" and op.match_conditions:
        conditions = tuple(ours.MatchCondition(c.match_type, tuple(c.path))
                           for c in op.match_conditions)
        return ours.ListNamespacesOp(conditions, op.max_depth, op.limit, op.offset)
    return getattr(ours, kind)(*op)


@functools.cache
def _store_class() -> type:
    from langgraph.store.base import BaseStore, Item, SearchItem

    def item_in(found: Any) -> Any:
        if isinstance(found, ours.SearchItem):
            return SearchItem(found.namespace, found.key, found.value, found.created_at,
                              found.updated_at, found.score)
        if isinstance(found, ours.Item):
            return Item(value=found.value, key=found.key, namespace=found.namespace,
                        created_at=found.created_at, updated_at=found.updated_at)
        if isinstance(found, list):
            return [item_in(f) for f in found]
        return found

    class GraphrunStore(BaseStore):  # type: ignore[misc]
        """LangGraph's store interface over the server's store (`inner`)."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def batch(self, ops: Any) -> list[Any]:
            return [item_in(r) for r in self.inner.batch([_op_out(op) for op in ops])]

        async def abatch(self, ops: Any) -> list[Any]:
            found = await self.inner.abatch([_op_out(op) for op in ops])
            return [item_in(r) for r in found]

    return GraphrunStore


def store_for(inner: Any) -> Any:
    """`inner` (the server's store, or None) as a LangGraph `BaseStore`."""
    return None if inner is None else _store_class()(inner)
