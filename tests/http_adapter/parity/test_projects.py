"""The unmodified LangGraph projects of `langgraph_projects/`, compared with `langgraph dev`.

Issue 28: each project (real `langgraph` / `langchain` imports) is served from its own
langgraph.json by `graphrun dev` on a SQLite file, driven through `langgraph-sdk` (a stream,
an interrupt, a resume, a second turn, history, a fork), and the transcript is compared with
what `langgraph dev` answered to the same scenario (recorded into __snapshots__/ by
`python -m tests.http_adapter.parity.record`). The projects that use only LangGraph's public
API (template, functional) are replayed on `--engine graphrun` too, against the same
recording; one project (multi_agent) on `graphrun serve` with PostgreSQL + Redis.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from .differences import EVERYWHERE
from .servers import Server
from .test_parity import _OneRecording
from .test_templates import _give_back
from .transcript import Session, normalize

PROJECTS = Path(__file__).resolve().parents[1] / "langgraph_projects"
REFERENCE_CLI = os.environ.get("PARITY_REFERENCE_CLI")

pytestmark = pytest.mark.backends("sqlite", "postgres")


class _OneProjectRecording(_OneRecording):
    """Every back end and engine compares with the one recording: `[sqlite-template-graphrun]`
    is named `[template]`."""

    @classmethod
    def get_snapshot_name(cls, *, test_location: Any, index: Any = 0) -> str:
        name = super().get_snapshot_name(test_location=test_location, index=index)
        return name.replace("-graphrun]", "]").replace("-auto]", "]")


@pytest.fixture
def snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(_OneProjectRecording)


def _user(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def _system(s: Session, graph_id: str) -> str:
    found = s.call("built-in assistant", s.sdk.assistants.search, graph_id=graph_id)
    return found[0]["assistant_id"]


def _asked(history: list[dict[str, Any]]) -> dict[str, Any]:
    """The oldest checkpoint of `history` waiting on an interrupt: where a fork goes back to."""
    return next(h for h in reversed(history) if any(t["interrupts"] for t in h["tasks"]))


def template(s: Session) -> None:
    """A Context dataclass, a subgraph, a human review; a fork with an edited note."""
    assistant = _system(s, "agent")
    s.call("schemas", s.sdk.assistants.get_schemas, assistant)
    s.call("drawing", s.sdk.assistants.get_graph, assistant)
    s.call("subgraphs", s.sdk.assistants.get_subgraphs, assistant)
    tid = s.call("thread", s.sdk.threads.create)["thread_id"]
    s.call("stream", s.sdk.runs.stream, tid, "agent", input={"topic": "tides"},
           context={"greeting": "Hi"}, stream_mode=["values", "updates"], stream_subgraphs=True)
    s.call("interrupted thread", s.sdk.threads.get, tid)
    s.call("interrupted state", s.sdk.threads.get_state, tid)
    s.call("resume", s.sdk.runs.wait, tid, "agent", command={"resume": "yes"})
    s.call("second turn", s.sdk.runs.stream, tid, "agent", input={"topic": "waves"},
           stream_mode="updates")
    history = s.call("history", s.sdk.threads.get_history, tid, limit=50)
    forked = s.call("fork", s.sdk.threads.update_state, tid, {"notes": ["edited"]},
                    checkpoint_id=_asked(history)["checkpoint_id"])
    s.call("forked run", s.sdk.runs.wait, tid, "agent", command={"resume": "no"},
           checkpoint_id=forked["checkpoint_id"])
    s.call("state", s.sdk.threads.get_state, tid)


def create_agent(s: Session) -> None:
    """LangChain's create_agent: a tool call approved, a streamed answer, a fork rejecting it."""
    assistant = _system(s, "agent")
    s.call("drawing", s.sdk.assistants.get_graph, assistant)
    tid = s.call("thread", s.sdk.threads.create)["thread_id"]
    s.call("stream", s.sdk.runs.stream, tid, "agent", input=_user("Weather in Oslo?"),
           stream_mode=["messages-tuple", "updates"])
    s.call("interrupted state", s.sdk.threads.get_state, tid)
    s.call("approve", s.sdk.runs.wait, tid, "agent",
           command={"resume": {"decisions": [{"type": "approve"}]}})
    s.call("second turn", s.sdk.runs.stream, tid, "agent", input=_user("Thanks!"),
           stream_mode="messages")
    history = s.call("history", s.sdk.threads.get_history, tid, limit=100)
    reject = {"decisions": [{"type": "reject", "message": "No lookups."}]}
    s.call("fork", s.sdk.runs.wait, tid, "agent", command={"resume": reject},
           checkpoint_id=_asked(history)["checkpoint_id"])
    s.call("state", s.sdk.threads.get_state, tid)


