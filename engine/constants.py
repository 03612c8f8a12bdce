"""The engine's constants, LangGraph's `langgraph.constants` surface (issue 29).

`Send` and `Interrupt` were importable from here in LangGraph before 1.0; they still are, with
the `LangGraphDeprecatedSinceV10` warning LangGraph gives, so ported code learns where they
live now (`engine.types`).
"""

from __future__ import annotations

import warnings
from typing import Any

from ._config import DEFAULT_RECURSION_LIMIT
from ._messages import TAG_NOSTREAM
from .types import END, START
from .warnings import LangGraphDeprecatedSinceV10

__all__ = ["DEFAULT_RECURSION_LIMIT", "END", "START", "TAG_HIDDEN", "TAG_NOSTREAM"]

#: Tracers leave a run with this tag out of what they show (LangSmith's name).
TAG_HIDDEN = "langsmith:hidden"
#: The names still served here with a deprecation warning (read by `__getattr__`).
__deprecated__ = frozenset(("Send", "Interrupt"))


def __getattr__(name: str) -> Any:
    if name in __deprecated__:
        warnings.warn(
            f"Importing {name} from langgraph.constants is deprecated. "
            f"Please use 'from langgraph.types import {name}' instead.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        from . import types

        return getattr(types, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
