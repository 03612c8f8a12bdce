"""Differential tests: each scenario's transcript on graphrun must equal LangGraph 1.2.22's.

Test ids: `test_lg[<scenario>]` runs only the LangGraph side (twice, asserting the transcript is
stable, which checks the scenario and the normalizer); `test_parity[<scenario>]` runs both and
compares, against the transcript `test_lg` found stable in this session when it ran (most
scenarios wait on timers, so a third LangGraph run was ~1/3 of these tests' time). Select one side with `-k lg` / `-k parity`. When `engine` cannot be imported the parity
tests fail (they do not skip).
"""

from __future__ import annotations

import pytest

from . import (  # noqa: F401  (they register into SCENARIOS)
    scenarios_cancel, scenarios_context, scenarios_func, scenarios_llm, scenarios_more, scenarios_prebuilt,
    scenarios_drawing, scenarios_resume, scenarios_typed_resume,
)
from . import scenarios_nested  # noqa: F401  (issue 27)
from . import scenarios_runtime  # noqa: F401  (issue 29)
from . import scenarios_pregel  # noqa: F401  (issues 27, 29)
from . import scenarios_stream  # noqa: F401  (issue 29)
from . import scenarios_runnable  # noqa: F401  (issue 29)
from . import scenarios_api  # noqa: F401  (issue 27)
from . import scenarios_messages  # noqa: F401  (issue 29)
from . import scenarios_compat  # noqa: F401  (issue 29)
from . import scenarios_joins  # noqa: F401  (issue 27)
from . import scenarios_pregelrun  # noqa: F401  (issue 27)
from .harness import as_graphrun, first_difference, load_lib
from .scenarios import SCENARIOS

NAMES = sorted(SCENARIOS)
_STABLE: dict[str, list] = {}  # scenario -> LangGraph's transcript, once `test_lg` passed


def _langgraph(name: str) -> list:
    found = _STABLE.get(name)
    return found if found is not None else SCENARIOS[name](load_lib("lg"))


@pytest.mark.parametrize("name", NAMES)
def test_lg(name: str) -> None:
    lg = load_lib("lg")
    first = SCENARIOS[name](lg)
    again = SCENARIOS[name](lg)
    assert first, "a scenario must record something"
    assert first == again, first_difference(first, again)
    _STABLE[name] = again


@pytest.mark.parametrize("name", NAMES)
def test_parity(name: str) -> None:
    expected = as_graphrun(_langgraph(name))
    actual = SCENARIOS[name](load_lib("gr"))
    assert actual == expected, first_difference(expected, actual)
