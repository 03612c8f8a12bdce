"""Graph lifecycle callbacks: a handler told when a run pauses on interrupts and when it
resumes, LangGraph's `langgraph.callbacks` surface (issue 29).

Needs langchain-core (a `GraphCallbackHandler` is a LangChain callback handler, passed in
`config["callbacks"]` next to any other); `import engine` does not import this module.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, TypeAlias
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

from .types import Interrupt

__all__ = [
    "GraphCallbackHandler",
    "GraphInterruptEvent",
    "GraphLifecycleEvent",
    "GraphLifecycleStatus",
    "GraphResumeEvent",
]

GraphLifecycleStatus: TypeAlias = Literal[
    "input", "pending", "done", "interrupt_before", "interrupt_after", "out_of_steps"
]


@dataclasses.dataclass(frozen=True)
class GraphInterruptEvent:
    """The run paused: on which checkpoint, in which (sub)graph, for which interrupts."""

    run_id: UUID | None
    status: GraphLifecycleStatus
    checkpoint_id: str
    checkpoint_ns: tuple[str, ...]
    interrupts: tuple[Interrupt, ...]


@dataclasses.dataclass(frozen=True)
class GraphResumeEvent:
    """The run resumed from a saved checkpoint."""

    run_id: UUID | None
    status: GraphLifecycleStatus
    checkpoint_id: str
    checkpoint_ns: tuple[str, ...]


GraphLifecycleEvent: TypeAlias = GraphInterruptEvent | GraphResumeEvent


class GraphCallbackHandler(BaseCallbackHandler):
    """Subclass and pass in `config["callbacks"]` to observe interrupts and resumes; other
    LangChain handlers are not told of them. Each method may also be `async def`."""

    def on_interrupt(self, event: GraphInterruptEvent) -> Any:
        """The run paused on one or more interrupts."""

    def on_resume(self, event: GraphResumeEvent) -> Any:
        """The run resumed from a saved checkpoint."""
