"""Run event streams shared by every host: one Redis Stream per run (issue 19 §6, SCALEOUT §3).

The routes cannot tell `RedisBroker` from the embedded `broker.Broker`: the same methods, the same
`(key, name, sse_frame)` events, the same `<ms>-<n>` SSE ids for resumable runs. What differs is
where the events live, and that the producer and the subscribers may be different processes.

- Entry ids are explicit: `n` counts the run's events without gaps (continuing after the stream's
  last entry when another host reopens a retried run) and `ms` never goes back, so a
  `Last-Event-ID` from any host is an exact cursor.
- `publish` is synchronous and never waits on Redis: it appends to a bounded per-run buffer that
  the flusher (`serve`) pipelines into XADDs, retrying with backoff while Redis is down. Ids are
  assigned once, by the flusher, so a retried write keeps them.
- A subscriber reads with ONE cursor, replay and live alike (XREAD BLOCK from the last id seen),
  so nothing falls between replay and subscribe; after a Redis restart it reconnects and goes on
  from its cursor. Subscribers keep nothing in Redis.
- A run nobody on this host watches that is not resumable is flushed lazily: its events wait
  up to `unwatched` (50 ms) and go with its end marker or any other round trip, its stream's
  end is not read first (an empty stream is assumed, as for a first attempt; the append
  script refuses a wrong guess, and the end is then read). A short `/runs/wait` run so costs
  one Redis round trip instead of about five: ~3 ms of the loop's CPU a run on a 2-core
  machine where a run took ~10 (issue 19's +5 ms bar). A reader on another host sees such a
  run's events up to `unwatched` late; a subscriber here makes its run urgent again.
- Events nobody may read are not sent (`watchers`, issue 32): a run that is not resumable and
  has no reader here publishes its events unencoded (`publish_lazy`); the flusher asks Redis
  whether a reader on any host registered meanwhile, and encodes them only then. A run found
  watched encodes at once from then on; the events it held are encoded at the flush (so a
  node that changes a state object in place within those ~50 ms shows its change there).
- Memory is bounded: XADD MAXLEN per run, an EXPIRE while open (refreshed) and a TTL after close.
- Fenced by attempt (issue 26): a run opened with its `attempt` number writes only while no
  later attempt has written its stream (a key beside it keeps the highest). A stale attempt's
  events, say buffered before its host stalled past its lease, are dropped, not appended
  after the new attempt's.
- A run whose stream never gets its end marker (its host died) ends when the injected
  `is_finished(run_id)` says so, checked when XREAD waited and found nothing.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import anyio.abc
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ..broker import Event, parse_event_id
from ..encode import sse_frame
from ..loops import keep_going
from .append_script import APPEND
from .watchers import Watchers

__all__ = ["RedisBroker", "RedisSubscription"]

logger = logging.getLogger(__name__)

EventKey = tuple[int, int]
Events = Callable[[], list[tuple[str, bytes]]]  # a lazy publish: the events, encoded when asked
IsFinished = Callable[[str], Awaitable[bool]]
# Redis unreachable: the flusher and subscribers retry, never give up (issue 19 §6).
DOWN = (RedisConnectionError, RedisTimeoutError, OSError)
# A reader treats any failed read as Redis down: a connection killed mid-reply can surface as a
# parser error (InvalidResponse) rather than ConnectionError, and a stream must not be cut short
# by it (CI saw a joined stream's connection dropped while Redis was flushed and its clients killed).
READ_FAILS = (*DOWN, RedisError)
# Entries: an event has fields `e` (its name) and `d` (its data); the end marker `end`.
_REPLAY_ALL: EventKey = (-1, -1)
_BACKOFF = (0.05, 1.0)
# A Redis up for less than this may have lost streams whose producers still hold (and will
# re-send) their events: at least the flusher's longest backoff, plus its round trip.
_SETTLE = 5
_NOTHING_YET = object()


def now_ms() -> int:
    """This host's wall clock; entry ids never go below the stream's last (clocks differ)."""
    return time.time_ns() // 1_000_000


def parse_id(raw: bytes | str) -> EventKey:
    text = raw.decode() if isinstance(raw, bytes) else raw
    ms, _, n = text.partition("-")
    return int(ms), int(n or 0)


def format_id(key: EventKey) -> str:
    return f"{key[0]}-{key[1]}"


def connect(url: str, *, read_timeout: float | None = 10.0) -> Redis:
    """A client that fails fast (no hidden retry loop): callers own their retries and backoff."""
    return Redis.from_url(url, retry=Retry(NoBackoff(), 0), socket_connect_timeout=2.0,
                          socket_timeout=read_timeout)


class _Run:
    """One run opened on this host: its unflushed events and where its ids stand."""

    __slots__ = ("attempt", "base", "closed", "confirmed", "dropped", "expiring", "guessed",
                 "last", "lazy", "published", "queue", "resolved", "resumable", "subscribers",
                 "unsent", "watched")

    def __init__(self, resumable: bool, attempt: int = 0) -> None:
        self.resumable = resumable
        self.attempt = attempt  # the attempt writing here (0: not fenced), issue 26
        # None: the end marker; a callable: events published lazily (`publish_lazy`)
        self.queue: deque[tuple[str, bytes] | Events | None] = deque()
        self.lazy = 0  # callables in `queue`
        self.watched = False  # a reader on another host registered (issue 32)
        self.unsent: list[_Entry] = []  # ids assigned, not yet acknowledged by Redis
        self.base: EventKey | None = None  # the stream's last entry when this host opened it
        self.last: EventKey | None = None  # the last id assigned here
        self.resolved = anyio.Event()  # base is known
        self.guessed = False  # base was once assumed (0, 0) without reading the stream
        self.confirmed = False  # base was read, or a write after it was accepted
        self.published = 0  # events accepted since the open (a local subscriber's join point)
        self.closed = False
        self.dropped = 0
        self.subscribers = 0
        self.expiring = False  # its stream has its TTL (`_refresh` renews it while open)


class _Entry:
    __slots__ = ("data", "id", "maybe_written", "name")

    def __init__(self, key: EventKey, name: str, data: bytes) -> None:
        self.id = format_id(key)
        self.name = name  # "" for the end marker
        self.data = data
        self.maybe_written = False  # sent before a connection broke: Redis may have it


class RedisBroker:
    """Run id -> a Redis Stream; same public methods as `broker.Broker`, plus `serve`."""

    def __init__(self, url: str, *, is_finished: IsFinished, prefix: str = "graphrun:run:",
                 maxlen: int = 10_000, open_ttl: float = 3600.0, resumable_ttl: float = 600.0,
                 closed_ttl: float = 60.0, buffer: int = 10_000, block: float = 1.0,
                 batch: int = 500, keep_idle: int = 10_000, linger: float = 0.0005,
                 finish_grace: float = 2.0, down_grace: float = 5.0, unwatched: float = 0.05,
                 watch_ttl: float = 60.0, watch_grace: float = 5.0) -> None:
        self._client = connect(url, read_timeout=block + 10.0)
        self._is_finished = is_finished
        self._prefix = prefix
        self._maxlen = maxlen
        self._open_ttl = int(open_ttl)
        self._resumable_ttl = int(resumable_ttl)
        self._closed_ttl = int(closed_ttl)
        self._buffer = buffer
        self._block_ms = max(1, int(block * 1000))
        self._batch = batch
        self._keep_idle = self._evict_at = keep_idle
        self._linger = linger
        self._finish_grace = finish_grace
        self._down_grace = down_grace  # a finished run's stream while Redis cannot be read
        self._runs: dict[str, _Run] = {}
        self._dirty: dict[str, _Run] = {}
        self._unwatched = unwatched
        self._later: dict[str, tuple[float, _Run]] = {}  # unwatched runs: when they are due
        self._deletes: list[str] = []
        self._wake: anyio.Event | None = None
        self.healthy = False  # the last flush reached Redis
        self._born = time.monotonic()  # a Redis younger than this broker restarted under it
        self.watchers = Watchers(self._client, prefix, ttl=watch_ttl, grace=watch_grace)

    # -- the Broker protocol --------------------------------------------------------------------

    def open(self, run_id: str, *, resumable: bool = False, attempt: int = 0) -> None:
        """Start (or go on with) a run's stream here; `attempt`: the attempt that publishes
        (its events are dropped once a later attempt wrote, issue 26), 0 for none."""
        run = self._runs.get(run_id)
        if run is None:
            self._runs[run_id] = run = _Run(resumable, attempt)
            if len(self._runs) > self._evict_at:
                self._evict()
        else:  # a retried run (new attempt) on this host goes on after its end marker
            run.closed = False
            run.resumable = run.resumable or resumable
            run.attempt = attempt or run.attempt
        self._mark(run_id, run)

    def has_subscribers(self, run_id: str) -> bool:
        """Subscribers on this host (those of other hosts are not known here)."""
        run = self._runs.get(run_id)
        return bool(run and run.subscribers)

    def publish(self, run_id: str, name: str, data: bytes) -> None:
        """Buffer event `name` for the flusher; never waits on Redis (issue 19 §6)."""
        run = self._runs.get(run_id)
        if run is None or self._full(run_id, run):
            return
        run.queue.append((name, data))
        run.published += 1
        self._mark(run_id, run)

    def publish_lazy(self, run_id: str, events: Events) -> None:
        """Publish `events()`, encoded only if a reader may get them: at once for a resumable
        or watched run, else at the flush, and only if a reader registered by then (issue 32)."""
        run = self._runs.get(run_id)
        if run is None:
            return
        if run.resumable or run.subscribers or run.watched:
            for name, data in events():
                self.publish(run_id, name, data)
        elif not self._full(run_id, run):
            run.queue.append(events)
            run.lazy += 1
            self._mark(run_id, run)

    async def watch(self, run_id: str) -> None:
        """A reader of `run_id` is about to subscribe (a create that streams): the producer,
        on whichever host claims the run, sends its events (best effort: see `Watchers`)."""
        await self.watchers.try_register(run_id)

    def _full(self, run_id: str, run: _Run) -> bool:
        if len(run.queue) < self._buffer:
            return False
        run.dropped += 1
        if run.dropped == 1 or run.dropped % 1000 == 0:
            logger.warning("Run %s: event buffer full (%d), %d events dropped",
                           run_id, self._buffer, run.dropped)
        return True

    def close(self, run_id: str) -> None:
        """The run is over: an end marker follows its events, then the stream's TTL runs."""
        run = self._runs.get(run_id)
        if run is None or run.closed:
            return
        run.closed = True
        run.queue.append(None)
        self._mark(run_id, run)

    def forget(self, run_id: str) -> None:
        """The run never was (a rejected create): its stream goes."""
        run = self._runs.pop(run_id, None)
        self._dirty.pop(run_id, None)
        self._later.pop(run_id, None)
        if run is not None:
            run.closed = True
            run.resolved.set()
        self._deletes.append(run_id)
        self._kick()

    def attach(self, run_id: str, *, last_event_id: str | None = None) -> RedisSubscription:
        """Subscribe now: a run opened on this host is joined at exactly this point; another
        host's run at its stream's end when reading starts. With a `last_event_id` on a
        resumable run, the events after it are replayed first (same cursor)."""
        return RedisSubscription(self, run_id, parse_event_id(last_event_id),
                                 self._runs.get(run_id))

    # -- the flusher ----------------------------------------------------------------------------

    async def serve(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
                    ) -> None:
        """Flush buffered events until cancelled; then one last short flush (end markers)."""
        self._wake = anyio.Event()
        if self._dirty or self._deletes or self._later:  # published before serve started
            self._wake.set()
        try:
            task_status.started()
            # Redis down is handled inside; anything else restarts it after a backoff rather
            # than ending the lifespan's task group (issue 26 §1).
            await keep_going("Redis event flusher", self._flush_forever, log=logger)
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
                try:
                    self._due(everything=True)
                    while self._dirty or self._deletes:
                        await self._flush()
                except DOWN:
                    pass
            with anyio.CancelScope(shield=True):
                await self._client.aclose()

    def _mark(self, run_id: str, run: _Run) -> None:
        if run.resumable or run.subscribers or run.closed or not self._unwatched:
            self._later.pop(run_id, None)
            self._dirty[run_id] = run
            self._kick()
        elif run_id not in self._dirty and run_id not in self._later:
            self._later[run_id] = (time.monotonic() + self._unwatched, run)
            self._kick()  # the flusher's sleep ends when it is due

    def _watched(self, run_id: str) -> None:
        """A subscriber here: the run's events go at once from now on (those held lazily are
        encoded now: they precede its join point)."""
        run = self._runs.get(run_id)
        if run is not None and run.lazy:
            _encode_lazy(run_id, run, run.lazy, keep=True)
        later = self._later.pop(run_id, None)
        if later is not None:
            self._dirty[run_id] = later[1]
            self._kick()

    def _due(self, *, everything: bool = False) -> None:
        """Unwatched runs join a round trip made anyway, or go when the first is due."""
        if not self._later:
            return
        if not (everything or self._dirty or self._deletes):
            if min(due for due, _ in self._later.values()) > time.monotonic():
                return
        for run_id, (_, run) in self._later.items():
            self._dirty.setdefault(run_id, run)
        self._later.clear()

    def _wait_time(self, next_refresh: float) -> float:
        due = min((due for due, _ in self._later.values()), default=next_refresh)
        return max(0.0, min(due, next_refresh) - time.monotonic())

    def _evict(self) -> None:
        """Forget the oldest runs opened here that never had an event here: a host that
        created a run another host executes never closes it (its entry would stay forever)."""
        idle = [i for i, r in self._runs.items()
                if not r.published and not r.subscribers and not r.queue
                and i not in self._dirty]
        for run_id in idle[: len(self._runs) - self._keep_idle * 9 // 10]:
            del self._runs[run_id]
            self._later.pop(run_id, None)  # nothing of it to flush
        # all busy: look again only after a tenth more (not a scan per open)
        self._evict_at = max(self._keep_idle, len(self._runs) + self._keep_idle // 10)

    def _kick(self) -> None:
        if self._wake is not None:
            self._wake.set()

    async def _flush_forever(self) -> None:
        delay = _BACKOFF[0]
        refresh = max(0.25, self._open_ttl / 4)  # EXPIRE while open, refreshed (issue 19 §6)
        next_refresh = time.monotonic() + refresh
        while True:
            assert self._wake is not None
            with anyio.move_on_after(self._wait_time(next_refresh)):
                await self._wake.wait()
            if self._linger:  # let a burst gather: one round trip for many events
                await anyio.sleep(self._linger)
            self._wake = anyio.Event()
            self._due()
            try:
                if time.monotonic() >= next_refresh:
                    await self._refresh()
                    next_refresh = time.monotonic() + refresh
                while self._dirty or self._deletes:
                    await self._flush()
                self.healthy, delay = True, _BACKOFF[0]
            except (*DOWN, ResponseError) as error:
                if self.healthy or delay == _BACKOFF[0]:
                    logger.warning("Redis unreachable, run events buffered: %s", error)
                self.healthy = False
                for run in self._runs.values():  # Redis may come back empty: TTLs again
                    run.expiring = False
                await anyio.sleep(delay)
                delay = min(delay * 2, _BACKOFF[1])
                self._wake.set()

    async def _flush(self) -> None:
        await self._delete()
        dirty = list(self._dirty.items())
        self._dirty.clear()
        try:
            await self._settle_lazy(dirty)
            await self._bases(dirty)
            await self._write(dirty)
        except BaseException:
            for run_id, run in dirty:  # retried by the next round, ids kept
                if self._runs.get(run_id) is run:
                    self._dirty.setdefault(run_id, run)
            raise

    async def _settle_lazy(self, dirty: list[tuple[str, _Run]]) -> None:
        """Encode the lazily published events of runs a reader registered for; drop the
        others' (nobody registered before they were published: no one is owed them)."""
        held = [(i, r, r.lazy) for i, r in dirty if r.lazy]
        if not held:
            return
        watched = await self.watchers.who([i for i, _, _ in held])
        for run_id, run, asked in held:  # not those published since the question was sent
            run.watched = run.watched or run_id in watched
            keep = run.watched or bool(run.subscribers) or run.resumable
            _encode_lazy(run_id, run, asked, keep=keep)

    async def _delete(self) -> None:
        if self._deletes:
            await self._client.delete(*(k for i in self._deletes for k in self._all_keys(i)))
            self._deletes.clear()

    async def _bases(self, dirty: list[tuple[str, _Run]]) -> None:
        """Where each new run's ids start. A run watched here, or whose guess was wrong, reads
        its stream's end (its subscribers' join point); the others assume an empty stream."""
        unknown = [(i, r) for i, r in dirty if r.base is None]
        await self._resolve([(i, r) for i, r in unknown if r.subscribers or r.guessed])
        for _, run in unknown:
            if run.base is None:
                run.base = run.last = (0, 0)
                run.guessed = True

    async def _resolve(self, runs: list[tuple[str, _Run]]) -> None:
        """Read each new run's last entry: ids continue after it (a retried run) and a local
        subscriber's join point is there."""
        if not runs:
            return
        async with self._client.pipeline(transaction=False) as pipe:
            for run_id, run in runs:
                stream, flag = self._keys(run_id)
                pipe.xrevrange(stream, "+", "-", count=1)
                pipe.set(flag, b"1" if run.resumable else b"0", ex=self._open_ttl)
            replies = await pipe.execute()
        for (_, run), top in zip(runs, replies[::2], strict=True):
            run.base = run.last = parse_id(top[0][0]) if top else (0, 0)
            run.confirmed = True
            run.resolved.set()

    async def _write(self, dirty: list[tuple[str, _Run]]) -> None:
        """Append every buffered entry with its id, one command a run, all pipelined."""
        sent: list[tuple[str, _Run, list[_Entry], bool]] = []
        async with self._client.pipeline(transaction=False) as pipe:
            for run_id, run in dirty:
                entries = self._assign(run)
                if not entries:
                    continue
                closing = not entries[-1].name
                ttl = self._ttl(run) if closing else self._open_ttl
                retried = sum(1 for e in entries if e.maybe_written)  # a prefix
                force = closing or not run.expiring
                args: list[Any] = [self._maxlen, ttl, b"1" if run.resumable else b"0", retried,
                                   int(force), run.attempt]
                for entry in entries:
                    args += (entry.id, entry.name, entry.data)
                pipe.eval(APPEND, 3, *self._all_keys(run_id), *args)
                sent.append((run_id, run, entries, force))
            if not sent:
                return
            try:
                replies = await pipe.execute(raise_on_error=False)
            except BaseException:  # broken or cancelled mid-way: Redis may have some of them
                for _, _, entries, _ in sent:
                    for entry in entries:
                        entry.maybe_written = True
                raise
        self._acknowledge(sent, replies)

    def _assign(self, run: _Run) -> list[_Entry]:
        """Give queued events their ids: n gap-free, ms never going back (markers keep n)."""
        assert run.last is not None
        ms, n = run.last
        # a lazy event published during this flush's question waits for the next flush
        while run.queue and len(run.unsent) < self._batch and not callable(run.queue[0]):
            item = run.queue.popleft()
            ms = max(ms, now_ms())
            if item is None:
                ms = max(ms, run.last[0] + 1)  # above the last entry without spending an n
                run.unsent.append(_Entry((ms, n), "", b""))
            else:
                n += 1
                run.unsent.append(_Entry((ms, n), *item))
            run.last = (ms, n)
        return run.unsent

    def _ttl(self, run: _Run) -> int:
        return self._resumable_ttl if run.resumable else self._closed_ttl

    def _acknowledge(self, sent: list[tuple[str, _Run, list[_Entry], bool]], replies: list[Any]
                     ) -> None:
        failed: Exception | None = None
        for (run_id, run, entries, expiring), reply in zip(sent, replies, strict=True):
            if isinstance(reply, Exception):  # e.g. Redis out of memory: again, later
                failed = reply
                for entry in entries:  # a script is not undone: some may be in
                    entry.maybe_written = True
                self._dirty.setdefault(run_id, run)
                continue
            if int(reply[0]) < 0:
                self._stale(run_id, run, reply[1])
                continue
            if len(reply) > 1:
                # another host wrote this run's stream meanwhile (a stale attempt): the
                # entries from there on are numbered again after its end
                run.unsent = entries[int(reply[0]):]
                self._requeue(run_id, run, reply[1])
                continue
            run.unsent = []
            run.expiring = run.expiring or expiring
            if not run.confirmed:  # the stream took ids after the guessed base: it was right
                run.confirmed = True
                run.resolved.set()
            if run.queue:
                self._dirty.setdefault(run_id, run)
            elif run.closed and self._runs.get(run_id) is run:
                del self._runs[run_id]  # flushed to its end: nothing of it stays here
        if failed is not None:
            raise failed

    def _stale(self, run_id: str, run: _Run, error: object) -> None:
        """A later attempt of the run wrote its stream (issue 26): this one's events go."""
        logger.warning("Run %s: events of a stale attempt dropped (%s)", run_id,
                       error.decode() if isinstance(error, bytes) else error)
        run.unsent = []
        run.queue.clear()
        run.lazy = 0
        run.closed = True
        run.resolved.set()
        if self._runs.get(run_id) is run:
            del self._runs[run_id]

    def _requeue(self, run_id: str, run: _Run, error: object) -> None:
        """Ids taken by another writer (or a guessed base was wrong: a retried run): re-read
        the stream's end and number them again."""
        if run.confirmed:
            logger.warning("Run %s: stream written by another host (%s), renumbering", run_id,
                           error)
        items = [(e.name, e.data) if e.name else None for e in run.unsent]
        run.queue.extendleft(reversed(items))  # type: ignore[arg-type]
        run.unsent = []
        run.base = run.last = None
        self._dirty.setdefault(run_id, run)

    async def _refresh(self) -> None:
        open_runs = [i for i, r in self._runs.items() if not r.closed]
        if not open_runs:
            return
        async with self._client.pipeline(transaction=False) as pipe:
            for run_id in open_runs:
                for key in self._all_keys(run_id):
                    pipe.expire(key, self._open_ttl)
            await pipe.execute()

    def _keys(self, run_id: str) -> tuple[str, str]:
        """The run's stream and its `resumable` flag."""
        return f"{self._prefix}{run_id}", f"{self._prefix}{run_id}:resumable"

    def _all_keys(self, run_id: str) -> tuple[str, str, str]:
        """`_keys` and the highest attempt that wrote the stream (issue 26)."""
        return (*self._keys(run_id), f"{self._prefix}{run_id}:attempt")


def _encode_lazy(run_id: str, run: _Run, count: int, *, keep: bool) -> None:
    """Replace the first `count` of `run`'s lazily published events by their encoding
    (`keep`), or drop them."""
    queue: deque[tuple[str, bytes] | Events | None] = deque()
    left = count
    for item in run.queue:
        if not callable(item) or not left:
            queue.append(item)
            continue
        left -= 1
        if keep:
            try:
                encoded = item()
            except Exception:  # its run has gone on: the event goes, the flusher stays
                logger.exception("an event of run %s could not be encoded", run_id)
                continue
            queue.extend(encoded)
            run.published += len(encoded)
    run.queue = queue
    run.lazy -= count


class _Unreadable(Exception):
    """Redis stayed down while the run is over: the subscription ends."""


def _note_unusual(error: BaseException) -> None:
    """Log a read failure that is not a plain lost connection (those are expected here)."""
    if not isinstance(error, DOWN):
        logger.warning("reading a run's events from Redis failed (%r): retrying", error)


class RedisSubscription:
    """One reader of a run's stream: async-iterable of `(key, name, sse_frame)`."""

    def __init__(self, broker: RedisBroker, run_id: str, after: EventKey | None,
                 local: _Run | None) -> None:
        self._broker = broker
        self._run_id = run_id
        self._after = after
        self._host_run = local  # counted in `has_subscribers` while this is open
        self._closed = False
        self._delay = _BACKOFF[0]  # the read's backoff while Redis is down
        self._rewatch = 0.0  # when its registration as a reader is renewed (issue 32)
        self._ended = local is not None and local.closed
        if local is not None:
            local.subscribers += 1
            broker._watched(run_id)
        # The exact join point is known here when this host produces the run, or when the
        # run was opened here a moment ago (create with `stream`: its stream's end is read
        # before the run can start anywhere). Otherwise: the stream's end when reading starts.
        if local is not None and not local.published and local.base is not None:
            local = None
        self._local = local
        self._joined = local.published if local is not None else 0

    async def __aiter__(self) -> AsyncIterator[Event]:
        try:
            start = await self._start()
            if start is not None:
                async for event in self._read(*start):
                    yield event
        except _Unreadable:
            return
        finally:
            self.close()

    def close(self) -> None:
        if not self._closed and self._host_run is not None:
            self._host_run.subscribers -= 1
        self._closed = True

    async def _start(self) -> tuple[str, int | None] | None:
        """The cursor to read after and the last `n` to skip; None: nothing to read.

        A finished run with no stream at all while Redis has just restarted may still have
        its events in its producer's buffer (re-sent within the flusher's backoff): the
        reader waits for them that long rather than end with a gap."""
        if not self._ended:  # before the join point is read: its producer sends from here on
            await self._retry(lambda: self._broker.watchers.register(self._run_id))
            self._rewatch = time.monotonic() + self._broker.watchers.ttl / 3
        while True:
            start = await self._start_once()
            if start is not _NOTHING_YET:
                return start  # type: ignore[return-value]
            if not await self._redis_restarted_lately():
                return None
            await anyio.sleep(0.1)

    async def _redis_restarted_lately(self) -> bool:
        """Redis came up less than `_SETTLE` s ago, after this broker: it restarted under us."""
        broker = self._broker
        info = await self._retry(lambda: broker._client.info("server"))
        uptime = int(info.get("uptime_in_seconds", _SETTLE))
        return uptime < _SETTLE and time.monotonic() - broker._born > uptime + 1

    async def _start_once(self) -> tuple[str, int | None] | None | object:
        broker, local = self._broker, self._local
        stream, flag = broker._keys(self._run_id)
        if self._after is not None:
            host_run = self._host_run
            # no flag (yet: Redis restarted and the producer has not flushed again): the
            # cursor is honoured, a stream that is not resumable says so with "0"
            resumable = (host_run.resumable if host_run is not None
                         else await self._retry(lambda: broker._client.get(flag)) != b"0")
            if resumable:
                return ("0-0" if self._after == _REPLAY_ALL else format_id(self._after)), None
        if self._ended:
            return None
        if local is not None:
            await self._resolved(local)
            if local.base is None:  # forgotten
                return None
            return format_id(local.base), local.base[1] + self._joined
        top = await self._retry(lambda: broker._client.xrevrange(stream, "+", "-", count=1))
        if top:
            return (None if b"end" in top[0][1] else (top[0][0].decode(), None))
        if await self._finished():
            return _NOTHING_YET
        return "0-0", None

    async def _resolved(self, local: _Run) -> None:
        """Wait until the flusher has read the stream's end (it needs Redis); a run opened
        while Redis is down that ends before Redis is back ends the stream after
        `down_grace` (`_Unreadable`) instead of hanging (issue 19 §1)."""
        since = time.monotonic()
        while not local.resolved.is_set():
            with anyio.move_on_after(0.25):
                await local.resolved.wait()
            if (not local.resolved.is_set()
                    and time.monotonic() - since >= self._broker._down_grace
                    and await self._finished()):
                raise _Unreadable

    async def _finished(self) -> bool:
        try:
            return await self._broker._is_finished(self._run_id)
        except Exception:  # the database may be down too: keep waiting for events
            logger.exception("is_finished(%s) failed", self._run_id)
            return False

    async def _retry(self, call: Callable[[], Awaitable[Any]]) -> Any:
        """`call()` until Redis answers; `_Unreadable` once it has been down `down_grace`
        and the run is over (the stream ends instead of hanging, issue 19 §1)."""
        delay, since = _BACKOFF[0], time.monotonic()
        while True:
            try:
                return await call()
            except READ_FAILS as error:
                _note_unusual(error)
                if (time.monotonic() - since >= self._broker._down_grace
                        and await self._finished()):
                    raise _Unreadable from None
                await anyio.sleep(delay)
                delay = min(delay * 2, _BACKOFF[1])

    async def _renew(self) -> None:
        """Keep this reader registered (issue 32); a failed try is retried soon."""
        watchers = self._broker.watchers
        registered = await watchers.try_register(self._run_id)
        self._rewatch = time.monotonic() + (watchers.ttl / 3 if registered else 0.5)

    async def _xread(self, stream: str, cursor: str, block: int | None, down: bool
                     ) -> tuple[Any, bool]:
        """One XREAD: (reply, False), or (None, True) after a backoff when Redis is down."""
        broker = self._broker
        try:
            return await broker._client.xread({stream: cursor}, count=broker._batch,
                                              block=block), False
        except READ_FAILS as error:
            _note_unusual(error)
            self._delay = min(self._delay * 2, _BACKOFF[1]) if down else _BACKOFF[0]
            await anyio.sleep(self._delay)
            return None, True

    async def _read(self, cursor: str, skip: int | None) -> AsyncIterator[Event]:
        """XREAD BLOCK from the last id seen, replay and live alike. Ends at an end marker that
        nothing follows (a retried run's stream goes on after its first attempt's), or when
        `is_finished` has held for `finish_grace` without an entry (the producer died; a
        live one flushes its tail, buffered while Redis was down, within its backoff).
        A finished run's stream also ends when Redis stays unreachable for `down_grace`
        (or fails every read: connections killed): a stream never hangs on Redis, issue
        19 §1; the tail it may miss was in Redis, which holds nothing that cannot be lost."""
        broker = self._broker
        stream = broker._keys(self._run_id)[0]
        host_run = self._host_run
        resumable: bool | None = host_run.resumable if host_run is not None else None
        block: int | None = broker._block_ms
        finished_at: float | None = None  # when `is_finished` first said so
        down = False
        while not self._closed:
            if time.monotonic() >= self._rewatch:
                await self._renew()
            was_down = down
            reply, down = await self._xread(stream, cursor, block, down)
            if was_down and not down:
                finished_at = None  # Redis is back: the producer's tail gets its grace again
                self._rewatch = 0.0  # and it may have restarted empty: register again
            if not reply:
                if block is None and not down:
                    return
                if finished_at is None:
                    finished_at = time.monotonic() if await self._finished() else None
                elif time.monotonic() - finished_at >= (
                        broker._down_grace if down else broker._finish_grace):
                    return  # the producer would have flushed its tail by now
                continue
            if resumable is None:
                resumable = await self._retry(lambda: broker._client.get(stream + ":resumable")
                                              ) == b"1"
            block = broker._block_ms
            for raw, fields in reply[0][1]:
                cursor = raw.decode()
                if b"end" in fields:
                    block = None  # over, unless something follows: look without waiting
                    continue
                block = broker._block_ms
                key = parse_id(cursor)
                if skip is not None and key[1] <= skip:
                    continue
                name = fields[b"e"].decode()
                yield key, name, sse_frame(name, fields[b"d"], cursor if resumable else None)
