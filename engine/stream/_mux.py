"""`StreamMux`: routes a v3 run's protocol events through its transformers into its log.

One mux per scope: the root run's, and one per discovered subgraph (a child built from the
same transformer factories, driven by the root's pump). The root numbers the events of its
main log (`seq`); children share the root's event objects and leave them as they are.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from ._channel import StreamChannel
from ._transformer import ProtocolEvent, StreamTransformer, needs_event_loop

__all__ = ["StreamMux", "TransformerFactory"]

TransformerFactory = Callable[[tuple[str, ...]], StreamTransformer]


def _lanes(transformers: Iterable[StreamTransformer]) -> list[StreamTransformer]:
    """`before_builtins` transformers first, each lane in the order given."""
    items = list(transformers)
    first = [t for t in items if getattr(t, "before_builtins", False)]
    return first + [t for t in items if not getattr(t, "before_builtins", False)]


class StreamMux:
    """The transformer pipeline and main event log of one scope of a v3 run."""

    def __init__(
        self,
        transformers: list[StreamTransformer] | None = None,
        *,
        is_async: bool = False,
        factories: list[TransformerFactory] | None = None,
        scope: tuple[str, ...] = (),
        _assign_seq: bool = True,
    ) -> None:
        self.is_async = is_async
        self.scope = scope
        self._assign_seq = _assign_seq
        self._events: StreamChannel[ProtocolEvent] = StreamChannel()
        self._events._bind(is_async=is_async)
        self._events._bind_mux(self)
        self._transformers: list[StreamTransformer] = []
        self._channels: list[StreamChannel[Any]] = []
        self._seq = 0
        self._push_seq = 0
        self.extensions: dict[str, Any] = {}
        self.native_keys: set[str] = set()
        self._projection_owners: dict[str, str] = {}
        self._transformer_by_key: dict[str, StreamTransformer] = {}
        # only factories can be cloned into a child scope; prebuilt instances stay at the root
        self._factories = list(factories) if factories is not None else None
        self._pump_fn: Callable[[], bool] | None = None
        self._apump_fn: Callable[[], Awaitable[bool]] | None = None
        for transformer in _lanes(factory(scope) for factory in factories or ()):
            self._register(transformer)
        for transformer in _lanes(transformers or ()):
            self._register(transformer)

    def transformer_by_key(self, key: str) -> StreamTransformer | None:
        return self._transformer_by_key.get(key)

    def _next_push_seq(self) -> int:
        self._push_seq += 1
        return self._push_seq

    # -- wiring ---------------------------------------------------------------------------------

    def bind_pump(self, fn: Callable[[], bool]) -> None:
        """Every reader of this scope (log, projections, transformers' own) pulls through `fn`."""
        self._pump_fn = fn
        self._events._request_more = fn
        for channel in self._channels:
            channel._request_more = fn
        for transformer in self._transformers:
            if (bind := getattr(transformer, "_bind_pump", None)) is not None:
                bind(fn)

    def bind_apump(self, fn: Callable[[], Awaitable[bool]]) -> None:
        self._apump_fn = fn
        self._events._arequest_more = fn
        for channel in self._channels:
            channel._arequest_more = fn
        for transformer in self._transformers:
            if (bind := getattr(transformer, "_bind_apump", None)) is not None:
                bind(fn)

    def _make_child(self, scope: tuple[str, ...]) -> StreamMux:
        """A mux for a subgraph at `scope`: fresh transformers from the same factories."""
        if self._factories is None:
            raise RuntimeError(
                "StreamMux._make_child needs a mux built with `factories=`: prebuilt "
                "transformers cannot be cloned into another scope."
            )
        child = StreamMux(
            factories=self._factories, is_async=self.is_async, scope=scope, _assign_seq=False
        )
        if self._pump_fn is not None:
            child.bind_pump(self._pump_fn)
        if self._apump_fn is not None:
            child.bind_apump(self._apump_fn)
        return child

    def _register(self, transformer: StreamTransformer) -> None:
        if needs_event_loop(transformer) and not self.is_async:
            raise RuntimeError(
                f"{type(transformer).__name__} requires an async run (it overrides "
                "aprocess/afinalize/afail or sets requires_async): use astream_events()."
            )
        projection = transformer.init()
        if not isinstance(projection, dict):
            raise TypeError(
                f"StreamTransformer.init() must return a dict, got {type(projection).__name__}"
            )
        taken = sorted(set(projection) & set(self.extensions))
        if taken:
            owners = ", ".join(f"{k!r} (owned by {self._projection_owners[k]})" for k in taken)
            raise ValueError(
                f"Transformer {type(transformer).__name__} returned projection keys that "
                f"conflict with already registered keys: {owners}"
            )
        native = bool(getattr(transformer, "_native", False))
        self._transformers.append(transformer)
        for value in projection.values():
            if isinstance(value, StreamChannel):
                self._adopt(value, native)
        self.extensions.update(projection)
        for key in projection:
            self._projection_owners[key] = type(transformer).__name__
            self._transformer_by_key[key] = transformer
        if native:
            self.native_keys.update(projection)
        transformer._on_register(self)

    def _adopt(self, channel: StreamChannel[Any], native: bool) -> None:
        """Bind a projection channel; a named one also forwards its items into the log
        (`custom:<name>` unless its transformer is native)."""
        channel._bind(is_async=self.is_async)
        channel._bind_mux(self)
        self._channels.append(channel)
        if channel.name is not None:
            method = channel.name if native else f"custom:{channel.name}"
            channel._wire(lambda item, method=method: self._forward(method, item))

    def _forward(self, method: str, item: Any) -> None:
        """Log a projection channel's item as an event of its own (no transformer sees it)."""
        event: ProtocolEvent = {
            "type": "event",
            "method": method,
            "params": {"namespace": [], "timestamp": int(time.time() * 1000), "data": item},
        }
        self._log(event)

    def _log(self, event: ProtocolEvent) -> None:
        # numbered as it enters the log, so events a transformer forwarded while processing
        # this one come first, in order
        if self._assign_seq:
            self._seq += 1
            event["seq"] = self._seq
        self._events.push(event)

    # -- sync lane ------------------------------------------------------------------------------

    def push(self, event: ProtocolEvent) -> None:
        """Every transformer sees `event`; it enters the log unless one of them said no."""
        keep = True
        for transformer in self._transformers:
            if not transformer.process(event):
                keep = False
        if keep:
            self._log(event)

    def close(self) -> None:
        """Finalize every transformer, then close every channel; the first error is raised."""
        first: BaseException | None = None
        for transformer in self._transformers:
            try:
                transformer.finalize()
            except BaseException as error:
                first = first or error
        self._close_channels()
        if first is not None:
            raise first

    def fail(self, err: BaseException) -> None:
        for transformer in self._transformers:
            try:
                transformer.fail(err)
            except BaseException:
                pass  # the run's own error is the one to report
        self._fail_channels(err)

    def _close_channels(self) -> None:
        for channel in self._channels:
            if not channel._closed:
                channel.close()
        self._events.close()

    def _fail_channels(self, err: BaseException) -> None:
        for channel in self._channels:
            if not channel._closed:
                channel.fail(err)
        if not self._events._closed:
            self._events.fail(err)

    # -- async lane -----------------------------------------------------------------------------

    async def apush(self, event: ProtocolEvent) -> None:
        keep = True
        for transformer in self._transformers:
            if not await transformer.aprocess(event):
                keep = False
        if keep:
            self._log(event)

    async def aclose(self) -> None:
        """Await the transformers' scheduled work, then finalize and close as `close` does."""
        pending = self._collect_scheduled_tasks()
        if pending:
            results = await asyncio.gather(*pending, return_exceptions=True)
            for result in results:
                if isinstance(result, BaseException) and not isinstance(
                    result, asyncio.CancelledError
                ):
                    raise result
        first: BaseException | None = None
        for transformer in self._transformers:
            try:
                await transformer.afinalize()
            except BaseException as error:
                first = first or error
        self._close_channels()
        if first is not None:
            raise first

    async def afail(self, err: BaseException) -> None:
        pending = self._collect_scheduled_tasks()
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        for transformer in self._transformers:
            try:
                await transformer.afail(err)
            except BaseException:
                pass
        self._fail_channels(err)

    def _collect_scheduled_tasks(self) -> list[asyncio.Task[Any]]:
        return [
            task
            for transformer in self._transformers
            for task in transformer.__dict__.get("_stream_scheduled_tasks", ())
            if not task.done()
        ]
