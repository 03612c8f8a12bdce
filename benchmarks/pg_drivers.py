"""asyncpg vs psycopg 3 on the checkpoint saver's access pattern (issue 19: choose by measuring).

    pip install -e '.[bench,postgres]'   # psycopg comes with the bench extra
    python -m benchmarks.pg_drivers [ROUNDS]

Starts a throwaway PostgreSQL (tests.services), creates tables shaped like the saver's, then
times per operation, each driver on one connection:
  put     one transaction: 3 blob rows + 1 checkpoint row + 2 write rows (one step's data);
          asyncpg: executemany per table; psycopg: the same in pipeline mode (one round trip)
  put1    the same rows as ONE statement (data-modifying CTEs over unnested arrays), as
          PostgresSaver writes them
  get     latest checkpoint of a thread, its blobs, its writes (psycopg pipelines the last two)
  list    the thread's newest 10 checkpoints
Prints microseconds per operation (median of 5 repeats).
"""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import sys
import time
from collections.abc import Awaitable, Callable

import asyncpg
import psycopg

from tests.services import PostgresServer

_TABLES = """
CREATE TABLE checkpoints (thread_id text, checkpoint_ns text, checkpoint_id text,
    parent_checkpoint_id text, checkpoint bytea NOT NULL, metadata bytea NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));
CREATE TABLE blobs (thread_id text, checkpoint_ns text, channel text, version text,
    value bytea, PRIMARY KEY (thread_id, checkpoint_ns, channel, version));
CREATE TABLE writes (thread_id text, checkpoint_ns text, checkpoint_id text, task_id text,
    idx integer, channel text, value bytea NOT NULL, task_path text NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));
"""
_CP = "INSERT INTO checkpoints VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING"
_BLOB = "INSERT INTO blobs VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING"
_WRITE = "INSERT INTO writes VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING"
_LATEST = (
    "SELECT checkpoint_id, checkpoint, metadata FROM checkpoints WHERE thread_id = $1 "
    "AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1"
)
_BLOBS = (
    "SELECT channel, version, value FROM blobs WHERE thread_id = $1 AND checkpoint_ns = '' "
    "AND version = ANY($2::text[])"
)
_WRITES = (
    "SELECT task_id, channel, value FROM writes WHERE thread_id = $1 AND checkpoint_ns = '' "
    "AND checkpoint_id = $2"
)
_LIST = (
    "SELECT checkpoint_id, checkpoint, metadata FROM checkpoints WHERE thread_id = $1 "
    "ORDER BY checkpoint_id DESC LIMIT 10"
)
# The whole put as one statement (one round trip, atomic without BEGIN/COMMIT): arrays unnested.
_PUT_ONE = """WITH b AS (INSERT INTO blobs SELECT $1, '', * FROM unnest($2::text[], $3::text[],
        $4::bytea[]) ON CONFLICT DO NOTHING),
    w AS (INSERT INTO writes SELECT $1, '', $5, * FROM unnest($6::text[], $7::int[],
        $8::text[], $9::bytea[], $10::text[]) ON CONFLICT DO NOTHING)
    INSERT INTO checkpoints VALUES ($1, '', $5, $11, $12, $13) ON CONFLICT DO NOTHING"""
_VALUE = os.urandom(600)


def _one(i: int, thread: str) -> tuple:
    blobs, cp, writes = _rows(i, thread)
    return (
        thread, [b[2] for b in blobs], [b[3] for b in blobs], [b[4] for b in blobs], cp[2],
        [w[3] for w in writes], [w[4] for w in writes], [w[5] for w in writes],
        [w[6] for w in writes], [w[7] for w in writes], cp[3], cp[4], cp[5],
    )


def _rows(i: int, thread: str) -> tuple[list[tuple], tuple, list[tuple]]:
    cid, v = f"{i:08d}", f"{i:08d}"
    blobs = [(thread, "", ch, v, _VALUE) for ch in ("a", "b", "messages")]
    cp = (thread, "", cid, f"{i - 1:08d}", _VALUE[:200], b"\x80")
    writes = [(thread, "", cid, "task", k, "a", _VALUE[:100], "") for k in range(2)]
    return blobs, cp, writes


