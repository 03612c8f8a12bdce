"""JSON Schemas of a compiled graph's input, output and context (issue 29).

LangGraph's rules, which the Agent Server and LangChain tools read: a pydantic model gives its
own schema, a TypedDict pydantic's schema of it; any other state (dataclass, Struct) becomes a
pydantic model named `<graph name>Input`/`Output` with one field per stored key, typed as the
key's update type (a reducer key: the annotated type) with the default LangGraph derives. An
`@entrypoint` has the function's parameter and return types. pydantic is imported on first use.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Annotated, Any, get_args, get_origin

from ._config_schema import ConfigSchemaMethods
from ._managed import strip_required
from ._runnable import RunnableMethods
from ._schema import ROOT, _hints, _is_pydantic, _reducer_of, field_specs, is_root_schema, root_hint

__all__ = [
    "context_jsonschema", "entry_model", "runnable_name", "state_jsonschema", "state_model",
]

_NOT_REQUIRED = {typing.NotRequired, typing.Required}


def runnable_name(name: str | None, owner: Any, suffix: str) -> str:
    """LangChain's `Runnable.get_name(suffix)`: "LangGraph" -> "LangGraphInput", "agent" ->
    "agent_input"."""
    name = name or type(owner).__name__
    return name + suffix.title() if name[:1].isupper() else f"{name}_{suffix.lower()}"


def _is_typeddict(schema: Any) -> bool:
    # typing's and typing_extensions' TypedDicts alike (`typing.is_typeddict` misses the latter)
    return isinstance(schema, type) and issubclass(schema, dict) and hasattr(
        schema, "__required_keys__"
    )


def update_types(schema: Any) -> dict[str, Any]:
    """Each stored key's update type: a reducer key's value type, else its annotation."""
    if is_root_schema(schema):  # the value's own type (issue 29)
        hint = root_hint(schema)
        return {ROOT: get_args(hint)[0] if _reducer_of(hint) is not None else hint}
    hints = _hints(schema)
    out = {}
    for name in field_specs(schema):
        hint = strip_required(hints.get(name, Any))
        if _reducer_of(hint) is not None:
            hint = get_args(hint)[0]
        out[name] = hint
    return out


def _required_marker(hint: Any) -> bool | None:
    origin = get_origin(hint)
    if origin in _NOT_REQUIRED:
        return origin is typing.Required
    if origin is Annotated:
        return _required_marker(get_args(hint)[0])
    return None


def _is_optional(hint: Any) -> bool:
    hint = strip_required(hint)
    if get_origin(hint) is Annotated:
        hint = get_args(hint)[0]
    return hint is None or hint is Any or type(None) in get_args(hint)


def field_default(schema: Any, name: str, hint: Any) -> Any:
    """LangGraph's default for a key: `...` (required) or a value (optional)."""
    marker = _required_marker(hint)
    if name in getattr(schema, "__optional_keys__", ()) or marker is False:
        return ... if marker else None
    if marker:
        return ...
    if dataclasses.is_dataclass(schema):
        for field in dataclasses.fields(schema):
            if field.name != name:
                continue
            if field.default is not dataclasses.MISSING and field.default is not ...:
                return field.default
            if field.default_factory is not dataclasses.MISSING:
                return field.default_factory()
    return None if _is_optional(hint) else ...


def state_model(schema: Any, name: str) -> Any:
    """A pydantic model of a state schema's keys, each optional (LangGraph's input_schema)."""
    from pydantic import create_model

    if is_root_schema(schema):  # optional, as every key of a keyed state
        from pydantic import RootModel

        typ = update_types(schema)[ROOT]
        return create_model(name, __base__=RootModel[typ], root=(typ, None))
    fields = {key: (typ, None) for key, typ in update_types(schema).items()}
    return create_model(name, **fields)  # type: ignore[call-overload]


def state_jsonschema(schema: Any, name: str) -> dict[str, Any]:
    """The JSON Schema of a StateGraph's input or output schema, as LangGraph builds it."""
    from pydantic import TypeAdapter, create_model

    if _is_pydantic(schema):
        return schema.model_json_schema()
    if _is_typeddict(schema):
        return TypeAdapter(schema).json_schema()
    if is_root_schema(schema):
        return state_model(schema, name).model_json_schema()
    hints = _hints(schema)
    fields = {
        key: (typ, field_default(schema, key, hints.get(key, Any)))
        for key, typ in update_types(schema).items()
    }
    return create_model(name, **fields).model_json_schema()  # type: ignore[call-overload]


def entry_model(typ: Any, name: str) -> Any:
    """An entrypoint's input or output: a pydantic root model of the annotated type."""
    from pydantic import RootModel, create_model

    return create_model(name, __base__=RootModel[typ])


def context_jsonschema(schema: Any) -> dict[str, Any] | None:
    """The JSON Schema of a `context_schema` (pydantic, TypedDict or dataclass), or None."""
    if schema is None:
        return None
    from pydantic import TypeAdapter

    if _is_pydantic(schema):
        return schema.model_json_schema()
    if _is_typeddict(schema) or dataclasses.is_dataclass(schema):
        return TypeAdapter(schema).json_schema()
    raise ValueError(
        f"Invalid context schema type: {schema}. Must be a BaseModel, TypedDict or dataclass."
    )


class SchemaMethods(ConfigSchemaMethods, RunnableMethods):  # a LangChain `Runnable` when it is loaded (issue 29)
    """LangGraph's schema methods of a compiled graph, read from its builder's schemas."""

    name: str
    builder: Any

    def get_input_jsonschema(self, config: Any = None) -> dict[str, Any]:
        name = runnable_name(self.name, self, "Input")
        return state_jsonschema(self.builder.input_schema, name)

    def get_output_jsonschema(self, config: Any = None) -> dict[str, Any]:
        name = runnable_name(self.name, self, "Output")
        return state_jsonschema(self.builder.output_schema, name)

    def get_context_jsonschema(self) -> dict[str, Any] | None:
        return context_jsonschema(self.builder.context_schema)

    def get_input_schema(self, config: Any = None) -> Any:
        name = runnable_name(self.name, self, "Input")
        return state_model(self.builder.input_schema, name)

    def get_output_schema(self, config: Any = None) -> Any:
        name = runnable_name(self.name, self, "Output")
        return state_model(self.builder.output_schema, name)

    @property
    def input_schema(self) -> Any:
        """The input as a pydantic model (LangChain's `Runnable.input_schema`)."""
        return self.get_input_schema()

    @property
    def output_schema(self) -> Any:
        return self.get_output_schema()


class EntrySchemaMethods(SchemaMethods):
    """An `@entrypoint`'s schemas: its parameter's and its return value's types."""

    def get_input_jsonschema(self, config: Any = None) -> dict[str, Any]:
        return self.get_input_schema(config).model_json_schema()

    def get_output_jsonschema(self, config: Any = None) -> dict[str, Any]:
        return self.get_output_schema(config).model_json_schema()

    def get_input_schema(self, config: Any = None) -> Any:
        return entry_model(self.builder.input_type, runnable_name(self.name, self, "Input"))

    def get_output_schema(self, config: Any = None) -> Any:
        return entry_model(self.builder.output_type, runnable_name(self.name, self, "Output"))
