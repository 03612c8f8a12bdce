"""`push_message`: a node streams a whole message in `messages` mode and writes it to the state.

LangGraph's `langgraph.graph.message.push_message` (issue 29): for a message a node builds
itself, not one a chat model streamed. It goes out once, under the namespace of the graph the
node runs in (so the callers that stream that graph see it), is remembered so the node's
returned state does not stream it again, and is written to `state_key` as the node's own
update would (before the node's returned writes).
"""

from __future__ import annotations

from typing import Any

from ._context import _scope
from ._messages import message_id

__all__ = ["push_message"]


def push_message(message: Any, *, state_key: str | None = "messages") -> Any:
    """Stream `message` in `messages` mode and, unless `state_key` is None, write it there.

    `message` is a message object or anything LangChain turns into one (a dict, a
    `(role, content)` pair); it needs an id, which is how the stream and the state know it.
    """
    scope = _scope("push_message")
    message = _as_message(message)
    if message_id(message) is None:
        raise ValueError("Message ID is required")
    scope.run.push_message(scope.task, message, {})
    if state_key and state_key in scope.run.plan.state_key_set:
        scope.task.writes.append((state_key, message))
    return message


def _as_message(message: Any) -> Any:
    """LangChain's conversion (a chunk stays a chunk: the stream shows what was pushed)."""
    try:
        from langchain_core.messages import convert_to_messages
    except ImportError:  # without LangChain, messages are dicts: kept as they are
        return message
    return convert_to_messages([message])[0]
