"""State schemas: TypedDict, dataclass, msgspec.Struct and (when installed) pydantic models.

Turns a schema into channel definitions once, at build time, and converts node inputs/outputs
between dicts and the user's state objects.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable
from typing import Any, Annotated, get_args, get_origin, get_type_hints

import msgspec

from ._channels import Channel, LastValue, Reducer
from ._managed import ManagedValue, managed_specs, strip_required

__all__ = [
    "ROOT", "FieldSpec", "channels_for", "is_root_schema", "object_to_dict", "reader_for",
    "root_hint", "schema_keys", "schema_managed",
]

ROOT = "__root__"  # the one key of a state that is a single value (issue 29)


@dataclasses.dataclass(frozen=True, slots=True)
class FieldSpec:
    name: str
    reducer: Callable[[Any, Any], Any] | None
    default: Callable[[], Any] | None  # initial value of a reducer channel


def _is_pydantic(schema: Any) -> bool:
    return isinstance(schema, type) and hasattr(schema, "model_fields") and hasattr(
        schema, "model_validate"
    )


def _hints(schema: Any) -> dict[str, Any]:
    if schema is dict or schema is None:
        return {}
    if _is_pydantic(schema):
        return {
            name: (Annotated[f.annotation, *f.metadata] if f.metadata else f.annotation)
            for name, f in schema.model_fields.items()
        }
    try:
        return get_type_hints(schema, include_extras=True)
    except Exception:  # unresolvable forward refs: fall back to raw annotations
        return dict(getattr(schema, "__annotations__", {}))


def _reducer_of(hint: Any) -> Callable[[Any, Any], Any] | None:
    if get_origin(hint) is not Annotated:
        return None
    _check_last(hint.__metadata__[-1])
    for meta in reversed(hint.__metadata__):
        if callable(meta) and not isinstance(meta, type) and _takes_two(meta):
            return meta
    return None


def _check_last(meta: Any) -> None:
    """A function last in `Annotated[...]` is the key's reducer: one without exactly two
    positional parameters is an error when the schema is read, as in LangGraph (issue 27)."""
    if not callable(meta) or isinstance(meta, type):
        return
    try:
        sig = inspect.signature(meta)
    except (TypeError, ValueError):  # builtins such as operator.add
        return
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if sum(p.kind in kinds for p in sig.parameters.values()) != 2:
        raise ValueError(f"Invalid reducer signature. Expected (a, b) -> c. Got {sig}")


def _takes_two(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # builtins such as operator.add
        return True
    positional = [
        p for p in params
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in positional)


def _default_factory(hint: Any) -> Callable[[], Any] | None:
    """The type's no-argument value (`[]`, `0`, `{}`) or None when it has none (Optional...)."""
    base = get_args(hint)[0] if get_origin(hint) is Annotated else hint
    origin = get_origin(base) or base
    if origin in (typing.Sequence, typing.MutableSequence) or str(origin) in (
        "<class 'collections.abc.Sequence'>", "<class 'collections.abc.MutableSequence'>"
    ):
        origin = list
    if not callable(origin) or origin is typing.Union or origin is typing.Any:
        return None
    try:
        origin()
    except Exception:
        return None
    return origin


_KEYED: Any = object()


def root_hint(schema: Any) -> Any:
    """The value's annotation when the whole state is one value, kept under `ROOT` as
    LangGraph's `__root__` channel (issue 29): a schema without named keys (`list[str]`,
    `Annotated[list, add]`, `str`) or whose one key is `__root__`. `_KEYED` otherwise."""
    if schema is None or schema is dict:
        return _KEYED
    if not hasattr(schema, "__annotations__"):
        return schema
    hints = _hints(schema)
    return strip_required(hints[ROOT]) if list(hints) == [ROOT] else _KEYED


def is_root_schema(schema: Any) -> bool:
    return root_hint(schema) is not _KEYED


def field_specs(schema: Any) -> dict[str, FieldSpec]:
    """The stored keys of a schema (managed keys are not: see `schema_managed`)."""
    hint = root_hint(schema)
    if hint is not _KEYED:
        reducer = _reducer_of(hint)
        return {ROOT: FieldSpec(ROOT, reducer, _default_factory(hint) if reducer else None)}
    specs = {}
    hints = _hints(schema)
    managed = managed_specs(hints)
    for name, hint in hints.items():
        if name.startswith("__") or get_origin(hint) is typing.ClassVar or name in managed:
            continue
        hint = strip_required(hint)  # `NotRequired[Annotated[list, add]]` keeps its reducer
        reducer = _reducer_of(hint)
        specs[name] = FieldSpec(name, reducer, _default_factory(hint) if reducer else None)
    return specs


def schema_managed(schema: Any) -> dict[str, type[ManagedValue]]:
    """The managed keys of a schema (`RemainingSteps`, `IsLastStep`), issue 17."""
    return managed_specs(_hints(schema))


def schema_keys(schema: Any) -> tuple[str, ...]:
    return tuple(field_specs(schema))


def channels_for(specs: dict[str, FieldSpec]) -> dict[str, Channel]:
    return {
        name: Reducer(name, spec.reducer, spec.default) if spec.reducer else LastValue(name)
        for name, spec in specs.items()
    }


def reader_for(schema: Any) -> Callable[[dict[str, Any]], Any] | None:
    """How a node receives its state: None for dict-like schemas (TypedDict, dict)."""
    if schema is None or schema is dict:
        return None
    if is_root_schema(schema):
        return _read_root
    if dataclasses.is_dataclass(schema) and isinstance(schema, type):
        return lambda values: schema(**values)
    if isinstance(schema, type) and issubclass(schema, msgspec.Struct):
        return lambda values: schema(**values)
    if _is_pydantic(schema):
        return lambda values: schema.model_construct(**values) if not values else schema(**values)
    return None


def _read_root(values: dict[str, Any]) -> Any:
    return values.get(ROOT)


def object_to_dict(obj: Any) -> dict[str, Any] | None:
    """A state object (dataclass, Struct, pydantic) as a dict of its fields, or None."""
    if isinstance(obj, dict):
        return obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if isinstance(obj, msgspec.Struct):
        return {name: getattr(obj, name) for name in obj.__struct_fields__}
    dump = getattr(obj, "model_dump", None)
    if dump is not None and hasattr(type(obj), "model_fields"):
        return _pydantic_update(obj)
    return None


def _pydantic_update(obj: Any) -> dict[str, Any]:
    """A pydantic object's fields, without those left None by default: a partial update model
    (`answer: str | None = None`) writes only what it was given (LangGraph's rule, issue 27)."""
    given = obj.model_fields_set
    out = {}
    for name, field in type(obj).model_fields.items():
        value = getattr(obj, name)
        if value is not None or field.default is not None or name in given:
            out[name] = value
    return out
