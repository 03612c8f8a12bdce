"""Start the judge early (issue 27): LangGraph's suite runs beside ours, not after it.

pytest-xdist hands out test files largest first, so `test_judge.py` (a few tests) would start
last and its minutes would add to the suite's. Instead, once collection is done, the first
process that collected the judge test starts the harness in the background
(`background.start`); the test itself only waits for that run's result.
"""

import pytest

from tests.langgraph_suite import background


def pytest_collection_finish(session: pytest.Session) -> None:
    if any(item.nodeid.endswith(background.JUDGE_TEST) for item in session.items):
        background.start(session.config)
