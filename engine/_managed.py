"""Managed values: state keys the engine computes per step instead of storing (issue 17).

`RemainingSteps` and `IsLastStep` are read like any state key but hold no channel: a task
(and the router after it) sees them computed from its run's step and recursion limit, as
LangGraph's `langgraph.managed`; they are never written, checkpointed or streamed.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable
from typing import Annotated, Any, get_args, get_origin

__all__ = [
    "IsLastStep",
    "IsLastStepManager",
    "ManagedValue",
    "RemainingSteps",
    "RemainingStepsManager",
    "check_no_managed",
    "managed_specs",
    "managed_values",
    "strip_required",
]


class ManagedValue:
    """A value computed from the step counters of the run a task belongs to."""

    @staticmethod
    def get(step: int, stop: int) -> Any:
        raise NotImplementedError


class RemainingStepsManager(ManagedValue):
    """Steps left before the recursion limit stops the run (the run's `stop - step`)."""

    @staticmethod
    def get(step: int, stop: int) -> int:
        return stop - step


class IsLastStepManager(ManagedValue):
    """True in the last step the recursion limit allows."""

    @staticmethod
    def get(step: int, stop: int) -> bool:
        return step == stop - 1


RemainingSteps = Annotated[int, RemainingStepsManager]
IsLastStep = Annotated[bool, IsLastStepManager]

_WRAPPERS = tuple(
    w for w in (getattr(typing, n, None) for n in ("Required", "NotRequired", "ReadOnly")) if w
)


def strip_required(hint: Any) -> Any:
    """`NotRequired[X]` (and `Required`, `ReadOnly`) as `X`: TypedDict markers, not types."""
    while get_origin(hint) in _WRAPPERS:
        hint = get_args(hint)[0]
    return hint


def _manager_of(hint: Any) -> type[ManagedValue] | None:
    hint = strip_required(hint)
    if get_origin(hint) is not Annotated:
        return None
    last = hint.__metadata__[-1]  # LangGraph looks at the last annotation only
    last = get_origin(last) or last
    if isinstance(last, type) and issubclass(last, ManagedValue):
        return last
    return None


def managed_specs(hints: dict[str, Any]) -> dict[str, type[ManagedValue]]:
    """The managed keys among a schema's type hints, with their managers."""
    found = {}
    for name, hint in hints.items():
        manager = _manager_of(hint)
        if manager is not None:
            found[name] = manager
    return found


def managed_values(
    managed: Iterable[tuple[str, type[ManagedValue]]], step: int, stop: int
) -> dict[str, Any]:
    return {name: manager.get(step, stop) for name, manager in managed}


def check_no_managed(schema: Any, managed: dict[str, Any]) -> None:
    """Input and output schemas may not declare managed keys (LangGraph's ValueError)."""
    if managed:
        raise ValueError(
            f"Invalid managed channels detected in {getattr(schema, '__name__', '')}: "
            f"{', '.join(managed)}. Managed channels are not permitted in Input/Output schema."
        )