def _pg(sql: str) -> str:
    """asyncpg's positional `$n` placeholders as psycopg's `%s` (each used once, in order)."""
    return re.sub(r"\$\d+", "%s", sql)


async def _asyncpg(url: str, rounds: int) -> dict[str, float]:
    conn = await asyncpg.connect(url)
    results: dict[str, list[float]] = {"put": [], "put1": [], "get": [], "list": []}
    for rep in range(5):
        thread = f"a{rep}"

        async def put(i: int) -> None:
            blobs, cp, writes = _rows(i, thread)
            async with conn.transaction():
                await conn.executemany(_BLOB, blobs)
                await conn.execute(_CP, *cp)
                await conn.executemany(_WRITE, writes)

        async def put1(i: int) -> None:
            await conn.execute(_PUT_ONE, *_one(i + 100000, thread))

        async def get(i: int) -> None:
            row = await conn.fetchrow(_LATEST, thread)
            await conn.fetch(_BLOBS, thread, [row[0]])
            await conn.fetch(_WRITES, thread, row[0])

        async def list_(i: int) -> None:
            await conn.fetch(_LIST, thread)

        for name, op in (("put", put), ("put1", put1), ("get", get), ("list", list_)):
            results[name].append(await _atime(op, rounds))
    await conn.close()
    return {k: statistics.median(v) for k, v in results.items()}


async def _atime(op: Callable[[int], Awaitable[None]], rounds: int) -> float:
    start = time.perf_counter()
    for i in range(rounds):
        await op(i)
    return (time.perf_counter() - start) / rounds * 1e6


def _psycopg(url: str, rounds: int) -> dict[str, float]:
    conn = psycopg.connect(url, prepare_threshold=0, autocommit=True)
    results: dict[str, list[float]] = {"put": [], "put1": [], "get": [], "list": []}
    blob, cp_sql, write = _pg(_BLOB), _pg(_CP), _pg(_WRITE)
    one = _PUT_ONE
    for n in range(13, 0, -1):
        one = one.replace(f"${n}", f"%(p{n})s")
    for rep in range(5):
        thread = f"p{rep}"

        def put(i: int) -> None:
            blobs, cp, writes = _rows(i, thread)
            with conn.transaction(), conn.pipeline(), conn.cursor() as cur:
                cur.executemany(blob, blobs)
                cur.execute(cp_sql, cp)
                cur.executemany(write, writes)

        def put1(i: int) -> None:
            conn.execute(one, {f"p{n + 1}": v for n, v in enumerate(_one(i + 100000, thread))})

        def get(i: int) -> None:
            row = conn.execute(_pg(_LATEST), (thread,)).fetchone()
            with conn.pipeline():
                b = conn.execute(_pg(_BLOBS), (thread, [row[0]]))
                w = conn.execute(_pg(_WRITES), (thread, row[0]))
            b.fetchall()
            w.fetchall()

        def list_(i: int) -> None:
            conn.execute(_pg(_LIST), (thread,)).fetchall()

        for name, op in (("put", put), ("put1", put1), ("get", get), ("list", list_)):
            start = time.perf_counter()
            for i in range(rounds):
                op(i)
            results[name].append((time.perf_counter() - start) / rounds * 1e6)
    conn.close()
    return {k: statistics.median(v) for k, v in results.items()}


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    with PostgresServer() as server:
        url = server.new_database()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(_TABLES)
        apg = asyncio.run(_asyncpg(url, rounds))
        ppg = _psycopg(url, rounds)
    print(f"{'µs/op':8} {'asyncpg':>10} {'psycopg3':>10} {'ratio':>7}")
    for name in ("put", "put1", "get", "list"):
        print(f"{name:8} {apg[name]:10.0f} {ppg[name]:10.0f} {ppg[name] / apg[name]:7.2f}")


if __name__ == "__main__":
    main()
