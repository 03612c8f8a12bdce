"""The control plane's state in SQLite (aiosqlite, WAL): deployments, revisions, the servers
that run them, and OAuth providers. Every query is scoped by tenant where a client asks.

One file, `<data_dir>/control.sqlite`, versioned as the `control_plane` component of the shared
schema table (`checkpoints.sqlite_files`). Bodies are the msgspec-encoded records (JSON);
the columns beside them are what queries filter and sort on. Secret values never enter a body:
deployments keep masked values there and the real ones Fernet-encrypted in `secrets`; providers
keep their client secret encrypted in `client_secret`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite
import anyio
import msgspec

from checkpoints.sqlite_files import aenable_wal, amigrate

from .schemas import Deployment, OAuthProviderResponse, Revision, Secret
from .secrets import SecretBox

__all__ = ["MASK", "ControlRecords", "ServerRecord", "now"]

T = TypeVar("T")
MASK = "********"  # what responses show for a secret value

_MIGRATIONS = [(  # append-only: entry i upgrades version i to i + 1
    """CREATE TABLE deployments (
        id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, name TEXT NOT NULL, status TEXT NOT NULL,
        created_at TEXT NOT NULL, body TEXT NOT NULL, secrets BLOB NOT NULL,
        UNIQUE (tenant_id, name))""",
    """CREATE TABLE revisions (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
        deployment_id TEXT NOT NULL, status TEXT NOT NULL, body TEXT NOT NULL,
        secrets BLOB NOT NULL, code_from TEXT)""",
    "CREATE INDEX revisions_by_deployment ON revisions (deployment_id, seq)",
    """CREATE TABLE servers (
        deployment_id TEXT PRIMARY KEY, revision_id TEXT NOT NULL, pid INTEGER NOT NULL,
        port INTEGER NOT NULL, url TEXT NOT NULL, started_at TEXT NOT NULL)""",
    """CREATE TABLE providers (
        id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, provider_id TEXT NOT NULL,
        created_at TEXT NOT NULL, body TEXT NOT NULL, client_secret BLOB,
        UNIQUE (tenant_id, provider_id))""",
)]
_secrets = msgspec.json.Decoder(list[Secret])


def now() -> str:
    """ISO-8601 with microseconds and +00:00 (SPEC §3 conventions)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


class ServerRecord(msgspec.Struct, kw_only=True):
    """The agent server process serving a deployment's active revision."""

    deployment_id: str
    revision_id: str
    pid: int
    port: int
    url: str
    started_at: str


