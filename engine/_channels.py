"""Channel kinds: how the values written to one key in a super-step combine.

Every channel holds one value (or MISSING) and takes a step's writes at once in `update`,
returning whether its value changed, which drives the version bump and so the triggers.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from .errors import InvalidUpdateError
from .types import Overwrite

_OVERWRITE = "__overwrite__"


def overwrite_of(item: Any) -> tuple[bool, Any]:
    """Whether a write bypasses the reducer, and its value: an `Overwrite`, or the dict forms
    it takes over JSON (`{"__overwrite__": v}`, `{"value": v, "type": "__overwrite__"}`)."""
    if isinstance(item, Overwrite):
        return True, item.value
    if isinstance(item, dict):
        if len(item) == 1 and _OVERWRITE in item:
            return True, item[_OVERWRITE]
        if item.get("type") == _OVERWRITE and "value" in item:
            return True, item["value"]
    return False, None

MISSING: Any = type("MISSING", (), {"__repr__": lambda self: "MISSING", "__slots__": ()})()


class Channel:
    """Base channel: a value, `update` with a step's writes, and checkpoint round trips."""

    __slots__ = ("key", "value")
    ephemeral = False  # cleared at the end of a step in which it was not written
    consumes = False  # `consume` may reset it (a step skips the call for the others)

    def __init__(self, key: str) -> None:
        self.key = key
        self.value: Any = MISSING

    def update(self, values: Sequence[Any]) -> bool:
        raise NotImplementedError

    def is_available(self) -> bool:
        return self.value is not MISSING

    def checkpoint(self) -> Any:
        return self.value

    def restore(self, value: Any) -> None:
        self.value = value

    def consume(self) -> bool:
        """Called when a subscribed task ran; barriers reset here."""
        return False

    def finish(self) -> bool:
        """Called when the run would otherwise end; deferred channels become available."""
        return False

    def clear(self) -> bool:
        if self.value is MISSING:
            return False
        self.value = MISSING
        return True

    def preview(self, values: Sequence[Any]) -> Any:
        """The value `update(values)` would leave, this channel unchanged: what a router sees
        of its own task's writes before the step applies."""
        local = self.fresh()
        local.restore(self.value)
        local.update(values)
        return local.value

    def fresh(self) -> Channel:
        """An empty channel of the same kind and configuration."""
        clone = object.__new__(type(self))
        for cls in type(self).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                if hasattr(self, slot):
                    object.__setattr__(clone, slot, getattr(self, slot))
        clone.value = MISSING
        return clone


class LastValue(Channel):
    """A plain state key: at most one write per step."""

    __slots__ = ()

    def fresh(self) -> Channel:
        return type(self)(self.key)

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        if len(values) > 1:
            raise InvalidUpdateError(
                f"At key '{self.key}': Can receive only one value per step. "
                "Use an Annotated key to handle multiple values."
            )
        self.value = values[0]
        return True

    def preview(self, values: Sequence[Any]) -> Any:
        if len(values) == 1:  # the common case, without a scratch channel
            return values[0]
        return Channel.preview(self, values)


class Reducer(Channel):
    """An `Annotated[T, reducer]` key: each write folds into the value with the reducer.

    The value starts at the type's default (`[]`, `0`, ...) when the type has one, so a custom
    reducer's first call receives it; otherwise the first write is stored as is (SPEC §1).

    A reducer marked pure (`mark_pure`: same inputs, equal output, no side effects) is not run
    twice for one task's writes: the fold a router's `preview` computed is kept and reused
    when `update` gets the very same writes on the very same value (a step of one task).
    Any other reducer runs for the preview and again on apply, as in LangGraph.
    """

    __slots__ = ("reducer", "default", "pure", "_memo")

    def __init__(
        self, key: str, reducer: Callable[[Any, Any], Any], default: Callable[[], Any] | None
    ) -> None:
        super().__init__(key)
        self.reducer = reducer
        self.default = default
        self.pure = getattr(reducer, "_graphrun_pure", False)
        self._memo: tuple[Any, tuple[Any, ...], Any] | None = None
        if default is not None:
            self.value = default()

    def _fold(self, value: Any, values: Sequence[Any]) -> Any:
        reducer = self.reducer
        overwritten = False
        for item in values:
            if value is MISSING:  # the first write is stored as is (as LangGraph)
                value = item
                continue
            if isinstance(item, (Overwrite, dict)):
                found, replacement = overwrite_of(item)
                if found:
                    if overwritten:
                        raise InvalidUpdateError(
                            "Can receive only one Overwrite value per super-step."
                        )
                    value, overwritten = replacement, True
                    continue
            if not overwritten:  # writes after an Overwrite in the same step are dropped
                value = reducer(value, item)
        return value

    def preview(self, values: Sequence[Any]) -> Any:
        result = self._fold(self.value, values)
        if self.pure and values:
            self._memo = (self.value, tuple(values), result)
        return result

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        memo = self._memo
        if memo is not None:
            self._memo = None
            base, seen, result = memo
            if (
                base is self.value
                and len(seen) == len(values)
                and all(map(operator.is_, seen, values))
            ):
                self.value = result
                return True
        self.value = self._fold(self.value, values)
        return True

    def fresh(self) -> Channel:
        return Reducer(self.key, self.reducer, self.default)

    def overwrite(self, value: Any) -> None:
        self.value = value


