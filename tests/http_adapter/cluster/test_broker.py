"""RedisBroker (issue 19 §6, SCALEOUT §3): brokers on separate connections act as hosts sharing
one real Redis; producers on one, subscribers on another see every event once, in order."""

from __future__ import annotations

import logging
import time
from typing import Any

import anyio
import anyio.abc
import pytest
from redis.asyncio import Redis

from http_adapter.agent_server.broker import Event
from http_adapter.agent_server.cluster.broker import RedisSubscription, format_id
from http_adapter.agent_server.encode import sse_frame
from tests.services import RedisServer

from .conftest import brokers

pytestmark = pytest.mark.anyio

RUN = "1f0c0000-0000-6000-8000-000000000001"


class Reader:
    """Reads a subscription in the background, keeping what it got."""

    def __init__(self, subscription: RedisSubscription) -> None:
        self.subscription = subscription
        self.events: list[Event] = []
        self.ended = anyio.Event()
        self.ended_at = 0.0

    async def run(self) -> None:
        async for event in self.subscription:
            self.events.append(event)
        self.ended_at = time.monotonic()
        self.ended.set()

    async def until(self, count: int, timeout: float = 5.0) -> None:
        with anyio.fail_after(timeout):
            while len(self.events) < count:
                await anyio.sleep(0.005)

    async def end(self, timeout: float = 5.0) -> list[Event]:
        with anyio.fail_after(timeout):
            await self.ended.wait()
        return self.events


async def read_all(subscription: RedisSubscription, timeout: float = 5.0) -> list[Event]:
    reader = Reader(subscription)
    with anyio.fail_after(timeout):
        await reader.run()
    return reader.events


def data(i: int) -> bytes:
    return b'{"i":%d}' % i


def numbers(events: list[Event]) -> list[int]:
    """The events' payload numbers, after checking ids grow and `n` has no gap."""
    keys = [key for key, _, _ in events]
    assert keys == sorted(set(keys)), "ids strictly increasing"
    ns = [n for _, n in keys]
    assert ns == list(range(ns[0], ns[0] + len(ns))) if ns else True, "n gap-free"
    return [int(frame.split(b'"i":')[1].split(b"}")[0]) for _, _, frame in events]


async def until_flushed(client: Redis, run_id: str, count: int) -> None:
    with anyio.fail_after(5):
        while await client.xlen(f"graphrun:run:{run_id}") < count:
            await anyio.sleep(0.005)


async def calls(client: Redis, command: str) -> int:
    stats = await client.info("commandstats")
    return int(stats.get(f"cmdstat_{command}", {}).get("calls", 0))


async def start_reading(client: Redis, reader: Reader, tg: anyio.abc.TaskGroup) -> None:
    """Start `reader` on another host's run and wait until Redis has read its join point
    (the stream's end, when reading starts): what is flushed from then on, it sees."""
    before = await calls(client, "xrevrange")
    tg.start_soon(reader.run)
    with anyio.fail_after(5):
        while await calls(client, "xrevrange") == before:
            await anyio.sleep(0.005)


async def test_two_hosts_live_replay_and_mid_run_join(redis_url: str) -> None:
    client = Redis.from_url(redis_url)
    async with brokers(redis_url) as ([a, b], _), anyio.create_task_group() as tg:
        live = Reader(b.attach(RUN))  # before the run exists anywhere: sees it all
        await start_reading(client, live, tg)
        a.open(RUN, resumable=True)
        for i in range(20):
            a.publish(RUN, "values", data(i))
        await until_flushed(client, RUN, 20)
        joined = Reader(b.attach(RUN))  # mid-run, no Last-Event-ID: only what follows
        await start_reading(client, joined, tg)
        for i in range(20, 40):
            a.publish(RUN, "values", data(i))
            if i % 5 == 0:
                await anyio.sleep(0.01)
        a.close(RUN)
        assert numbers(await live.end()) == list(range(40))
        assert numbers(await joined.end()) == list(range(20, 40))
        for key, name, frame in live.events:  # the embedded broker's frames, id = entry id
            ms, n = key
            assert frame == sse_frame(name, data(n - 1), f"{ms}-{n}")
        cut = live.events[9][2].split(b"id: ")[1].split(b"\r\n")[0].decode()
        assert numbers(await read_all(b.attach(RUN, last_event_id=cut))) == list(range(10, 40))
        assert numbers(await read_all(b.attach(RUN, last_event_id="-1"))) == list(range(40))
        assert await read_all(b.attach(RUN)) == []  # a finished run, no Last-Event-ID
    await client.aclose()


