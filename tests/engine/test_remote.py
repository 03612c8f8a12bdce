"""`engine.remote.RemoteGraph` without a server (issue 29): the optional SDK, what a run request
carries, trace headers, and the v3 run stream over the SDK's thread stream session. The calls
against a real server, beside LangGraph's client: tests/http_adapter/test_remote_graph.py.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from engine import Command
from engine.remote import RemoteGraph

ROOT = Path(__file__).resolve().parents[2]


class _Runs:
    """The part of a client `RemoteGraph.stream` uses: records each `runs.stream` call."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.cancelled: list[tuple[Any, ...]] = []

    def stream(self, **kwargs: Any) -> list[Any]:
        self.calls.append(kwargs)
        return []

    def cancel(self, *args: Any, **kwargs: Any) -> None:
        self.cancelled.append(args)


class _Session:
    """The SDK's v3 thread stream session, as far as the run stream wrapper uses it."""

    def __init__(self, thread_id: str | None) -> None:
        self.thread_id = thread_id or "fresh-thread"
        self.log: list[Any] = []
        self.run = self
        self.events = iter([{"method": "values", "params": {"data": {"x": 1}}}])

    def __enter__(self) -> _Session:
        self.log.append("enter")
        return self

    def __exit__(self, *exc: Any) -> None:
        self.log.append("exit")

    def start(self, **kwargs: Any) -> dict[str, str]:
        self.log.append(("start", kwargs))
        return {"run_id": "run-1"}

    def close(self) -> None:
        self.log.append("close")


class _Threads:
    def __init__(self) -> None:
        self.sessions: list[tuple[dict[str, Any], _Session]] = []

    def stream(self, **kwargs: Any) -> _Session:
        session = _Session(kwargs["thread_id"])
        self.sessions.append((kwargs, session))
        return session


class _Client:
    def __init__(self) -> None:
        self.runs = _Runs()
        self.threads = _Threads()


def test_import_needs_no_sdk_and_url_names_the_extra(tmp_path: Path) -> None:
    program = textwrap.dedent("""
        import sys
        sys.modules["langgraph_sdk"] = None  # as if not installed
        import engine
        assert "engine.remote" not in sys.modules
        from engine.remote import RemoteGraph
        RemoteGraph("agent", client=object(), sync_client=object())  # own clients: no SDK
        try:
            RemoteGraph("agent", url="http://127.0.0.1:9")
        except ImportError as error:
            print("IMPORT-ERROR:", error)
    """)
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=30, cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert "IMPORT-ERROR: RemoteGraph(url=...)" in done.stdout
    assert "graphrun[remote]" in done.stdout


def test_a_run_request_carries_plain_config_only() -> None:
    client = _Client()
    graph = RemoteGraph("agent", sync_client=client, config={"tags": ["base"]})
    bound = graph.with_config({"configurable": {"user": "u"}}, recursion_limit=9)
    assert bound.config == {"tags": ["base"], "configurable": {"user": "u"}, "recursion_limit": 9}
    assert graph.config == {"tags": ["base"]}  # with_config copies
    config = {"tags": ["t", 3], "metadata": {"k": [1, object()]}, "configurable": {
        "thread_id": "t1", "checkpoint_id": "c1", "checkpoint_ns": "n", "checkpoint_map": {},
        "saver": object(), "nested": {"a": 1, "b": object()},
    }}
    list(bound.stream(Command(resume="go"), config, stream_mode="messages"))
    sent = client.runs.calls[0]
    assert sent["thread_id"] == "t1" and sent["input"] is None
    assert sent["command"]["resume"] == "go"
    assert sent["config"] == {"recursion_limit": 9, "tags": ["base", "t"], "metadata": {"k": [1]},
                              "configurable": {"user": "u", "nested": {"a": 1}}}
    assert sent["stream_mode"] == ["messages-tuple", "updates"]
    assert sent["if_not_exists"] == "create" and sent["stream_subgraphs"] is False


def test_distributed_tracing_sends_the_callers_trace() -> None:
    from langsmith.run_helpers import tracing_context
    from langsmith.run_trees import RunTree

    client = _Client()
    traced = RemoteGraph("agent", sync_client=client, distributed_tracing=True)
    plain = RemoteGraph("agent", sync_client=client)
    caller = RunTree(name="caller")
    with tracing_context(parent=caller):
        list(traced.stream({}, headers={"X-Custom": "y", "baggage": "a=b"}))
        list(plain.stream({}, headers={"X-Custom": "y"}))
    list(traced.stream({}, headers={"X-Custom": "y"}))  # no trace running: unchanged
    sent = [call["headers"] for call in client.runs.calls]
    assert sent[0]["langsmith-trace"] == caller.to_headers()["langsmith-trace"]
    assert sent[0]["X-Custom"] == "y" and sent[0]["baggage"].startswith("a=b,")
    assert sent[1] == sent[2] == {"X-Custom": "y"}


def test_v3_run_stream_starts_on_enter_and_aborts() -> None:
    client = _Client()
    graph = RemoteGraph("agent", sync_client=client)
    config = {"configurable": {"thread_id": "t1", "checkpoint_id": "c"}}
    run = graph.stream_events(Command(resume="go"), config, version="v3", metadata={"m": 1})
    opened, session = client.threads.sessions[0]
    assert opened == {"thread_id": "t1", "assistant_id": "agent", "headers": None}
    assert session.log == []  # nothing sent before the run stream is entered
    with run:
        assert session.log == ["enter", ("start", {"input": "go", "config": {"configurable": {}},
                                                   "metadata": {"m": 1}})]
        assert list(run) == [{"method": "values", "params": {"data": {"x": 1}}}]
        run.abort()
        run.abort()  # once only
    assert client.runs.cancelled == [("t1", "run-1")]
    assert session.log[-1] == "close"  # abort closed it: the `with` exit does nothing more


def test_v3_rejects_what_it_cannot_carry_before_any_request() -> None:
    client = _Client()
    graph = RemoteGraph("agent", sync_client=client, client=client)
    with pytest.raises(NotImplementedError, match="interrupt_before"):
        graph.stream_events({}, version="v3", interrupt_before=["a"])
    with pytest.raises(NotImplementedError, match="context"):
        graph.stream_events({}, version="v3", context={})
    with pytest.raises(NotImplementedError, match="goto"):
        graph.stream_events(Command(goto="b"), version="v3")
    with pytest.raises(NotImplementedError):
        graph.stream_events({}, version="v2")
    with pytest.raises(NotImplementedError, match="astream"):
        import asyncio

        asyncio.run(graph.astream_events({}, version="v2"))
    assert client.threads.sessions == []
