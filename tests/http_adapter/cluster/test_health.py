"""Each cluster part answers for its service (`/ok`, issue 19 §10) and its pool (`/metrics`), on
a real PostgreSQL that is made to refuse connections and then let back in."""

from __future__ import annotations

import anyio

from http_adapter.agent_server.cluster.records import PgRecords


def refuse_connections(pg_url: str, refuse: bool) -> None:
    """Make the test's database refuse new connections (and drop the open ones), or not."""
    import asyncpg

    name = pg_url.rsplit("/", 1)[1]
    admin = pg_url.rsplit("/", 1)[0] + "/postgres"

    async def run() -> None:
        conn = await asyncpg.connect(admin)
        try:
            await conn.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS {'false' if refuse else 'true'}")
            if refuse:
                await conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                   "WHERE datname = $1 AND pid <> pg_backend_pid()", name)
        finally:
            await conn.close()

    anyio.run(run)


def test_records_health_and_pool_follow_the_database(pg_url: str) -> None:
    async def check() -> tuple[bool, dict[str, int], bool, bool]:
        records = PgRecords(pg_url, min_size=2, max_size=5)
        await records.open()
        try:
            up, pool = await records.health(), records.pool_stats()
            await anyio.to_thread.run_sync(refuse_connections, pg_url, True)
            try:
                down = await records.health()
            finally:
                await anyio.to_thread.run_sync(refuse_connections, pg_url, False)
            return up, pool, down, await records.health()
        finally:
            await records.close()

    up, pool, down, again = anyio.run(check)
    assert up is True and pool == {"size": 2, "in_use": 0, "max": 5}
    assert down is False and again is True  # the pool reconnects once the database is back


def test_a_saturated_pool_is_still_healthy(pg_url: str) -> None:
    """Every connection busy is a loaded host, not a lost database: /ok must not fail it."""
    async def check() -> bool:
        records = PgRecords(pg_url, min_size=1, max_size=2)
        await records.open()
        try:
            held = [await records.pool.acquire() for _ in range(2)]
            try:
                return await records.health()
            finally:
                for conn in held:
                    await records.pool.release(conn)
        finally:
            await records.close()

    assert anyio.run(check) is True
