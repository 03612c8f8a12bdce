"""One SQLite file for everything: per-component schema versions (checkpoints._schema_versions).

The saver, the store and a third component standing in for the server's records share a file,
in any open/close order; files from before the shared table are upgraded in place; a file from
a newer release is refused.
"""

from __future__ import annotations

import contextlib
import itertools
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiosqlite
import pytest

from checkpoints import SchemaError, SqliteSaver
from checkpoints import _sqlite_schema as saver_schema
from checkpoints._schema_versions import amigrate, migrate
from checkpoints._sqlite_wal import enable_wal
from checkpoints.base import empty_checkpoint, thread_config
from checkpoints.store import SqliteStore
from checkpoints.store import sqlite as store_sqlite

# A stand-in for the agent server's records: a sync component with a SQL step and a callable one.
RECORDS: list[Any] = [
    ("CREATE TABLE records (id TEXT PRIMARY KEY, body TEXT NOT NULL)",),
    lambda conn: conn.execute("ALTER TABLE records ADD COLUMN kind TEXT NOT NULL DEFAULT 'run'"),
]


@contextlib.contextmanager
def connect(path: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def open_records(path: Path, migrations: list[Any] = RECORDS) -> int:
    """Open the file the way a component should: migrate inside its own write transaction."""
    with connect(path) as conn:
        conn.execute("PRAGMA busy_timeout = 5000")
        enable_wal(conn, timeout=5.0)
        conn.execute("BEGIN IMMEDIATE")
        try:
            found = migrate(conn, "records", migrations)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return found


def query(path: Path, sql: str) -> list[Any]:
    with connect(path) as conn:
        return conn.execute(sql).fetchall()


def versions(path: Path) -> dict[str, int]:
    return dict(query(path, "SELECT component, version FROM graphrun_schema"))


def save_checkpoint(saver: SqliteSaver, thread_id: str, value: Any) -> None:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"x": value}
    checkpoint["channel_versions"] = {"x": 1}
    saver.put(thread_config(thread_id), checkpoint, {"step": 0}, {"x": 1})


def checkpoint_value(saver: SqliteSaver, thread_id: str) -> Any:
    loaded = saver.get_tuple(thread_config(thread_id))
    assert loaded is not None
    return loaded.checkpoint["channel_values"]["x"]


def write_all(path: Path, tag: str) -> None:
    """Each component writes something tagged, through its own connection(s)."""
    with SqliteSaver(path) as saver:
        save_checkpoint(saver, tag, (tag,))
    with SqliteStore(path) as store:
        store.put(("docs",), tag, {"tag": tag})
    open_records(path)
    with connect(path) as conn:
        conn.execute("INSERT INTO records (id, body) VALUES (?, ?)", (tag, tag))


def assert_all(path: Path, tags: list[str]) -> None:
    with SqliteSaver(path) as saver:
        for tag in tags:
            assert checkpoint_value(saver, tag) == (tag,)
    with SqliteStore(path) as store:
        assert sorted(item.key for item in store.search(("docs",))) == sorted(tags)
    assert sorted(query(path, "SELECT id, kind FROM records")) == [(t, "run") for t in sorted(tags)]


OPENERS: dict[str, Callable[[Path], Any]] = {
    "saver": lambda path: SqliteSaver(path).close(),
    "store": lambda path: SqliteStore(path).close(),
    "records": open_records,
}


@pytest.mark.parametrize("order", list(itertools.permutations(OPENERS)), ids="-".join)
def test_three_components_share_one_file_in_any_order(tmp_path: Path, order: Any) -> None:
    path = tmp_path / "graphrun.db"
    for name in order:
        OPENERS[name](path)
    assert versions(path) == {
        "checkpoints": len(saver_schema.MIGRATIONS),
        "store": len(store_sqlite.MIGRATIONS),
        "records": len(RECORDS),
    }
    write_all(path, "first")
    for name in reversed(order):  # reopening migrates nothing and loses nothing
        OPENERS[name](path)
    write_all(path, "second")
    assert_all(path, ["first", "second"])
    assert query(path, "PRAGMA user_version") == [(0,)]


def test_components_stay_open_together(tmp_path: Path) -> None:
    path = tmp_path / "graphrun.db"
    with SqliteSaver(path) as saver, SqliteStore(path) as store:
        open_records(path)
        save_checkpoint(saver, "t", 1)
        store.put(("a",), "k", {"v": 1})
        with SqliteSaver(path) as second_saver, SqliteStore(path) as second_store:
            assert checkpoint_value(second_saver, "t") == 1
            assert second_store.get(("a",), "k") is not None
            save_checkpoint(second_saver, "u", 2)
        assert checkpoint_value(saver, "u") == 2


def test_a_fresh_file_opened_by_many_threads_at_once_is_migrated_once(
    tmp_path: Path,
) -> None:
    path = tmp_path / "graphrun.db"
    barrier = threading.Barrier(6)
    errors: list[BaseException] = []

    def open_one(opener: Callable[[Path], Any]) -> None:
        barrier.wait()
        try:
            opener(path)
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [
        threading.Thread(target=open_one, args=(opener,))
        for opener in [*OPENERS.values(), *OPENERS.values()]
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert versions(path) == {"checkpoints": len(saver_schema.MIGRATIONS), "store": 1, "records": len(RECORDS)}


# --- newer files, failed migrations ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("component", "opener"),
    [
        ("checkpoints", OPENERS["saver"]),
        ("store", OPENERS["store"]),
        ("records", open_records),
    ],
)
def test_a_component_from_a_newer_release_is_refused(
    tmp_path: Path, component: str, opener: Callable[[Path], Any]
) -> None:
    path = tmp_path / "graphrun.db"
    for open_component in OPENERS.values():
        open_component(path)
    with connect(path) as conn:
        conn.execute("UPDATE graphrun_schema SET version = 7 WHERE component = ?", (component,))
    with pytest.raises(SchemaError, match=f"schema version 7 for '{component}'.*Upgrade graphrun"):
        opener(path)
    # The other components still open.
    for open_component in OPENERS.values():
        if open_component is not opener:
            open_component(path)
    assert versions(path)[component] == 7


