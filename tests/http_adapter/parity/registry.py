"""The scenarios by name: each is a function that drives one `Session` (issue 18)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .transcript import Session

__all__ = ["SCENARIOS", "scenario", "wait_status"]

SCENARIOS: dict[str, Callable[[Session], None]] = {}


def scenario(fn: Callable[[Session], None]) -> Callable[[Session], None]:
    """Register a scenario under its function name (the snapshot's name too)."""
    assert fn.__name__ not in SCENARIOS, fn.__name__
    SCENARIOS[fn.__name__] = fn
    return fn


def wait_status(get: Callable[[], dict[str, Any]], statuses: tuple[str, ...], limit: float = 10) -> str:
    """Poll (unrecorded) until a record reaches one of `statuses`; the scenario records after."""
    deadline = time.monotonic() + limit
    while True:
        status = get()["status"]
        if status in statuses or time.monotonic() > deadline:
            return status
        time.sleep(0.02)
