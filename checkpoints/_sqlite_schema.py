"""The SQLite checkpoint schema and its migrations.

The saver's tables are the ``"checkpoints"`` component of the file's shared schema table (see
`_schema_versions`), so checkpoints, the store and the server's records can share one file. A
release that changes the schema appends a migration to `MIGRATIONS`; opening an older file
applies the missing ones in order, in one transaction, so an upgrade either happens completely
or not at all.
"""

from __future__ import annotations

import aiosqlite

from ._schema_versions import AsyncMigration, SchemaError, amigrate

__all__ = ["COMPONENT", "MIGRATIONS", "SchemaError", "migrate"]

COMPONENT = "checkpoints"

# Checkpoints without their values, values per (channel, version), pending writes.
# `checkpoint` is the msgpack checkpoint minus channel_values; a NULL blob value marks a channel
# emptied at that version. `writes` keeps its rowid: pending writes are returned in the order they
# were first saved (an upsert of a special channel keeps its place).
_V1_TABLES = (
    """CREATE TABLE checkpoints (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        parent_checkpoint_id TEXT,
        checkpoint BLOB NOT NULL,
        metadata BLOB NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id))""",
    """CREATE TABLE blobs (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL,
        channel TEXT NOT NULL,
        version NOT NULL,
        value BLOB,
        PRIMARY KEY (thread_id, checkpoint_ns, channel, version))""",
    """CREATE TABLE writes (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        channel TEXT NOT NULL,
        value BLOB NOT NULL,
        task_path TEXT NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx))""",
)



async def _v2_append_deltas(conn: aiosqlite.Connection) -> None:
    """Version 2 changes no table: from here a blob may be an append delta (`_deltas`), which
    a version-1 reader would misread, so the bump makes older releases refuse the file."""


async def _v3_shared_items(conn: aiosqlite.Connection) -> None:
    """Version 3 changes no table: from here a delta may name another channel's value as its
    new items, and a task's list write may refer to a channel of its checkpoint (`_deltas`),
    which a version-2 reader would misread."""


async def _v4_chained_deltas(conn: aiosqlite.Connection) -> None:
    """Version 4 (issue 32) changes no table: from here a delta may name only its direct base
    (`_deltas`: chains without a cap), which a version-3 reader would misread. Files of
    earlier versions read as before."""


# Append only: index i upgrades the component from version i to i + 1.
MIGRATIONS: list[AsyncMigration] = [
    _V1_TABLES, _v2_append_deltas, _v3_shared_items, _v4_chained_deltas,
]


async def migrate(conn: aiosqlite.Connection) -> int:
    """Bring the saver's tables up to the latest schema; returns the version they had before."""
    # IMMEDIATE takes the write lock before reading the version, so two processes opening a
    # fresh file cannot both run the same migration.
    await conn.execute("BEGIN IMMEDIATE")
    try:
        # Before the shared table the saver counted its migrations in user_version (legacy).
        found = await amigrate(conn, COMPONENT, MIGRATIONS, legacy_table="checkpoints")
        await conn.execute("COMMIT")
    except BaseException:
        await conn.execute("ROLLBACK")
        raise
    return found
