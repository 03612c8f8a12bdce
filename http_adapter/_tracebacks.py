"""Tracebacks a user can act on (issue 30 item 1).

A node that raises inside a served graph fails many frames below the user's code: the engine's
task runner, its worker thread, anyio, the queue. `langgraph dev` prints the traceback down to
the user's file and line; these helpers keep the user's frames of a traceback (and of its
causes) and trim the framework's, and name the innermost user frame for one-line messages
(a graph module that fails while being imported).
"""

from __future__ import annotations

import functools
import os
import sysconfig
import traceback
from pathlib import Path

__all__ = ["is_user_file", "user_location", "user_traceback"]

# Installed packages whose frames are plumbing around the user's code, never the cause:
# graphrun's own (installed, not editable), the server stack, and LangGraph's runtime for
# graphs built with LangGraph.
_FRAMEWORK_PACKAGES = frozenset((
    "engine", "checkpoints", "http_adapter", "anyio", "starlette", "uvicorn", "sniffio",
    "langgraph", "langgraph_api", "langchain_core",
))


@functools.cache
def _own_dirs() -> tuple[str, ...]:
    """graphrun's packages, and the standard library (asyncio, threading, importlib)."""
    import checkpoints
    import engine

    dirs = [Path(module.__file__ or "").resolve().parent for module in (engine, checkpoints)]
    dirs.append(Path(__file__).resolve().parent)
    paths = sysconfig.get_paths()
    dirs += [Path(paths[k]).resolve() for k in ("stdlib", "platstdlib") if paths.get(k)]
    return tuple(str(d) + os.sep for d in dirs)


def is_user_file(filename: str) -> bool:
    """Whether a frame's file is the user's: not graphrun's, not the standard library's, not a
    framework package's (`_FRAMEWORK_PACKAGES`), not a frozen or generated module."""
    if filename.startswith("<"):
        return False
    parts = Path(filename).parts
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            index = parts.index(marker)
            top = parts[index + 1] if index + 1 < len(parts) else ""
            return top.removesuffix(".py") not in _FRAMEWORK_PACKAGES
    return not os.path.realpath(filename).startswith(_own_dirs())


def _trim(exc: traceback.TracebackException, seen: set[int]) -> int:
    """Drop the framework's frames of `exc` and of its causes, in place; how many were dropped.
    When no frame is the user's, the innermost frame stays: it says where the error arose."""
    if id(exc) in seen:
        return 0
    seen.add(id(exc))
    frames = list(exc.stack)
    kept = [f for f in frames if is_user_file(f.filename)] or frames[-1:]
    exc.stack = traceback.StackSummary.from_list(kept)
    dropped = len(frames) - len(kept)
    for linked in (exc.__cause__, exc.__context__, *(getattr(exc, "exceptions", None) or ())):
        if linked is not None:
            dropped += _trim(linked, seen)
    return dropped


def user_traceback(error: BaseException) -> str:
    """`error`'s traceback as Python prints it, with the framework's frames trimmed (the first
    line says how many)."""
    exc = traceback.TracebackException.from_exception(error)
    dropped = _trim(exc, set())
    lines = list(exc.format())
    if dropped:
        lines.insert(0, f"({dropped} framework frame{'s' if dropped != 1 else ''} trimmed)\n")
    return "".join(lines).rstrip("\n")


def user_location(error: BaseException, root: Path | None = None) -> str | None:
    """The innermost frame of the user's code that `error` passed through, as
    `helpers.py, line 3, in build` (the file relative to `root` when inside it); None when the
    traceback holds no user frame, or for a syntax error (its message names its file and line).
    """
    if isinstance(error, SyntaxError):
        return None
    frames = [f for f in traceback.extract_tb(error.__traceback__) if is_user_file(f.filename)]
    if not frames:
        return None
    last = frames[-1]
    return f"{_shown(last.filename, root)}, line {last.lineno}, in {last.name}"


def _shown(filename: str, root: Path | None) -> str:
    if root is not None:
        try:
            return str(Path(filename).resolve().relative_to(root.resolve()))
        except ValueError:
            pass
    return filename