async def test_local_join_is_exact_and_creating_host_sees_all(redis_url: str) -> None:
    """A subscriber on the producing host joins at exactly its call (events buffered before it
    are not shown); a host that opened the run and attached before it ran (create with
    `stream`) sees every event another host produces."""
    async with brokers(redis_url) as ([a, b], _), anyio.create_task_group() as tg:
        b.open(RUN, resumable=False)
        creator = Reader(b.attach(RUN))
        tg.start_soon(creator.run)
        a.open(RUN)
        for i in range(5):
            a.publish(RUN, "values", data(i))
        local = Reader(a.attach(RUN))  # events 0..4 not flushed yet
        tg.start_soon(local.run)
        for i in range(5, 10):
            a.publish(RUN, "values", data(i))
        a.close(RUN)
        assert numbers(await local.end()) == list(range(5, 10))
        assert numbers(await creator.end()) == list(range(10))
        assert all(b"id:" not in frame for _, _, frame in creator.events)  # not resumable
        # not resumable: Last-Event-ID does not replay, a closed run's stream is just empty
        assert await read_all(b.attach(RUN, last_event_id="-1")) == []


async def test_retried_run_continues_the_counter_on_another_host(redis_url: str) -> None:
    async with brokers(redis_url, 3) as ([a, b, c], _):
        a.open(RUN, resumable=True)
        for i in range(3):
            a.publish(RUN, "values", data(i))
        a.close(RUN)
        a.open(RUN, resumable=True)  # a retry on the same host
        a.publish(RUN, "values", data(3))
        async with Redis.from_url(redis_url) as client:
            await until_flushed(client, RUN, 5)  # 4 events + an end marker
        b.open(RUN, resumable=True)  # the host died without closing; B retries the run
        for i in range(4, 7):
            b.publish(RUN, "values", data(i))
        b.close(RUN)
        events = await read_all(c.attach(RUN, last_event_id="-1"))
        # one count over the attempts; the first attempt's end marker does not end the replay
        assert numbers(events) == list(range(7))
        assert [n for (_, n), _, _ in events] == list(range(1, 8))
        cut = f"{events[2][0][0]}-{events[2][0][1]}"
        assert numbers(await read_all(c.attach(RUN, last_event_id=cut))) == list(range(3, 7))


