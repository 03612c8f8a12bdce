"""Hosts for the cluster queue's tests: each its own server state (PgRecords, PostgresSaver)
and ClusterQueue on one PostgreSQL database (and optionally its own Signals on one Redis), all in this process.

The graph notes every node execution in `RAN`; its `slow` node waits while its tag is in
`HELD`, so a test can act while a run is inside it.
"""

from __future__ import annotations

import asyncio
import operator
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, TypedDict

import anyio
import msgspec

from checkpoints import PostgresSaver
from engine import START, StateGraph
from http_adapter.agent_server.cluster.queue import ClusterQueue
from http_adapter.agent_server.cluster.records import PgRecords
from http_adapter.agent_server.settings import Settings
from http_adapter.agent_server.state import ServerState

from ._helpers import rows, run, thread

RAN: list[str] = []  # "<tag> <node>" per node execution, across both hosts
HELD: set[str] = set()  # tags whose `slow` node waits


class State(TypedDict, total=False):
    tag: str
    fail: bool  # `three` raises
    block: float  # seconds `slow` blocks the event loop (a sync call in an async node)
    log: Annotated[list, operator.add]


def one(state: State) -> dict[str, Any]:
    RAN.append(f"{state['tag']} one")
    return {"log": ["one"]}


async def slow(state: State) -> dict[str, Any]:
    RAN.append(f"{state['tag']} slow")
    if state.get("block"):
        time.sleep(state["block"])
    while state["tag"] in HELD:
        await asyncio.sleep(0.02)
    return {"log": ["slow"]}


def three(state: State) -> dict[str, Any]:
    RAN.append(f"{state['tag']} three")
    if state.get("fail"):
        raise ValueError("boom from three")
    return {"log": ["three"]}


_builder = StateGraph(State)
for _name, _node in (("one", one), ("slow", slow), ("three", three)):
    _builder.add_node(_name, _node)
_builder.add_edge(START, "one")
_builder.add_edge("one", "slow")
_builder.add_edge("slow", "three")
GRAPH = _builder.compile()


class Host:
    def __init__(self, state: ServerState, queue: ClusterQueue) -> None:
        self.state, self.queue = state, queue
        self.scope = anyio.CancelScope()  # cancel: this host stops serving its queue


@asynccontextmanager
async def hosts(url: str, n: int = 2, *, signals: Any = None,
                **options: Any) -> AsyncIterator[list[Host]]:
    """`n` hosts serving one database (each its own state, saver, queue and heartbeat);
    `signals()` makes each host's Signals (served here), if given."""
    options = {"lease": 1.0, "heartbeat": 0.25, "reaper": 0.3, "poll": 0.3, **options}
    made: list[Host] = []
    for _ in range(n):
        state = ServerState(Settings(graphs={"agent": GRAPH}, data_dir=None, workers=4))
        prepared = options.get("prepared_statements", True)  # False behind PgBouncer
        state.records = PgRecords(url, prepared_statements=prepared)  # all in one database
        state.saver = PostgresSaver(url, prepared_statements=prepared)
        await state.open()
        queue = ClusterQueue(state, url, signals=signals() if signals else None, **options)
        made.append(Host(state, queue))
    try:
        async with anyio.create_task_group() as tg:
            for host in made:
                if host.queue.signals is not None:
                    await tg.start(host.queue.signals.serve)
                tg.start_soon(serve, host)
            try:
                yield made
            finally:
                HELD.clear()  # a node held in a worker thread would keep the hosts alive
                tg.cancel_scope.cancel()
    finally:
        for host in made:
            await host.queue.close()
            await host.state.close()
        RAN.clear()
        HELD.clear()


async def serve(host: Host) -> None:
    with host.scope:
        await host.queue.serve()


async def start(host: Host, tag: str, thread_id: str, strategy: str = "enqueue",
                **kwargs: Any) -> str:
    t = msgspec.structs.replace(thread(thread_id), metadata={"graph_id": "agent"})
    r = run(thread_id, strategy, input={"tag": tag}, **kwargs)
    await host.queue.create(r, t)
    return r.run_id


async def until(predicate: Any, timeout: float = 10.0) -> None:
    with anyio.fail_after(timeout):
        while not await predicate():
            await anyio.sleep(0.02)


async def status(url: str, run_id: str) -> str | None:
    found = await rows(url, "SELECT status FROM server_runs WHERE run_id = $1", run_id)
    return found[0]["status"] if found else None


async def thread_row(url: str, thread_id: str) -> Any:
    [found] = await rows(url, "SELECT status, body FROM server_threads WHERE thread_id = $1",
                         thread_id)
    return found


async def ran(entry: str) -> bool:
    return entry in RAN


async def waiter(host: Host, run_id: str) -> Any:
    """Start waiting for a run now (a task); the returned coroutine function awaits its end."""
    done: list[Any] = []

    async def wait() -> None:
        done.append(await host.queue.wait(run_id))

    task = asyncio.ensure_future(wait())
    await anyio.sleep(0.05)

    async def result() -> Any:
        await task
        return done[0]

    return result
