"""Replay every parity scenario against `graphrun dev`; compare with `langgraph dev`'s snapshot.

The snapshots in __snapshots__/ were recorded from `langgraph dev` by
`python -m tests.http_adapter.parity.record` (see SNAPSHOTS.md beside it). With
$PARITY_REFERENCE_URL set (the recorder sets it) the same tests run against that server instead.
Issue 18.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from . import scenarios  # noqa: F401 - fills the registry
from .differences import DIFFERENCES, EVERYWHERE, EXPECTED_FAILURES
from .registry import SCENARIOS
from .servers import Server, reset
from .transcript import Session, normalize

REFERENCE = os.environ.get("PARITY_REFERENCE_URL")


@pytest.fixture(scope="module")
def parity_url() -> Iterator[str]:
    if REFERENCE:
        yield REFERENCE
        return
    server = Server()
    try:
        yield server.url
    finally:
        server.stop()


def _marks(name: str) -> list[Any]:
    if REFERENCE or name not in EXPECTED_FAILURES:
        return []
    return [pytest.mark.xfail(strict=True, reason=EXPECTED_FAILURES[name])]


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(n)) for n in sorted(SCENARIOS)])
def test_scenario(name: str, parity_url: str, snapshot: Any) -> None:
    reset(parity_url)
    session = Session(parity_url)
    try:
        SCENARIOS[name](session)
    finally:
        session.close()
    transcript = normalize(session.log)
    if not REFERENCE:
        transcript = EVERYWHERE.apply(transcript)
        if name in DIFFERENCES:
            transcript = DIFFERENCES[name].apply(transcript)
    assert transcript == snapshot


def test_differences_name_real_scenarios() -> None:
    assert set(DIFFERENCES) <= set(SCENARIOS)
    assert set(EXPECTED_FAILURES) <= set(SCENARIOS)
    assert all(d.reason for d in DIFFERENCES.values())
    assert not set(DIFFERENCES) & set(EXPECTED_FAILURES)
