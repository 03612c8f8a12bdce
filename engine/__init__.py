"""graphrun's engine: Pregel-style super-steps over state channels, LangGraph's import surface.

Port a LangGraph graph by changing its imports to ``from engine import ...``.
"""

from ._calls import task
from ._context import Runtime, get_config, get_runtime, get_store, get_stream_writer, interrupt
from ._managed import IsLastStep, RemainingSteps
from ._messages import REMOVE_ALL_MESSAGES, MessagesState, add_messages, emit_message
from ._func import entrypoint
from ._message_graph import MessageGraph
from ._pregel import CompiledStateGraph
from ._push_message import push_message
from .errors import (
    EmptyInputError,
    GraphInterrupt,
    GraphRecursionError,
    GraphrunError,
    InvalidUpdateError,
    NodeInterrupt,
    NodeTimeoutError,
    ParentCommand,
)
from .graph import StateGraph
from .types import (
    END,
    START,
    CachePolicy,
    Command,
    Interrupt,
    Overwrite,
    PregelTask,
    RetryPolicy,
    Send,
    StateSnapshot,
    StateUpdate,
    StreamMode,
    StreamWriter,
    TimeoutPolicy,
)

__all__ = [
    "CachePolicy",
    "Command",
    "CompiledStateGraph",
    "END",
    "EmptyInputError",
    "GraphInterrupt",
    "GraphRecursionError",
    "GraphrunError",
    "Interrupt",
    "InvalidUpdateError",
    "IsLastStep",
    "MessageGraph",
    "MessagesState",
    "NodeInterrupt",
    "NodeTimeoutError",
    "Overwrite",
    "ParentCommand",
    "PregelTask",
    "REMOVE_ALL_MESSAGES",
    "RemainingSteps",
    "RetryPolicy",
    "Runtime",
    "START",
    "Send",
    "StateGraph",
    "StateSnapshot",
    "StateUpdate",
    "StreamMode",
    "StreamWriter",
    "TimeoutPolicy",
    "add_messages",
    "emit_message",
    "entrypoint",
    "get_config",
    "get_runtime",
    "get_store",
    "get_stream_writer",
    "interrupt",
    "push_message",
    "task",
]
