"""Records and a ledger on a real PostgreSQL database for the cluster queue's tests."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

from http_adapter.agent_server.cluster.ledger import Ledger
from http_adapter.agent_server.records import now
from http_adapter.agent_server.schemas import Run, Thread


def thread(thread_id: str | None = None) -> Thread:
    stamp = now()
    return Thread(thread_id=thread_id or str(uuid.uuid4()), created_at=stamp, updated_at=stamp,
                  state_updated_at=stamp)


def run(thread_id: str, strategy: str = "enqueue", **kwargs: object) -> Run:
    stamp = now()
    return Run(run_id=str(uuid.uuid4()), thread_id=thread_id, assistant_id="agent",
               created_at=stamp, updated_at=stamp, multitask_strategy=strategy,
               kwargs=dict(kwargs))


@asynccontextmanager
async def ledger(url: str, host: str = "h1", lease: float = 30.0,
                 size: int = 4) -> AsyncIterator[Ledger]:
    pool = await asyncpg.create_pool(url, min_size=1, max_size=size)
    try:
        book = Ledger(pool, host=host, lease=lease)
        await book.migrate()
        yield book
    finally:
        await pool.close()


async def rows(url: str, sql: str, *args: object) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(url)
    try:
        return await conn.fetch(sql, *args)
    finally:
        await conn.close()
