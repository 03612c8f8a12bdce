"""The SQLite file behind `Records`: one table of JSON bodies keyed by (kind, id).

aiosqlite, WAL, one connection; each `write` is one transaction, so a record and the records
changed with it are saved together or not at all. It shares the server's SQLite file with the
checkpoints and the store.
"""

from __future__ import annotations

from typing import Any

import aiosqlite
import anyio

__all__ = ["RecordFile"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS server_records (
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (kind, id)
)
"""


class RecordFile:
    def __init__(self, path: str) -> None:
        self.path = path
        self._db: aiosqlite.Connection | None = None
        self._lock = anyio.Lock()  # one transaction at a time on the one connection

    async def open(self) -> None:
        db = await aiosqlite.connect(self.path)
        await db.execute("PRAGMA journal_mode=WAL")
        await db.execute("PRAGMA synchronous=NORMAL")
        await db.execute("PRAGMA busy_timeout=5000")
        await db.execute(_SCHEMA)
        await db.commit()
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
