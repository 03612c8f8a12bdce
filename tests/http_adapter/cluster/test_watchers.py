"""Events nobody reads are neither encoded nor sent to Redis; every reader still gets every
event published after it joined (issue 32, `cluster.watchers`)."""

from __future__ import annotations

import uuid

import anyio
import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from http_adapter.agent_server.cluster.watchers import Watchers
from tests.services import RedisServer

from .conftest import brokers
from .test_broker import Reader, data, numbers, start_reading

pytestmark = pytest.mark.anyio


class Lazy:
    """`publish_lazy`'s events: one `values` event numbered `i`, counting encodings."""

    encoded: list[int] = []

    def __init__(self, i: int) -> None:
        self.i = i

    def __call__(self) -> list[tuple[str, bytes]]:
        Lazy.encoded.append(self.i)
        return [("values", data(self.i))]


async def _names(client: Redis, run_id: str) -> list[str]:
    entries = await client.xrange(f"graphrun:run:{run_id}")
    return [fields.get(b"e", b"end").decode() for _, fields in entries]


async def _until_registered(client: Redis, run_id: str) -> None:
    """A reader's registration is in Redis (`start_reading` tells that some XREVRANGE ran,
    which a producer's flusher may also send)."""
    with anyio.fail_after(5):
        while await client.zscore("graphrun:run:watched", run_id) is None:
            await anyio.sleep(0.005)


async def _until_ended(client: Redis, run_id: str) -> list[str]:
    with anyio.fail_after(5):
        while (names := await _names(client, run_id))[-1:] != ["end"]:
            await anyio.sleep(0.005)
    return names


async def test_events_nobody_watches_are_never_encoded_nor_sent(redis_url: str) -> None:
    client = Redis.from_url(redis_url)
    run_id = str(uuid.uuid4())
    Lazy.encoded = []
    async with brokers(redis_url, count=1, watch_grace=0) as ([a], _):
        a.open(run_id)
        a.publish(run_id, "metadata", data(-1))
        for i in range(3):
            a.publish_lazy(run_id, Lazy(i))
        a.close(run_id)
        assert await _until_ended(client, run_id) == ["metadata", "end"]
    assert Lazy.encoded == []
    await client.aclose()


async def test_a_reader_on_another_host_gets_every_event_after_it_joined(redis_url: str
                                                                         ) -> None:
    client = Redis.from_url(redis_url)
    run_id = str(uuid.uuid4())
    async with brokers(redis_url, watch_grace=0) as ([a, b], _), anyio.create_task_group() as tg:
        a.open(run_id)
        a.publish(run_id, "metadata", data(-1))
        a.publish_lazy(run_id, Lazy(0))
        with anyio.fail_after(5):
            while "metadata" not in await _names(client, run_id):  # flushed: 0 was dropped
                await anyio.sleep(0.005)
        remote = Reader(b.attach(run_id))
        await start_reading(client, remote, tg)  # registered before its join point was read
        await _until_registered(client, run_id)
        for i in range(1, 4):
            a.publish_lazy(run_id, Lazy(i))
            await anyio.sleep(0)
        a.close(run_id)
        assert numbers(await remote.end()) == [1, 2, 3]
        assert await _names(client, run_id) == ["metadata", "values", "values", "values", "end"]
    await client.aclose()


async def test_a_local_subscriber_gets_what_follows_its_join_with_exact_ids(redis_url: str
                                                                          ) -> None:
    """Held events are encoded when a reader joins here: they precede its join point, and the
    stream's `n` stays gap-free (a local join point is counted in events)."""
    client = Redis.from_url(redis_url)
    run_id = str(uuid.uuid4())
    Lazy.encoded = []
    async with brokers(redis_url, count=1, watch_grace=0, unwatched=30) as ([a], _), \
            anyio.create_task_group() as tg:
        a.open(run_id)
        a.publish(run_id, "metadata", data(-1))
        a.publish_lazy(run_id, Lazy(0))  # held: nobody watched when it was published
        local = Reader(a.attach(run_id))
        assert Lazy.encoded == [0]
        tg.start_soon(local.run)
        a.publish_lazy(run_id, Lazy(1))
        assert Lazy.encoded == [0, 1]  # watched here: encoded at once
        a.close(run_id)
        assert numbers(await local.end()) == [1]
        entries = await client.xrange(f"graphrun:run:{run_id}")
        assert [int(i.split(b"-")[1]) for i, _ in entries] == [1, 2, 3, 3]  # end: the same n
    await client.aclose()


