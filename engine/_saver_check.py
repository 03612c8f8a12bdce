"""Refusing a `checkpointer=` that is no saver when the graph is compiled (issue 29), as
LangGraph does: a wrong object (a class instead of an instance, a store, a typo'd variable)
fails at `compile()` with a `TypeError` naming it, not with an `AttributeError` mid-run.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ensure_saver"]

# What a saver needs for a run to read and write its checkpoints (sync or async twins).
_READ = ("get_tuple", "aget_tuple")
_WRITE = ("put", "aput")


def ensure_saver(checkpointer: Any) -> None:
    """Accept None/True/False or anything that reads and writes checkpoints (our savers,
    LangGraph's `BaseCheckpointSaver`s, duck-typed ones)."""
    if checkpointer is None or checkpointer is True or checkpointer is False:
        return
    if any(hasattr(checkpointer, n) for n in _READ) and any(hasattr(checkpointer, n) for n in _WRITE):
        return
    raise TypeError(
        "Invalid checkpointer provided. Expected an instance of `BaseCheckpointSaver`, `True`,"
        f" `False`, or `None`. Received {type(checkpointer).__name__}. Pass a proper saver"
        " (e.g., InMemorySaver, SqliteSaver)."
    )
