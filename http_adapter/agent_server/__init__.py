"""The agent server: the LangGraph Agent Server HTTP API over graphrun's engine."""

from typing import Any

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    """`create_app` imported when first asked for: the CLI reads its settings and flags
    without the whole server, so a reloading `graphrun dev` (issue 30) starts faster."""
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
