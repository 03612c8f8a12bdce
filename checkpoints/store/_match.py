"""Search filters and namespace patterns, evaluated in Python by every back end.

One implementation means the memory and SQLite stores agree on every edge case. Semantics
follow LangGraph 1.2.22's `InMemoryStore` (SPEC §2 Store), with two deliberate differences
where it raises instead of answering:

- ordering operators (`$gt`, `$gte`, `$lt`, `$lte`) compare two strings as strings (so ISO
  dates work) and anything else as numbers; a missing field or a non-number never matches;
- a filter key with dots (``"a.b"``) also reaches nested fields when no top-level key has that
  literal name (LangGraph's SQLite store does the same through ``json_extract``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any

_MISSING = object()

_ORDERING: dict[str, Callable[[Any, Any], bool]] = {
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}
OPERATORS = frozenset({"$eq", "$ne", *_ORDERING})


def validate_filter(filter: Mapping[str, Any] | None) -> None:
    """Reject a filter that is not a dict or names an unknown ``$`` operator."""
    if filter is None:
        return
    if not isinstance(filter, Mapping):
        raise TypeError(f"filter must be a dict; got {type(filter).__name__}.")
    for condition in filter.values():
        if isinstance(condition, Mapping):
            unknown = sorted(k for k in condition if k.startswith("$") and k not in OPERATORS)
            if unknown:
                raise ValueError(
                    f"Unsupported filter operator {unknown[0]!r}; use one of {sorted(OPERATORS)}."
                )
            validate_filter(condition)


def matches(value: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """Whether a stored value satisfies every condition of `filter`."""
    if not filter:
        return True
    return all(_compare(_field(value, key), expected) for key, expected in filter.items())


def _field(value: Mapping[str, Any], key: str) -> Any:
    if key in value or "." not in key:
        return value.get(key)
    current: Any = value
    for part in key.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return None
        current = current[part]
    return current


def _compare(actual: Any, expected: Any) -> bool:
    if isinstance(expected, Mapping):
        if any(k.startswith("$") for k in expected):
            return all(_apply(actual, op, arg) for op, arg in expected.items())
        return isinstance(actual, Mapping) and all(
            _compare(actual.get(k), v) for k, v in expected.items()
        )
    if isinstance(expected, (list, tuple)):
        return (
            isinstance(actual, (list, tuple))
            and len(actual) == len(expected)
            and all(_compare(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return bool(actual == expected)


def _apply(actual: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(actual == arg)
    if op == "$ne":
        return bool(actual != arg)
    pair = _orderable(actual, arg)
    return pair is not None and _ORDERING[op](*pair)


def _orderable(a: Any, b: Any) -> tuple[Any, Any] | None:
    if isinstance(a, str) and isinstance(b, str):
        return a, b
    try:
        return float(a), float(b)
    except (TypeError, ValueError):
        return None


def namespace_matches(namespace: tuple[str, ...], match_type: str, path: tuple[str, ...]) -> bool:
    """Whether `namespace` starts (prefix) or ends (suffix) with `path`; ``"*"`` is any label."""
    if len(namespace) < len(path):
        return False
    part = (
        namespace[: len(path)]
        if match_type == "prefix"
        else namespace[len(namespace) - len(path) :]
    )
    return all(p == "*" or p == label for label, p in zip(part, path, strict=True))


def select_namespaces(
    namespaces: Iterable[tuple[str, ...]],
    conditions: Iterable[tuple[str, tuple[str, ...]]],
    max_depth: int | None,
) -> list[tuple[str, ...]]:
    """The sorted, distinct namespaces that pass every condition, cut to `max_depth` labels."""
    conditions = list(conditions)
    found = {ns for ns in namespaces if all(namespace_matches(ns, t, p) for t, p in conditions)}
    if max_depth is not None:
        found = {ns[:max_depth] for ns in found}
    return sorted(found)
