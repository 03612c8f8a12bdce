"""A sync graph's run in one worker thread, and how its consumer abandons it.

When the consumer of such a run stops (a cancelled task, an anyio cancel scope, a closed
stream), it does not wait for a node that may block for minutes: as in LangGraph 1.2.22, whose
executor threads are not waited for on cancel, the node keeps running in the background, its
result is dropped and no later step runs. The consumer saves what LangGraph saves at that
moment (a concurrent step's unfinished tasks as cancelled; the "exit" checkpoint); from then on
the worker saves nothing, its subgraphs included (`flush_sync` checks the root's `Halt`).
"""

from __future__ import annotations

import collections
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from ._stream import loop_caller

if TYPE_CHECKING:
    from ._run import Run

__all__ = ["Halt", "in_worker_thread"]


class Halt(threading.Event):
    """A sync run's stop signal. Its lock orders the worker's saves against the consumer's
    last one: once set, the worker's saves are dropped."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.run: Run | None = None  # the root run, once the worker made it

    def abandon(self) -> None:
        """Stop the run from the consumer's side and save what LangGraph saves on a cancel."""
        from ._tasks import save_cancelled, write_out

        with self.lock:
            self.set()
            run = self.run
            if run is None or run.status != "pending":
                return
            if run.step_open:
                save_cancelled(run, run.tasks)
            write_out(run, final=True)


async def in_worker_thread(
    produce: Callable[..., Iterator[collections.deque[Any]]],
) -> AsyncIterator[collections.deque[Any]]:
    """Run a sync batch stream in a worker thread and relay its buffer as it fills.

    The loop drains the stream's own buffer (deques are thread-safe), woken only when the
    thread has yielded a batch since the last wake-up. If the consumer stops before the run
    ended, the thread is abandoned (see the module docstring), not waited for.
    """
    call_soon = loop_caller()
    # "buffer": the stream's own, once it has yielded it
    state: dict[str, Any] = {"event": anyio.Event(), "notified": False, "done": False,
                             "error": None, "buffer": collections.deque()}
    stop = Halt()

    def notify() -> None:
        state["event"].set()

    def wake() -> None:
        try:
            call_soon(notify)
        except RuntimeError:  # abandoned, and its event loop closed since
            pass

    def work() -> None:
        try:
            for batch in _stoppable(produce(stop=stop), stop):
                state["buffer"] = batch
                if not state["notified"]:
                    state["notified"] = True
                    wake()
        except BaseException as error:  # handed to the consumer
            state["error"] = error
        finally:
            state["done"] = True
            if not stop.is_set():
                wake()

    waiting = anyio.CancelScope()  # cancelled to stop waiting for the thread

    async def wait_for_thread() -> None:
        with waiting:
            await anyio.to_thread.run_sync(work, abandon_on_cancel=True)

    closed = False
    async with anyio.create_task_group() as tg:
        tg.start_soon(wait_for_thread)
        try:
            while True:
                await state["event"].wait()
                state["event"] = anyio.Event()
                state["notified"] = False
                done = state["done"]  # read first: a batch yielded before it is drained below
                if state["buffer"]:
                    yield state["buffer"]
                if done:
                    break
        except GeneratorExit:  # closed: raised again below, so the task group does not wrap it
            closed = True
        finally:
            if not state["done"]:
                with anyio.CancelScope(shield=True):  # a short save, off the event loop
                    await anyio.to_thread.run_sync(stop.abandon)
                waiting.cancel()  # the worker thread is left to finish on its own
    if closed:
        raise GeneratorExit
    if state["error"] is not None:
        raise state["error"]


def _stoppable(items: Iterator[Any], stop: threading.Event) -> Iterator[Any]:
    """Close the sync stream (which stops the run at a step boundary) once asked to."""
    try:
        for item in items:
            yield item
            if stop.is_set():
                return
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            close()
