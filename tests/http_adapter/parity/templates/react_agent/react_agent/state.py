"""What the agent keeps: the conversation; `is_last_step` is managed by the runtime."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated

from langchain_core.messages import AnyMessage

from react_agent.lib import IsLastStep, add_messages


@dataclass
class InputState:
    """What a run's input may carry."""

    messages: Annotated[Sequence[AnyMessage], add_messages] = field(default_factory=list)


@dataclass
class State(InputState):
    """The whole state."""

    is_last_step: IsLastStep = field(default=False)
