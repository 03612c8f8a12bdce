"""The cluster's queue in numbers, for `/metrics` (issue 19 §10): one statement, every host's runs.

A run's wait counts from `not_before` (its creation, or the end of its `after_seconds` delay), so
a delayed run is not waiting before it may start; a run not yet due is pending but not waiting.
"""

from __future__ import annotations

from typing import Any

__all__ = ["queue_stats"]

_STATS = """
SELECT count(*) FILTER (WHERE status = 'pending') AS pending,
       count(*) FILTER (WHERE status = 'running') AS running,
       max(extract(epoch FROM now() - not_before))
           FILTER (WHERE status = 'pending' AND not_before <= now()) AS wait_max,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM now() - not_before))
           FILTER (WHERE status = 'pending' AND not_before <= now()) AS wait_med
FROM server_runs WHERE status IN ('pending', 'running')
"""


async def queue_stats(pool: Any) -> dict[str, Any]:
    """{"pending", "running", "wait_max", "wait_med"} (waits in seconds, None when none waits)
    over `pool` (an asyncpg pool or connection on the server's database)."""
    row = await pool.fetchrow(_STATS)
    return {
        "pending": int(row["pending"]),
        "running": int(row["running"]),
        "wait_max": _seconds(row["wait_max"]),
        "wait_med": _seconds(row["wait_med"]),
    }


def _seconds(value: Any) -> float | None:
    return None if value is None else round(float(value), 3)
