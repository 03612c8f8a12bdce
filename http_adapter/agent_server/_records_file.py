"""The SQLite file behind `Records`: one table of JSON bodies keyed by (kind, id).

aiosqlite, WAL, one connection; each `write` is one transaction, so a record and the records
changed with it are saved together or not at all. It shares the server's SQLite file with the
checkpoints and the store.
"""

from __future__ import annotations

from typing import Any

import aiosqlite
import anyio

from checkpoints.sqlite_files import aenable_wal, amigrate

__all__ = ["RecordFile"]

# The server's component in the file's shared schema-version table; append-only.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS server_records (
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (kind, id)
)
"""
_MIGRATIONS = [(_SCHEMA,)]


class RecordFile:
    def __init__(self, path: str) -> None:
        self.path = path
        self._db: aiosqlite.Connection | None = None
        self._lock = anyio.Lock()  # one transaction at a time on the one connection

    async def open(self) -> None:
        db = await aiosqlite.connect(self.path)
        try:
            await db.execute("PRAGMA busy_timeout=5000")
            await aenable_wal(db, 5.0)  # retries: the saver and store may open the file too
            await db.execute("PRAGMA synchronous=NORMAL")
            await db.execute("BEGIN IMMEDIATE")
            try:
                await amigrate(db, "server", _MIGRATIONS)
                await db.commit()
            except BaseException:
                await db.rollback()
                raise
        except BaseException:
            await db.close()
            raise
        self._db = db

    async def close(self) -> None:
        if self._db is not None:
            await self._db.close()
            self._db = None

    async def load(self) -> list[tuple[str, str, bytes]]:
        assert self._db is not None
        async with self._db.execute("SELECT kind, id, body FROM server_records") as cursor:
            return [tuple(row) async for row in cursor]  # type: ignore[misc]

    async def write(
        self, upserts: list[tuple[str, str, bytes]], deletes: list[tuple[str, str]]
    ) -> None:
        db = self._db
        assert db is not None
        async with self._lock:
            await self._write(db, upserts, deletes)

    @staticmethod
    async def _write(
        db: aiosqlite.Connection, upserts: list[tuple[str, str, bytes]],
        deletes: list[tuple[str, str]],
    ) -> None:
        try:
            if upserts:
                await db.executemany(
                    "INSERT INTO server_records (kind, id, body) VALUES (?, ?, ?) "
                    "ON CONFLICT (kind, id) DO UPDATE SET body = excluded.body",
                    upserts,
                )
            if deletes:
                await db.executemany(
                    "DELETE FROM server_records WHERE kind = ? AND id = ?", deletes
                )
            await db.commit()
        except BaseException:
            await db.rollback()
            raise
