"""`RemoteGraph.stream_events(version="v3")`: the SDK's v3 thread stream behind the surface of
a local `GraphRunStream` (issue 29).

The SDK's `threads.stream(...)` session (`/threads/{id}/commands` + `/stream/events`) does the
wire work; these wrappers start the run when entered, cancel it on `abort()`, and name the
projections as the local run stream does (`values`, `messages`, `subgraphs`, `tool_calls`,
`extensions[...]`). A resume `Command` travels as its bare value: the v3 server wraps the input
of an interrupted thread as the resume itself.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from ..types import Command
from ._sdk import channel_decoder

__all__ = ["AsyncRemoteRunStream", "RemoteRunStream", "wire_input"]

logger = logging.getLogger(__name__)


def wire_input(value: Any) -> Any:
    """The v3 `run.start` input for `value`: a resume `Command`'s value, else `value`."""
    if isinstance(value, Command):
        if value.goto or value.update:
            raise NotImplementedError(
                "RemoteGraph v3 streaming takes `Command(resume=...)` only: `goto` and `update` "
                "have no place in the v3 `run.start` call."
            )
        return value.resume
    return value


class _Channel:
    """A wire channel the SDK has no typed projection for, decoded to its `params.data` items
    (what the local transformer of that channel yields). Needs the stream entered."""

    def __init__(self, sdk: Any, channel: str) -> None:
        self._sdk = sdk
        self._channel = channel

    def __iter__(self) -> Iterator[Any]:
        decoder = channel_decoder(self._channel)
        for event in self._sdk.subscribe([self._channel]):
            yield from decoder.feed(event)

    async def __aiter__(self) -> AsyncIterator[Any]:
        decoder = channel_decoder(self._channel)
        async for event in self._sdk.subscribe([self._channel]):
            for item in decoder.feed(event):
                yield item


class _Projections(Mapping[str, Any]):
    """`run.extensions`: the native channels by name, then the custom extension channels."""

    _TYPED = ("values", "messages", "tool_calls", "subgraphs")
    _DECODED = ("updates", "checkpoints", "tasks", "custom")

    def __init__(self, sdk: Any) -> None:
        self._sdk = sdk

    def __getitem__(self, name: str) -> Any:
        if name in self._TYPED:
            return getattr(self._sdk, name)
        if name in self._DECODED:
            return _Channel(self._sdk, name)
        return self._sdk.extensions[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._TYPED + self._DECODED)

    def __len__(self) -> int:
        return len(self._TYPED) + len(self._DECODED)


class _Base:
    """What both wrappers share: the start arguments and the projections."""

    def __init__(
        self, client: Any, sdk_thread: Any, input: Any, config: Any, metadata: Any
    ) -> None:
        self._client = client
        self._sdk = sdk_thread
        self._start_kwargs: dict[str, Any] = {
            "input": wire_input(input), "config": config, "metadata": metadata,
        }
        self._run_id: str | None = None
        self._closed = False
        self._events: Any = None

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} already closed")

    def _close(self) -> bool:
        """Mark closed; False when it already was."""
        if self._closed:
            return False
        self._closed = True
        return True

    values = property(lambda self: self._sdk.values, doc="Live state snapshots (`run.values`).")
    messages = property(lambda self: self._sdk.messages, doc="Live messages (`run.messages`).")
    subgraphs = property(
        lambda self: self._sdk.subgraphs, doc="Subgraph handles (`run.subgraphs`)."
    )
    tool_calls = property(
        lambda self: self._sdk.tool_calls, doc="Tool execution events (the `tools` channel)."
    )

    @property
    def extensions(self) -> Mapping[str, Any]:
        """Name -> projection, as the local `run.extensions`."""
        return _Projections(self._sdk)


class RemoteRunStream(_Base):
    """The sync wrapper: `with remote.stream_events(x, version="v3") as run: ...`."""

    def __enter__(self) -> RemoteRunStream:
        self._check_open()
        self._sdk.__enter__()
        try:
            self._run_id = self._sdk.run.start(**self._start_kwargs)["run_id"]
        except BaseException:
            self._sdk.__exit__(*sys.exc_info())
            raise
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self._close():
            self._sdk.__exit__(*exc_info)

    @property
    def output(self) -> Any:
        return self._sdk.output

    @property
    def interrupted(self) -> bool:
        """Whether the remote run is paused now (read without waiting for the run's end)."""
        return self._sdk.interrupted

    @property
    def interrupts(self) -> list[Any]:
        return list(self._sdk.interrupts)

    def abort(self) -> None:
        """Cancel the remote run (once started) and close the session; failures are logged."""
        if not self._close():
            return
        if self._run_id is not None:
            try:
                self._client.runs.cancel(self._sdk.thread_id, self._run_id, wait=False)
            except Exception:
                logger.debug("abort: cancelling the remote run failed", exc_info=True)
        try:
            self._sdk.close()
        except Exception:
            logger.debug("abort: closing the stream failed", exc_info=True)

    def __iter__(self) -> Iterator[Any]:
        if self._events is None:
            self._events = iter(self._sdk.events)
        return self._events

    def interleave(self, *names: str) -> Iterator[tuple[str, Any]]:
        """(name, item) pairs of several projections as they arrive."""
        yield from self._sdk.interleave_projections(list(names))


class AsyncRemoteRunStream(_Base):
    """The async wrapper: `async with await remote.astream_events(x, version="v3") as run`."""

    async def __aenter__(self) -> AsyncRemoteRunStream:
        self._check_open()
        await self._sdk.__aenter__()
        try:
            self._run_id = (await self._sdk.run.start(**self._start_kwargs))["run_id"]
        except BaseException:
            await self._sdk.__aexit__(*sys.exc_info())
            raise
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        if self._close():
            await self._sdk.__aexit__(*exc_info)

    async def output(self) -> Any:
        """The run's final state, once it ends."""
        return await self._sdk.output

    async def interrupted(self) -> bool:
        return self._sdk.interrupted

    async def interrupts(self) -> list[Any]:
        return list(self._sdk.interrupts)

    async def abort(self) -> None:
        if not self._close():
            return
        if self._run_id is not None:
            try:
                await self._client.runs.cancel(self._sdk.thread_id, self._run_id, wait=False)
            except Exception:
                logger.debug("abort: cancelling the remote run failed", exc_info=True)
        try:
            await self._sdk.close()
        except Exception:
            logger.debug("abort: closing the stream failed", exc_info=True)

    def __aiter__(self) -> AsyncIterator[Any]:
        if self._events is None:
            self._events = self._sdk.events.__aiter__()
        return self._events
