"""Stream chunks: where the run puts them, and the shapes `stream()` yields (SPEC §1).

The run pushes `(namespace, mode, chunk)` items into a `Sink` only for the modes that were
asked for; `shape()` turns an item into the output form the caller's arguments select.
"""

from __future__ import annotations

import asyncio
import functools
import operator
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.lowlevel

if TYPE_CHECKING:
    from ._step import Task

__all__ = [
    "Sink",
    "StreamItem",
    "Wakeup",
    "checkpoint_task",
    "error_repr",
    "normalize_modes",
    "shape",
    "task_payload",
    "task_result",
    "task_result_payload",
]

StreamItem = tuple[tuple[str, ...], str, Any]

#: the modes LangChain callback handlers feed (`tools`: issue 29)
LC_MODES = frozenset(("messages", "events", "tools"))

_KNOWN = frozenset(
    ("values", "updates", "custom", "messages", "debug", "events", "tasks", "checkpoints",
     "tools")
)


class Sink:
    """Where a run and its subgraph runs push stream items (thread-safe `push`)."""

    __slots__ = (
        "modes", "subgraphs", "push", "events", "wakeup", "notified", "writer_for", "children"
    )

    def __init__(
        self, modes: frozenset[str], subgraphs: bool, push: Callable[[StreamItem], None]
    ) -> None:
        self.modes = modes
        self.subgraphs = subgraphs
        self.push = push
        self.events: Any = None  # sync live streaming: a queue the driver waits on
        self.notified = False  # sync live streaming: `events` has a wake-up the driver has not seen
        self.wakeup: Wakeup | None = None  # async live streaming
        # Live streaming: builds a node's chunk writer as one function (no `push` call per chunk).
        self.writer_for: Callable[[tuple[str, ...], str], Callable[[Any], None]] | None = None
        # Where the runs of graphs called inside this run's tasks push (issue 27: a nested
        # `stream()` without `subgraphs` passes its outer stream on, not itself).
        self.children: Sink = self


def loop_caller() -> Callable[[Callable[[], object]], object]:
    """For worker threads: schedule a callback on the current event loop without waiting.

    anyio's `from_thread.run_sync` blocks the thread for a round trip through the loop; a
    wake-up needs no answer, and on asyncio that round trip was a large part of a short run's
    cost in the server. Other backends keep anyio's call.
    """
    try:
        return asyncio.get_running_loop().call_soon_threadsafe
    except RuntimeError:  # not asyncio (trio)
        token = anyio.lowlevel.current_token()
        return lambda fn: anyio.from_thread.run_sync(fn, token=token)


class Wakeup:
    """Wakes an async stream consumer from the event loop thread or from any worker thread.

    On asyncio it waits on a bare loop future: an `anyio.Event` per wait cost a third of a
    parallel step's overhead (18 vs 12 µs for a two-task step). Other backends use anyio's.
    """

    def __init__(self) -> None:
        self.call_soon = loop_caller()
        self.thread = threading.get_ident()
        self.pending = False  # set (or a set is scheduled) since the consumer last woke
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # not asyncio (trio)
            self._loop = None
        self._event = anyio.Event() if self._loop is None else None
        self._ready = False  # asyncio: set since the last wait
        self._future: asyncio.Future[None] | None = None  # asyncio: the wait in progress

    def set(self) -> None:
        if self.pending:  # one wake-up covers every chunk pushed before the consumer drains
            return
        self.pending = True
        if threading.get_ident() == self.thread:
            self._set()
        else:
            self.call_soon(self._set)

    def _set(self) -> None:  # on the loop
        if self._loop is None:
            self._event.set()  # type: ignore[union-attr]
            return
        self._ready = True
        future = self._future
        if future is not None and not future.done():
            future.set_result(None)

    async def wait(self) -> None:
        if self._loop is None:
            await self._event.wait()  # type: ignore[union-attr]
            self._event = anyio.Event()
        elif not self._ready:
            self._future = self._loop.create_future()
            try:
                await self._future
            finally:
                self._future = None
        self._ready = False
        self.pending = False  # before the consumer drains: a later push wakes it again


