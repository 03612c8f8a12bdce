"""Helpers for the Redis back end's tests (issue 19): brokers acting as hosts, a Redis of one's
own for the tests that stop and restart it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from http_adapter.agent_server.cluster.broker import RedisBroker
from tests.services import RedisServer, ServiceMissing


class Finished:
    """The injected `is_finished`: the runs a test declared over (the database's answer)."""

    def __init__(self) -> None:
        self.runs: set[str] = set()

    async def __call__(self, run_id: str) -> bool:
        return run_id in self.runs


@asynccontextmanager
async def brokers(url: str, count: int = 2, **options: Any
                ) -> AsyncIterator[tuple[list[RedisBroker], Finished]]:
    """`count` brokers, each on its own connections and serving: as many hosts."""
    finished = Finished()
    options.setdefault("block", 0.1)
    brokers = [RedisBroker(url, is_finished=finished, **options) for _ in range(count)]
    async with anyio.create_task_group() as tg:
        for broker in brokers:
            await tg.start(broker.serve)
        yield brokers, finished
        tg.cancel_scope.cancel()


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    """A Redis for this test alone (it may stop and restart it: `halt`, `start`)."""
    try:
        server = RedisServer()
    except ServiceMissing as error:
        pytest.skip(str(error))
    with server:
        yield server