def test_a_failed_migration_leaves_every_component_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "graphrun.db"
    write_all(path, "t")
    before = versions(path)

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("migration bug")

    with pytest.raises(RuntimeError, match="migration bug"):
        open_records(path, [*RECORDS, broken])
    assert versions(path) == before
    assert query(path, "SELECT name FROM sqlite_master WHERE name = 'half_done'") == []
    assert_all(path, ["t"])


def test_migrate_needs_the_callers_transaction(tmp_path: Path) -> None:
    with connect(tmp_path / "graphrun.db") as conn:
        with pytest.raises(RuntimeError, match="BEGIN IMMEDIATE"):
            migrate(conn, "records", RECORDS)
        conn.execute("BEGIN IMMEDIATE")
        with pytest.raises(ValueError, match="non-empty name"):
            migrate(conn, "", RECORDS)


@pytest.mark.anyio
async def test_amigrate_on_aiosqlite(tmp_path: Path) -> None:
    async def add_kind(conn: aiosqlite.Connection) -> None:
        await conn.execute("ALTER TABLE records ADD COLUMN kind TEXT NOT NULL DEFAULT 'run'")

    steps: list[Any] = [
        "CREATE TABLE records (id TEXT PRIMARY KEY, body TEXT NOT NULL)",
        add_kind,
    ]
    path = tmp_path / "graphrun.db"
    async with aiosqlite.connect(path, isolation_level=None) as conn:
        for expected_before, known in ((0, 1), (1, 2), (2, 2)):
            await conn.execute("BEGIN IMMEDIATE")
            assert await amigrate(conn, "records", steps[:known]) == expected_before
            await conn.execute("COMMIT")
    assert versions(path) == {"records": 2}
    # The sync and async drivers read the same table: the sync one sees nothing left to do.
    assert open_records(path) == 2


# --- files from before the shared table (version in PRAGMA user_version) ----------------------


def make_legacy(path: Path, tables_of: str, user_version: int = 1) -> None:
    """Turn the file into what the pre-table code wrote: one component, its count in
    user_version, no graphrun_schema."""
    with connect(path) as conn:
        conn.execute("DROP TABLE graphrun_schema")
        conn.execute(f"PRAGMA user_version = {user_version}")
    assert {name for (name,) in query(path, "SELECT name FROM sqlite_master")} >= {tables_of}


def test_a_legacy_saver_file_is_upgraded_in_place_and_shared(tmp_path: Path) -> None:
    path = tmp_path / "checkpoints.db"
    with SqliteSaver(path) as saver:
        save_checkpoint(saver, "old", [1, 2])
    make_legacy(path, "checkpoints")
    # The store joins first (it must not take the saver's user_version), then the saver adopts.
    with SqliteStore(path) as store:
        store.put(("docs",), "new", {"v": 1})
    assert versions(path) == {"store": 1}
    assert query(path, "PRAGMA user_version") == [(1,)]
    with SqliteSaver(path) as saver:
        assert checkpoint_value(saver, "old") == [1, 2]
        save_checkpoint(saver, "new", (3,))
    assert versions(path) == {"store": 1, "checkpoints": len(saver_schema.MIGRATIONS)}
    assert query(path, "PRAGMA user_version") == [(0,)]
    open_records(path)
    with SqliteSaver(path) as saver, SqliteStore(path) as store:
        assert checkpoint_value(saver, "new") == (3,)
        assert store.get(("docs",), "new") is not None


def test_a_legacy_store_file_is_upgraded_in_place_and_shared(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with SqliteStore(path) as store:
        store.put(("docs",), "old", {"v": 1})
    make_legacy(path, "store_items")
    with SqliteStore(path) as store:
        assert store.get(("docs",), "old") is not None
    with SqliteSaver(path) as saver:
        save_checkpoint(saver, "t", 1)
    assert versions(path) == {"store": 1, "checkpoints": len(saver_schema.MIGRATIONS)}
    assert query(path, "PRAGMA user_version") == [(0,)]


def test_a_legacy_file_from_a_newer_release_is_refused_untouched(
    tmp_path: Path,
) -> None:
    path = tmp_path / "checkpoints.db"
    SqliteSaver(path).close()
    make_legacy(path, "checkpoints", user_version=5)
    with pytest.raises(SchemaError, match="schema version 5 for 'checkpoints'"):
        SqliteSaver(path)
    assert query(path, "PRAGMA user_version") == [(5,)]
    assert query(path, "SELECT name FROM sqlite_master WHERE name = 'graphrun_schema'") == []


def test_legacy_tables_without_a_version_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    SqliteStore(path).close()
    make_legacy(path, "store_items", user_version=0)
    with pytest.raises(SchemaError, match="'store' tables .* no schema version"):
        SqliteStore(path)


def test_an_unrelated_user_version_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with connect(path) as conn:
        conn.execute("PRAGMA user_version = 42")
    write_all(path, "t")
    assert query(path, "PRAGMA user_version") == [(42,)]
    assert_all(path, ["t"])
