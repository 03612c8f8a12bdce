"""An `@entrypoint` served like a graph (issue 17): loaded from langgraph.json, run through
/runs/wait and /runs/stream on a real server, interrupted and resumed, drawn and described."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from http_adapter.agent_server.state import assistant_id_for
from http_adapter.config import load_settings

from .conftest import Served
from .test_streaming import events, stream

# Issue 19 §11: every test here runs on SQLite and on PostgreSQL + Redis (conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgres")

FLOW = """
from engine import entrypoint, interrupt, task
from checkpoints import InMemorySaver

CALLS = []


@task
def draft(topic: str) -> str:
    CALLS.append(topic)
    return topic + " essay"


@task
def score(text: str) -> int:
    return len(text)


@entrypoint()
def flow(inputs: dict) -> dict:
    text = draft(inputs["topic"]).result()
    verdict = interrupt({"approve": text})
    return {"text": text, "score": score(text).result(), "verdict": verdict}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A project whose langgraph.json points at an entrypoint; its imports are undone after."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    modules = set(sys.modules)
    (tmp_path / "flow.py").write_text(textwrap.dedent(FLOW))
    (tmp_path / "langgraph.json").write_text(
        json.dumps({"dependencies": ["."], "graphs": {"flow": "./flow.py:flow"}})
    )
    yield tmp_path / "langgraph.json"
    for name in set(sys.modules) - modules:
        del sys.modules[name]


@pytest.fixture
def http(serve_app: Callable[..., Served], project: Path, tmp_path: Path) -> Iterator[httpx.Client]:
    settings = load_settings(project)
    server = serve_app(graphs=settings.graphs, data_dir=tmp_path / ".graphrun")
    with httpx.Client(base_url=server.url, timeout=10) as client:
        yield client


def _calls(http: httpx.Client) -> list[str]:
    module = next(m for m in sys.modules.values() if hasattr(m, "CALLS") and hasattr(m, "flow"))
    return list(module.CALLS)


def test_wait_interrupt_then_stream_resume(http: httpx.Client) -> None:
    thread_id = http.post("/threads", json={}).json()["thread_id"]
    waited = http.post(f"/threads/{thread_id}/runs/wait",
                       json={"assistant_id": "flow", "input": {"topic": "cats"}})
    assert waited.status_code == 200, waited.text
    [pending] = waited.json()["__interrupt__"]
    assert pending["value"] == {"approve": "cats essay"}
    state = http.get(f"/threads/{thread_id}/state").json()
    assert state["next"] == ["flow"] and state["values"] is None
    assert http.get(f"/threads/{thread_id}").json()["status"] == "interrupted"

    response, raw = stream(http, f"/threads/{thread_id}/runs/stream", {
        "assistant_id": "flow", "command": {"resume": "yes"},
        "stream_mode": ["updates", "values"],
    })
    assert response.status_code == 200
    got = [(e["event"], e["data"]) for e in events(raw)][1:]
    final = {"text": "cats essay", "score": 10, "verdict": "yes"}
    assert got == [("values", None), ("updates", {"score": 10}), ("updates", {"flow": final}),
                   ("values", final)]
    assert _calls(http) == ["cats"]  # the finished task was not run again on resume
    assert http.get(f"/threads/{thread_id}/state").json()["values"] == final
    history = http.post(f"/threads/{thread_id}/history", json={}).json()
    assert [h["metadata"]["source"] for h in history] == ["loop", "input"]


def test_stateless_stream_of_task_updates(http: httpx.Client) -> None:
    response, raw = stream(http, "/runs/stream", {
        "assistant_id": "flow", "input": {"topic": "dogs"}, "stream_mode": ["updates", "tasks"],
    })
    assert response.status_code == 200
    got = [(e["event"], e["data"]) for e in events(raw)][1:]
    assert got[0][0] == "tasks" and got[0][1]["name"] == "flow"
    assert ("updates", {"draft": "dogs essay"}) in got
    [stop] = [data for event, data in got if event == "updates" and "__interrupt__" in data]
    assert stop["__interrupt__"][0]["value"] == {"approve": "dogs essay"}
    assert got[-1][0] == "tasks" and got[-1][1]["interrupts"]  # the entrypoint's own result


def test_schemas_and_graph(http: httpx.Client) -> None:
    assistant = assistant_id_for("flow")
    graph = http.get(f"/assistants/{assistant}/graph")
    assert graph.status_code == 200
    body = graph.json()
    assert {n["id"] for n in body["nodes"]} == {"__start__", "flow", "__end__"}
    edges = {(e["source"], e["target"], e.get("conditional", False)) for e in body["edges"]}
    assert edges == {("__start__", "flow", False), ("flow", "__end__", True)}
    schemas = http.get(f"/assistants/{assistant}/schemas")
    assert schemas.status_code == 200, schemas.text
    state: dict[str, Any] = schemas.json()["state_schema"]
    assert list(state["properties"]) == ["__end__"]