class ControlRecords:
    """Async access to the control plane's SQLite file; one connection, one transaction at a time."""

    def __init__(self, path: Path, box: SecretBox) -> None:
        self.path = path
        self.box = box
        self._db: aiosqlite.Connection | None = None
        self._lock = anyio.Lock()

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = await aiosqlite.connect(self.path)
        try:
            await db.execute("PRAGMA busy_timeout=5000")
            await aenable_wal(db, 5.0)
            await db.execute("BEGIN IMMEDIATE")
            await amigrate(db, "control_plane", _MIGRATIONS)
            await db.commit()
        except BaseException:
            await db.close()
            raise
        self._db = db

    async def close(self) -> None:
        if self._db is not None:
            await self._db.close()
            self._db = None

    @contextlib.asynccontextmanager
    async def _write(self) -> AsyncIterator[aiosqlite.Connection]:
        assert self._db is not None, "records are not open"
        async with self._lock:
            # Shielded: a cancelled await would leave the BEGIN run but never rolled back.
            with anyio.CancelScope(shield=True):
                await self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await self._db.rollback()
                raise
            with anyio.CancelScope(shield=True):
                await self._db.commit()

    async def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        assert self._db is not None, "records are not open"
        async with self._lock, self._db.execute(sql, params) as cursor:
            return list(await cursor.fetchall())

    def _seal(self, secrets: Iterable[Secret]) -> bytes:
        return self.box.encrypt(msgspec.json.encode(list(secrets)))

    # -- deployments ---------------------------------------------------------------------------

    async def insert_deployment(
        self, dep: Deployment, rev: Revision, secrets: list[Secret]
    ) -> None:
        """A new deployment with its first revision, both or neither."""
        async with self._write() as db:
            await db.execute(
                "INSERT INTO deployments (id, tenant_id, name, status, created_at, body, secrets)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (dep.id, dep.tenant_id, dep.name, dep.status, dep.created_at, _text(dep),
                 self._seal(secrets)),
            )
            await self._insert_revision(db, dep.id, rev, secrets, None)

    async def name_taken(self, tenant_id: str, name: str) -> bool:
        rows = await self._rows(
            "SELECT 1 FROM deployments WHERE tenant_id = ? AND name = ?", (tenant_id, name))
        return bool(rows)

    async def deployment(self, deployment_id: str, tenant_id: str | None = None) -> Deployment | None:
        """A deployment by id; with `tenant_id`, only if it belongs to that tenant."""
        sql, params = "SELECT body FROM deployments WHERE id = ?", [deployment_id]
        if tenant_id is not None:
            sql += " AND tenant_id = ?"
            params.append(tenant_id)
        rows = await self._rows(sql, params)
        return msgspec.json.decode(rows[0][0], type=Deployment) if rows else None

    async def deployments(
        self,
        tenant_id: str | None,
        *,
        name_contains: str | None = None,
        statuses: Sequence[str] = (),
        deployment_types: Sequence[str] = (),
        image_version: str | None = None,
        ids: Sequence[str] = (),
        limit: int = -1,
        offset: int = 0,
    ) -> list[Deployment]:
        """Newest first; every filter given must hold."""
        where, params = ["1"], []
        if tenant_id is not None:
            where.append("tenant_id = ?")
            params.append(tenant_id)
        if name_contains:
            where.append("instr(lower(name), lower(?)) > 0")
            params.append(name_contains)
        for column, values in (("status", statuses), ("id", ids),
                               ("json_extract(body, '$.source_config.deployment_type')",
                                deployment_types)):
            if values:
                where.append(f"{column} IN ({', '.join('?' * len(values))})")
                params.extend(values)
        if image_version is not None:
            where.append("json_extract(body, '$.image_version') = ?")
            params.append(image_version)
        rows = await self._rows(
            f"SELECT body FROM deployments WHERE {' AND '.join(where)}"
            " ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return [msgspec.json.decode(r[0], type=Deployment) for r in rows]

    async def update_deployment(self, dep: Deployment, secrets: list[Secret] | None = None) -> None:
        async with self._write() as db:
            await self._update_deployment(db, dep, secrets)

    async def _update_deployment(
        self, db: aiosqlite.Connection, dep: Deployment, secrets: list[Secret] | None
    ) -> None:
        if secrets is None:
            await db.execute("UPDATE deployments SET status = ?, body = ? WHERE id = ?",
                             (dep.status, _text(dep), dep.id))
        else:
            await db.execute(
                "UPDATE deployments SET status = ?, body = ?, secrets = ? WHERE id = ?",
                (dep.status, _text(dep), self._seal(secrets), dep.id))

    async def deployment_secrets(self, deployment_id: str) -> list[Secret]:
        rows = await self._rows("SELECT secrets FROM deployments WHERE id = ?", (deployment_id,))
        return _secrets.decode(self.box.decrypt(rows[0][0])) if rows else []

    async def delete_deployment(self, deployment_id: str) -> None:
        async with self._write() as db:
            for table, column in (("revisions", "deployment_id"), ("servers", "deployment_id"),
                                  ("deployments", "id")):
                await db.execute(f"DELETE FROM {table} WHERE {column} = ?", (deployment_id,))

    # -- revisions -----------------------------------------------------------------------------

    async def add_revision(
        self, dep: Deployment, rev: Revision, secrets: list[Secret], code_from: str | None = None
    ) -> None:
        """A new latest revision; `dep` (already pointing at it) is saved in the same transaction.
        `code_from` names a revision whose fetched source the new one reuses (redeploy)."""
        async with self._write() as db:
            await self._insert_revision(db, dep.id, rev, secrets, code_from)
            await self._update_deployment(db, dep, secrets)

    async def _insert_revision(
        self, db: aiosqlite.Connection, deployment_id: str, rev: Revision,
        secrets: list[Secret], code_from: str | None,
    ) -> None:
        await db.execute(
            "INSERT INTO revisions (id, deployment_id, status, body, secrets, code_from)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (rev.id, deployment_id, rev.status, _text(rev), self._seal(secrets), code_from),
        )

    async def revision(self, deployment_id: str, revision_id: str) -> Revision | None:
        rows = await self._rows(
            "SELECT body FROM revisions WHERE deployment_id = ? AND id = ?",
            (deployment_id, revision_id))
        return msgspec.json.decode(rows[0][0], type=Revision) if rows else None

    async def revisions(
        self, deployment_id: str, *, statuses: Sequence[str] = (), limit: int = -1,
        offset: int = 0, oldest_first: bool = False,
    ) -> list[Revision]:
        where, params = "deployment_id = ?", [deployment_id]
        if statuses:
            where += f" AND status IN ({', '.join('?' * len(statuses))})"
            params.extend(statuses)
        order = "ASC" if oldest_first else "DESC"
        rows = await self._rows(
            f"SELECT body FROM revisions WHERE {where} ORDER BY seq {order} LIMIT ? OFFSET ?",
            (*params, limit, offset))
        return [msgspec.json.decode(r[0], type=Revision) for r in rows]

    async def unfinished_revisions(self, terminal: Iterable[str]) -> list[tuple[str, Revision]]:
        """(deployment_id, revision) of every revision not in a terminal status, oldest first."""
        done = list(terminal)
        rows = await self._rows(
            f"SELECT deployment_id, body FROM revisions WHERE status NOT IN "
            f"({', '.join('?' * len(done))}) ORDER BY seq", done)
        return [(r[0], msgspec.json.decode(r[1], type=Revision)) for r in rows]

    async def update_revision(self, rev: Revision) -> None:
        async with self._write() as db:
            await db.execute("UPDATE revisions SET status = ?, body = ? WHERE id = ?",
                             (rev.status, _text(rev), rev.id))

    async def revision_secrets(self, revision_id: str) -> list[Secret]:
        rows = await self._rows("SELECT secrets FROM revisions WHERE id = ?", (revision_id,))
        return _secrets.decode(self.box.decrypt(rows[0][0])) if rows else []

    async def revision_code_from(self, revision_id: str) -> str | None:
        rows = await self._rows("SELECT code_from FROM revisions WHERE id = ?", (revision_id,))
        return rows[0][0] if rows else None

    # -- servers -------------------------------------------------------------------------------

    async def set_server(self, server: ServerRecord) -> None:
        async with self._write() as db:
            await db.execute(
                "INSERT OR REPLACE INTO servers (deployment_id, revision_id, pid, port, url,"
                " started_at) VALUES (?, ?, ?, ?, ?, ?)",
                (server.deployment_id, server.revision_id, server.pid, server.port, server.url,
                 server.started_at))

    async def servers(self) -> list[ServerRecord]:
        rows = await self._rows(
            "SELECT deployment_id, revision_id, pid, port, url, started_at FROM servers")
        return [ServerRecord(deployment_id=r[0], revision_id=r[1], pid=r[2], port=r[3], url=r[4],
                             started_at=r[5]) for r in rows]

    async def delete_server(self, deployment_id: str) -> None:
        async with self._write() as db:
            await db.execute("DELETE FROM servers WHERE deployment_id = ?", (deployment_id,))

    # -- OAuth providers -----------------------------------------------------------------------

    async def insert_provider(self, provider: OAuthProviderResponse, secret: str | None) -> None:
        async with self._write() as db:
            await db.execute(
                "INSERT INTO providers (id, tenant_id, provider_id, created_at, body,"
                " client_secret) VALUES (?, ?, ?, ?, ?, ?)",
                (provider.id, provider.organization_id, provider.provider_id,
                 provider.created_at, _text(provider), self._seal_text(secret)))

    async def provider(self, tenant_id: str, provider_id: str) -> OAuthProviderResponse | None:
        rows = await self._rows(
            "SELECT body FROM providers WHERE tenant_id = ? AND provider_id = ?",
            (tenant_id, provider_id))
        return msgspec.json.decode(rows[0][0], type=OAuthProviderResponse) if rows else None

    async def providers(self, tenant_id: str) -> list[OAuthProviderResponse]:
        rows = await self._rows(
            "SELECT body FROM providers WHERE tenant_id = ? ORDER BY created_at, id", (tenant_id,))
        return [msgspec.json.decode(r[0], type=OAuthProviderResponse) for r in rows]

    async def update_provider(self, provider: OAuthProviderResponse, secret: str | None) -> None:
        """Save `provider`; a `secret` other than None replaces the stored client secret."""
        async with self._write() as db:
            await db.execute("UPDATE providers SET body = ? WHERE id = ?",
                             (_text(provider), provider.id))
            if secret is not None:
                await db.execute("UPDATE providers SET client_secret = ? WHERE id = ?",
                                 (self._seal_text(secret), provider.id))

    async def provider_secret(self, tenant_id: str, provider_id: str) -> str | None:
        """The decrypted client secret (for the OAuth flows that need it; never for a response)."""
        rows = await self._rows(
            "SELECT client_secret FROM providers WHERE tenant_id = ? AND provider_id = ?",
            (tenant_id, provider_id))
        if not rows or rows[0][0] is None:
            return None
        return self.box.decrypt(rows[0][0]).decode()

    async def delete_provider(self, tenant_id: str, provider_id: str) -> bool:
        async with self._write() as db:
            cursor = await db.execute(
                "DELETE FROM providers WHERE tenant_id = ? AND provider_id = ?",
                (tenant_id, provider_id))
            return cursor.rowcount > 0

    def _seal_text(self, secret: str | None) -> bytes | None:
        return None if secret is None else self.box.encrypt(secret.encode())


def _text(record: msgspec.Struct) -> str:
    return msgspec.json.encode(record).decode()
