"""Signals over Redis pub/sub (issue 19 §7, SCALEOUT §4): two instances act as two hosts."""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from http_adapter.agent_server.cluster.signals import Signals
from tests.services import RedisServer

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def two_hosts(url: str) -> AsyncIterator[tuple[Signals, Signals]]:
    a, b = Signals(url), Signals(url)
    async with anyio.create_task_group() as tg:
        await tg.start(a.serve)
        await tg.start(b.serve)
        yield a, b
        tg.cancel_scope.cancel()


async def healthy(*signals: Signals, want: bool = True) -> None:
    with anyio.fail_after(10):
        while any(s.healthy is not want for s in signals):
            await anyio.sleep(0.01)


class Inbox:
    def __init__(self) -> None:
        self.got: list[str] = []

    def __call__(self, message: str) -> None:
        self.got.append(message)

    async def until(self, *expected: str) -> None:
        with anyio.fail_after(5):
            while self.got != list(expected):
                await anyio.sleep(0.005)


async def test_delivery_across_hosts(redis_url: str) -> None:
    async with two_hosts(redis_url) as (a, b):
        await healthy(a, b)
        done, other, wake = Inbox(), Inbox(), Inbox()
        a.subscribe("done:r1", done)
        a.subscribe("done:r2", other)
        stop_wake = b.subscribe("wake", wake)
        b.publish("done:r1", "success")
        a.publish("wake")  # its own host hears it too, like every other
        await done.until("success")
        await wake.until("")
        stop_wake()
        a.publish("wake")
        b.publish("done:r1", "again")
        await done.until("success", "again")
        assert wake.got == [""] and other.got == []


async def test_reconnects_after_a_redis_restart(own_redis: RedisServer) -> None:
    async with two_hosts(own_redis.url) as (a, b):
        await healthy(a, b)
        inbox = Inbox()
        a.subscribe("cancel", inbox)
        own_redis.halt()
        with anyio.fail_after(0.05):
            b.publish("cancel", "while-down")  # neither raises nor waits
        await healthy(a, b, want=False)
        own_redis.start()
        await healthy(a, b)
        b.publish("cancel", "after")
        with anyio.fail_after(5):
            while "after" not in inbox.got:
                await anyio.sleep(0.005)
        # held back while down, sent on reconnect: delivered if the listener was back first
        assert set(inbox.got) <= {"while-down", "after"}


async def test_publish_without_redis_never_raises() -> None:
    url = "redis://127.0.0.1:1/0"  # nothing listens there
    signals = Signals(url)
    signals.publish("wake")  # before serve: queued
    async with anyio.create_task_group() as tg:
        await tg.start(signals.serve)
        for _ in range(100):
            signals.publish("wake", "x")
        await anyio.sleep(0.2)
        assert signals.healthy is False
        tg.cancel_scope.cancel()


async def test_a_hung_redis_is_noticed(own_redis: RedisServer) -> None:
    """A Redis that stops answering without closing anything (SIGSTOP) turns `healthy` off
    within two PING periods; once it answers again the listener is back."""
    signals = Signals(own_redis.url, ping=0.2)
    async with anyio.create_task_group() as tg:
        await tg.start(signals.serve)
        await healthy(signals)
        pid = int(own_redis.pidfile.read_text())
        os.kill(pid, signal.SIGSTOP)
        try:
            with anyio.fail_after(3):
                while signals.healthy:
                    await anyio.sleep(0.02)
        finally:
            os.kill(pid, signal.SIGCONT)
        await healthy(signals)
        inbox = Inbox()
        signals.subscribe("wake", inbox)
        signals.publish("wake", "again")
        await inbox.until("again")
        tg.cancel_scope.cancel()
