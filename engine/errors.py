"""One error tree for the engine.

    GraphrunError
    ├── GraphRecursionError (also a RecursionError, as LangGraph's)
    ├── InvalidUpdateError
    ├── EmptyInputError
    ├── NodeTimeoutError (an attempt exceeded its TimeoutPolicy)
    └── EmptyChannelError (internal)

User exceptions raised in nodes propagate unchanged.

Control-flow signals (`GraphInterrupt`, `ParentCommand`) derive from `GraphBubbleUp`, a
`BaseException`, so a user's ``except Exception`` in node code cannot swallow them (SPEC §1,
STYLE 5; LangGraph issue #8217 shows the cost of the alternative).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._resume_schema import is_invalid_resume

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
    "NodeTimeoutError",
    "ParentCommand",
    "is_invalid_resume",
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


class NodeTimeoutError(GraphrunError):
    """An attempt of a node or task exceeded its `TimeoutPolicy` (an `Exception`, not the
    builtin `TimeoutError`, so the default `RetryPolicy` retries it, as LangGraph)."""

    def __init__(
        self,
        node: str,
        elapsed: float,
        *,
        kind: str,
        idle_timeout: float | None = None,
        run_timeout: float | None = None,
    ) -> None:
        if kind == "idle" and idle_timeout is not None:
            self.timeout = idle_timeout
            message = (
                f"Node '{node}' exceeded its idle timeout of {idle_timeout:.3f}s without "
                f"making progress (elapsed: {elapsed:.3f}s)."
            )
        elif kind == "run" and run_timeout is not None:
            self.timeout = run_timeout
            message = (
                f"Node '{node}' exceeded its run timeout of {run_timeout:.3f}s "
                f"(elapsed: {elapsed:.3f}s)."
            )
        else:
            raise ValueError("kind must be 'idle' (with idle_timeout) or 'run' (with run_timeout)")
        super().__init__(message)
        self.node = node
        self.elapsed = elapsed
        self.kind = kind
        self.idle_timeout = idle_timeout
        self.run_timeout = run_timeout


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
