"""Every place graphrun deliberately answers differently from `langgraph dev`, with the reason.

The replay never skips a scenario for a difference: `Difference.apply` first checks that
graphrun's transcript shows the better behaviour (an assertion), then rewrites that part into
the reference's form, and the whole transcript is still compared with the recorded snapshot.
The README's list of differences names the same entries (issue 18).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

__all__ = ["DIFFERENCES", "EXPECTED_FAILURES", "Difference"]

Transcript = list[dict[str, Any]]


@dataclasses.dataclass(frozen=True)
class Difference:
    """One deliberate difference: why, and how graphrun's transcript maps onto the reference."""

    reason: str
    apply: Callable[[Transcript], Transcript]


DIFFERENCES: dict[str, Difference] = {}

# Scenarios graphrun does not pass yet, each with the issue that fixes it. Marked
# xfail(strict=True) in the replay, so the mark must go when the fix lands.
EXPECTED_FAILURES: dict[str, str] = {}
