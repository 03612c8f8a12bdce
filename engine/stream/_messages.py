"""`run.messages`: one LangChain `ChatModelStream` per chat model call of a v3 run (issue 29).

Two sources feed it, both from the `messages` mode at this run's own level:
- content-block protocol events (`message-start` ... `message-finish`) that chat models emit
  in a v3 run, routed to their stream by the model call's `run_id`;
- whole messages a node returned (not chunks, not tool results), replayed as a finished stream.
Token chunks of the v1 shape are ignored. LangChain is imported only when a message arrives,
so a run without chat models needs no LangChain.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ._channel import StreamChannel
from ._transformer import ProtocolEvent, StreamTransformer

__all__ = ["MessagesTransformer"]


def _is_whole_message(payload: Any) -> bool:
    try:
        from langchain_core.messages import AIMessageChunk, BaseMessage, ToolMessage
    except ImportError:  # no LangChain: no LangChain messages either
        return False
    return isinstance(payload, BaseMessage) and not isinstance(
        payload, (AIMessageChunk, ToolMessage)
    )


class MessagesTransformer(StreamTransformer):
    """Projects chat model output as `ChatModelStream`s (`AsyncChatModelStream` when async)."""

    _native = True
    required_stream_modes = ("messages",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Any] = StreamChannel()
        self._by_run: dict[str, Any] = {}  # model call run id -> its open stream
        self._ignored_runs: set[str] = set()  # tool-role streams: not chat tokens
        self._pump_fn: Callable[[], bool] | None = None
        self._apump_fn: Callable[[], Awaitable[bool]] | None = None
        self._scope_list = list(scope)

    def init(self) -> dict[str, Any]:
        return {"messages": self._log}

    def _bind_pump(self, fn: Callable[[], bool]) -> None:
        self._pump_fn = fn

    def _bind_apump(self, fn: Callable[[], Awaitable[bool]]) -> None:
        self._apump_fn = fn

    def _make_stream(self, *, node: str | None, message_id: str | None) -> Any:
        """A stream whose readers drive the run through the bound pump (async preferred)."""
        from langchain_core.language_models.chat_model_stream import (
            AsyncChatModelStream,
            ChatModelStream,
        )

        if self._apump_fn is None and self._pump_fn is not None:
            stream = ChatModelStream(namespace=[], node=node, message_id=message_id)
            stream.set_request_more(self._pump_fn)
            return stream
        astream = AsyncChatModelStream(namespace=[], node=node, message_id=message_id)
        if self._apump_fn is not None:
            astream.set_arequest_more(self._apump_fn)
        return astream

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] != "messages" or event["params"]["namespace"] != self._scope_list:
            return True
        payload, metadata = event["params"]["data"]
        node = metadata.get("langgraph_node") if metadata else None
        run_id = str(metadata.get("run_id", "")) if metadata else ""
        if isinstance(payload, dict) and "event" in payload:
            self._route(payload, run_id, node)
        elif _is_whole_message(payload):
            self._replay(payload, node)
        return True

    def _route(self, data: dict[str, Any], run_id: str, node: str | None) -> None:
        kind = data.get("event")
        if kind == "message-start":
            if data.get("role") == "tool":  # tool results belong to the tools projection
                self._ignored_runs.add(run_id)
                return
            message_id = data.get("message_id")
            stream = self._make_stream(
                node=node, message_id=str(message_id) if message_id is not None else None
            )
            self._by_run[run_id] = stream
            self._log.push(stream)  # on start: readers see tokens as they arrive
            stream.dispatch(data)
        elif run_id in self._ignored_runs:
            if kind == "message-finish":
                self._ignored_runs.discard(run_id)
        elif (stream := self._by_run.get(run_id)) is not None:
            stream.dispatch(data)
            if kind == "message-finish":
                del self._by_run[run_id]

    def _replay(self, message: Any, node: str | None) -> None:
        from langchain_core.language_models._compat_bridge import message_to_events

        stream = self._make_stream(node=node, message_id=message.id)
        for data in message_to_events(message, message_id=message.id):
            stream.dispatch(data)
        self._log.push(stream)

    def finalize(self) -> None:
        self._by_run.clear()
        self._ignored_runs.clear()

    def fail(self, err: BaseException) -> None:
        for stream in list(self._by_run.values()):
            stream.fail(err)
        self._by_run.clear()
        self._ignored_runs.clear()
