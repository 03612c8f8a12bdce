"""LangChain's published project shapes, served from their own langgraph.json (issue 31).

templates/ holds projects written here in the shape of LangChain's templates (new-langgraph-
project, react-agent, memory-agent, retrieval-agent): `dependencies: ["."]`, an `env` file that
a fresh clone does not have, a `Context` read as `runtime.context.<field>`, the long-term store,
a fake chat model in place of the LLM (templates/_shared/fake_chat.py, copied in when served).
Each is served by `graphrun dev` in a subprocess and driven through `langgraph-sdk` (threads,
streams, a second turn, state, history), and the transcript is compared with `langgraph dev`'s
recording. `python -m tests.http_adapter.parity.record` records them too
($PARITY_REFERENCE_CLI names the reference's `langgraph` here).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from .differences import EVERYWHERE, TEMPLATE_DIFFERENCES
from .registry import wait_status
from .servers import Server
from .test_parity import _OneRecording
from .transcript import Session, normalize

TEMPLATES = Path(__file__).resolve().parent / "templates"
FAKE_CHAT = TEMPLATES / "_shared" / "fake_chat.py"
REFERENCE_CLI = os.environ.get("PARITY_REFERENCE_CLI")

pytestmark = pytest.mark.backends("sqlite", "postgres")


@pytest.fixture
def snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(_OneRecording)


def _human(text: str) -> dict[str, Any]:
    return {"messages": [{"type": "human", "content": text}]}


def _system(s: Session, graph_id: str) -> str:
    """The graph's built-in assistant, recorded (name, context, config as served)."""
    found = s.call("built-in assistant", s.sdk.assistants.search, graph_id=graph_id)
    return found[0]["assistant_id"]


def new_project(s: Session) -> None:
    assistant = _system(s, "agent")
    s.call("schemas", s.sdk.assistants.get_schemas, assistant)
    tid = s.call("thread", s.sdk.threads.create)["thread_id"]
    s.call("turn 1", s.sdk.runs.wait, tid, "agent", input={"changeme": "hi"},
           context={"my_configurable_param": "p"})
    s.call("turn 2", s.sdk.runs.stream, tid, "agent", input={"changeme": "again"},
           stream_mode=["values", "updates"])
    s.call("state", s.sdk.threads.get_state, tid)
    s.call("history", s.sdk.threads.get_history, tid, limit=3)


def react_agent(s: Session) -> None:
    assistant = _system(s, "agent")
    s.call("schemas", s.sdk.assistants.get_schemas, assistant)
    tid = s.call("thread", s.sdk.threads.create)["thread_id"]
    s.call("search turn", s.sdk.runs.stream, tid, "agent", input=_human("search: weather"),
           context={"model": "fake/ctx"}, stream_mode=["values", "updates", "messages-tuple"])
    s.call("second turn", s.sdk.runs.wait, tid, "agent", input=_human("thanks"))
    s.call("state", s.sdk.threads.get_state, tid)
    s.call("history", s.sdk.threads.get_history, tid, limit=2)
    own = s.call("assistant", s.sdk.assistants.create, "agent", name="short searches",
                 context={"model": "fake/assistant", "max_search_results": 1})
    other = s.call("thread 2", s.sdk.threads.create)["thread_id"]
    s.call("assistant turn", s.sdk.runs.wait, other, own["assistant_id"],
           input=_human("search: tea"))


def memory_agent(s: Session) -> None:
    _system(s, "memory_agent")
    first = s.call("thread", s.sdk.threads.create)["thread_id"]
    s.call("remember", s.sdk.runs.wait, first, "memory_agent",
           input=_human("remember: I like tea"), context={"user_id": "u1"})
    s.call("memories", s.sdk.store.search_items, ["memories", "u1"])
    second = s.call("thread 2", s.sdk.threads.create)["thread_id"]
    s.call("recall", s.sdk.runs.stream, second, "memory_agent", input=_human("what do I like?"),
           context={"user_id": "u1"}, stream_mode=["messages-tuple", "values"])
    s.call("second turn", s.sdk.runs.wait, second, "memory_agent", input=_human("and now?"),
           context={"user_id": "u1"})
    s.call("other user", s.sdk.runs.wait, s.sdk.threads.create()["thread_id"], "memory_agent",
           input=_human("hello"), context={"user_id": "u2"})
    s.call("history", s.sdk.threads.get_history, first, limit=2)


def retrieval_agent(s: Session) -> None:
    _system(s, "retrieval_graph")
    _system(s, "indexer")
    docs = [{"page_content": "tea is a drink", "metadata": {"n": 1}},
            {"page_content": "coffee is a drink too", "metadata": {"n": 2}}]
    s.call("index", s.sdk.runs.wait, None, "indexer", input={"docs": docs},
           context={"user_id": "u1"})
    s.call("docs", s.sdk.store.search_items, ["docs", "u1"])
    tid = s.call("thread", s.sdk.threads.create)["thread_id"]
    s.call("ask", s.sdk.runs.stream, tid, "retrieval_graph", input=_human("tea"),
           context={"user_id": "u1"}, stream_mode=["updates"])
    s.call("ask again", s.sdk.runs.wait, tid, "retrieval_graph", input=_human("coffee"),
           context={"user_id": "u1"})
    s.call("state", s.sdk.threads.get_state, tid)
    wait_status(lambda: {"status": len(s.sdk.runs.list(tid))}, (2,))


SCENARIOS: dict[str, Callable[[Session], None]] = {
    "new_project": new_project,
    "react_agent": react_agent,
    "memory_agent": memory_agent,
    "retrieval_agent": retrieval_agent,
}


# On PostgreSQL + Redis only a project that uses the store (its PostgreSQL back end is what
# differs there); the others run the same server code on both, and a server start costs ~3 s.
ON_POSTGRES = ("memory_agent",)


@pytest.fixture
def served(request: pytest.FixtureRequest, backend: str, name: str) -> Iterator[str]:
    project = TEMPLATES / name
    if backend == "postgres" and (REFERENCE_CLI or name not in ON_POSTGRES):
        pytest.skip("recorded once; no store: the SQLite replay covers it (ON_POSTGRES)")
    if REFERENCE_CLI:
        server = Server(REFERENCE_CLI, project=project, extra=(FAKE_CHAT,))
    elif backend == "sqlite":
        server = Server(project=project, extra=(FAKE_CHAT,))
    else:
        cluster = request.getfixturevalue("pg_cluster")
        redis = request.getfixturevalue("redis_server")
        database = cluster.lend_database()
        request.addfinalizer(lambda: _give_back(cluster, database, redis.url))
        server = Server(project=project, extra=(FAKE_CHAT,), database_url=database,
                        redis_url=redis.url)
    try:
        yield server.url
    finally:
        server.stop()


def _give_back(cluster: Any, database: str, redis_url: str) -> None:
    """As test_parity's PostgreSQL fixture: the database returned, Redis emptied."""
    import redis as redis_client  # the `postgres` extra

    cluster.give_back(database)
    with redis_client.Redis.from_url(redis_url) as client:
        client.flushall()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_template(name: str, served: str, snapshot: Any) -> None:
    session = Session(served)
    try:
        SCENARIOS[name](session)
    finally:
        session.close()
    transcript = normalize(session.log)
    if not REFERENCE_CLI:
        transcript = EVERYWHERE.apply(transcript)
        if name in TEMPLATE_DIFFERENCES:
            transcript = TEMPLATE_DIFFERENCES[name].apply(transcript)
    assert transcript == snapshot


def test_template_differences_name_real_templates() -> None:
    assert set(TEMPLATE_DIFFERENCES) <= set(SCENARIOS)