async def test_a_registration_lapses_and_a_new_redis_drops_nothing_for_a_while(
        own_redis: RedisServer) -> None:
    """A reader that went away (crashed) stops being counted once its registration expires.
    A Redis restarted empty forgot every registration: a producer that sees its new epoch
    counts every run watched for `grace`, while readers register again."""
    client = Redis.from_url(own_redis.url)
    watchers = Watchers(client, "t:", ttl=0.3, grace=0.3)
    assert await watchers.who(["r1", "r2"]) == {"r1", "r2"}  # Redis is new to this producer
    await _until_who(watchers, set())
    await watchers.register("r1")
    assert await watchers.who(["r1", "r2"]) == {"r1"}
    await _until_who(watchers, set())  # not renewed: it lapses
    await watchers.register("r2")
    own_redis.halt()
    own_redis.start()
    with anyio.fail_after(5):
        while True:
            try:
                assert await watchers.who(["r1", "r2"]) == {"r1", "r2"}
                break
            except RedisConnectionError:  # the old connection, closed by the restart
                await anyio.sleep(0.05)
    await _until_who(watchers, set())
    await client.aclose()


async def _until_who(watchers: Watchers, expected: set[str]) -> None:
    with anyio.fail_after(5):
        while await watchers.who(["r1", "r2"]) != expected:
            await anyio.sleep(0.02)


async def test_a_creating_host_renews_its_registration_while_it_reads(redis_url: str) -> None:
    """A host that created a run with `stream` registered before the run could start, and
    renews that while it reads: the producing host drops none of its events, however many
    registration lifetimes the run lasts."""
    run_id = str(uuid.uuid4())
    Lazy.encoded = []
    async with brokers(redis_url, watch_ttl=0.3, watch_grace=0) as ([a, b], _), \
            anyio.create_task_group() as tg:
        b.open(run_id)
        creator = Reader(b.attach(run_id))
        await b.watch(run_id)
        tg.start_soon(creator.run)
        a.open(run_id)
        for i in range(40):  # ~4 lifetimes of a registration
            a.publish_lazy(run_id, Lazy(i))
            await anyio.sleep(0.03)
        a.close(run_id)
        assert numbers(await creator.end()) == list(range(40))


async def test_an_event_that_cannot_be_encoded_late_is_dropped_and_the_flusher_goes_on(
        redis_url: str) -> None:
    """A held event is encoded at the flush, after its run went on: if that fails (an object
    the encoder refuses), the event goes, with the error logged, and the run's others flow."""
    client = Redis.from_url(redis_url)
    run_id = str(uuid.uuid4())

    def broken() -> list[tuple[str, bytes]]:
        raise TypeError("Only dicts with str-like or number-like keys are supported")

    async with brokers(redis_url, watch_grace=0) as ([a, b], _), anyio.create_task_group() as tg:
        a.open(run_id)
        a.publish(run_id, "metadata", data(-1))
        remote = Reader(b.attach(run_id))
        await start_reading(client, remote, tg)
        await _until_registered(client, run_id)
        a.publish_lazy(run_id, broken)  # held: this host has not asked Redis yet
        a.publish_lazy(run_id, Lazy(1))
        a.close(run_id)
        assert [i for i in numbers(await remote.end()) if i >= 0] == [1]
        other = str(uuid.uuid4())  # the flusher still serves
        a.open(other)
        a.publish(other, "metadata", data(-1))
        a.close(other)
        assert await _until_ended(client, other) == ["metadata", "end"]
    await client.aclose()
