"""A `create_react_agent` graph served by the agent server (issue 17), driven by the official
`langgraph-sdk` client: streamed updates and message tuples, and human review before tools."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph_sdk import get_sync_client

from engine.prebuilt import create_react_agent
from tests.engine.fake_chat import FakeToolModel, ai

from .conftest import Served

# Issue 19 §11: every test here runs on SQLite and on PostgreSQL + Redis (conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgres")


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def agent(**kw: Any) -> Any:
    model = FakeToolModel(script=[
        ai("", ("add", {"a": 2, "b": 3}, "c1"), id="m1"), AIMessage("2 + 3 = 5", id="m2"),
    ])
    return create_react_agent(model, [add], **kw)


def test_agent_streams_updates_and_message_tuples(serve_app: Any) -> None:
    served: Served = serve_app(graphs={"react": agent()})
    client = get_sync_client(url=served.url)
    thread = client.threads.create()["thread_id"]
    parts = list(client.runs.stream(
        thread, "react", input={"messages": [{"role": "user", "content": "2 + 3?"}]},
        stream_mode=["updates", "messages-tuple"],
    ))
    updates = [p.data for p in parts if p.event == "updates"]
    assert [next(iter(u)) for u in updates] == ["agent", "tools", "agent"]
    assert updates[1]["tools"]["messages"][0]["content"] == "5"
    tuples = [p.data for p in parts if p.event == "messages"]
    assert [(m["type"], meta["langgraph_node"]) for m, meta in tuples] == [
        ("ai", "agent"), ("tool", "tools"), ("ai", "agent"),
    ]
    state = client.threads.get_state(thread)
    assert state["values"]["messages"][-1]["content"] == "2 + 3 = 5"
    assert "remaining_steps" not in state["values"]


def test_agent_pauses_before_tools_and_resumes(serve_app: Any) -> None:
    served: Served = serve_app(graphs={"react": agent(interrupt_before=["tools"])})
    client = get_sync_client(url=served.url)
    thread = client.threads.create()["thread_id"]
    client.runs.wait(thread, "react", input={"messages": [{"role": "user", "content": "2+3?"}]})
    paused = client.threads.get_state(thread)
    assert paused["next"] == ["tools"]
    assert paused["values"]["messages"][-1]["tool_calls"][0]["args"] == {"a": 2, "b": 3}
    done = client.runs.wait(thread, "react", input=None)
    assert [m["content"] for m in done["messages"]][-2:] == ["5", "2 + 3 = 5"]
