"""The `messages` handler of v3 runs: chat models stream content-block events (issue 29).

LangChain routes a chat model's `invoke` through its content-block event generator when one
of the run's handlers is a `_V2StreamingCallbackHandler` (a private marker class of
`langchain_core.tracers._streaming`, as LangGraph uses it): each `message-start`,
`content-block-*` and `message-finish` event then reaches `on_stream_event`, and goes out in
`messages` mode with the model call's `run_id`, for `run.messages` to build one
`ChatModelStream` per call. Imported only when langchain-core already is.
"""

from __future__ import annotations

from typing import Any
from uuid import uuid4

from langchain_core.tracers._streaming import _V2StreamingCallbackHandler

from ._lc_handler import MessagesHandler

__all__ = ["ProtocolMessagesHandler"]


class ProtocolMessagesHandler(MessagesHandler, _V2StreamingCallbackHandler):
    """`MessagesHandler` streaming protocol events instead of token chunks."""

    def on_llm_new_token(self, token: str, *, chunk: Any = None, run_id: Any,
                         **kwargs: Any) -> None:
        """v1 chunks (a node calling `model.stream()` itself) stay out of a v3 run."""

    def on_stream_event(self, event: dict[str, Any], *, run_id: Any, **kwargs: Any) -> None:
        meta = self.active.get(run_id)
        if meta is None or not self.run.want_messages:
            return
        if event.get("event") == "message-start":
            self.streamed.add(run_id)
            if event.get("message_id"):
                self.run.root.seen_messages.add(event["message_id"])
        data = (event, {**meta, "run_id": str(run_id)})
        self.run.sink.push((self.run.ns_tuple, "messages", data))

    def on_llm_end(self, response: Any, *, run_id: Any, **kwargs: Any) -> None:
        if run_id in self.streamed:  # the node returning this message must not repeat it
            for generations in response.generations:
                for generation in generations:
                    message = getattr(generation, "message", None)
                    if message is not None:
                        if message.id is None:
                            message.id = str(uuid4())
                        self.run.root.seen_messages.add(message.id)
        super().on_llm_end(response, run_id=run_id, **kwargs)
