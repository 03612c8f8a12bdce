"""Differential tests: each scenario's transcript on graphrun must equal LangGraph 1.2.22's.

Test ids: `test_lg[<scenario>]` runs only the LangGraph side (twice, asserting the transcript is
stable, which checks the scenario and the normalizer); `test_parity[<scenario>]` runs both and
compares. Select one side with `-k lg` / `-k parity`. When `engine` cannot be imported the parity
tests fail (they do not skip).
"""

from __future__ import annotations

import pytest

from . import (  # noqa: F401  (they register into SCENARIOS)
    scenarios_cancel, scenarios_func, scenarios_llm, scenarios_more, scenarios_prebuilt,
    scenarios_resume,
)
from .harness import as_graphrun, first_difference, load_lib
from .scenarios import SCENARIOS

NAMES = sorted(SCENARIOS)


@pytest.mark.parametrize("name", NAMES)
def test_lg(name: str) -> None:
    lg = load_lib("lg")
    first = SCENARIOS[name](lg)
    again = SCENARIOS[name](lg)
    assert first, "a scenario must record something"
    assert first == again, first_difference(first, again)


@pytest.mark.parametrize("name", NAMES)
def test_parity(name: str) -> None:
    expected = as_graphrun(SCENARIOS[name](load_lib("lg")))
    actual = SCENARIOS[name](load_lib("gr"))
    assert actual == expected, first_difference(expected, actual)
