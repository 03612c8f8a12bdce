"""Run event publishing: the embedded `Broker` vs `cluster.RedisBroker` (issue 19 §6).

    pip install -e '.[postgres]'
    python -m benchmarks.broker_publish [EVENTS]

Starts a throwaway Redis (tests.services). Per broker, resumable run, ~60-byte events, one
subscriber reading (on a second RedisBroker: another host):
  call      µs per `publish` call as the graph's loop pays it (a tight loop, nothing awaited)
  alone     µs per event on the event loop, `publish` then `sleep(0)` (a node yielding), no
            subscriber: the producer's whole cost, flusher included, until Redis has them all
  loop      the same with the subscriber reading in the same process, until it has them all
  batch     µs per event end to end when EVENTS are published at once (pipelining at work)
Prints the median of 5 repeats.
"""

from __future__ import annotations

import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from redis.asyncio import Redis

from http_adapter.agent_server.broker import Broker
from http_adapter.agent_server.cluster.broker import RedisBroker
from tests.services import RedisServer

_DATA = b'{"node":{"messages":[{"type":"ai","content":"hello there"}]},"n":12345}'


async def _never(_: str) -> bool:
    return False


async def _reader(subscription: Any, count: int, done: anyio.Event) -> None:
    seen = 0
    async for _ in subscription:
        seen += 1
        if seen == count:
            break
    done.set()


async def _until_stored(producer: Any, run_id: str, count: int, done: anyio.Event) -> None:
    if isinstance(producer, RedisBroker):
        stream = f"graphrun:run:{run_id}"
        async with Redis.from_url(producer_url(producer)) as client:
            while await client.xlen(stream) < count:
                await anyio.sleep(0.0005)
    done.set()


def producer_url(producer: RedisBroker) -> str:
    kwargs = producer._client.connection_pool.connection_kwargs
    return f"redis://{kwargs['host']}:{kwargs['port']}/0"


async def _case(producer: Any, consumer: Any, count: int, mode: str) -> float:
    """µs per event for one run of `count` events."""
    run_id = str(uuid.uuid4())
    producer.open(run_id, resumable=True)
    if consumer is not producer:
        consumer.open(run_id, resumable=True)  # the creating host's subscription
    done = anyio.Event()
    async with anyio.create_task_group() as tg:
        if mode == "alone":
            tg.start_soon(_until_stored, producer, run_id, count, done)
        else:
            tg.start_soon(_reader, consumer.attach(run_id), count, done)
        await anyio.sleep(0.01)
        start = time.perf_counter()
        if mode in ("loop", "alone"):
            for _ in range(count):
                producer.publish(run_id, "updates", _DATA)
                await anyio.sleep(0)
        else:
            for _ in range(count):
                producer.publish(run_id, "updates", _DATA)
            if mode == "call":
                elapsed = time.perf_counter() - start
        await done.wait()
        if mode != "call":
            elapsed = time.perf_counter() - start
    producer.close(run_id)
    return elapsed / count * 1e6


async def _measure(name: str, make: Callable[[], Awaitable[tuple[Any, Any, Any]]],
                   count: int) -> None:
    producer, consumer, stop = await make()
    try:
        row = []
        for mode in ("call", "alone", "loop", "batch"):
            runs = [await _case(producer, consumer, count, mode) for _ in range(5)]
            row.append(f"{mode} {statistics.median(runs):7.2f}")
        print(f"{name:<14}", "   ".join(row), "µs/event")
    finally:
        await stop()


async def main(count: int) -> None:
    with RedisServer() as server:
        async with anyio.create_task_group() as tg:

            async def embedded() -> tuple[Any, Any, Any]:
                broker = Broker()

                async def stop() -> None:
                    pass

                return broker, broker, stop

            async def redis() -> tuple[Any, Any, Any]:
                scope = anyio.CancelScope()
                a = RedisBroker(server.url, is_finished=_never)
                b = RedisBroker(server.url, is_finished=_never)

                async def serve() -> None:
                    with scope:
                        async with anyio.create_task_group() as inner:
                            inner.start_soon(a.serve)
                            inner.start_soon(b.serve)

                tg.start_soon(serve)

                async def stop() -> None:
                    scope.cancel()

                return a, b, stop

            await _measure("Broker", embedded, count)
            await _measure("RedisBroker", redis, count)


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
