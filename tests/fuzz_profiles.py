"""Hypothesis profiles of the fuzz tests (issue 16), chosen with GRAPHRUN_FUZZ_PROFILE.

- "ci" (default): a fixed number of examples drawn from a fixed seed (`derandomize`), so every
  CI run tries the same programs and a failure reproduces; the whole fuzz suite stays under
  ~2 minutes on a loaded 2-core machine.
- "long": many more examples from a random seed, for a local run before a release
  (`GRAPHRUN_FUZZ_PROFILE=long pytest tests/checkpoints/test_fuzz.py`); tests have no time
  limit then.

No example database either way: a failure Hypothesis finds becomes an explicit regression test
(tests/checkpoints/test_fuzz_regressions.py), not a file in `.hypothesis/`.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, Phase, settings

__all__ = ["LONG", "PROFILE", "fuzz_settings", "time_limit"]

_COMMON = {
    "deadline": None,  # a program runs LangGraph and four savers: seconds, not milliseconds
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "print_blob": True,
    # No "explain" phase: its line tracer slows a failing program's shrinking tenfold on 3.11.
    "phases": [Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
}
settings.register_profile("ci", derandomize=True, **_COMMON)
settings.register_profile("long", derandomize=False, **_COMMON)

PROFILE = os.environ.get("GRAPHRUN_FUZZ_PROFILE", "ci")
LONG = PROFILE == "long"


def fuzz_settings(ci_examples: int, long_examples: int = 2000) -> settings:
    """The settings of one fuzz test: its example count under the chosen profile."""
    return settings(
        settings.get_profile(PROFILE), max_examples=long_examples if LONG else ci_examples
    )


# A hang guard, lifted for the long profile. Not the suite's 60 s: the longest ci test takes
# ~25 s alone but ~42 s beside a second pytest-xdist worker on 2 cores (measured), too close.
time_limit = pytest.mark.timeout(0 if LONG else 120)
