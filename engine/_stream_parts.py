"""The typed shapes of `version="v2"` stream parts and their payloads (issue 29).

Pure typing: a caller narrows a `StreamPart` on `part["type"]`. The names are LangGraph's
(`langgraph.types`), so code annotated against LangGraph type-checks against graphrun.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, TypedDict, TypeVar, Union

from .types import Interrupt

StateT = TypeVar("StateT")
OutputT = TypeVar("OutputT")

__all__ = [
    "CheckpointPayload",
    "CheckpointStreamPart",
    "CheckpointTask",
    "CustomStreamPart",
    "DebugPayload",
    "DebugStreamPart",
    "MessagesStreamPart",
    "StreamPart",
    "TaskPayload",
    "TaskResultPayload",
    "TasksStreamPart",
    "UpdatesStreamPart",
    "ValuesStreamPart",
]


class TaskPayload(TypedDict, total=False):
    """A task starting: its id, node, input and the channels that triggered it."""

    id: str
    name: str
    input: Any
    triggers: list[str]
    metadata: dict[str, Any]


class TaskResultPayload(TypedDict):
    """A task finished: its error (or None), its interrupts and its state writes."""

    id: str
    name: str
    error: str | None
    interrupts: list[dict[str, Any]]
    result: dict[str, Any]


class CheckpointTask(TypedDict, total=False):
    """One task of a checkpoint payload; which keys are present depends on its outcome."""

    id: str
    name: str
    error: str
    result: Any
    interrupts: list[dict[str, Any]]
    state: Any


class CheckpointPayload(TypedDict, Generic[StateT]):
    """A checkpoint as `get_state()` shows it."""

    config: dict[str, Any] | None
    metadata: dict[str, Any]
    values: StateT
    next: list[str]
    parent_config: dict[str, Any] | None
    tasks: list[CheckpointTask]


class _DebugCheckpoint(TypedDict, Generic[StateT]):
    step: int
    timestamp: str
    type: Literal["checkpoint"]
    payload: CheckpointPayload[StateT]


class _DebugTask(TypedDict):
    step: int
    timestamp: str
    type: Literal["task"]
    payload: TaskPayload


class _DebugTaskResult(TypedDict):
    step: int
    timestamp: str
    type: Literal["task_result"]
    payload: TaskResultPayload


DebugPayload = Union[_DebugCheckpoint[StateT], _DebugTask, _DebugTaskResult]


class ValuesStreamPart(TypedDict, Generic[OutputT]):
    """The state after a step; the run's interrupts apart from it."""

    type: Literal["values"]
    ns: tuple[str, ...]
    data: OutputT
    interrupts: tuple[Interrupt, ...]


class UpdatesStreamPart(TypedDict):
    type: Literal["updates"]
    ns: tuple[str, ...]
    data: dict[str, Any]


class MessagesStreamPart(TypedDict):
    """A message chunk and its metadata (`langgraph_node`, `langgraph_step`, ...)."""

    type: Literal["messages"]
    ns: tuple[str, ...]
    data: tuple[Any, dict[str, Any]]


class CustomStreamPart(TypedDict):
    type: Literal["custom"]
    ns: tuple[str, ...]
    data: Any


class CheckpointStreamPart(TypedDict, Generic[StateT]):
    type: Literal["checkpoints"]
    ns: tuple[str, ...]
    data: CheckpointPayload[StateT]


class TasksStreamPart(TypedDict):
    type: Literal["tasks"]
    ns: tuple[str, ...]
    data: TaskPayload | TaskResultPayload


class DebugStreamPart(TypedDict, Generic[StateT]):
    type: Literal["debug"]
    ns: tuple[str, ...]
    data: DebugPayload[StateT]


StreamPart = Union[
    ValuesStreamPart[OutputT],
    UpdatesStreamPart,
    MessagesStreamPart,
    CustomStreamPart,
    CheckpointStreamPart[StateT],
    TasksStreamPart,
    DebugStreamPart[StateT],
]
