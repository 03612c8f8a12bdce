"""Schema versions of the components that share one SQLite file.

The agent server keeps checkpoints, store items and its own records (assistants, threads, runs)
in one file (issue 3), so no component may own ``PRAGMA user_version``: each one versions its own
tables in a row of a shared table::

    CREATE TABLE graphrun_schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL)

A component's version is the number of its migrations applied. Components in use today:
``"checkpoints"`` (`SqliteSaver`) and ``"store"`` (`SqliteStore`).

Registering a component: pick a unique name, keep an append-only list of migrations (entry i
upgrades version i to i + 1; never edit or reorder a released entry), and call `migrate`
(stdlib ``sqlite3``) or `amigrate` (``aiosqlite``) when opening the file, inside a write
transaction you opened with ``BEGIN IMMEDIATE`` (so two processes opening a fresh file cannot
both migrate) and commit afterwards::

    MIGRATIONS = [
        ("CREATE TABLE runs (run_id TEXT PRIMARY KEY, ...)", "CREATE INDEX ..."),  # version 1
        add_run_status_column,  # version 2: a callable, given the connection
    ]

    conn.execute("PRAGMA busy_timeout = 5000")
    enable_wal(conn, timeout=5.0)  # checkpoints._sqlite_wal: the WAL switch needs a retry
    conn.execute("BEGIN IMMEDIATE")
    try:
        migrate(conn, "server", MIGRATIONS)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise

A migration is a sequence of SQL statements (or one statement) or a callable that receives the
connection: called with a ``sqlite3.Connection`` by `migrate`, awaited with an
``aiosqlite.Connection`` by `amigrate`. Everything happens in the caller's transaction, so a
failed upgrade leaves the file as it was. A file whose version for the component is above what
the code knows (written by a newer release) is refused with `SchemaError`.

Files from before this table (the saver and the store each counted their migrations in
``PRAGMA user_version``) are upgraded in place: a component with no row whose ``legacy_table``
exists adopts the file's ``user_version`` and clears it. Clearing it makes those earlier builds
refuse the file (they would re-create existing tables and fail) instead of opening a schema they
do not know. New components pass no ``legacy_table``.

The decision logic is an IO-free plan (`_plan`) that both drivers run, so they cannot drift.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable, Generator, Sequence
from typing import Any, NamedTuple

import aiosqlite

__all__ = [
    "TABLE",
    "AsyncMigration",
    "Migration",
    "SchemaError",
    "amigrate",
    "migrate",
    "refuse_newer",
]

TABLE = "graphrun_schema"

Migration = str | Sequence[str] | Callable[[sqlite3.Connection], object]
AsyncMigration = str | Sequence[str] | Callable[[aiosqlite.Connection], Awaitable[object]]


class SchemaError(RuntimeError):
    """The file cannot be used with this schema: written by a newer graphrun, or inconsistent."""


class _Query(NamedTuple):
    sql: str
    params: tuple[Any, ...] = ()


# The plan yields a query (answered with its rows) or a callable migration (answered with None).
_Plan = Generator[Any, "list[tuple[Any, ...]] | None", int]


def migrate(
    conn: sqlite3.Connection,
    component: str,
    migrations: Sequence[Migration],
    *,
    legacy_table: str | None = None,
) -> int:
    """Bring `component`'s tables up to ``len(migrations)`` inside the caller's open write
    transaction; returns the version the file had before (0: the component was new)."""
    _check_transaction(conn.in_transaction, component)
    plan = _plan(component, migrations, legacy_table)
    reply: list[tuple[Any, ...]] | None = None
    while True:
        try:
            action = plan.send(reply)
        except StopIteration as done:
            return int(done.value)
        if isinstance(action, _Query):
            reply = conn.execute(action.sql, action.params).fetchall()
        else:
            action(conn)
            reply = None


async def amigrate(
    conn: aiosqlite.Connection,
    component: str,
    migrations: Sequence[AsyncMigration],
    *,
    legacy_table: str | None = None,
) -> int:
    """`migrate` on an aiosqlite connection; callable migrations are awaited."""
    _check_transaction(conn.in_transaction, component)
    plan = _plan(component, migrations, legacy_table)
    reply: list[tuple[Any, ...]] | None = None
    while True:
        try:
            action = plan.send(reply)
        except StopIteration as done:
            return int(done.value)
        if isinstance(action, _Query):
            async with conn.execute(action.sql, action.params) as cursor:
                reply = [tuple(row) for row in await cursor.fetchall()]
        else:
            await action(conn)
            reply = None


def _check_transaction(in_transaction: bool, component: str) -> None:
    if not in_transaction:
        raise RuntimeError(
            f"migrating {component!r} needs the caller's write transaction (BEGIN IMMEDIATE)"
        )


def _plan(component: str, migrations: Sequence[Any], legacy_table: str | None) -> _Plan:
    if not component:
        raise ValueError("a schema component needs a non-empty name")
    yield _Query(
        f"CREATE TABLE IF NOT EXISTS {TABLE} (component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
    )
    rows = yield _Query(f"SELECT version FROM {TABLE} WHERE component = ?", (component,))
    if rows:
        found = int(rows[0][0])
    else:
        found = yield from _legacy_version(component, legacy_table)
    known = len(migrations)
    refuse_newer(found, known, component, "the file")
    for step in migrations[found:]:
        if isinstance(step, str):
            yield _Query(step)
        elif callable(step):
            yield step
        else:
            for sql in step:
                yield _Query(sql)
    if found < known or not rows:
        yield _Query(
            f"INSERT INTO {TABLE} (component, version) VALUES (?, ?) "
            "ON CONFLICT (component) DO UPDATE SET version = excluded.version",
            (component, known),
        )
    return found


def refuse_newer(found: int, known: int, component: str, holder: str) -> None:
    """A build never opens a schema newer than it knows: `holder` ("the file", "the database")
    says where version `found` of `component` was read."""
    if found > known:
        raise SchemaError(
            f"{holder} has schema version {found} for {component!r}; this graphrun knows up to "
            f"{known}. Upgrade graphrun to open it."
        )


def _legacy_version(component: str, legacy_table: str | None) -> _Plan:
    """The version a file from before `TABLE` recorded for the component, in user_version."""
    if legacy_table is None:
        return 0
    exists = yield _Query(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (legacy_table,)
    )
    if not exists:
        return 0
    rows = yield _Query("PRAGMA user_version")
    version = int(rows[0][0]) if rows else 0
    if version <= 0:
        raise SchemaError(
            f"the file has {component!r} tables ({legacy_table}) but no schema version for them"
        )
    # Adopted: user_version no longer means anything, and 0 stops pre-table builds (see above).
    yield _Query("PRAGMA user_version = 0")
    return version
