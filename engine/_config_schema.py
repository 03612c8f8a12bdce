"""LangGraph's deprecated `config_schema()` / `get_config_jsonschema()` of a compiled graph
(issue 29): the graph's context schema as the `configurable` field of a pydantic model, with
the `LangGraphDeprecatedSinceV10` warning LangGraph gives (use `get_context_jsonschema`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from .warnings import LangGraphDeprecatedSinceV10

__all__ = ["ConfigSchemaMethods"]

# The RunnableConfig keys `include=` may add as fields, with their types.
_CONFIG_FIELDS: dict[str, Any] = {
    "tags": list[str], "metadata": dict[str, Any], "callbacks": Any, "run_name": str,
    "max_concurrency": int, "recursion_limit": int, "run_id": Any,
}


class ConfigSchemaMethods:
    """Mixed into the compiled graph's schema methods (`_jsonschema.SchemaMethods`)."""

    __slots__ = ()

    @property
    def context_schema(self) -> Any:
        """The schema the run's `context` is built into (LangGraph's graph attribute)."""
        return getattr(self.builder, "context_schema", None)  # type: ignore[attr-defined]

    def config_schema(self, *, include: Sequence[str] | None = None) -> Any:
        warnings.warn(
            "`config_schema` is deprecated. Use `get_context_jsonschema` for the relevant"
            " schema instead.", LangGraphDeprecatedSinceV10, stacklevel=2,
        )
        return _config_model(self, include or ())

    def get_config_jsonschema(self, *, include: Sequence[str] | None = None) -> dict[str, Any]:
        warnings.warn(
            "`get_config_jsonschema` is deprecated. Use `get_context_jsonschema` instead.",
            LangGraphDeprecatedSinceV10, stacklevel=2,
        )
        return _config_model(self, include or ()).model_json_schema()


def _config_model(graph: Any, include: Sequence[str]) -> Any:
    from pydantic import create_model

    from ._jsonschema import runnable_name

    fields: dict[str, Any] = {}
    context = graph.context_schema
    if context is not None:
        fields["configurable"] = (context, None)
    for key in include:
        if key in _CONFIG_FIELDS:
            fields[key] = (_CONFIG_FIELDS[key] | None, None)
    return create_model(runnable_name(graph.name, graph, "Config"), **fields)