def normalize_modes(stream_mode: str | Sequence[str]) -> tuple[list[str], bool]:
    """The requested modes (aliases resolved) and whether the caller asked for a list."""
    as_list = not isinstance(stream_mode, str)
    modes = [stream_mode] if isinstance(stream_mode, str) else list(stream_mode)
    resolved = []
    for mode in modes:
        mode = "messages" if mode == "messages-tuple" else mode
        if mode not in _KNOWN:
            raise ValueError(f"Unknown stream mode: {mode!r}")
        if mode not in resolved:
            resolved.append(mode)
    return resolved, as_list


def picker(as_list: bool, subgraphs: bool) -> Callable[[StreamItem], Any]:
    """`shape` with its flags bound; the common shape (the chunk alone) is a C-level getter."""
    if as_list or subgraphs:
        return functools.partial(shape, as_list=as_list, subgraphs=subgraphs)
    return operator.itemgetter(2)


def shape(item: StreamItem, as_list: bool, subgraphs: bool) -> Any:
    ns, mode, chunk = item
    if subgraphs:
        return (ns, mode, chunk) if as_list else (ns, chunk)
    return (mode, chunk) if as_list else chunk


def task_payload(task: Task, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A task-start chunk; `metadata` (the caller's, see `Run.task_event_metadata`) only when
    there is some, as LangGraph sends it."""
    payload = {"id": task.id, "name": task.name, "input": task.input, "triggers": task.triggers}
    if metadata:
        payload["metadata"] = metadata
    return payload


def task_result(writes: Any, keys: Any) -> dict[str, Any]:
    """A task's writes to the state keys as its result shows them: a key written more than
    once gives `{"$writes": [each value]}`, as LangGraph (issue 27)."""
    result: dict[str, Any] = {}
    repeated = None
    for ch, v in writes:
        if ch not in keys:
            continue
        if ch in result:
            repeated = repeated or {}
            bucket = repeated.get(ch)
            if bucket is None:
                bucket = repeated[ch] = [result[ch]]
                result[ch] = {"$writes": bucket}
            bucket.append(v)
        else:
            result[ch] = v
    return result


def task_result_payload(task: Task, state_keys: frozenset[str]) -> dict[str, Any]:
    ok = task.error is None and not task.interrupts
    return {
        "id": task.id,
        "name": task.name,
        "error": task.error,
        "result": task_result(task.writes, state_keys) if ok else {},
        "interrupts": [
            {"value": i.value, "id": i.id, "response_schema": i.response_schema}
            for i in task.interrupts
        ],
    }


def checkpoint_task(task: Task, outcome: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    """A task of a checkpoint payload (`checkpoints`, `debug`) with what the checkpoint's
    pending writes say of it (`outcome`, when a resumed run re-emits the checkpoint): its
    error, or the interrupts it raised (answered ones too) and, once finished, its result, as
    LangGraph shows them (issue 17)."""
    out: dict[str, Any] = {"id": task.id, "name": task.name}
    if outcome is None:
        return {**out, "interrupts": (), "state": None}
    if outcome.error is not None:
        return {**out, "error": error_repr(outcome.error), "state": None}
    if outcome.finished:
        result = task_result(outcome.writes, keys)
        if result:
            out["result"] = result
    out["interrupts"] = tuple(
        {"value": i.value, "id": i.id, "response_schema": i.response_schema}
        for i in outcome.raised
    )
    out["state"] = None
    return out


def error_repr(value: Any) -> str:
    """A task's saved error as LangGraph shows it in snapshots and checkpoint events."""
    if isinstance(value, dict):
        message = value.get("message", "")
        # `CancelledError()`, `ValueError()`: an error raised without a message shows no args
        return f"{value.get('error', 'Exception')}({message!r})" if message else (
            f"{value.get('error', 'Exception')}()")
    return str(value)
