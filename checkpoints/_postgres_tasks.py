"""Maintenance changes (delete, copy, prune) inside the PostgreSQL writer's transaction.

The same functions as `_sqlite_tasks`, in PostgreSQL's dialect; the pruning rules themselves
live in `_common` and `_deltas` so every back end agrees.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import asyncpg

from ._common import by_namespace, checkpoints_to_drop, kept_versions, thread_is_idle
from ._deltas import closure
from .base import Checkpoint
from .serde import Serializer

__all__ = ["copy_thread", "delete_checkpoints", "delete_thread", "prune"]

_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
_KEYS = {
    "checkpoints": "thread_id, checkpoint_ns, checkpoint_id",
    "checkpoint_blobs": "thread_id, checkpoint_ns, channel, version",
    "checkpoint_writes": "thread_id, checkpoint_ns, checkpoint_id, task_id, idx",
}
_VALUES = {
    "checkpoints": ("parent_checkpoint_id", "checkpoint", "metadata"),
    "checkpoint_blobs": ("value",),
    "checkpoint_writes": ("channel", "value", "task_path"),
}


async def delete_thread(conn: asyncpg.Connection, thread_id: str) -> None:
    for table in _TABLES:
        await conn.execute(f"DELETE FROM {table} WHERE thread_id = $1", thread_id)


async def delete_checkpoints(
    conn: asyncpg.Connection, thread_id: str, checkpoint_ids: Sequence[str]
) -> None:
    """These checkpoints and their writes, in every namespace; blobs go with the next prune."""
    for table in ("checkpoints", "checkpoint_writes"):
        await conn.execute(
            f"DELETE FROM {table} WHERE thread_id = $1 AND checkpoint_id = ANY($2::text[])",
            thread_id,
            list(checkpoint_ids),
        )


async def copy_thread(conn: asyncpg.Connection, source: str, target: str) -> None:
    """Copy every namespace, replacing what the target holds; writes keep their order."""
    for table in _TABLES:
        key_columns = _KEYS[table].split(", ")[1:]
        columns = ", ".join([*key_columns, *_VALUES[table]])
        updates = ", ".join(f"{c} = excluded.{c}" for c in _VALUES[table])
        order = " ORDER BY seq" if table == "checkpoint_writes" else ""
        await conn.execute(
            f"INSERT INTO {table} (thread_id, {columns}) "
            f"SELECT $1, {columns} FROM {table} WHERE thread_id = $2{order} "
            f"ON CONFLICT ({_KEYS[table]}) DO UPDATE SET {updates}",
            target,
            source,
        )


async def prune(
    conn: asyncpg.Connection,
    serde: Serializer,
    thread_ids: Sequence[str],
    strategy: Literal["keep_latest", "delete"],
    keep_last: int,
    cutoff: float | None,
) -> None:
    """See `SqliteSaver.prune`."""
    for thread_id in thread_ids:
        rows = await conn.fetch(
            "SELECT checkpoint_ns, checkpoint_id, checkpoint FROM checkpoints "
            "WHERE thread_id = $1 FOR UPDATE",
            thread_id,
        )
        namespaces = by_namespace(serde, rows)
        if strategy == "delete":
            if thread_is_idle(namespaces, cutoff):
                await delete_thread(conn, thread_id)
            continue
        for ns, checkpoints in namespaces.items():
            await _prune_namespace(conn, thread_id, ns, checkpoints, keep_last, cutoff)


async def _prune_namespace(
    conn: asyncpg.Connection,
    thread_id: str,
    ns: str,
    checkpoints: dict[str, Checkpoint],
    keep_last: int,
    cutoff: float | None,
) -> None:
    drop = checkpoints_to_drop(checkpoints, keep_last, cutoff)
    if not drop:
        return
    for table in ("checkpoints", "checkpoint_writes"):
        await conn.execute(
            f"DELETE FROM {table} WHERE thread_id = $1 AND checkpoint_ns = $2 "
            "AND checkpoint_id = ANY($3::text[])",
            thread_id,
            ns,
            drop,
        )
    referenced = {(ch, str(v)) for ch, v in kept_versions(checkpoints, drop)}
    # Deltas (blobs starting 0xC1) keep the versions they build on.
    deltas = {
        (ch, v): value
        for ch, v, value in await conn.fetch(
            "SELECT channel, version, value FROM checkpoint_blobs WHERE thread_id = $1 "
            "AND checkpoint_ns = $2 AND substring(value from 1 for 1) = '\\xc1'::bytea",
            thread_id,
            ns,
        )
    }
    closure(referenced, lambda ch, v: deltas.get((ch, str(v))))
    referenced = {(ch, str(v)) for ch, v in referenced}
    await conn.execute(
        "DELETE FROM checkpoint_blobs b WHERE thread_id = $1 AND checkpoint_ns = $2 AND "
        "(channel, version) NOT IN (SELECT * FROM unnest($3::text[], $4::text[]))",
        thread_id,
        ns,
        [ch for ch, _ in referenced],
        [v for _, v in referenced],
    )
