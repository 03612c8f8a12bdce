"""`MessageGraph`: a graph whose whole state is one list of messages (issue 29).

Deprecated since LangGraph 1.0 but still public there, so ported code keeps running: a
`StateGraph` of one value reduced by `add_messages`; nodes take the list and return messages.
"""

from __future__ import annotations

import sys
import warnings
from typing import Annotated, Any

from ._messages import add_messages
from .graph import StateGraph
from .warnings import LangGraphDeprecatedSinceV10

__all__ = ["MessageGraph"]


class MessageGraph(StateGraph):
    """A `StateGraph` whose state is a list of messages merged by `add_messages`.

    Deprecated as in LangGraph: use a `StateGraph` with a `messages` key.
    """

    def __init__(self) -> None:
        warnings.warn(
            "MessageGraph is deprecated in LangGraph v1.0.0, to be removed in v2.0.0. Please "
            "use StateGraph with a `messages` key instead.",
            category=LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        super().__init__(Annotated[list[_message_type()], add_messages])


def _message_type() -> Any:
    """LangChain's `AnyMessage` when it is loaded (the graph's JSON Schema names it), else Any."""
    if "langchain_core" not in sys.modules:
        return Any
    from langchain_core.messages import AnyMessage

    return AnyMessage
