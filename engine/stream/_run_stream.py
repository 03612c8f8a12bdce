"""The object `stream_events(version="v3")` returns: a run its reader drives (issue 29).

No thread and no background task: reading any projection (or the raw events, or `output`)
pulls the next v2 part from the graph's stream, turns it into a protocol event and pushes it
through the mux. Async readers share one pull at a time; the others wait for its result.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from types import MappingProxyType, TracebackType
from typing import Any, NoReturn

from ._channel import StreamChannel
from ._mux import StreamMux
from ._transformer import ProtocolEvent

__all__ = [
    "AsyncGraphRunStream",
    "AsyncSubgraphRunStream",
    "GraphRunStream",
    "SubgraphRunStream",
    "to_event",
]


def to_event(part: Mapping[str, Any]) -> ProtocolEvent:
    """A v2 stream part as a protocol event of the main log."""
    params: dict[str, Any] = {
        "namespace": list(part["ns"]),
        "timestamp": int(time.time() * 1000),
        "data": part["data"],
    }
    if "interrupts" in part:
        params["interrupts"] = part["interrupts"]
    return {"type": "event", "method": part["type"], "params": params}  # type: ignore[typeddict-item]


def _no_projection(run: object, name: str) -> NoReturn:
    mux = run.__dict__.get("_mux")  # not `run._mux`: it may not be set yet (copy, pickle)
    known = ", ".join(sorted(mux.native_keys)) if mux is not None else ""
    raise AttributeError(
        f"{type(run).__name__!r} object has no attribute {name!r} "
        f"(registered projections: {known or 'none'})"
    )


class _RunState:
    """What both lanes track of the run's own `values` events: output and interrupts."""

    _mux: StreamMux

    def _setup(self, mux: StreamMux) -> None:
        self._mux = mux
        self.extensions: Mapping[str, Any] = MappingProxyType(mux.extensions)
        self._exhausted = False
        self._latest: Any = None
        self._interrupted = False
        self._interrupts: list[Any] = []
        self._scope_list = list(mux.scope)
        for key in mux.native_keys:
            setattr(self, key, mux.extensions[key])

    def __getattr__(self, name: str) -> Any:
        _no_projection(self, name)

    def _observe_event(self, event: ProtocolEvent) -> None:
        if event["method"] != "values":
            return
        params = event["params"]
        if params["namespace"] != self._scope_list:
            return
        self._latest = params["data"]
        if interrupts := params.get("interrupts", ()):
            self._interrupted = True
            self._interrupts.extend(interrupts)

    def _raise_failure(self) -> None:
        if (error := self._mux._events._error) is not None:
            raise error


class GraphRunStream(_RunState):
    """A sync v3 run: iterate it for protocol events, or read its projections
    (`values`, `messages`, `lifecycle`, `subgraphs`, and those of extra transformers)."""

    def __init__(
        self, graph_iter: Iterator[Any] | None, mux: StreamMux, *, wire_pump: bool = True
    ) -> None:
        self._graph_iter = graph_iter
        self._setup(mux)
        if wire_pump:
            mux.bind_pump(self._pump_next)

    def _pump_next(self) -> bool:
        """Pull one part through the mux; False once the run is over (or failed)."""
        if self._exhausted or self._graph_iter is None:
            return False
        try:
            event = to_event(next(self._graph_iter))
            self._observe_event(event)
            self._mux.push(event)
            return True
        except StopIteration:
            self._exhausted = True
            self._mux.close()
            return False
        except Exception as error:
            self._exhausted = True
            self._mux.fail(error)
            return False

    def _drain(self) -> None:
        while self._pump_next():
            pass
        self._raise_failure()

    def abort(self) -> None:
        """Stop the run now: its generator is closed (cancelling what runs), the mux closed."""
        if self._exhausted:
            return
        self._exhausted = True
        graph_iter, self._graph_iter = self._graph_iter, None
        if graph_iter is not None and (close := getattr(graph_iter, "close", None)):
            try:
                close()
            except Exception:
                pass
        try:
            self._mux.close()
        except Exception:
            pass

    def __enter__(self) -> GraphRunStream:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.abort()

    @property
    def output(self) -> Any:
        """Run to the end; the last state of this run's own level."""
        self._drain()
        return self._latest

    @property
    def interrupted(self) -> bool:
        self._drain()
        return self._interrupted

    @property
    def interrupts(self) -> list[Any]:
        self._drain()
        return self._interrupts

    def __iter__(self) -> Iterator[ProtocolEvent]:
        return iter(self._mux._events)

    def interleave(self, *names: str) -> Iterator[tuple[str, Any]]:
        """`(name, item)` from several projections in the order the items arrived."""
        channels: dict[str, StreamChannel[Any]] = {}
        try:
            for name in names:
                channels[name] = _claim(name, self.extensions[name])
            yield from _merge(channels, self._mux)
        finally:
            for channel in channels.values():
                channel._subscribed = False


