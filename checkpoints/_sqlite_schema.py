"""The SQLite checkpoint schema and its migrations.

The file's ``PRAGMA user_version`` is the number of migrations applied. A release that changes
the schema appends a function to `MIGRATIONS`; opening an older file applies the missing ones in
order, in one transaction, so an upgrade either happens completely or not at all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import aiosqlite

__all__ = ["MIGRATIONS", "SchemaError", "migrate"]


class SchemaError(RuntimeError):
    """The file was written by a newer graphrun than this one."""


async def _v1_tables(conn: aiosqlite.Connection) -> None:
    """Checkpoints without their values, values per (channel, version), pending writes."""
    # `checkpoint` is the msgpack checkpoint minus channel_values; a NULL blob value marks a
    # channel emptied at that version. `writes` keeps its rowid: pending writes are returned in
    # the order they were first saved (an upsert of a special channel keeps its place).
    await conn.execute(
        """CREATE TABLE checkpoints (
            thread_id TEXT NOT NULL,
            checkpoint_ns TEXT NOT NULL,
            checkpoint_id TEXT NOT NULL,
            parent_checkpoint_id TEXT,
            checkpoint BLOB NOT NULL,
            metadata BLOB NOT NULL,
            PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id))"""
    )
    await conn.execute(
        """CREATE TABLE blobs (
            thread_id TEXT NOT NULL,
            checkpoint_ns TEXT NOT NULL,
            channel TEXT NOT NULL,
            version NOT NULL,
            value BLOB,
            PRIMARY KEY (thread_id, checkpoint_ns, channel, version))"""
    )
    await conn.execute(
        """CREATE TABLE writes (
            thread_id TEXT NOT NULL,
            checkpoint_ns TEXT NOT NULL,
            checkpoint_id TEXT NOT NULL,
            task_id TEXT NOT NULL,
            idx INTEGER NOT NULL,
            channel TEXT NOT NULL,
            value BLOB NOT NULL,
            task_path TEXT NOT NULL,
            PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx))"""
    )


Migration = Callable[[aiosqlite.Connection], Awaitable[None]]

# Append only: index i upgrades a file from user_version i to i + 1.
MIGRATIONS: list[Migration] = [_v1_tables]


async def migrate(conn: aiosqlite.Connection) -> int:
    """Bring the file up to the latest schema; returns the version it had before."""
    # IMMEDIATE takes the write lock before reading the version, so two processes opening a
    # fresh file cannot both run the same migration.
    await conn.execute("BEGIN IMMEDIATE")
    try:
        async with conn.execute("PRAGMA user_version") as cursor:
            row = await cursor.fetchone()
        found = row[0] if row else 0
        if found > len(MIGRATIONS):
            raise SchemaError(
                f"checkpoint file has schema version {found}; this graphrun knows up to "
                f"{len(MIGRATIONS)}"
            )
        for version, step in enumerate(MIGRATIONS[found:], start=found + 1):
            await step(conn)
            await conn.execute(f"PRAGMA user_version = {version}")
        await conn.execute("COMMIT")
    except BaseException:
        await conn.execute("ROLLBACK")
        raise
    return found
