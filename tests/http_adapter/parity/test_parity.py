"""Replay every parity scenario against `graphrun dev`; compare with `langgraph dev`'s snapshot.

The snapshots in __snapshots__/ were recorded from `langgraph dev` by
`python -m tests.http_adapter.parity.record` (see SNAPSHOTS.md beside it). With
$PARITY_REFERENCE_URL set (the recorder sets it) the same tests run against that server instead.
Issue 18.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.amber import AmberSnapshotExtension

from . import scenarios  # noqa: F401 - fills the registry
from .differences import DIFFERENCES, EVERYWHERE, EXPECTED_FAILURES, ON_POSTGRES
from .registry import SCENARIOS
from .servers import Server, reset
from .transcript import Session, normalize

REFERENCE = os.environ.get("PARITY_REFERENCE_URL")


# Issue 19 §11: the replay runs on both back ends against the same recordings.
pytestmark = pytest.mark.backends("sqlite", "postgres")


class _OneRecording(AmberSnapshotExtension):
    """Both back ends compare with the one recording of `langgraph dev`: the back end's id is
    left out of the snapshot's name."""

    @classmethod
    def get_snapshot_name(cls, *, test_location: Any, index: Any = 0) -> str:
        name = super().get_snapshot_name(test_location=test_location, index=index)
        name = name.replace("test_langgraph_built[", "test_scenario[")  # issue 28: the same
        return re.sub(r"\[(sqlite|postgres)-", "[", name)


@pytest.fixture
def snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(_OneRecording)


@pytest.fixture(scope="module")
def parity_url(backend: str, request: pytest.FixtureRequest) -> Iterator[str]:
    if REFERENCE:
        yield REFERENCE
        return
    if backend == "sqlite":
        server = Server()
        try:
            yield server.url
        finally:
            server.stop()
        return
    yield from _on_postgres(request)


def _on_postgres(request: pytest.FixtureRequest) -> Iterator[str]:
    """`graphrun dev` on a database of the session's PostgreSQL and its Redis, for the module."""
    import redis as redis_client  # the `postgres` extra

    cluster = request.getfixturevalue("pg_cluster")
    redis = request.getfixturevalue("redis_server")
    database = cluster.lend_database()
    server = Server(database_url=database, redis_url=redis.url)
    try:
        yield server.url
    finally:
        server.stop()
        cluster.give_back(database)
        with redis_client.Redis.from_url(redis.url) as client:
            client.flushall()  # as `redis_url` does after each test


def _marks(name: str) -> list[Any]:
    if REFERENCE or name not in EXPECTED_FAILURES:
        return []
    return [pytest.mark.xfail(strict=True, reason=EXPECTED_FAILURES[name])]


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(n)) for n in sorted(SCENARIOS)])
def test_scenario(name: str, parity_url: str, backend: str, snapshot: Any) -> None:
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
        if backend == "postgres" and name in ON_POSTGRES:
            transcript = ON_POSTGRES[name].apply(transcript)
    assert transcript == snapshot


# Issue 28: the app built with the real LangGraph (`PARITY_LIB=langgraph`, its program text
# unchanged), run by LangGraph's runtime inside `graphrun dev`, answers as `langgraph dev` did.
# A sample of the scenarios (the whole replay takes minutes): streams of every kind, interrupts
# and resumes, forks, history, state with subgraphs, updates, errors, drawings, factories.
LANGGRAPH_BUILT = (
    "assistants_graph_xray", "assistants_subgraphs", "issue31_factories", "multitask_interrupt",
    "runs_command_update_goto", "runs_fork_from_checkpoint", "runs_wait_interrupt_resume",
    "stream_debug_subgraphs", "stream_events_chat", "stream_interrupt_in_subgraph",
    "stream_messages_tuple_bound_model", "stream_multi_mode_subgraphs", "threads_error_status",
    "threads_history", "threads_state_subgraphs", "threads_update_state_then_resume",
)
# multitask_interrupt (issue 28): as the reference, the thread is named after the graph of the
# run that ended last (`router`, which interrupted the `agent` run), and its state read through
# that graph; read through `agent`, LangGraph lists the cancelled run's `a` as next.


@pytest.fixture(scope="module")
def langgraph_built_url() -> Iterator[str]:
    server = Server(lib="langgraph")
    try:
        yield server.url
    finally:
        server.stop()


@pytest.mark.skipif(bool(REFERENCE), reason="replays against graphrun only")
@pytest.mark.parametrize("name", LANGGRAPH_BUILT)
def test_langgraph_built(name: str, langgraph_built_url: str, backend: str,
                         snapshot: Any) -> None:
    if backend != "sqlite":
        pytest.skip("the LangGraph-built app's PostgreSQL case is "
                    "tests/http_adapter/cluster/test_langgraph_serve.py")
    test_scenario(name, langgraph_built_url, "sqlite", snapshot)


def test_differences_name_real_scenarios() -> None:
    assert set(DIFFERENCES) <= set(SCENARIOS)
    assert set(EXPECTED_FAILURES) <= set(SCENARIOS)
    assert set(ON_POSTGRES) <= set(SCENARIOS)
    assert all(d.reason for d in [*DIFFERENCES.values(), *ON_POSTGRES.values()])
    assert not set(DIFFERENCES) & set(EXPECTED_FAILURES)
    assert set(LANGGRAPH_BUILT) <= set(SCENARIOS)