def _claim(name: str, channel: Any) -> StreamChannel[Any]:
    if not isinstance(channel, StreamChannel):
        raise TypeError(
            f"interleave() needs StreamChannel projections, got {type(channel).__name__} "
            f"for {name!r}"
        )
    if channel._is_async is None:
        raise TypeError(f"StreamChannel {name!r} has not been bound yet.")
    if channel._is_async:
        raise TypeError(f"StreamChannel {name!r} is bound to async mode: no sync interleave().")
    if channel._subscribed:
        raise RuntimeError(f"StreamChannel {name!r} already has a subscriber; use tee().")
    channel._subscribed = True
    return channel


def _merge(channels: dict[str, StreamChannel[Any]], mux: StreamMux) -> Iterator[tuple[str, Any]]:
    done: set[str] = set()
    while len(done) < len(channels):
        best: tuple[int, str] | None = None
        for name, channel in channels.items():
            if name in done:
                continue
            if channel._items:
                if best is None or channel._items[0][0] < best[0]:
                    best = (channel._items[0][0], name)
            elif channel._closed:
                if channel._error is not None:
                    raise channel._error
                done.add(name)
        if best is not None:
            yield best[1], channels[best[1]]._items.popleft()[1]
        elif mux._pump_fn is None or not mux._pump_fn():
            open_left = [ch for n, ch in channels.items() if n not in done]
            if not any(ch._items or ch._closed for ch in open_left):
                return


class AsyncGraphRunStream(_RunState):
    """An async v3 run (from `await graph.astream_events(..., version="v3")`)."""

    def __init__(
        self,
        graph_aiter: AsyncIterator[Any] | None,
        mux: StreamMux,
        *,
        wire_pump: bool = True,
    ) -> None:
        self._graph_aiter = _OneTaskPuller(graph_aiter) if graph_aiter is not None else None
        self._setup(mux)
        self._pump_cond = asyncio.Condition()
        self._pumping = False
        self._anext_task: asyncio.Future[Any] | None = None
        self._aborting = False
        if wire_pump:
            mux.bind_apump(self._apump_next)

    async def _apump_next(self) -> bool:
        """Pull one part, or (if another reader is pulling) wait for its pull to land."""
        async with self._pump_cond:
            if self._exhausted or self._graph_aiter is None:
                return False
            if self._pumping:
                await self._pump_cond.wait()
                return not self._exhausted
            self._pumping = True
        try:
            return await self._pull()
        finally:
            async with self._pump_cond:
                self._pumping = False
                self._pump_cond.notify_all()

    async def _pull(self) -> bool:
        assert self._graph_aiter is not None
        try:
            # a task of its own, so `abort()` can cancel a pull that is in flight
            self._anext_task = asyncio.ensure_future(self._graph_aiter.next())
            try:
                part = await self._anext_task
            except asyncio.CancelledError:
                if self._aborting:
                    self._exhausted = True
                    return False
                self._anext_task.cancel()
                raise
            finally:
                self._anext_task = None
            if part is _DONE:
                raise StopAsyncIteration
            event = to_event(part)
            self._observe_event(event)
            await self._mux.apush(event)
            return True
        except StopAsyncIteration:
            self._exhausted = True
            await self._mux.aclose()
            return False
        except Exception as error:
            self._exhausted = True
            await self._mux.afail(error)
            return False

    async def abort(self) -> None:
        """Stop the run now: cancel a pull in flight, close the graph's generator and the mux."""
        async with self._pump_cond:
            if self._exhausted:
                return
            self._exhausted = self._aborting = True
            graph_aiter, self._graph_aiter = self._graph_aiter, None
            pulling = self._anext_task
            self._pump_cond.notify_all()
        if pulling is not None and not pulling.done():
            pulling.cancel()
            try:
                await pulling
            except (asyncio.CancelledError, Exception):
                pass
        if graph_aiter is not None:
            await graph_aiter.aclose()
        try:
            await self._mux.aclose()
        except Exception:
            pass

    async def __aenter__(self) -> AsyncGraphRunStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.abort()

    async def _adrain(self) -> None:
        while await self._apump_next():
            pass
        self._raise_failure()

    async def output(self) -> Any:
        """Run to the end; the last state of this run's own level."""
        await self._adrain()
        return self._latest

    async def interrupted(self) -> bool:
        await self._adrain()
        return self._interrupted

    async def interrupts(self) -> list[Any]:
        await self._adrain()
        return self._interrupts

    def __aiter__(self) -> AsyncIterator[ProtocolEvent]:
        return self._mux._events.__aiter__()