async def test_ids_grow_when_the_retrying_host_clock_is_behind(
        redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from http_adapter.agent_server.cluster import broker as module

    async with brokers(redis_url, 3) as ([a, b, c], _):
        a.open(RUN, resumable=True)
        for i in range(3):
            a.publish(RUN, "values", data(i))
        async with Redis.from_url(redis_url) as client:
            await until_flushed(client, RUN, 3)
        behind = module.now_ms() - 3_600_000
        monkeypatch.setattr(module, "now_ms", lambda: behind)  # B's clock: an hour late
        b.open(RUN, resumable=True)
        for i in range(3, 6):
            b.publish(RUN, "values", data(i))
        b.close(RUN)
        events = await read_all(c.attach(RUN, last_event_id="-1"))
        assert numbers(events) == list(range(6))  # ids still strictly increasing
        assert all(ms > behind for (ms, _), _, _ in events)


async def test_two_writers_of_one_run_lose_nothing(redis_url: str,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """A stale attempt still writing while the retry writes too: ids Redis refuses are
    numbered again after the stream's end, so both keep every event, in one gap-free count."""
    async with brokers(redis_url, 3) as ([a, b, c], _), Redis.from_url(redis_url) as client:
        a.open(RUN, resumable=True)
        b.open(RUN, resumable=True)  # both take the stream for empty
        with caplog.at_level(logging.WARNING):
            for turn in range(4):  # in turns: each writer's ids were taken by the other
                writer, base = (a, 0) if turn % 2 == 0 else (b, 100)
                for i in range(base + turn // 2 * 5, base + turn // 2 * 5 + 5):
                    writer.publish(RUN, "values", data(i))
                await until_flushed(client, RUN, 5 * (turn + 1))
        # turns 2 and 3 (the first refusal of b's guessed base is silent: a retry's usual case)
        assert caplog.text.count("renumbering") == 2
        a.close(RUN)
        events = await read_all(c.attach(RUN, last_event_id="-1"))
        got = numbers(events)  # ids strictly increasing, n gap-free
        assert sorted(got) == [*range(10), *range(100, 110)]
        assert [i for i in got if i < 100] == list(range(10))  # each writer's own order
        assert [i for i in got if i >= 100] == list(range(100, 110))


async def test_redis_restart_mid_run(own_redis: RedisServer) -> None:
    """Events published while Redis is down are buffered (publish neither raises nor waits)
    and arrive after the restart with their ids; the subscriber goes on from its cursor."""
    async with brokers(own_redis.url, 3) as ([a, b, c], finished), \
            anyio.create_task_group() as tg:
        a.open(RUN, resumable=True)
        # from the stream's start: another host's subscriber without a cursor joins at the
        # stream's end when it starts reading, which may be after the first flush
        reader = Reader(b.attach(RUN, last_event_id="-1"))
        tg.start_soon(reader.run)
        for i in range(5):
            a.publish(RUN, "values", data(i))
        await reader.until(5)
        own_redis.halt()
        with anyio.fail_after(0.05):
            for i in range(5, 10):
                a.publish(RUN, "values", data(i))
        a.close(RUN)
        finished.runs.add(RUN)  # the run ended while Redis was down
        await anyio.sleep(1.2)  # the flusher and the reader retry meanwhile (backoff ~1 s)
        own_redis.start()
        # a client resumes on a third host at once, before the producer's flush: Redis has
        # nothing of the run yet (not even whether it is resumable); its cursor still holds
        cut = format_id(reader.events[4][0])
        resumed = await read_all(c.attach(RUN, last_event_id=cut), timeout=10)
        assert numbers(resumed) == list(range(5, 10))
        assert numbers(await reader.end(10)) == list(range(10))


async def test_maxlen_and_ttls_bound_memory(redis_url: str) -> None:
    client = Redis.from_url(redis_url)
    other = "1f0c0000-0000-6000-8000-000000000002"
    options: dict[str, Any] = {"maxlen": 10, "open_ttl": 30, "resumable_ttl": 20,
                               "closed_ttl": 5}
    async with brokers(redis_url, 1, **options) as ([a], _):
        a.open(RUN, resumable=True)
        a.open(other)
        for i in range(50):
            a.publish(RUN, "values", data(i))
            a.publish(other, "values", data(i))
        await until_flushed(client, RUN, 10)
        with anyio.fail_after(5):
            while await client.xrevrange(f"graphrun:run:{RUN}", count=1) != [] and int(
                    (await client.xrevrange(f"graphrun:run:{RUN}", count=1))[0][0]
                    .split(b"-")[1]) < 50:
                await anyio.sleep(0.005)
        assert await client.xlen(f"graphrun:run:{RUN}") == 10
        assert 20 < await client.ttl(f"graphrun:run:{RUN}") <= 30  # while open
        a.close(RUN)
        a.close(other)
        with anyio.fail_after(5):
            while await client.ttl(f"graphrun:run:{other}") > 5:
                await anyio.sleep(0.005)
        assert 10 < await client.ttl(f"graphrun:run:{RUN}") <= 20  # resumable, closed
        keys = sorted(await client.keys("*"))
        assert keys == sorted(f"graphrun:run:{r}{s}".encode() for r in (RUN, other)
                              for s in ("", ":resumable"))
        assert all([0 < await client.ttl(key) <= 20 for key in keys])  # none without a TTL
        assert not a.has_subscribers(RUN) and not a._runs  # nothing of them kept here
    await client.aclose()


async def test_open_streams_ttl_is_refreshed(redis_url: str) -> None:
    """A long run with no event for longer than the open TTL keeps its stream."""
    async with brokers(redis_url, 1, open_ttl=1) as ([a], _), Redis.from_url(redis_url) as client:
        a.open(RUN, resumable=True)
        a.publish(RUN, "values", data(0))
        await until_flushed(client, RUN, 1)
        await anyio.sleep(1.6)
        assert await client.xlen(f"graphrun:run:{RUN}") == 1
        assert 0 < await client.ttl(f"graphrun:run:{RUN}") <= 1


async def _blocked_clients(client: Redis) -> int:
    return int((await client.info("clients"))["blocked_clients"])


async def test_abandoned_subscriber_leaves_nothing(redis_url: str) -> None:
    client = Redis.from_url(redis_url)
    async with brokers(redis_url) as ([a, b], _):
        a.open(RUN, resumable=True)
        a.publish(RUN, "values", data(0))
        await until_flushed(client, RUN, 1)
        keys = sorted(await client.keys("*"))
        async with anyio.create_task_group() as tg:
            subscription = b.attach(RUN, last_event_id="-1")
            reader = Reader(subscription)
            tg.start_soon(reader.run)
            await reader.until(1)
            with anyio.fail_after(5):
                while await _blocked_clients(client) != 1:  # its XREAD BLOCK
                    await anyio.sleep(0.005)
            assert b.has_subscribers(RUN) is False  # B did not open it: nothing local
            tg.cancel_scope.cancel()  # the client went away
        with anyio.fail_after(5):
            while await _blocked_clients(client):
                await anyio.sleep(0.005)
        # no per-subscriber keys: the one set of watched runs, whose entries expire (issue 32)
        assert sorted(await client.keys("*")) == sorted([*keys, b"graphrun:run:watched"])
        local = a.attach(RUN)
        assert a.has_subscribers(RUN)
        local.close()
        assert not a.has_subscribers(RUN)
    await client.aclose()


async def test_is_finished_ends_a_stream_whose_producer_died(redis_url: str) -> None:
    async with brokers(redis_url, finish_grace=0.3) as ([a, b], finished), \
            anyio.create_task_group() as tg:
        a.open(RUN, resumable=True)
        for i in range(3):
            a.publish(RUN, "values", data(i))
        reader = Reader(b.attach(RUN, last_event_id="-1"))
        tg.start_soon(reader.run)
        await reader.until(3)
        await anyio.sleep(0.3)  # no end marker will come: the stream waits ...
        assert not reader.ended.is_set()
        finished.runs.add(RUN)  # ... until the database says the run is over (and a live
        said = time.monotonic()  # producer would have had `finish_grace` to flush its tail)
        assert numbers(await reader.end(2)) == [0, 1, 2]
        assert reader.ended_at - said >= 0.3
        # joining a finished run whose stream is gone ends at once
        gone = "1f0c0000-0000-6000-8000-000000000003"
        finished.runs.add(gone)
        with anyio.fail_after(0.5):
            assert await read_all(b.attach(gone)) == []


async def test_full_buffer_drops_and_logs(own_redis: RedisServer,
                                          caplog: pytest.LogCaptureFixture) -> None:
    async with brokers(own_redis.url, 2, buffer=20) as ([a, b], _):
        a.open(RUN, resumable=True)
        a.publish(RUN, "values", data(0))
        async with Redis.from_url(own_redis.url) as client:
            await until_flushed(client, RUN, 1)
        own_redis.halt()
        with caplog.at_level(logging.WARNING):
            for i in range(1, 31):
                a.publish(RUN, "values", data(i))
        assert "event buffer full (20), 1 events dropped" in caplog.text
        own_redis.start()
        a.close(RUN)
        events = await read_all(b.attach(RUN, last_event_id="0-1"))
        assert numbers(events) == list(range(1, 21))  # the first 20 kept, in order


async def test_forget_deletes_and_idle_runs_are_not_kept(redis_url: str) -> None:
    """A rejected create leaves no stream; runs a host only created (another host ran them,
    so this one never closes them) do not pile up in its memory."""
    async with brokers(redis_url, 1, keep_idle=10) as ([a], _), \
            Redis.from_url(redis_url) as client:
        a.open(RUN, resumable=True)
        a.publish(RUN, "values", data(0))
        await until_flushed(client, RUN, 1)
        a.forget(RUN)
        with anyio.fail_after(5):
            while await client.keys("*"):
                await anyio.sleep(0.005)
        created = [f"1f0c0000-0000-6000-8000-{i:012d}" for i in range(100, 140)]
        for run_id in created:
            a.open(run_id)
            await anyio.sleep(0.002)
        assert len(a._runs) <= 12  # the oldest idle ones forgotten
        assert created[-1] in a._runs


async def test_unwatched_run_is_one_round_trip_and_remote_readers_see_it(redis_url: str
                                                                       ) -> None:
    """A run nobody on its host watches (not resumable) goes to Redis lazily: a short run's
    events and end marker in one append, its stream's end not read first; a reader on another
    host still gets every event once, in order."""
    client = Redis.from_url(redis_url)

    async with brokers(redis_url, unwatched=0.2) as ([a, b], _), anyio.create_task_group() as tg:
        remote = Reader(b.attach(RUN))  # another host: does not make the run urgent
        await start_reading(client, remote, tg)
        before = await calls(client, "eval")  # the append script
        a.open(RUN)
        for i in range(5):
            a.publish(RUN, "values", data(i))
            await anyio.sleep(0.01)
        assert await client.exists(f"graphrun:run:{RUN}") == 0  # still waiting on its host
        a.close(RUN)
        assert numbers(await remote.end()) == list(range(5))
        assert await calls(client, "eval") - before == 1  # was one per event, and more
    await client.aclose()


async def test_unwatched_retried_run_continues_its_stream(
        redis_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """A retried run's new host guesses an empty stream; the append refuses the guess and the
    ids go on after the first attempt's, gap-free, without the other-writer warning."""
    client = Redis.from_url(redis_url)
    async with brokers(redis_url) as ([a, b], finished):
        a.open(RUN)
        for i in range(3):
            a.publish(RUN, "values", data(i))
        a.close(RUN)
        await until_flushed(client, RUN, 4)  # three events and the end marker
        b.open(RUN)  # the retry, on another host
        for i in range(3, 5):
            b.publish(RUN, "values", data(i))
        b.close(RUN)
        await until_flushed(client, RUN, 7)
        entries = await client.xrange(f"graphrun:run:{RUN}")
        ns = [int(raw.split(b"-")[1]) for raw, _ in entries]
        assert ns == [1, 2, 3, 3, 4, 5, 5]  # an end marker keeps its n
        ids = [raw for raw, _ in entries]
        assert ids == sorted(ids, key=lambda raw: tuple(map(int, raw.split(b"-"))))
    assert "written by another host" not in caplog.text
    await client.aclose()


async def test_a_stale_attempts_events_are_dropped_once_a_later_attempt_wrote(
        redis_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 26: a host that stalled past its lease flushes what it buffered for its attempt
    after the run's next attempt (on another host) wrote the stream: those events go nowhere
    instead of being numbered again after the new attempt's. Before it, they were in."""
    async with brokers(redis_url, 3) as ([a, b, c], _), Redis.from_url(redis_url) as client:
        a.open(RUN, resumable=True, attempt=1)
        for i in range(3):
            a.publish(RUN, "values", data(i))
        await until_flushed(client, RUN, 3)
        b.open(RUN, resumable=True, attempt=2)  # the reaper gave the run to B
        for i in range(3, 6):
            b.publish(RUN, "values", data(i))
        await until_flushed(client, RUN, 6)
        with caplog.at_level(logging.WARNING):
            for i in range(100, 103):  # A resumes and flushes what it held
                a.publish(RUN, "values", data(i))
            with anyio.fail_after(5):
                while "stale attempt" not in caplog.text:
                    await anyio.sleep(0.005)
        b.close(RUN)
        assert numbers(await read_all(c.attach(RUN, last_event_id="-1"))) == list(range(6))
        assert await client.get(f"graphrun:run:{RUN}:attempt") == b"2"
        assert await client.ttl(f"graphrun:run:{RUN}:attempt") > 0
