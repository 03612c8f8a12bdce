"""`stream_mode="tools"`: a tool call's lifecycle as stream events (issue 29).

LangChain reports each tool run to the callback handlers of the task that calls it; with the
`tools` mode on, the task's handler streams `tool-started` (with the call's input),
`tool-output-delta` (what the tool emits through `tool_output_writer()` while it runs),
`tool-finished` (its output) and `tool-error`, keyed by the tool call id, under the namespace
of the graph the tool runs in. An interrupted tool is paused, not failed: no error event.
Imported only when langchain-core already is.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar, Token
from typing import Any

from ._lc_handler import MessagesHandler
from .errors import GraphInterrupt

__all__ = ["handler_class", "tool_output_writer"]

_writer: ContextVar[Callable[[Any], None] | None] = ContextVar("graphrun_tool_writer", default=None)


def tool_output_writer() -> Callable[[Any], None] | None:
    """The writer of the tool call running here (`tool-output-delta` events), if streamed."""
    return _writer.get()


class ToolEventsMixin:
    """Adds the `tools` events to a `MessagesHandler`."""

    run: Any
    task: Any

    def _tool_calls(self) -> dict[Any, tuple[str, Token[Any]]]:
        calls = self.__dict__.get("_open_tool_calls")
        if calls is None:
            calls = self.__dict__["_open_tool_calls"] = {}
        return calls

    def _emit_tool(self, payload: dict[str, Any]) -> None:
        self.run.sink.push((self.run.ns_tuple, "tools", payload))

    def on_tool_start(self, serialized: Any, input_str: str, *, run_id: Any,
                      tags: Any = None, inputs: Any = None, **kwargs: Any) -> None:
        super().on_tool_start(serialized, input_str, run_id=run_id, tags=tags,  # type: ignore[misc]
                              inputs=inputs, **kwargs)
        if not self.run.emits or (tags and "langsmith:nostream" in tags):
            return
        call_id = kwargs.get("tool_call_id") or str(run_id)
        name = (serialized or {}).get("name") or kwargs.get("name") or ""

        def write(delta: Any) -> None:
            self._emit_tool({"event": "tool-output-delta", "tool_call_id": call_id,
                             "delta": delta})

        self._tool_calls()[run_id] = (call_id, _writer.set(write))
        payload = {"event": "tool-started", "tool_call_id": call_id, "tool_name": name}
        if inputs is not None:
            payload["input"] = inputs
        self._emit_tool(payload)

    def _close_call(self, run_id: Any) -> str | None:
        found = self._tool_calls().pop(run_id, None)
        if found is None:
            return None
        try:
            _writer.reset(found[1])
        except ValueError:  # ended in another context than it started: the var dies with it
            pass
        return found[0]

    def on_tool_end(self, output: Any, *, run_id: Any, **kwargs: Any) -> None:
        super().on_tool_end(output, run_id=run_id, **kwargs)  # type: ignore[misc]
        if (call_id := self._close_call(run_id)) is not None:
            self._emit_tool({"event": "tool-finished", "tool_call_id": call_id, "output": output})

    def on_tool_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> None:
        super().on_tool_error(error, run_id=run_id, **kwargs)  # type: ignore[misc]
        call_id = self._close_call(run_id)
        if call_id is None or _is_pause(error):
            return
        self._emit_tool({"event": "tool-error", "tool_call_id": call_id, "message": str(error)})


def _is_pause(error: BaseException) -> bool:
    if isinstance(error, GraphInterrupt):
        return True
    return any(cls.__name__ == "GraphDrained" for cls in type(error).__mro__)


@functools.cache
def handler_class(protocol: bool, tools: bool) -> type:
    """The handler a task gets: v3 content-block messages and/or `tools` events."""
    base: type = MessagesHandler
    if protocol:
        from ._lc_protocol import ProtocolMessagesHandler

        base = ProtocolMessagesHandler
    if not tools:
        return base
    return type(f"Tools{base.__name__}", (ToolEventsMixin, base), {})
