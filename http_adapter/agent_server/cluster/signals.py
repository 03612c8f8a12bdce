"""Signals between hosts over Redis pub/sub: wake-ups, run completion, cancels (SCALEOUT §4).

Nothing here is durable (issue 19 §1): a signal lost while Redis is down is made up for by the
queue's database poll. So `publish` is best effort: it never raises and never waits on Redis (a
bounded outbox the sender drains). The listener holds ONE pattern subscription on the prefix and
dispatches by channel locally, so subscribing to a new channel (`done:<run_id>`) costs no round
trip and a reconnect has a single thing to restore. `serve` owns both tasks and reconnects with
backoff; `healthy` says whether Redis answers (for `/ok`).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable

import anyio
import anyio.abc
from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.exceptions import TimeoutError as RedisTimeoutError

from ..loops import keep_going
from .broker import DOWN, connect

__all__ = ["Callback", "Signals"]

logger = logging.getLogger(__name__)

Callback = Callable[[str], object]  # called with the message on the event loop; must not block
_BACKOFF = (0.05, 2.0)
_QUIET = 30.0


class Signals:
    """Best-effort pub/sub: `publish(channel, message)`, `subscribe(channel, callback)`."""

    def __init__(self, url: str, *, prefix: str = "graphrun:signal:", outbox: int = 10_000,
                 ping: float = 5.0) -> None:
        self._url = url
        self._prefix = prefix
        self._ping = ping  # a quiet listener PINGs this often; no answer by the next: down
        self._outbox: deque[tuple[str, str]] = deque(maxlen=outbox)  # oldest dropped when full
        self._callbacks: dict[str, list[Callback]] = {}
        self._wake: anyio.Event | None = None
        self._listening = False
        self._sending = True
        self._warned = -_QUIET  # when the listener last warned (time.monotonic)

    @property
    def healthy(self) -> bool:
        """The listener is subscribed and the last send went through."""
        return self._listening and self._sending

    def publish(self, channel: str, message: str = "") -> None:
        """Queue `message` for every host's subscribers of `channel`; never raises or blocks."""
        try:
            self._outbox.append((channel, message))
            if self._wake is not None:
                self._wake.set()
        except Exception:  # best effort by contract (a wake-up has the DB poll behind it)
            logger.exception("signal %s not queued", channel)

    def subscribe(self, channel: str, callback: Callback) -> Callable[[], None]:
        """Call `callback(message)` for each signal on `channel`; returns the unsubscribe."""
        self._callbacks.setdefault(channel, []).append(callback)

        def unsubscribe() -> None:
            callbacks = self._callbacks.get(channel, [])
            if callback in callbacks:
                callbacks.remove(callback)
            if not callbacks:
                self._callbacks.pop(channel, None)

        return unsubscribe

    async def serve(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
                    ) -> None:
        """Listen and send until cancelled, reconnecting with backoff."""
        self._wake = anyio.Event()
        listener, sender = connect(self._url, read_timeout=None), connect(self._url)
        try:
            async with anyio.create_task_group() as tg:
                # Redis down is handled inside each; anything else restarts the loop after a
                # backoff rather than ending the lifespan's task group (issue 26 §1).
                tg.start_soon(keep_going, "Redis signal listener",
                              lambda: self._listen(listener))
                tg.start_soon(keep_going, "Redis signal sender", lambda: self._send(sender))
                task_status.started()
        finally:
            with anyio.CancelScope(shield=True):
                await listener.aclose()
                await sender.aclose()

    # -- sending --------------------------------------------------------------------------------

    async def _send(self, client: Redis) -> None:
        delay = _BACKOFF[0]
        while True:
            assert self._wake is not None
            if not self._outbox:
                await self._wake.wait()
                self._wake = anyio.Event()
            batch = list(self._outbox)
            try:
                async with client.pipeline(transaction=False) as pipe:
                    for channel, message in batch:
                        pipe.publish(self._prefix + channel, message)
                    await pipe.execute()
            except DOWN as error:
                if self._sending:
                    logger.warning("Redis unreachable, signals held back: %s", error)
                self._sending = False
                await anyio.sleep(delay)
                delay = min(delay * 2, _BACKOFF[1])
                continue
            for _ in batch:  # (had the full outbox dropped its oldest meanwhile, unsent
                if self._outbox:  # newer ones go here: best effort, the DB poll is behind)
                    self._outbox.popleft()
            self._sending, delay = True, _BACKOFF[0]

    # -- listening ------------------------------------------------------------------------------

    async def _listen(self, client: Redis) -> None:
        delay = _BACKOFF[0]
        while True:
            pubsub = client.pubsub()
            try:
                await pubsub.psubscribe(self._prefix + "*")
                self._listening, delay = True, _BACKOFF[0]
                await self._dispatch(pubsub)
            except DOWN as error:
                # once per outage, and at most every _QUIET s while connections keep being
                # dropped right after each subscribe (890 lines in 10 s in test_chaos)
                if self._listening and time.monotonic() - self._warned >= _QUIET:
                    logger.warning("Redis unreachable, signals not received: %s", error)
                    self._warned = time.monotonic()
                self._listening = False
                await anyio.sleep(delay)
                delay = min(delay * 2, _BACKOFF[1])
            finally:
                with anyio.CancelScope(shield=True):
                    await pubsub.aclose()

    async def _dispatch(self, pubsub: PubSub) -> None:
        """Deliver messages; a Redis that hangs (no error, no answer) is noticed by PING."""
        skip = len(self._prefix)
        pinged = False
        while True:
            message = await pubsub.get_message(timeout=self._ping)
            if message is None:
                if pinged:
                    raise RedisTimeoutError(f"no answer to PING in {self._ping} s")
                await pubsub.ping()
                pinged = True
                continue
            pinged = False
            if message["type"] != "pmessage":
                continue
            channel, data = message["channel"].decode()[skip:], message["data"].decode()
            for callback in list(self._callbacks.get(channel, ())):
                try:
                    callback(data)
                except Exception:
                    logger.exception("signal callback for %s failed", channel)
