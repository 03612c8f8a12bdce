"""`interrupt(value, response_schema=...)`: the answer a human must give, checked (issue 29).

The schema is surfaced on the `Interrupt` as JSON Schema (a dict schema as given) so a client
can render a form; a pydantic model, TypedDict or dataclass also validates the resume value,
which the node then receives as that type. A value that does not validate fails the run with
pydantic's `ValidationError`, marked so `is_invalid_resume` (and `ToolNode`, which must not
turn it into a tool error) can tell it from any other validation failure. The bad value is
never recorded, so the same interrupt can be answered again.

pydantic is only imported when a typed schema is given: `import engine` does not need it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["mark_invalid_resume", "resume_check"]

_MARK = "_graphrun_invalid_resume"

Check = Callable[[Any], Any]


def mark_invalid_resume(error: BaseException) -> None:
    setattr(error, _MARK, True)


def is_marked(error: BaseException) -> bool:
    return getattr(error, _MARK, False) is True


@functools.lru_cache(maxsize=256)
def _typed(schema: Any) -> tuple[Check, dict[str, Any]]:
    """The validator and JSON Schema of a type (built once per type: TypeAdapter is slow)."""
    try:
        from pydantic import TypeAdapter, ValidationError
    except ImportError as error:  # pragma: no cover - pydantic ships with langchain-core
        raise ImportError(
            "interrupt(response_schema=<a type>) needs pydantic: pip install pydantic"
        ) from error
    adapter = TypeAdapter(schema)

    def check(value: Any) -> Any:
        try:
            return adapter.validate_python(value)
        except ValidationError as error:
            mark_invalid_resume(error)
            raise

    return check, adapter.json_schema()


def resume_check(schema: Any) -> tuple[Check | None, Any]:
    """(the resume value's validator or None, the schema the `Interrupt` surfaces)."""
    if schema is None or isinstance(schema, dict):
        return None, schema
    try:
        return _typed(schema)
    except TypeError:  # an unhashable schema object: no cache
        return _typed.__wrapped__(schema)
