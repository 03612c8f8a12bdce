"""Request validation with every error reported at once, in the HTTPValidationError shape.

msgspec stops at the first problem and words it its own way; clients of the published API
expect FastAPI's list `{"detail": [{"loc": ["body", "source_config", "repo_url"], "msg": "Input
should be a valid string", "type": "string_type"}, ...]}`. `decode` walks the raw JSON against
the Struct's type information (`msgspec.inspect`), collects every error with pydantic's `type`
and message, and only then converts (which can no longer fail).
"""

from __future__ import annotations

import re
import typing
import uuid
from collections.abc import Iterator
from functools import cache
from typing import Any, TypeVar

import msgspec
import msgspec.inspect as mi

from .errors import ValidationFailed

__all__ = ["convert", "decode", "error", "fail", "parse"]

T = TypeVar("T")
Loc = tuple[str | int, ...]


def error(loc: Loc, msg: str, type_: str) -> dict[str, Any]:
    return {"loc": list(loc), "msg": msg, "type": type_}


def fail(loc: Loc, msg: str, type_: str) -> ValidationFailed:
    return ValidationFailed([error(loc, msg, type_)])


def decode(raw: bytes, struct: type[T]) -> T:
    """The request body as `struct`, or ValidationFailed listing everything wrong with it."""
    return convert(parse(raw), struct)


def parse(raw: bytes) -> Any:
    """The request body as JSON values (a missing or malformed body is a 422)."""
    if not raw.strip():
        raise fail(("body",), "Field required", "missing")
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        raise fail(("body", 0), "JSON decode error", "json_invalid") from None


def convert(value: Any, struct: type[T]) -> T:
    """`value` (parsed JSON of a body) as `struct`, or ValidationFailed listing every error."""
    errors = list(_check(value, _info(struct), ("body",)))  # type: ignore[arg-type]
    if errors:
        raise ValidationFailed(errors)
    return msgspec.convert(value, struct)


@cache
def _info(struct: type) -> mi.Type:
    return mi.type_info(struct)


def _check(
    value: Any, t: mi.Type, loc: Loc, order: tuple[Any, ...] = ()
) -> Iterator[dict[str, Any]]:
    """`order`: a Literal's values as declared (msgspec.inspect sorts them; messages should not)."""
    if isinstance(t, mi.UnionType):
        yield from _check_union(value, t, loc, order)
    elif isinstance(t, mi.StructType):
        yield from _check_struct(value, t, loc)
    elif isinstance(t, mi.ListType):
        if not isinstance(value, list):
            yield error(loc, "Input should be a valid list", "list_type")
        else:
            for i, item in enumerate(value):
                yield from _check(item, t.item_type, (*loc, i))
    elif isinstance(t, mi.DictType):
        if not isinstance(value, dict):
            yield error(loc, "Input should be a valid dictionary", "dict_type")
    elif isinstance(t, mi.LiteralType):
        if value not in t.values or isinstance(value, bool):
            yield error(loc, f"Input should be {_one_of(order or t.values)}", "literal_error")
    else:
        found = _check_scalar(value, t)
        if found is not None:
            yield error(loc, *found)


def _check_union(
    value: Any, t: mi.UnionType, loc: Loc, order: tuple[Any, ...]
) -> Iterator[dict[str, Any]]:
    members = [m for m in t.types if not isinstance(m, mi.NoneType)]
    if value is None and len(members) < len(t.types):
        return
    if len(members) == 1:
        yield from _check(value, members[0], loc, order)
    elif not any(not list(_check(value, m, loc)) for m in members):
        yield error(loc, "Input should be one of the accepted types", "union_type")


def _check_struct(value: Any, t: mi.StructType, loc: Loc) -> Iterator[dict[str, Any]]:
    if not isinstance(value, dict):
        yield error(loc, "Input should be a valid dictionary or object to extract fields from",
                    "model_attributes_type")
        return
    known = set()
    orders = _literal_orders(t.cls)
    for field in t.fields:
        known.add(field.encode_name)
        if field.encode_name in value:
            yield from _check(value[field.encode_name], field.type, (*loc, field.encode_name),
                              orders.get(field.name, ()))
        elif field.required:
            yield error((*loc, field.encode_name), "Field required", "missing")
    if t.forbid_unknown_fields:
        for name in value:
            if name not in known:
                yield error((*loc, name), "Extra inputs are not permitted", "extra_forbidden")


@cache
def _literal_orders(cls: type) -> dict[str, tuple[Any, ...]]:
    """Field name -> the values of the Literal in its annotation, in declared order."""
    orders = {}
    for name, hint in typing.get_type_hints(cls).items():
        for arg in (hint, *typing.get_args(hint)):
            if typing.get_origin(arg) is typing.Literal:
                orders[name] = typing.get_args(arg)
    return orders


def _check_scalar(value: Any, t: mi.Type) -> tuple[str, str] | None:
    if isinstance(t, mi.AnyType):
        return None
    if isinstance(t, mi.StrType):
        return _check_str(value, t)
    if isinstance(t, mi.BoolType):
        return None if isinstance(value, bool) else ("Input should be a valid boolean", "bool_type")
    if isinstance(t, mi.IntType):
        if isinstance(value, bool) or not isinstance(value, int):
            return "Input should be a valid integer", "int_type"
        return _bounds(value, t)
    if isinstance(t, mi.FloatType):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "Input should be a valid number", "float_type"
        return _bounds(value, t)
    if isinstance(t, mi.UUIDType):
        if not isinstance(value, str):
            return "UUID input should be a string, bytes or UUID object", "uuid_type"
        try:
            uuid.UUID(value)
        except ValueError:
            return "Input should be a valid UUID", "uuid_parsing"
        return None
    if isinstance(t, mi.NoneType):
        return None if value is None else ("Input should be None", "none_required")
    raise TypeError(f"validation has no rule for {t!r}")  # a schema change that needs one


def _check_str(value: Any, t: mi.StrType) -> tuple[str, str] | None:
    if not isinstance(value, str):
        return "Input should be a valid string", "string_type"
    if t.min_length is not None and len(value) < t.min_length:
        unit = "character" if t.min_length == 1 else "characters"
        return f"String should have at least {t.min_length} {unit}", "string_too_short"
    if t.pattern is not None and not re.search(t.pattern, value):
        return f"String should match pattern '{t.pattern}'", "string_pattern_mismatch"
    return None


def _bounds(value: float, t: mi.IntType | mi.FloatType) -> tuple[str, str] | None:
    if t.ge is not None and value < t.ge:
        return f"Input should be greater than or equal to {t.ge}", "greater_than_equal"
    if t.le is not None and value > t.le:
        return f"Input should be less than or equal to {t.le}", "less_than_equal"
    return None


def _one_of(values: tuple[Any, ...]) -> str:
    shown = [repr(v) for v in values]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"
