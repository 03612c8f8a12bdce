"""Messages: the `add_messages` reducer and `MessagesState` (plain dicts or LangChain objects).

Messages are dicts (`{"type"|"role", "content", "id"}`) or, when langchain-core is installed and
the user passes them, LangChain message objects; both are appended, replaced by id and removed
with a `RemoveMessage` / `{"type": "remove", "id": ...}`.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, TypedDict

__all__ = ["REMOVE_ALL_MESSAGES", "MessagesState", "add_messages"]

REMOVE_ALL_MESSAGES = "__remove_all__"


def _get(message: Any, field: str) -> Any:
    if isinstance(message, dict):
        return message.get(field)
    return getattr(message, field, None)


def _is_remove(message: Any) -> bool:
    return _get(message, "type") == "remove"


def _with_id(message: Any) -> Any:
    if _get(message, "id"):
        return message
    new_id = str(uuid.uuid4())
    if isinstance(message, dict):
        return {**message, "id": new_id}
    try:
        message.id = new_id
    except Exception:  # frozen objects keep no id; they can only be appended
        pass
    return message


def _coerce(messages: Any) -> list[Any]:
    if not isinstance(messages, list):
        messages = [messages]
    out = []
    for message in messages:
        if isinstance(message, str):
            message = {"type": "human", "content": message}
        elif isinstance(message, tuple) and len(message) == 2:
            message = {"type": message[0], "content": message[1]}
        out.append(_langchain(message))
    return out


def _langchain(message: Any) -> Any:
    """Dict messages become LangChain objects when langchain-core is importable (as LangGraph)."""
    if not isinstance(message, dict):
        return message
    try:
        from langchain_core.messages import convert_to_messages
    except ImportError:
        return message
    try:
        return convert_to_messages([message])[0]
    except Exception:  # not a message shape LangChain knows: keep the dict
        return message


def add_messages(left: Any, right: Any) -> list[Any]:
    """Append `right` to `left`, replacing messages with the same id and honouring removals."""
    left_list = [_with_id(m) for m in _coerce(left)]
    right_list = [_with_id(m) for m in _coerce(right)]
    for index, message in enumerate(right_list):
        if _is_remove(message) and _get(message, "id") == REMOVE_ALL_MESSAGES:
            return [m for m in right_list[index + 1 :]]
    merged = list(left_list)
    position = {_get(m, "id"): i for i, m in enumerate(merged)}
    removed: set[Any] = set()
    for message in right_list:
        mid = _get(message, "id")
        if _is_remove(message):
            if mid not in position:
                raise ValueError(
                    f"Attempting to delete a message with an ID that doesn't exist ('{mid}')"
                )
            removed.add(mid)
            continue
        if mid in position:
            merged[position[mid]] = message
        else:
            position[mid] = len(merged)
            merged.append(message)
    return [m for m in merged if _get(m, "id") not in removed]


class MessagesState(TypedDict):
    """A state with one `messages` key reduced by `add_messages`."""

    messages: Annotated[list[Any], add_messages]
