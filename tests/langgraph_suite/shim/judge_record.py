"""What LangGraph's tests touched that the shim could not give them (issue 27).

A `Placeholder` stands for a `langgraph` name graphrun does not provide. Importing it succeeds
(so one name does not hide a whole test file); its first real use records the name against the
test (or, at import time, the test file) running now and raises `ShimMissingName`. The judge's
pytest plugin sets `CONTEXT` and reads `TOUCHED`; `rules.py` turns the records into a verdict.
"""

from __future__ import annotations

from typing import Any, NoReturn

#: The pytest node id (or test file, while it is imported) that uses of placeholders belong to.
CONTEXT: list[str] = ["<session>"]
#: context -> {(kind, "module.name")}, kind "internal" or "missing" (a public name graphrun lacks).
TOUCHED: dict[str, set[tuple[str, str]]] = {}


class ShimMissingName(Exception):
    """Raised on the first use of a name the shim does not map onto graphrun."""


def record(kind: str, qualname: str) -> None:
    TOUCHED.setdefault(CONTEXT[-1], set()).add((kind, qualname))


class Placeholder:
    """An importable stand-in that fails, and records itself, on any real use.

    `repr` and type unions (`X | None` in an annotation) are not uses; calling, subclassing,
    `isinstance`, hashing (a dict key), comparing, formatting, attribute access all are.
    """

    __slots__ = ("_judge_kind", "_judge_name")

    def __init__(self, kind: str, qualname: str) -> None:
        object.__setattr__(self, "_judge_kind", kind)
        object.__setattr__(self, "_judge_name", qualname)

    def _touch(self, *args: Any, **kwargs: Any) -> NoReturn:
        record(self._judge_kind, self._judge_name)
        raise ShimMissingName(f"{self._judge_name} ({self._judge_kind}): not provided by graphrun")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            # Python's and pytest's probing (__wrapped__, __origin__, _pytestfixturefunction)
            raise AttributeError(name)
        self._touch()

    def __repr__(self) -> str:
        return f"<judge placeholder {self._judge_name}>"

    def __or__(self, other: Any) -> Any:
        return self

    __ror__ = __or__
    __call__ = __mro_entries__ = __instancecheck__ = __subclasscheck__ = _touch
    __hash__ = __eq__ = __ne__ = __lt__ = __gt__ = _touch  # type: ignore[assignment]
    __iter__ = __getitem__ = __contains__ = __len__ = __bool__ = _touch
    __str__ = __format__ = __setattr__ = __add__ = _touch  # type: ignore[assignment]
    __int__ = __index__ = __float__ = _touch  # `int(X)` is a use too (it raised TypeError unrecorded)
