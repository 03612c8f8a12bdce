"""Which runs a reader on any host watches, so that a producer sends Redis only the events
someone may read (issue 32: a `/runs/wait` turn of a long thread encoded its whole state into
two `values` events for nobody, and Redis kept them: 2.2 GB after 1,000 turns).

A reader registers its run in the `watched` sorted set (expiring, renewed while it reads)
before it reads its join point. A producer holds an unwatched run's events unencoded and asks,
when it flushes them, whether anyone registered since: if not, nobody registered before they
were published either, so no reader can be owed them (a reader gets what is published after it
joined). Nothing waits on a lease or a clock shared between hosts.

A Redis restarted empty lost the registrations: a producer that sees a new `epoch` token drops
nothing for `grace` seconds, while readers (who notice the restart as a failed read) register
again.
"""

from __future__ import annotations

import logging
import secrets
import time

import anyio
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["Watchers"]

logger = logging.getLogger(__name__)

_DOWN = (RedisConnectionError, RedisTimeoutError, OSError)

# A reader: run ARGV[1] watched for ARGV[2] ms more (by Redis's clock); expired ones go.
_WATCH = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local until_ms = now + tonumber(ARGV[2])
local old = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or '0')
if until_ms > old then redis.call('ZADD', KEYS[1], until_ms, ARGV[1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

# A producer: which of ARGV[2..] are watched now, then the epoch token (set to ARGV[1] if
# Redis has none: it is new, or restarted empty).
_WHO = """
redis.call('SET', KEYS[2], ARGV[1], 'NX')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 2, #ARGV do
  local until_ms = redis.call('ZSCORE', KEYS[1], ARGV[i])
  out[i - 1] = (until_ms and tonumber(until_ms) > now) and 1 or 0
end
out[#out + 1] = redis.call('GET', KEYS[2])
return out
"""


class Watchers:
    """Registrations of readers, and a producer's question about them, for one key prefix."""

    def __init__(self, client: Redis, prefix: str, *, ttl: float = 60.0, grace: float = 5.0
                 ) -> None:
        self.ttl = ttl  # a reader's registration; it renews it every third of that
        self._grace = grace
        self._keys = (f"{prefix}watched", f"{prefix}epoch")
        self._epoch: bytes | None = None  # the token this producer last saw
        self._grace_until = 0.0
        self._watch_script = client.register_script(_WATCH)
        self._who_script = client.register_script(_WHO)

    async def register(self, run_id: str) -> None:
        """`run_id` has a reader: its producer, wherever it is, sends its events from now on.
        Raises when Redis does not answer (a reader retries: it reads nothing meanwhile)."""
        await self._watch_script(keys=self._keys[:1], args=[run_id, int(self.ttl * 1000)])

    async def try_register(self, run_id: str, *, timeout: float = 1.0) -> bool:
        """`register`, best effort (a create that subscribes: Redis down, nothing is dropped
        for a while anyway, see `who`)."""
        with anyio.move_on_after(timeout):
            try:
                await self.register(run_id)
                return True
            except (*_DOWN, RedisError) as error:
                logger.debug("reader of %s not registered: %s", run_id, error)
        return False

    async def who(self, run_ids: list[str]) -> set[str]:
        """Which of `run_ids` may have a reader: all of them while Redis is new to this
        producer (readers register again after a restart). Raises when Redis is down."""
        token = secrets.token_hex(8)
        *flags, epoch = await self._who_script(keys=self._keys, args=[token, *run_ids])
        if epoch != self._epoch:
            self._epoch = epoch
            self._grace_until = time.monotonic() + self._grace
        if time.monotonic() < self._grace_until:
            return set(run_ids)
        return {i for i, flag in zip(run_ids, flags, strict=True) if int(flag)}
