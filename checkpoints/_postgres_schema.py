"""Versioned PostgreSQL migrations, applied once however many processes start together.

Like the SQLite file (`_schema_versions`), one database holds several components (the saver's
tables, the store's, later the server's records), each versioned in a row of a shared table::

    CREATE TABLE graphrun_schema (component text PRIMARY KEY, version integer NOT NULL)

A component's version is the number of its migrations applied; migrations are append-only SQL
statement lists. `migrate` runs in one transaction under a transaction-scoped advisory lock, so
five processes opening an empty database together migrate it once (issue 19 §9): the others wait
for the lock, then read the version the first one wrote and have nothing left to do. A database
whose version is above what the code knows (written by a newer release) is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import asyncpg

from ._schema_versions import SchemaError, refuse_newer

__all__ = ["LOCK_KEY", "MIN_SERVER", "SAVER_COMPONENT", "SAVER_MIGRATIONS", "connect_options", "migrate"]

# pg_advisory_xact_lock key shared by every graphrun migration ("graphrun" as 8 ASCII bytes).
LOCK_KEY = int.from_bytes(b"graphrun", "big") & 0x7FFF_FFFF_FFFF_FFFF

_TABLE = "graphrun_schema"
MIN_SERVER = 14  # issue 19; the SQL itself needs 10 (identity columns), tests run on 15

SAVER_COMPONENT = "checkpoints"

# The saver's tables mirror the SQLite ones (`_sqlite_schema`): a checkpoint row without its
# values, one blob per (channel, version) with NULL for an emptied channel, pending writes in the
# order first saved (`seq`: an upsert of a special channel keeps its place). Versions are text,
# so integer and LangGraph-style string versions both fit. Ids compare bytewise (COLLATE "C"),
# as in SQLite, whatever the database's locale: "newest first" is the order of checkpoint ids.
# Append only.
SAVER_MIGRATIONS: list[Sequence[str]] = [
    (
        """CREATE TABLE checkpoints (
            thread_id text COLLATE "C" NOT NULL,
            checkpoint_ns text COLLATE "C" NOT NULL,
            checkpoint_id text COLLATE "C" NOT NULL,
            parent_checkpoint_id text,
            checkpoint bytea NOT NULL,
            metadata bytea NOT NULL,
            PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id))""",
        """CREATE TABLE checkpoint_blobs (
            thread_id text COLLATE "C" NOT NULL,
            checkpoint_ns text COLLATE "C" NOT NULL,
            channel text NOT NULL,
            version text NOT NULL,
            value bytea,
            PRIMARY KEY (thread_id, checkpoint_ns, channel, version))""",
        """CREATE TABLE checkpoint_writes (
            thread_id text COLLATE "C" NOT NULL,
            checkpoint_ns text COLLATE "C" NOT NULL,
            checkpoint_id text COLLATE "C" NOT NULL,
            task_id text NOT NULL,
            idx integer NOT NULL,
            channel text NOT NULL,
            value bytea NOT NULL,
            task_path text NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx))""",
    ),
    # Version 2 (issue 32) changes no table: from here a blob may be a delta naming only its
    # direct base (`_deltas`), which a version-1 reader would misread: the bump makes older
    # releases refuse the database.
    (),
]


def connect_options(prepared_statements: bool) -> dict[str, Any]:
    """asyncpg connect options. Without prepared statements (statement_cache_size=0) asyncpg
    prepares only unnamed ones, which PgBouncer in transaction mode passes through."""
    return {} if prepared_statements else {"statement_cache_size": 0}


async def migrate(
    conn: asyncpg.Connection, component: str, migrations: Sequence[Sequence[str]]
) -> int:
    """Bring `component` up to ``len(migrations)``; returns the version found before."""
    server = conn.get_server_version()
    if server.major < MIN_SERVER:
        raise SchemaError(
            f"graphrun needs PostgreSQL {MIN_SERVER} or newer; the server runs "
            f"{server.major}.{server.minor}"
        )
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", LOCK_KEY)
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS {_TABLE} "
            "(component text PRIMARY KEY, version integer NOT NULL)"
        )
        found = await conn.fetchval(
            f"SELECT version FROM {_TABLE} WHERE component = $1", component
        )
        found = 0 if found is None else int(found)
        known = len(migrations)
        refuse_newer(found, known, component, "the database")
        for step in migrations[found:]:
            for sql in step:
                await conn.execute(sql)
        if found < known:
            await conn.execute(
                f"INSERT INTO {_TABLE} (component, version) VALUES ($1, $2) "
                "ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                component,
                known,
            )
    return found