class Ephemeral(Channel):
    """A trigger that holds its value for the one step after it was written."""

    __slots__ = ()
    ephemeral = True

    def fresh(self) -> Channel:
        return type(self)(self.key)

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        self.value = values[-1]
        return True


class Topic(Channel):
    """Collects every write of a step as a list (pending `Send`s); cleared the next step."""

    __slots__ = ()
    ephemeral = True

    def fresh(self) -> Channel:
        return Topic(self.key)

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        self.value = list(values)
        return True


class NamedBarrier(Channel):
    """Join edge `[a, b] -> c`: available once every named source wrote, then resets."""

    __slots__ = ("names",)
    consumes = True

    def __init__(self, key: str, names: frozenset[str]) -> None:
        super().__init__(key)
        self.names = names
        self.value = set()

    def update(self, values: Sequence[Any]) -> bool:
        changed = False
        seen = self.value
        for name in values:
            if name in self.names and name not in seen:
                if seen is self.value:
                    seen = set(seen)
                seen.add(name)
                changed = True
        self.value = seen
        return changed

    def is_available(self) -> bool:
        return self.value == self.names

    def checkpoint(self) -> Any:
        return sorted(self.value) if self.value else MISSING

    def restore(self, value: Any) -> None:
        self.value = set(value) if value is not MISSING else set()

    def consume(self) -> bool:
        if self.value == self.names:
            self.value = set()
            return True
        return False

    def clear(self) -> bool:
        return False

    def fresh(self) -> Channel:
        return NamedBarrier(self.key, self.names)


class DeferredBarrier(NamedBarrier):
    """Join edge `[a, b] -> c` into a `defer=True` node: once every source wrote, it still
    waits until the run has nothing else to do (as LangGraph's; issue 27)."""

    __slots__ = ("finished",)

    def __init__(self, key: str, names: frozenset[str]) -> None:
        super().__init__(key, names)
        self.finished = False

    def is_available(self) -> bool:
        return self.finished and self.value == self.names

    def finish(self) -> bool:
        if not self.finished and self.value == self.names:
            self.finished = True
            return True
        return False

    def checkpoint(self) -> Any:
        return (sorted(self.value), self.finished) if self.value else MISSING

    def restore(self, value: Any) -> None:
        if value is MISSING:
            self.value, self.finished = set(), False
        elif isinstance(value, (set, frozenset)):  # a live value (`preview`)
            self.value = set(value)
        else:
            self.value, self.finished = set(value[0]), bool(value[1])

    def consume(self) -> bool:
        if self.finished and self.value == self.names:
            self.value, self.finished = set(), False
            return True
        return False

    def fresh(self) -> Channel:
        return DeferredBarrier(self.key, self.names)


class Deferred(Channel):
    """Trigger of a `defer=True` node: holds writes until the run has nothing else to do."""

    __slots__ = ("finished",)
    consumes = True

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.finished = False

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        self.value = values[-1]
        self.finished = False
        return True

    def is_available(self) -> bool:
        return self.finished and self.value is not MISSING

    def finish(self) -> bool:
        if not self.finished and self.value is not MISSING:
            self.finished = True
            return True
        return False

    def checkpoint(self) -> Any:
        if self.value is MISSING:
            return MISSING
        return (self.value, self.finished)

    def restore(self, value: Any) -> None:
        if value is MISSING:
            self.value, self.finished = MISSING, False
        else:
            self.value, self.finished = value[0], bool(value[1])

    def consume(self) -> bool:
        if self.finished:
            self.value, self.finished = MISSING, False
            return True
        return False

    def fresh(self) -> Channel:
        return Deferred(self.key)


def mark_pure(reducer: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """Declare `reducer` pure, so a step of one task folds its writes once, not twice."""
    reducer._graphrun_pure = True  # type: ignore[attr-defined]
    return reducer
