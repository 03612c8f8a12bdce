"""One error tree for the engine.

    GraphrunError
    ├── GraphRecursionError (also a RecursionError, as LangGraph's)
    ├── InvalidUpdateError
    ├── EmptyInputError
    └── EmptyChannelError (internal)

User exceptions raised in nodes propagate unchanged.

Control-flow signals (`GraphInterrupt`, `ParentCommand`) derive from `GraphBubbleUp`, a
`BaseException`, so a user's ``except Exception`` in node code cannot swallow them (SPEC §1,
STYLE 5; LangGraph issue #8217 shows the cost of the alternative).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .types import Command, Interrupt

__all__ = [
    "EmptyChannelError",
    "EmptyInputError",
    "GraphBubbleUp",
    "GraphInterrupt",
    "GraphRecursionError",
    "GraphrunError",
    "InvalidUpdateError",
    "NodeInterrupt",
    "ParentCommand",
]


class GraphrunError(Exception):
    """Root of every error the engine raises on its own behalf."""


class GraphRecursionError(GraphrunError, RecursionError):
    """The run took `recursion_limit` super-steps without reaching a stop condition."""


class InvalidUpdateError(GraphrunError):
    """A node wrote something its state cannot take (two values for a plain key, a non-dict)."""


class EmptyInputError(GraphrunError):
    """The graph was invoked with no input and there is nothing to resume."""


class EmptyChannelError(GraphrunError):
    """A channel was read before it was ever written (internal)."""


class GraphBubbleUp(BaseException):
    """Base of control-flow signals that travel up through node code."""


class GraphInterrupt(GraphBubbleUp):
    """Raised by `interrupt()`: the run pauses and waits for `Command(resume=...)`."""

    def __init__(self, interrupts: tuple[Interrupt, ...] = ()) -> None:
        super().__init__(interrupts)
        self.interrupts = tuple(interrupts)


class NodeInterrupt(GraphInterrupt):
    """Raised by node code to pause with a value (the older LangGraph spelling)."""

    def __init__(self, value: Any, id: str | None = None) -> None:
        from .types import Interrupt

        super().__init__((Interrupt(value=value, id=id or ""),))


class ParentCommand(GraphBubbleUp):
    """Carries a `Command(graph=Command.PARENT)` out of a subgraph to its parent."""

    def __init__(self, command: Command) -> None:
        super().__init__(command)
        self.command = command
        self.target: object = None  # the run whose graph applies the command
