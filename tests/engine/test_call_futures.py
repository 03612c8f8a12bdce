"""The futures `@task` calls return, as their callers use them (issue 27): a sync call's
`concurrent.futures.Future` can be cancelled only before the call starts, as LangGraph's
executor futures; a started one runs on and its result is kept."""

from __future__ import annotations

import threading
from typing import Any

from checkpoints import InMemorySaver
from engine import entrypoint, task


def test_cancelling_a_started_sync_call_keeps_its_result() -> None:
    started = threading.Event()
    release = threading.Event()

    @task
    def slow(value: int) -> int:
        started.set()
        assert release.wait(10)
        return value * 2

    @task
    def quick(value: int) -> int:
        return value + 1

    answers: list[Any] = []

    @entrypoint(checkpointer=InMemorySaver())
    def flow(value: int) -> int:
        late = slow(value)
        assert started.wait(10)
        answers.append(late.cancel())  # started: too late, it runs on
        release.set()
        return quick(value).result()

    config = {"configurable": {"thread_id": "1"}}
    chunks = list(flow.stream(3, config, stream_mode="updates"))
    assert answers == [False]
    assert {"slow": 6} in chunks and chunks[-1] == {"flow": 4}