_DONE = object()


class _OneTaskPuller:
    """Advances the graph's async generator always from one task of its own.

    The run holds anyio cancel scopes across its yields, and a scope must be left by the task
    that entered it: readers in different tasks cannot each call `__anext__` themselves.
    They hand requests to this task, one part per request (the reader still paces the run).
    """

    def __init__(self, source: AsyncIterator[Any]) -> None:
        self._source = source
        self._requests: asyncio.Queue[asyncio.Future[Any] | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    async def next(self) -> Any:
        """The next part, or `_DONE` at the end; the run's error is raised here."""
        if self._task is None:
            self._task = asyncio.create_task(self._serve())
        elif self._task.done():
            return _DONE
        answer = asyncio.get_running_loop().create_future()
        self._requests.put_nowait(answer)
        return await answer

    async def _serve(self) -> None:
        try:
            while (answer := await self._requests.get()) is not None:
                try:
                    part = await self._source.__anext__()
                except StopAsyncIteration:
                    answer.set_result(_DONE)
                    return
                except BaseException as error:
                    if not answer.done():
                        answer.set_exception(error)
                    if isinstance(error, asyncio.CancelledError):
                        raise
                    return  # the reader has the error; nothing to report twice
                if not answer.done():
                    answer.set_result(part)
        finally:
            await self._close_source()  # in this task: the one that entered the run's scopes

    async def _close_source(self) -> None:
        if (aclose := getattr(self._source, "aclose", None)) is not None:
            try:
                await aclose()
            except Exception:
                pass

    async def aclose(self) -> None:
        """Cancel a pull in flight (into the running nodes), then close the generator."""
        task = self._task
        if task is None:
            await self._close_source()
            return
        if not task.done():
            task.cancel()
        try:
            await task
        except (asyncio.CancelledError, Exception):
            pass


class _SubgraphFields:
    """What a subgraph handle adds: where it runs and how it ended (set by its transformer)."""

    def _identify(self, path: tuple[str, ...], graph_name: str | None,
                  trigger_call_id: str | None) -> None:
        self.path = path
        self.graph_name = graph_name
        self.trigger_call_id = trigger_call_id
        self.status = "started"
        self.error: str | None = None
        self._seen_terminal = False


class SubgraphRunStream(GraphRunStream, _SubgraphFields):
    """A subgraph of a sync v3 run: its projections, driven by the root run's pump."""

    def __init__(self, mux: StreamMux, *, path: tuple[str, ...], graph_name: str | None = None,
                 trigger_call_id: str | None = None) -> None:
        self._parent_pump_fn: Callable[[], bool] | None = mux._pump_fn
        super().__init__(None, mux, wire_pump=False)
        self._identify(path, graph_name, trigger_call_id)

    def _pump_next(self) -> bool:
        if self._exhausted or self._seen_terminal or self._mux._events._closed:
            return False
        return self._parent_pump_fn is not None and self._parent_pump_fn()


class AsyncSubgraphRunStream(AsyncGraphRunStream, _SubgraphFields):
    """A subgraph of an async v3 run."""

    def __init__(self, mux: StreamMux, *, path: tuple[str, ...], graph_name: str | None = None,
                 trigger_call_id: str | None = None) -> None:
        self._parent_apump_fn: Callable[[], Awaitable[bool]] | None = mux._apump_fn
        super().__init__(None, mux, wire_pump=False)
        self._identify(path, graph_name, trigger_call_id)

    async def _apump_next(self) -> bool:
        if self._exhausted or self._seen_terminal or self._mux._events._closed:
            return False
        return self._parent_apump_fn is not None and await self._parent_apump_fn()
