"""A run's `context` as its graph's `context_schema` (issue 27, LangGraph 1.2.22's rule).

`invoke(..., context={...})` with a dataclass or pydantic `context_schema` hands nodes
`Ctx(**context)`; a TypedDict (or no) schema keeps the dict; an object already built is kept
as it is. No context stays None, and so does a falsy one (`{}` with a TypedDict schema):
LangGraph merges the run's runtime into its parent's with `context or parent.context`.
A subgraph sees its parent's context unless it was invoked with one of its own.
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["run_context"]


def run_context(schema: Any, given: Any, parent: Any = None) -> Any:
    """The `runtime.context` of a run: `given` built into `schema`, else the parent's."""
    built = _coerce(schema, given)
    return built if built else parent


def _coerce(schema: Any, given: Any) -> Any:
    if given is None or schema is None or not isinstance(given, dict):
        return given
    if dataclasses.is_dataclass(schema) or _is_pydantic_model(schema):
        return schema(**given)
    return given


def _is_pydantic_model(schema: Any) -> bool:
    """A pydantic model class, without importing pydantic when the graph does not use it."""
    if not isinstance(schema, type):
        return False
    return any(
        base.__name__ == "BaseModel" and base.__module__.startswith("pydantic")
        for base in schema.__mro__
    )
