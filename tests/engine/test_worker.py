"""A sync graph's worker thread is abandoned when its consumer stops (`engine/_worker.py`).

The parity scenarios (`parity/scenarios_cancel.py`) cover a cancelled task and an asyncio
cancel scope against LangGraph; here the other ways a consumer stops: leaving the `async for`
(the stream is closed, not cancelled), and a cancel scope on trio.
"""

from __future__ import annotations

import operator
import threading
import time
from typing import Annotated, Any, TypedDict

import anyio
import pytest

from checkpoints import InMemorySaver
from engine import START, StateGraph

pytest.importorskip("trio")


class S(TypedDict):
    log: Annotated[list, operator.add]


class _Blocked:
    """`first -> slow -> last`; `slow` blocks until `release` (or 5 s, the waiting case)."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.started, self.release, self.finished = (threading.Event() for _ in range(3))
        b = StateGraph(S)
        b.add_node("first", lambda s: {"log": ["first"]})
        b.add_node("slow", self._slow)
        b.add_node("last", self._last)
        b.add_edge(START, "first")
        b.add_edge("first", "slow")
        b.add_edge("slow", "last")
        self.saver = InMemorySaver()
        self.graph = b.compile(checkpointer=self.saver)
        self.config = {"configurable": {"thread_id": "1"}}

    def _slow(self, state: S) -> dict[str, Any]:
        self.started.set()
        self.release.wait(5)
        self.finished.set()
        return {"log": ["slow"]}

    def _last(self, state: S) -> dict[str, Any]:
        self.ran.append("last")
        return {"log": ["last"]}

    def saved(self) -> list[Any]:
        return [(t.checkpoint["id"], t.pending_writes) for t in self.saver.list(self.config)]

    async def check_abandoned(self, began: float) -> None:
        """The consumer got back at once; the node's late result changes nothing."""
        assert time.monotonic() - began < 1.0
        assert not self.finished.is_set()
        saved = self.saved()
        self.release.set()
        await anyio.to_thread.run_sync(self.finished.wait, 5)
        await anyio.sleep(0.3)
        assert self.ran == [] and self.saved() == saved
        assert self.graph.get_state(self.config).next == ("slow",)


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_leaving_the_stream_mid_node_returns_at_once(anyio_backend: str) -> None:
    blocked = _Blocked()
    stream = blocked.graph.astream({"log": []}, blocked.config, stream_mode="updates")
    async for chunk in stream:
        assert chunk == {"first": {"log": ["first"]}}
        await anyio.to_thread.run_sync(blocked.started.wait, 5)
        break
    began = time.monotonic()
    await stream.aclose()
    await blocked.check_abandoned(began)


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_a_cancel_scope_on_trio_returns_at_once(anyio_backend: str) -> None:
    blocked = _Blocked()
    began = 0.0
    async with anyio.create_task_group() as tg:
        async def cancel_when_started() -> None:
            nonlocal began
            await anyio.to_thread.run_sync(blocked.started.wait, 5)
            began = time.monotonic()
            tg.cancel_scope.cancel()

        tg.start_soon(cancel_when_started)
        async for _ in blocked.graph.astream({"log": []}, blocked.config):
            pass
    await blocked.check_abandoned(began)
