"""`interrupt(value, response_schema=...)`: the answer's schema, shown and enforced (issue 29).

A Python type (pydantic model, TypedDict, dataclass) is surfaced as its JSON Schema and the
resume value is validated into it; a dict is taken as JSON Schema and surfaced unchanged,
without validation (as LangGraph 1.2.22). pydantic is imported only when a type is given.
"""

from __future__ import annotations

from typing import Any

__all__ = ["is_invalid_resume", "resume_adapter", "surfaced_schema", "validate_resume"]

_MARK = "_graphrun_invalid_resume"


def resume_adapter(schema: Any) -> Any:
    """A pydantic `TypeAdapter` for a type, None for no schema or a JSON Schema dict."""
    if schema is None or isinstance(schema, dict):
        return None
    try:
        from pydantic import TypeAdapter
    except ImportError as error:  # pragma: no cover - pydantic comes with langchain-core
        raise ImportError("interrupt(response_schema=<type>) needs pydantic installed") from error
    return TypeAdapter(schema)


def surfaced_schema(schema: Any, adapter: Any) -> Any:
    """What the surfaced `Interrupt.response_schema` holds: JSON Schema, or None."""
    return adapter.json_schema() if adapter is not None else schema


def validate_resume(adapter: Any, value: Any) -> Any:
    """The answer validated into the schema; a mismatch raises pydantic's ValidationError,
    marked so `is_invalid_resume` (and `ToolNode`) tell it from other validation errors."""
    if adapter is None:
        return value
    from pydantic import ValidationError

    try:
        return adapter.validate_python(value)
    except ValidationError as error:
        setattr(error, _MARK, True)
        raise


def is_invalid_resume(error: BaseException) -> bool:
    """Whether `error` came from a resume value that did not match its `response_schema`."""
    return bool(getattr(error, _MARK, False))