def functional(s: Session) -> None:
    """The functional API: a task, an interrupt, `previous` across turns, a fork."""
    assistant = _system(s, "essay")
    s.call("schemas", s.sdk.assistants.get_schemas, assistant)
    tid = s.call("thread", s.sdk.threads.create)["thread_id"]
    s.call("stream", s.sdk.runs.stream, tid, "essay", input={"topic": "rivers"},
           stream_mode=["updates", "values"])
    s.call("interrupted state", s.sdk.threads.get_state, tid)
    s.call("resume", s.sdk.runs.wait, tid, "essay", command={"resume": True})
    s.call("second turn", s.sdk.runs.wait, tid, "essay", input={"topic": "lakes"})
    s.call("second resume", s.sdk.runs.stream, tid, "essay", command={"resume": False},
           stream_mode="values")
    history = s.call("history", s.sdk.threads.get_history, tid, limit=50)
    s.call("fork", s.sdk.runs.wait, tid, "essay", command={"resume": "maybe"},
           checkpoint_id=_asked(history)["checkpoint_id"])
    s.call("state", s.sdk.threads.get_state, tid)


def multi_agent(s: Session) -> None:
    """langgraph-supervisor (a graph factory) and langgraph-swarm (an uncompiled StateGraph)."""
    supervisor = _system(s, "supervisor")
    s.call("subgraphs", s.sdk.assistants.get_subgraphs, supervisor)
    tid = s.call("thread", s.sdk.threads.create)["thread_id"]
    s.call("supervisor stream", s.sdk.runs.stream, tid, "supervisor",
           input=_user("Rain in Bergen?"), stream_mode="updates", stream_subgraphs=True)
    s.call("supervisor state", s.sdk.threads.get_state, tid)
    history = s.call("supervisor history", s.sdk.threads.get_history, tid, limit=100)
    start = next(h for h in reversed(history) if h["metadata"]["source"] == "loop")
    s.call("supervisor fork", s.sdk.runs.wait, tid, "supervisor", input=None,
           checkpoint_id=start["checkpoint_id"])
    _system(s, "swarm")
    other = s.call("thread 2", s.sdk.threads.create)["thread_id"]
    s.call("swarm turn", s.sdk.runs.wait, other, "swarm", input=_user("Boats?"))
    s.call("swarm second turn", s.sdk.runs.stream, other, "swarm", input=_user("More?"),
           stream_mode=["updates", "messages-tuple"])
    s.call("swarm history", s.sdk.threads.get_history, other, limit=100)


SCENARIOS: dict[str, Callable[[Session], None]] = {
    "template": template,
    "create_agent": create_agent,
    "functional": functional,
    "multi_agent": multi_agent,
}

# `--engine graphrun` (issue 28 item 2): the projects that use only LangGraph's public API
PUBLIC_API = ("template", "functional")
# PostgreSQL + Redis on `graphrun serve`: one project, the agent libraries' (a server start
# costs seconds; the others run the same server code)
ON_POSTGRES = ("multi_agent",)

CASES = [pytest.param(name, "auto", id=f"{name}-auto") for name in SCENARIOS] + [
    pytest.param(name, "graphrun", id=f"{name}-graphrun") for name in PUBLIC_API]


@pytest.fixture
def served(request: pytest.FixtureRequest, backend: str, name: str, engine: str
           ) -> Iterator[str]:
    project = PROJECTS / name
    if REFERENCE_CLI and (backend != "sqlite" or engine != "auto"):
        pytest.skip("recorded once, from `langgraph dev`")
    if backend == "postgres" and (engine != "auto" or name not in ON_POSTGRES):
        pytest.skip("on PostgreSQL + Redis: the projects of ON_POSTGRES")
    if REFERENCE_CLI:
        server = Server(REFERENCE_CLI, project=project)
    elif backend == "sqlite":
        server = Server(project=project, engine=engine, in_memory=False)
    else:
        cluster = request.getfixturevalue("pg_cluster")
        redis = request.getfixturevalue("redis_server")
        database = cluster.lend_database()
        request.addfinalizer(lambda: _give_back(cluster, database, redis.url))
        server = Server(project=project, command="serve", database_url=database,
                        redis_url=redis.url)
    try:
        yield server.url
    finally:
        server.stop()


@pytest.mark.parametrize(("name", "engine"), CASES)
def test_project(name: str, engine: str, served: str, snapshot: Any) -> None:
    session = Session(served)
    try:
        SCENARIOS[name](session)
    finally:
        session.close()
    transcript = normalize(session.log)
    if not REFERENCE_CLI:
        # no difference of its own is listed: each project answers as `langgraph dev` did
        transcript = EVERYWHERE.apply(transcript)
    assert transcript == snapshot
