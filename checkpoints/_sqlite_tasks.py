"""Maintenance changes (delete, copy, prune) that run inside the writer's transaction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import aiosqlite

from ._common import by_namespace, checkpoints_to_drop, kept_versions, thread_is_idle
from ._deltas import closure
from .base import Checkpoint
from .serde import Serializer

__all__ = ["copy_thread", "delete_checkpoints", "delete_thread", "prune"]

_TABLES = ("checkpoints", "blobs", "writes")
_COLUMNS = {
    "checkpoints": "checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata",
    "blobs": "checkpoint_ns, channel, version, value",
    "writes": "checkpoint_ns, checkpoint_id, task_id, idx, channel, value, task_path",
}


async def delete_thread(conn: aiosqlite.Connection, thread_id: str) -> None:
    for table in _TABLES:
        await conn.execute(f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,))


async def delete_checkpoints(
    conn: aiosqlite.Connection, thread_id: str, checkpoint_ids: Sequence[str]
) -> None:
    """These checkpoints and their writes, in every namespace; blobs go with the next prune."""
    keys = [(thread_id, cid) for cid in checkpoint_ids]
    for table in ("checkpoints", "writes"):
        await conn.executemany(
            f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_id = ?", keys
        )


async def copy_thread(conn: aiosqlite.Connection, source: str, target: str) -> None:
    """Copy every namespace; writes keep their order (ORDER BY rowid) in the target."""
    for table in _TABLES:
        columns = _COLUMNS[table]
        await conn.execute(
            f"INSERT OR REPLACE INTO {table} (thread_id, {columns}) "
            f"SELECT ?, {columns} FROM {table} WHERE thread_id = ? ORDER BY rowid",
            (target, source),
        )


async def prune(
    conn: aiosqlite.Connection,
    serde: Serializer,
    thread_ids: Sequence[str],
    strategy: Literal["keep_latest", "delete"],
    keep_last: int,
    cutoff: float | None,
) -> None:
    """See `SqliteSaver.prune`; the rules live in `_common` so both back ends agree."""
    if not conn.in_transaction:  # read under the write lock, so what we delete is current
        await conn.execute("BEGIN IMMEDIATE")
    for thread_id in thread_ids:
        rows = await conn.execute_fetchall(
            "SELECT checkpoint_ns, checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = ?",
            (thread_id,),
        )
        namespaces = by_namespace(serde, rows)
        if strategy == "delete":
            if thread_is_idle(namespaces, cutoff):
                await delete_thread(conn, thread_id)
            continue
        for ns, checkpoints in namespaces.items():
            await _prune_namespace(conn, thread_id, ns, checkpoints, keep_last, cutoff)


async def _prune_namespace(
    conn: aiosqlite.Connection,
    thread_id: str,
    ns: str,
    checkpoints: dict[str, Checkpoint],
    keep_last: int,
    cutoff: float | None,
) -> None:
    drop = checkpoints_to_drop(checkpoints, keep_last, cutoff)
    if not drop:
        return
    keys = [(thread_id, ns, cid) for cid in drop]
    for table in ("checkpoints", "writes"):
        await conn.executemany(
            f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            keys,
        )
    referenced = kept_versions(checkpoints, drop)
    # Deltas (blobs starting 0xC1) keep the versions they build on.
    deltas = {
        (ch, v): value
        for ch, v, value in await conn.execute_fetchall(
            "SELECT channel, version, value FROM blobs WHERE thread_id = ? AND checkpoint_ns = ? "
            "AND substr(value, 1, 1) = x'c1'",
            (thread_id, ns),
        )
    }
    closure(referenced, lambda ch, v: deltas.get((ch, v)))
    stored = await conn.execute_fetchall(
        "SELECT channel, version FROM blobs WHERE thread_id = ? AND checkpoint_ns = ?",
        (thread_id, ns),
    )
    await conn.executemany(
        "DELETE FROM blobs WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? "
        "AND version = ?",
        [(thread_id, ns, ch, v) for ch, v in stored if (ch, v) not in referenced],
    )
