"""Deprecation warnings as LangGraph emits them (issue 29): the same classes, so code that
filters `LangGraphDeprecatedSinceV05` and friends keeps working after a port.
"""

from __future__ import annotations

import warnings

__all__ = [
    "LangGraphDeprecatedSinceV05",
    "LangGraphDeprecatedSinceV10",
    "LangGraphDeprecatedSinceV11",
    "LangGraphDeprecationWarning",
]


class LangGraphDeprecationWarning(DeprecationWarning):
    """A deprecated LangGraph spelling graphrun still accepts: since which version, and when
    LangGraph means to remove it."""

    def __init__(
        self,
        message: str,
        *args: object,
        since: tuple[int, int],
        expected_removal: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(message, *args)
        self.message = message.rstrip(".")
        self.since = since
        self.expected_removal = expected_removal or (since[0] + 1, 0)

    def __str__(self) -> str:
        return (
            f"{self.message}. Deprecated in LangGraph V{self.since[0]}.{self.since[1]}"
            f" to be removed in V{self.expected_removal[0]}.{self.expected_removal[1]}."
        )


class LangGraphDeprecatedSinceV05(LangGraphDeprecationWarning):
    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(0, 5), expected_removal=(2, 0))


class LangGraphDeprecatedSinceV10(LangGraphDeprecationWarning):
    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(1, 0), expected_removal=(2, 0))


class LangGraphDeprecatedSinceV11(LangGraphDeprecationWarning):
    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(1, 1), expected_removal=(3, 0))


def renamed(old: str, new: str, stacklevel: int = 3) -> None:
    """An argument given under its pre-0.5 name (`retry`, `input`, `output`)."""
    warnings.warn(
        f"`{old}` is deprecated and will be removed. Please use `{new}` instead.",
        LangGraphDeprecatedSinceV05 if old != "config_schema" else LangGraphDeprecatedSinceV10,
        stacklevel=stacklevel,
    )
