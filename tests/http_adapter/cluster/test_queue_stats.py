"""`cluster.queue_stats`: the whole cluster's pending and running runs and their waits, in one
statement on a real PostgreSQL (issue 19 §10)."""

from __future__ import annotations

import asyncpg
import pytest

from checkpoints.postgres_files import migrate
from http_adapter.agent_server.cluster._schema import COMPONENT, MIGRATIONS
from http_adapter.agent_server.cluster.queue_stats import queue_stats

pytestmark = pytest.mark.anyio


async def test_counts_and_waits_of_every_hosts_runs(pg_url: str) -> None:
    conn = await asyncpg.connect(pg_url)
    try:
        await migrate(conn, COMPONENT, MIGRATIONS)
        assert await queue_stats(conn) == {"pending": 0, "running": 0, "wait_max": None,
                                          "wait_med": None}
        rows = [  # (run, thread, status, seconds since it became runnable)
            ("r1", "t1", "pending", 30), ("r2", "t2", "pending", 10), ("r3", "t3", "pending", 2),
            ("r4", "t4", "running", 50), ("r5", "t5", "success", 90),
            ("r6", "t6", "pending", -60),  # `after_seconds` not over yet: not waiting
        ]
        for run_id, thread_id, status, age in rows:
            await conn.execute(
                "INSERT INTO server_runs (run_id, thread_id, status, body, not_before) "
                "VALUES ($1, $2, $3, '{}'::jsonb, now() - make_interval(secs => $4))",
                run_id, thread_id, status, float(age),
            )
        stats = await queue_stats(conn)
    finally:
        await conn.close()
    assert stats["pending"] == 4 and stats["running"] == 1
    assert 29.9 <= stats["wait_max"] < 31 and 9.9 <= stats["wait_med"] < 11
