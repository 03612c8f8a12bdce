"""`CompiledStateGraph`: the public run API over the run core and its drivers.

- A sync call on a graph without async nodes never starts an event loop.
- A sync call on a graph with async nodes runs the async driver in a blocking portal thread.
- A graph invoked inside a running task is a subgraph: it streams into the parent's sink under
  the task's namespace and checkpoints under `checkpoint_ns = "<node>:<task_id>"` (SPEC §1).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import queue
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import anyio
import anyio.abc
import anyio.from_thread
import anyio.to_thread

from checkpoints.base import RESUME, CheckpointTuple

from . import _stream_v2 as _v2
from ._cache_clear import GraphCacheMethods
from ._bound import BoundGraph, merge_configs
from ._config import merge_config
from ._jsonschema import SchemaMethods
from ._subgraphs import SubgraphMethods
from ._context import current_scope
from ._lifecycle import graph_handlers, with_lifecycle, with_lifecycle_async
from ._nested import (
    aload_saved, continues_history, detached_sink, from_root_checkpoint, load_saved, mark_replay,
    nested_sink, own_history_ns, runs_detached, travel_to,
)
from ._plan import Plan
from ._run import NULL_TASK_ID, Run
from ._run_control import control_for
from ._runtime_context import run_context
from ._saver_check import ensure_saver
from ._state_methods import StateMethods, latest_config
from ._stream import Sink, normalize_modes, picker
from ._tasks import drive_async, drive_sync, flush_async, flush_sync
from ._tracing import wants_trace, with_graph_run, with_graph_run_async
from ._worker import Halt, in_worker_thread
from .types import Command

__all__ = ["CompiledStateGraph"]

_LIVE = frozenset(("custom", "messages", "events"))


class CompiledStateGraph(StateMethods, SchemaMethods, SubgraphMethods, GraphCacheMethods):
    """A runnable graph: `invoke`, `stream`, their async forms, state and history."""

    stream_mode = "updates"
    # What a run of this graph is (an entrypoint's run reads its state from one channel) and
    # which stream modes reach the caller while a step still runs (issue 17).
    run_class: type[Run] = Run  # a `CallingRun` once a node calls a `@task` (`_calls.py`)
    live_modes: frozenset[str] = _LIVE
    config: dict[str, Any] | None = None  # LangGraph's: set on the graph `with_config` returns
    step_timeout: float | None = None  # seconds a step of an async run may take (issue 27)

    def __init__(
        self,
        plan: Plan,
        *,
        builder: Any,
        checkpointer: Any,
        store: Any,
        cache: Any,
        name: str,
        debug: bool,
    ) -> None:
        ensure_saver(checkpointer)  # issue 29: a TypeError at compile, as LangGraph
        self.plan = plan
        self.builder = builder
        self.checkpointer = checkpointer
        self.store = store
        self.cache = cache
        self.name = name
        self.debug = debug
        if plan.root:  # a one-value state (issue 29)
            from ._root import RootRun

            self.run_class = RootRun

    def __repr__(self) -> str:
        return f"<CompiledStateGraph {self.name!r} nodes={list(self.builder.nodes)}>"

    @property
    def nodes(self) -> dict[str, Any]:
        return dict(self.builder.nodes)

    @property
    def channels(self) -> dict[str, Any]:
        """The compiled channels by name (state keys, edges, joins), as LangGraph's
        `graph.channels` (issue 27)."""
        return dict(self.plan.channels)

    # -- run setup ------------------------------------------------------------------------------

    def _saver_for(self, parent: Run | None) -> Any:
        if self.checkpointer is False:
            return None
        if self.checkpointer is None or self.checkpointer is True:
            return parent.checkpointer if parent is not None else None
        return self.checkpointer

    def _new_run(
        self,
        config: dict[str, Any] | None,
        sink: Sink,
        kwargs: dict[str, Any],
    ) -> Run:
        scope = current_scope.get()
        if scope is not None and runs_detached(config, sink, scope.run.sink.children):
            sink, scope = detached_sink(scope.run.sink.children), None  # issue 29
        config = merge_config(config)
        parent = scope.run if scope is not None else None
        travel = None
        if parent is None and config["configurable"].get("checkpoint_ns"):
            travel = from_root_checkpoint(config["configurable"])
        if parent is not None:
            conf = config["configurable"]
            if parent.thread_id is not None:
                conf.setdefault("thread_id", parent.thread_id)
            # LangGraph's nested config inherits the calling task's: its metadata shows it
            conf.setdefault("checkpoint_ns", scope.task.ns)  # type: ignore[union-attr]
            # a nested `stream()` yields to its caller too (issue 27); `invoke` asks no modes
            sink = nested_sink(sink, parent.sink.children) if sink.modes else parent.sink.children
        before = kwargs.get("interrupt_before")
        after = kwargs.get("interrupt_after")
        # A subgraph started by a task prepared on a checkpoint this parent run made has
        # nothing saved under its namespace (the task id is new, and each call of the task
        # counts a namespace of its own): skip the lookup, which with SQLite waits for the
        # writer. A task of a resumed step still looks.
        own_history = parent is not None and self.checkpointer is True
        fresh = parent is not None and parent.owns_checkpoint and not own_history
        call = 0
        if scope is not None:
            call = scope.task.subgraph_calls
            scope.task.subgraph_calls += 1
        run = self.run_class(
            self,
            config,
            sink=sink,
            parent=parent,
            parent_task=scope.task if scope is not None else None,
            checkpointer=self._saver_for(parent),
            store=self.store if self.store is not None or parent is None else parent.store,
            context=run_context(
                self.plan.context_schema, kwargs.get("context"),
                parent.context if parent is not None else None,
            ),
            interrupt_before=tuple(before) if before is not None else self.plan.interrupt_before,
            interrupt_after=tuple(after) if after is not None else self.plan.interrupt_after,
            # A subgraph saves as its root does unless told otherwise (as LangGraph).
            durability=(
                parent.durability
                if parent is not None and kwargs.get("durability") is None
                else _durability(kwargs.get("durability"))
            ),
        )
        run.fresh_namespace = fresh
        run.control = control_for(kwargs.get("control"), parent)  # issue 29: drain on request
        if travel:
            run.travel_map = travel
        if call:
            run.ns = f"{run.ns}|{call}"
            run.ns_tuple = (*run.ns_tuple, str(call))
        if own_history:
            run.ns = own_history_ns(run.ns)
            run.ns_tuple = tuple(run.ns.split("|"))
        return run

    def _lookup_config(self, run: Run) -> dict[str, Any] | None:
        if run.checkpointer is None or (run.fresh_namespace and not run.root.travel_map):
            return None  # nothing saved to look for (see `_new_run`)
        conf = run.config["configurable"]
        if run.thread_id is None:
            raise ValueError(
                "Checkpointer requires one or more of the following 'configurable' keys: "
                "thread_id, checkpoint_ns, checkpoint_id"
            )
        lookup: dict[str, Any] = {"thread_id": run.thread_id, "checkpoint_ns": run.ns}
        if conf.get("checkpoint_id") and run.parent is None:
            lookup["checkpoint_id"] = conf["checkpoint_id"]
        elif run.parent is not None and (travel := travel_to(run)) is not None:
            lookup["checkpoint_id"] = travel  # its root went back in time through it
        return {"configurable": lookup}

    @staticmethod
    def _input_for(run: Run, value: Any, saved: CheckpointTuple | None) -> Any:
        if run.parent is not None and saved is not None:
            if run.graph.checkpointer is True and not (continues_history(saved) or run.travelled):
                return value  # a new call of a subgraph keeping its own history (issue 27)
            return None  # a re-run parent task resumes its subgraph where it stopped
        return value

    @staticmethod
    def _replaying(saved: CheckpointTuple | None, latest: CheckpointTuple | None) -> bool:
        """Continuing from a checkpoint that is not the thread's latest forks the thread."""
        return (
            saved is not None
            and latest is not None
            and latest.checkpoint["id"] != saved.checkpoint["id"]
        )

    @staticmethod
    def _time_travels(run: Run, value: Any, saved: CheckpointTuple | None) -> bool:
        """A replay (`None`) or a `Command` other than a resume, from an explicit checkpoint id
        of a started thread, may fork it (LangGraph 1.2.22, issue 17)."""
        if saved is None or not saved.checkpoint.get("channel_versions"):
            return False
        if value is None:
            return True
        return run.parent is None and isinstance(value, Command) and value.resume is None

    @staticmethod
    def _forks_head(run: Run, saved: CheckpointTuple | None) -> bool:
        """Time travel to the thread's latest checkpoint forks it too, unless an update or a
        fork made it (they are branches already), as LangGraph's root graph does."""
        source = saved.metadata.get("source") if saved is not None else None
        return run.parent is None and source not in ("update", "fork")

    def _fork(self, run: Run) -> None:
        run.pending = []
        run._checkpoint("fork")
        run.step += 1
        run.stop += 1

    # -- sync API -------------------------------------------------------------------------------

    def invoke(
        self,
        input: Any,
        config: dict[str, Any] | None = None,
        *,
        stream_mode: str | Sequence[str] = "values",
        **kwargs: Any,
    ) -> Any:
        """Run the graph to the end (or an interrupt) and return its output state.

        With another `stream_mode`, return the list of chunks that mode streams.
        """
        if kwargs and kwargs.get("version", "v1") != "v1":  # issue 29: `GraphOutput`, parts
            return _v2.invoke(self, input, config, stream_mode, kwargs)
        if stream_mode != "values":
            return list(self.stream(input, config, stream_mode=stream_mode, **kwargs))
        kept: list[Run] = []
        for _ in self._stream_batches(input, config, [], False, kwargs, kept):
            pass
        return kept[0].output()

    def stream(
        self,
        input: Any,
        config: dict[str, Any] | None = None,
        *,
        stream_mode: str | Sequence[str] | None = None,
        subgraphs: bool = False,
        **kwargs: Any,
    ) -> Iterator[Any]:
        """Yield chunks of the requested modes as the run produces them (SPEC §1 shapes)."""
        modes, as_list = normalize_modes(stream_mode or self.stream_mode)
        pick = picker(as_list, subgraphs)
        if kwargs and (version := kwargs.pop("version", "v1")) != "v1":  # issue 29: dict parts
            pick = _v2.to_part(self, version)
        for batch in self._stream_batches(input, config, modes, subgraphs, kwargs):
            while batch:
                yield pick(batch.popleft())

    def _stream_batches(
        self,
        value: Any,
        config: dict[str, Any] | None,
        modes: list[str],
        subgraphs: bool,
        kwargs: dict[str, Any],
        kept: list[Run] | None = None,
        stop: Halt | None = None,
    ) -> Iterator[collections.deque[Any]]:
        """Drive a run, yielding its chunk buffer whenever it holds chunks.

        The caller drains the buffer (`popleft`) before resuming: a step's chunks cost one
        generator hop, not one per chunk. Live writers may append while it drains. `kept`
        receives the run once it ends.
        """
        if self.plan.has_async and current_scope.get() is None:
            yield from self._via_portal(value, config, modes, subgraphs, kwargs, kept)
            return
        buffer: collections.deque[Any] = collections.deque()
        live = bool(self.live_modes.intersection(modes))
        sink = Sink(frozenset(modes), subgraphs, buffer.append)
        run = self._new_run(config, sink, kwargs)
        if live and run.parent is None:
            events: queue.SimpleQueue[Any] = queue.SimpleQueue()
            sink.events = events

            def push(item: Any) -> None:  # from any thread; wakes the driver once per batch
                buffer.append(item)
                if not sink.notified:
                    sink.notified = True
                    events.put(None)

            def writer_for(ns: tuple[str, ...], mode: str) -> Any:
                def write(chunk: Any) -> None:  # `push` inlined: called once per chunk
                    buffer.append((ns, mode, chunk))
                    if not sink.notified:
                        sink.notified = True
                        events.put(None)

                return write

            sink.push = push
            sink.writer_for = writer_for
        lookup = self._lookup_config(run)
        saved = load_saved(run, lookup)
        value = self._input_for(run, value, saved)
        fork = False
        if lookup is not None and "checkpoint_id" in lookup["configurable"]:
            fork = self._time_travels(run, value, saved) and (
                self._forks_head(run, saved)
                or self._replaying(saved, run.checkpointer.get_tuple(latest_config(lookup)))
            )
            if self._time_travels(run, value, saved):
                mark_replay(run, saved)
                saved = _without_answers(saved)
        driver = drive_sync(run, value, saved, live and run.parent is None, stop)
        if (run.parent is not None or run.config.get("callbacks") is not None
                or "langsmith" in sys.modules) and wants_trace(run):
            driver = with_graph_run(run, value, driver)  # issue 27: the graph's LangChain run
        if run.parent is None and (handlers := graph_handlers(run.config)):
            driver = with_lifecycle(run, driver, handlers)  # issue 29: interrupt/resume events
        first = True
        for _ in driver:
            if first:
                first = False
                if fork:
                    self._fork(run)
                    flush_sync(run)
            if buffer:
                yield buffer
            if stop is not None and stop.is_set() and run.step > 0:
                # stops at this step boundary (once the input is applied); finished steps saved
                driver.close()
                return
        if buffer:
            yield buffer
        if kept is not None:
            kept.append(run)

    def _via_portal(
        self,
        value: Any,
        config: dict[str, Any] | None,
        modes: list[str],
        subgraphs: bool,
        kwargs: dict[str, Any],
        kept: list[Run] | None,
    ) -> Iterator[collections.deque[Any]]:
        with anyio.from_thread.start_blocking_portal() as portal:
            agen = self._astream_batches(value, config, modes, subgraphs, kwargs, kept)
            try:
                while True:
                    try:
                        item = portal.call(agen.__anext__)
                    except StopAsyncIteration:
                        return
                    yield item
            finally:
                portal.call(agen.aclose)

    def batch(
        self,
        inputs: Sequence[Any],
        config: dict[str, Any] | Sequence[dict[str, Any]] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """Invoke once per input, concurrently, keeping input order."""
        configs = _configs(config, len(inputs))
        from ._tasks import _pool

        def one(pair: tuple[Any, dict[str, Any] | None]) -> Any:
            try:
                return self.invoke(pair[0], pair[1], **kwargs)
            except Exception as error:
                if return_exceptions:
                    return error
                raise

        return list(_pool().map(one, zip(inputs, configs)))

    # -- async API ------------------------------------------------------------------------------

    async def ainvoke(
        self,
        input: Any,
        config: dict[str, Any] | None = None,
        *,
        stream_mode: str | Sequence[str] = "values",
        **kwargs: Any,
    ) -> Any:
        """Async `invoke`."""
        if kwargs and kwargs.get("version", "v1") != "v1":  # issue 29
            return await _v2.ainvoke(self, input, config, stream_mode, kwargs)
        if stream_mode != "values":
            return [c async for c in self.astream(input, config, stream_mode=stream_mode, **kwargs)]
        kept: list[Run] = []
        async for _ in self._astream_batches(input, config, [], False, kwargs, kept):
            pass
        return kept[0].output()

    async def astream(
        self,
        input: Any,
        config: dict[str, Any] | None = None,
        *,
        stream_mode: str | Sequence[str] | None = None,
        subgraphs: bool = False,
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """Async `stream`."""
        modes, as_list = normalize_modes(stream_mode or self.stream_mode)
        pick = picker(as_list, subgraphs)
        if kwargs and (version := kwargs.pop("version", "v1")) != "v1":  # issue 29
            pick = _v2.to_part(self, version)
        # aclosing: a consumer that stops early closes the run now (its step's tasks cancelled
        # and awaited), not whenever the garbage collector finalizes the inner generators.
        async with contextlib.aclosing(
            self._astream_batches(input, config, modes, subgraphs, kwargs)
        ) as batches:
            async for batch in batches:
                while batch:
                    yield pick(batch.popleft())

    async def _astream_batches(
        self,
        value: Any,
        config: dict[str, Any] | None,
        modes: list[str],
        subgraphs: bool,
        kwargs: dict[str, Any],
        kept: list[Run] | None = None,
    ) -> AsyncIterator[collections.deque[Any]]:
        """`_stream_batches` on the event loop."""
        from ._stream import Wakeup

        if not self.plan.has_async and not self.plan.has_dual and current_scope.get() is None:
            # A sync graph runs whole in one worker thread (DESIGN: the event loop stays free),
            # instead of one thread hop per node.
            # aclosing: a consumer that leaves closes the worker's stream in its own task (the
            # event loop's finalizer would close it in another, out of its cancel scopes)
            async with contextlib.aclosing(in_worker_thread(
                functools.partial(self._stream_batches, value, config, modes, subgraphs, kwargs,
                                  kept)
            )) as batches:
                async for batch in batches:
                    yield batch
            return
        buffer: collections.deque[Any] = collections.deque()
        live = bool(self.live_modes.intersection(modes))
        sink = Sink(frozenset(modes), subgraphs, buffer.append)
        run = self._new_run(config, sink, kwargs)
        if live and run.parent is None:
            wakeup = Wakeup()
            sink.wakeup = wakeup
            sink.push = lambda item: (buffer.append(item), wakeup.set())  # type: ignore[func-returns-value]

            def writer_for(ns: tuple[str, ...], mode: str) -> Any:
                def write(chunk: Any) -> None:  # `push` inlined: called once per chunk
                    buffer.append((ns, mode, chunk))
                    if not wakeup.pending:
                        wakeup.set()

                return write

            sink.writer_for = writer_for
        lookup = self._lookup_config(run)
        saved = await aload_saved(run, lookup)
        value = self._input_for(run, value, saved)
        fork = False
        if lookup is not None and "checkpoint_id" in lookup["configurable"]:
            fork = self._time_travels(run, value, saved) and (
                self._forks_head(run, saved)
                or self._replaying(saved, await run.checkpointer.aget_tuple(latest_config(lookup)))
            )
            if self._time_travels(run, value, saved):
                mark_replay(run, saved)
                saved = _without_answers(saved)
        first = True
        driver = drive_async(run, value, saved, live and run.parent is None)
        if (run.parent is not None or run.config.get("callbacks") is not None
                or "langsmith" in sys.modules) and wants_trace(run):
            driver = with_graph_run_async(run, value, driver)  # issue 27
        if run.parent is None and (handlers := graph_handlers(run.config)):
            driver = with_lifecycle_async(run, driver, handlers)  # issue 29
        async with contextlib.aclosing(driver):
            async for _ in driver:
                if first:
                    first = False
                    if fork:
                        self._fork(run)
                        await flush_async(run)
                if buffer:
                    yield buffer
        if buffer:
            yield buffer
        if kept is not None:
            kept.append(run)

    def stream_events(
        self, input: Any, config: dict[str, Any] | None = None, *, version: str = "v2",
        transformers: Sequence[Any] | None = None, **kwargs: Any,
    ) -> Any:
        """`version="v3"`: the run as a `GraphRunStream` its reader drives (issue 29)."""
        from .stream._entry import stream_events

        return stream_events(self, input, config, version, transformers, kwargs)

    def astream_events(
        self, input: Any, config: dict[str, Any] | None = None, *, version: str = "v2",
        transformers: Sequence[Any] | None = None, **kwargs: Any,
    ) -> Any:
        """Run lifecycle events (v2 shapes, as `stream_mode="events"`); with `version="v3"`,
        an awaitable `AsyncGraphRunStream` (issue 29)."""
        from .stream._entry import astream_events

        return astream_events(self, input, config, version, transformers, kwargs)

    async def abatch(
        self,
        inputs: Sequence[Any],
        config: dict[str, Any] | Sequence[dict[str, Any]] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """Async `batch`: one task per input in a task group."""
        configs = _configs(config, len(inputs))
        results: list[Any] = [None] * len(inputs)

        failures: list[tuple[int, Exception]] = []

        async def one(index: int, tg: anyio.abc.TaskGroup) -> None:
            try:
                results[index] = await self.ainvoke(inputs[index], configs[index], **kwargs)
            except Exception as error:
                results[index] = error
                if not return_exceptions:
                    failures.append((index, error))
                    tg.cancel_scope.cancel()  # the first failure stops the batch

        async with anyio.create_task_group() as tg:
            for index in range(len(inputs)):
                tg.start_soon(one, index, tg)
        if failures:
            raise min(failures, key=lambda f: f[0])[1]
        return results

    # -- introspection --------------------------------------------------------------------------

    def get_graph(self, config: dict[str, Any] | None = None, *, xray: int | bool = False) -> Any:
        from ._drawing import graph_of

        return graph_of(self, xray=xray)

    def copy(self, *, checkpointer: Any = ..., store: Any = ...) -> CompiledStateGraph:
        """The same graph with another saver and/or store (a server attaches its own)."""
        return type(self)(
            self.plan,
            builder=self.builder,
            checkpointer=self.checkpointer if checkpointer is ... else checkpointer,
            store=self.store if store is ... else store,
            cache=self.cache,
            name=self.name,
            debug=self.debug,
        )

    def with_config(self, config: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        """This graph with `config` (and `kwargs`) under every call's config (issue 29)."""
        return BoundGraph(self, merge_configs(config, kwargs))


def _durability(value: str | None) -> str:
    if value is None:
        return "async"
    if value not in ("sync", "async", "exit"):
        raise ValueError(f"durability must be 'sync', 'async' or 'exit', not {value!r}")
    return value


def _without_answers(saved: CheckpointTuple | None) -> CheckpointTuple | None:
    """Time travel asks the interrupts again and re-runs finished tasks: the saved answers and
    task writes are dropped (as LangGraph; an update checkpoint replays in place, issue 27)."""
    if saved is None or not saved.pending_writes:
        return saved
    kept = [w for w in saved.pending_writes if w[1] != RESUME and w[0] == NULL_TASK_ID]
    return saved._replace(pending_writes=kept)


def _configs(config: Any, count: int) -> list[dict[str, Any] | None]:
    if isinstance(config, (list, tuple)):
        if len(config) != count:
            raise ValueError("batch() needs one config per input")
        return list(config)
    return [config] * count

