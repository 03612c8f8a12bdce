"""`run.tool_calls`: one `ToolCallStream` per tool call of a v3 run (issue 29).

Opt-in (`transformers=[ToolCallTransformer]`): it asks the run for the `tools` mode and turns
each call's `tool-started` / `tool-output-delta` / `tool-finished` / `tool-error` events into a
live handle. The raw `tools` events stay in the main log for wire consumers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from ._channel import StreamChannel
from ._transformer import ProtocolEvent, StreamTransformer

__all__ = ["ToolCallStream", "ToolCallTransformer"]


class ToolCallStream:
    """One tool call: its id, name and input; its output deltas as they stream (iterate the
    handle); then `output` or `error`, and `completed`."""

    def __init__(self, tool_call_id: str, tool_name: str,
                 input: dict[str, Any] | None = None) -> None:
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name
        self.input = input
        self._output_deltas: StreamChannel[Any] = StreamChannel()
        self.output: Any = None
        self.error: str | None = None
        self.completed = False

    @property
    def output_deltas(self) -> StreamChannel[Any]:
        return self._output_deltas

    def _bind(self, *, is_async: bool) -> None:
        self._output_deltas._bind(is_async=is_async)

    def _push_delta(self, delta: Any) -> None:
        self._output_deltas.push(delta)

    def _finish(self, output: Any) -> None:
        self.output, self.completed = output, True
        self._output_deltas.close()

    def _fail(self, message: str) -> None:
        self.error, self.completed = message, True
        self._output_deltas.close()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._output_deltas)

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._output_deltas.__aiter__()

    def __repr__(self) -> str:
        status = "running" if not self.completed else ("failed" if self.error else "completed")
        return (f"ToolCallStream(tool_call_id={self.tool_call_id!r}, "
                f"tool_name={self.tool_name!r}, status={status})")


def _tool_output(output: Any) -> Any:
    """A tool message's content (also in LangChain's serialized form); else `output`."""
    if type(output).__name__ == "ToolMessage" and hasattr(output, "content"):
        return output.content
    if (isinstance(output, dict) and output.get("type") == "constructor"
            and isinstance(output.get("id"), list) and output["id"][-1] == "ToolMessage"):
        kwargs = output.get("kwargs")
        return kwargs.get("content") if isinstance(kwargs, dict) else output
    return output


class ToolCallTransformer(StreamTransformer):
    """Projects this scope's `tools` events into `ToolCallStream` handles."""

    _native = True
    required_stream_modes = ("tools",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[ToolCallStream] = StreamChannel()  # live handles: not logged
        self._active: dict[str, ToolCallStream] = {}
        self._is_async = False
        self._pump_fn: Callable[[], bool] | None = None
        self._apump_fn: Callable[[], Awaitable[bool]] | None = None

    def init(self) -> dict[str, Any]:
        return {"tool_calls": self._log}

    def _bind_pump(self, fn: Callable[[], bool]) -> None:
        self._pump_fn, self._is_async = fn, False

    def _bind_apump(self, fn: Callable[[], Awaitable[bool]]) -> None:
        self._apump_fn, self._is_async = fn, True

    def _new_stream(self, call_id: str, name: str, input: Any) -> ToolCallStream:
        stream = ToolCallStream(call_id, name, input)
        stream._bind(is_async=self._is_async)
        stream._output_deltas._request_more = self._pump_fn
        stream._output_deltas._arequest_more = self._apump_fn
        return stream

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] != "tools" or tuple(event["params"]["namespace"]) != self.scope:
            return True
        data = event["params"]["data"]
        call_id = data.get("tool_call_id")
        kind = data.get("event")
        if call_id is None:
            return True
        if kind == "tool-started":
            stream = self._new_stream(call_id, data.get("tool_name", ""), data.get("input"))
            self._active[call_id] = stream
            self._log.push(stream)
        elif kind == "tool-output-delta" and (stream := self._active.get(call_id)):
            stream._push_delta(data.get("delta"))
        elif kind == "tool-finished" and (stream := self._active.pop(call_id, None)):
            stream._finish(_tool_output(data.get("output")))
        elif kind == "tool-error" and (stream := self._active.pop(call_id, None)):
            stream._fail(data.get("message", ""))
        return True

    def finalize(self) -> None:
        for stream in self._active.values():
            if not stream.completed:
                stream._finish(None)
        self._active.clear()

    def fail(self, err: BaseException) -> None:
        for stream in self._active.values():
            if not stream.completed:
                stream._fail(str(err))
        self._active.clear()
