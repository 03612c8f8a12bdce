"""`GET /threads/{thread_id}/stream`: every run of a thread as one endless SSE stream (issue 31,
the SDK's `threads.join_stream`; langgraph-api 0.16.7 `join_thread_stream`).

Composed of the broker's per-run subscriptions, so it works on every back end: the runs the
thread has when the client joins are joined from now (a resumable run's events after
`Last-Event-ID` first), runs created later from their start when resumable; each run that
streamed here ends with `metadata {"status": "run_done", "run_id": ...}`. Runs of a thread
run one after another, so they are read in creation order; all are attached at once, so a run
queued behind another loses nothing while the first is read. New runs are looked for every
`_POLL` seconds (the reference polls too); the stream ends only when the client goes away.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..authz import authorize, visible
from ..encode import dumps, sse_frame
from ..errors import NotFound, UnprocessableEntity
from ..state import ServerState
from ._common import path_uuid, server, sse_response

__all__ = ["routes"]

_MODES = ("lifecycle", "run_modes", "state_update")
_ACTIVE = ("pending", "running")
_POLL = 0.1


def _modes(request: Request) -> set[str]:
    """`stream_modes` (the reference's name, comma-separated) or `stream_mode` (what the
    Python SDK sends, repeated); `run_modes` when neither is given."""
    given = [m.strip() for v in request.query_params.getlist("stream_modes") for m in v.split(",")]
    given += request.query_params.getlist("stream_mode")
    modes = {m for m in given if m} or {"run_modes"}
    for mode in sorted(modes):
        if mode not in _MODES:
            raise UnprocessableEntity(f"Invalid stream mode: {mode}")
    return modes


def _wanted(modes: set[str], name: str) -> bool:
    """`run_modes`: every event of a run; `lifecycle`: a run's `metadata` events only (its
    start and its end); `state_update` events are the thread's own, which no run sends."""
    if "run_modes" in modes and name != "state_update":
        return True
    return "lifecycle" in modes and name == "metadata"


def _done_frame(run_id: str, last: tuple[tuple[int, int], bytes] | None) -> bytes:
    """The run's end; on a resumable run with an id just after its last event's, so a
    reconnect after it replays nothing more of this run."""
    data = dumps({"status": "run_done", "run_id": run_id})
    if last is None or b"\r\nid: " not in last[1]:
        return sse_frame("metadata", data)
    (ms, seq), _ = last
    return sse_frame("metadata", data, f"{ms}-{seq + 1}")


async def _runs(st: ServerState, thread_id: str) -> list[Any]:
    return sorted(await st.records.runs_of(thread_id), key=lambda run: run.run_id)


class _Joined:
    """The runs of one thread this stream reads, in creation order, each attached once."""

    def __init__(self, st: ServerState, thread_id: str, after: str | None) -> None:
        self.st, self.thread_id, self.after = st, thread_id, after
        self.seen: set[str] = set()
        self.ready: list[tuple[str, Any, bool]] = []  # (run id, subscription, was active)

    async def look(self, first: bool) -> None:
        for run in await _runs(self.st, self.thread_id):
            if run.run_id in self.seen:
                continue
            self.seen.add(run.run_id)
            # joined now: from now (after Last-Event-ID if given); created later: from start
            after = self.after if first else "-1"
            subscription = self.st.broker.attach(run.run_id, last_event_id=after)
            self.ready.append((run.run_id, subscription, run.status in _ACTIVE))

    def close(self) -> None:
        for _, subscription, _ in self.ready:
            subscription.close()


async def _frames(st: ServerState, thread_id: str, after: str | None, modes: set[str]
                  ) -> AsyncIterator[bytes]:
    joined = _Joined(st, thread_id, after)
    await joined.look(first=True)
    try:
        while True:
            while joined.ready:
                run_id, subscription, active = joined.ready.pop(0)
                async for frame in _run_frames(run_id, subscription, active, modes):
                    yield frame
            await anyio.sleep(_POLL)
            await joined.look(first=False)
    finally:
        joined.close()


async def _run_frames(run_id: str, subscription: Any, active: bool, modes: set[str]
                      ) -> AsyncIterator[bytes]:
    """One run's frames, then its `run_done` (when it was live here or replayed anything)."""
    last = None
    async for key, name, frame in subscription:
        last = (key, frame)
        if _wanted(modes, name):
            yield frame
    if (active or last is not None) and _wanted(modes, "metadata"):
        yield _done_frame(run_id, last)


async def join_thread_stream(request: Request) -> Response:
    """Join the stream of every run of a thread."""
    thread_id = path_uuid(request, "thread_id", "thread")
    modes = _modes(request)
    st = server(request)
    thread = await st.records.get_thread(thread_id)
    filters = await authorize(request, "threads", "read", {"thread_id": thread_id})
    if thread is None or (filters and not visible(thread.metadata, filters)):
        raise NotFound("Thread not found")
    after = request.headers.get("last-event-id") or None
    return sse_response(request, _frames(st, thread_id, after, modes))


routes = [Route("/threads/{thread_id}/stream", join_thread_stream, methods=["GET"])]
