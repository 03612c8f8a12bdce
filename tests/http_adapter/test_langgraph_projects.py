"""Unmodified LangGraph projects served on graphrun's agent server (issue 28 item 1).

Each project under `langgraph_projects/` imports the real `langgraph` (and `langchain`); it is
loaded from its own `langgraph.json` as `graphrun dev` loads it, served on a real uvicorn server
and driven through `langgraph-sdk`: streams, interrupts, a resume, a second turn, history and a
fork. LangGraph's runtime executes these graphs; their threads live in graphrun's saver.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client

from http_adapter.agent_server.settings import Settings
from http_adapter.config import load_settings

from .conftest import Served

PROJECTS = Path(__file__).parent / "langgraph_projects"


def project(tmp_path: Path, name: str, engine: str | None = None) -> Settings:
    """The project `name`, copied to a fresh directory and loaded as `graphrun dev` loads it
    (`engine`: its `--engine`)."""
    root = tmp_path / name
    shutil.copytree(PROJECTS / name, root)
    return load_settings(root / "langgraph.json", engine=engine)


# issue 28 item 2: the projects that use only LangGraph's public API run on graphrun's engine
# with `--engine graphrun`, unchanged, and answer the same
ENGINES = pytest.mark.parametrize("engine", ["auto", "graphrun"])


def built_by(settings: Settings, engine: str) -> None:
    module = type(next(iter(settings.graphs.values()))).__module__.split(".")[0]
    assert module == ("engine" if engine == "graphrun" else "langgraph")


def events(parts: Any) -> list[tuple[str, Any]]:
    return [(part.event, part.data) for part in parts if part.event != "metadata"]


def last(found: list[tuple[str, Any]], name: str) -> Any:
    return [data for event, data in found if event == name][-1]


# -- a template-shaped project: Context dataclass, subgraph, human review ----------------------


@pytest.mark.backends("sqlite", "postgres")
@ENGINES
def test_template_project_serves_unchanged(tmp_path: Path, serve_app: Callable[..., Served],
                                           engine: str, backend: str) -> None:
    if engine == "graphrun" and backend == "postgres":
        pytest.skip("graphrun's engine on PostgreSQL is the rest of the suite's subject")
    settings = project(tmp_path, "template", engine)
    built_by(settings, engine)
    assert any("env file not found" in w for w in settings.extra["start_warnings"])
    client = get_sync_client(url=serve_app(settings).url)
    assistant = client.assistants.search(graph_id="agent")[0]
    assert assistant["name"] == "Template Graph"
    schemas = client.assistants.get_schemas(assistant["assistant_id"])
    assert schemas["context_schema"]["title"] == "Context"
    assert set(schemas["state_schema"]["properties"]) == {"topic", "notes", "summary", "verdict"}
    drawing = client.assistants.get_graph(assistant["assistant_id"])
    assert {n["id"] for n in drawing["nodes"]} >= {"draft", "polish", "review"}
    assert list(client.assistants.get_subgraphs(assistant["assistant_id"])) == ["polish"]

    thread = client.threads.create()
    tid = thread["thread_id"]
    first = events(client.runs.stream(
        tid, "agent", input={"topic": "tides"}, context={"greeting": "Hi"},
        stream_mode=["values", "updates"], stream_subgraphs=True,
    ))
    assert any(e.startswith("updates|polish:") for e, _ in first), first  # the subgraph's own
    asked = last(first, "values")["__interrupt__"][0]
    assert asked["value"] == {"question": "Publish these notes?", "notes": ["Hi, tides"],
                              "summary": "polished 1 note(s)"}
    assert client.threads.get(tid)["status"] == "interrupted"
    state = client.threads.get_state(tid)
    assert state["next"] == ["review"] and state["interrupts"][0]["id"] == asked["id"]

    done = client.runs.wait(tid, "agent", command={"resume": "yes"})
    assert done["verdict"] == "yes"
    assert client.threads.get(tid)["status"] == "idle"

    # a second turn on the same thread: notes accumulate through the reducer
    second = client.runs.wait(tid, "agent", input={"topic": "waves"})
    assert second["__interrupt__"][0]["value"]["notes"] == ["Hi, tides", "Hello, waves"]
    assert second["__interrupt__"][0]["value"]["summary"] == "polished 2 note(s)"
    history = client.threads.get_history(tid, limit=50)
    assert [h["metadata"]["step"] for h in history[:2]] == [7, 6]  # LangGraph counts on
    assert {h["metadata"].get("graph_id") for h in history} == {"agent"}

    # fork: back to the first turn's review, with an edited note, and a different answer
    review = next(h for h in reversed(history) if h["next"] == ["review"])
    forked = client.threads.update_state(tid, {"notes": ["edited"]},
                                         checkpoint_id=review["checkpoint_id"])
    ended = client.runs.wait(tid, "agent", command={"resume": "no"},
                             checkpoint_id=forked["checkpoint_id"])
    assert ended["verdict"] == "no"
    assert ended["notes"] == ["Hi, tides", "edited"]
    latest = client.threads.get_history(tid, limit=1)[0]
    assert latest["values"]["verdict"] == "no"


# -- LangChain 1.x create_agent with a scripted model and a human approval ------------------


def test_create_agent_project_serves_unchanged(tmp_path: Path,
                                               serve_app: Callable[..., Served]) -> None:
    client = get_sync_client(url=serve_app(project(tmp_path, "create_agent")).url)
    assistant = client.assistants.search(graph_id="agent")[0]["assistant_id"]
    nodes = {n["id"] for n in client.assistants.get_graph(assistant)["nodes"]}
    assert {"model", "tools"} <= nodes
    tid = client.threads.create()["thread_id"]
    ask = {"messages": [{"role": "user", "content": "Weather in Oslo?"}]}
    first = events(client.runs.stream(tid, "agent", input=ask,
                                      stream_mode=["messages-tuple", "updates"]))
    message, meta = last(first, "messages")
    assert message["tool_calls"][0]["args"] == {"city": "Oslo"}
    assert meta["langgraph_node"] == "model" and meta["graph_id"] == "agent"
    request = last(first, "updates")["__interrupt__"][0]["value"]["action_requests"][0]
    assert request["name"] == "lookup_weather"
    assert client.threads.get(tid)["status"] == "interrupted"

    approved = client.runs.wait(tid, "agent",
                                command={"resume": {"decisions": [{"type": "approve"}]}})
    kinds = [(m["type"], m["content"]) for m in approved["messages"]]
    assert kinds[2:] == [("tool", "It is sunny in Oslo."), ("ai", "Oslo is sunny today.")]

    # the second turn streams its answer token by token
    tokens = events(client.runs.stream(
        tid, "agent", input={"messages": [{"role": "user", "content": "Thanks!"}]},
        stream_mode="messages"))
    partial = [data[0]["content"] for event, data in tokens if event == "messages/partial"]
    assert len(partial) > 1 and partial[-1] == "You are welcome."
    state = client.threads.get_state(tid)
    assert [m["type"] for m in state["values"]["messages"]] == [
        "human", "ai", "tool", "ai", "human", "ai"]
    history = client.threads.get_history(tid, limit=100)
    assert history[-1]["metadata"]["source"] == "input"
    assert client.threads.get(tid)["status"] == "idle"


# -- the functional API ---------------------------------------------------------------------------


@ENGINES
def test_functional_project_serves_unchanged(tmp_path: Path, serve_app: Callable[..., Served],
                                             engine: str) -> None:
    settings = project(tmp_path, "functional", engine)
    built_by(settings, engine)
    client = get_sync_client(url=serve_app(settings).url)
    tid = client.threads.create()["thread_id"]
    first = events(client.runs.stream(tid, "essay", input={"topic": "rivers"},
                                      stream_mode="updates"))
    assert last(first, "updates")["__interrupt__"][0]["value"]["outline"][0] == (
        "rivers: why it matters")
    assert client.threads.get_state(tid)["next"] == ["essay"]
    done = client.runs.wait(tid, "essay", command={"resume": True})
    assert (done["approved"], done["turns"]) == (True, 1)
    client.runs.wait(tid, "essay", input={"topic": "lakes"})
    again = client.runs.wait(tid, "essay", command={"resume": False})
    assert (again["topic"], again["turns"]) == ("lakes", 2)  # `previous` from our saver
    assert len(client.threads.get_history(tid, limit=50)) >= 4

    # mode `events` (LangGraph's stream has none: the server runs it through astream_events)
    tid = client.threads.create()["thread_id"]
    found = events(client.runs.stream(tid, "essay", input={"topic": "seas"},
                                      stream_mode=["events", "values"]))
    started = [data["name"] for event, data in found
               if event == "events" and data["event"] == "on_chain_start"]
    assert started[0] == "essay" and "outline" in started
    assert last(found, "values")["__interrupt__"][0]["value"]["outline"][0] == (
        "seas: why it matters")
    assert client.threads.get(tid)["status"] == "interrupted"


# -- agent libraries: langgraph-supervisor (a graph factory) and langgraph-swarm (a StateGraph) --


# langgraph-supervisor 0.0.31 builds its supervisor with LangGraph's deprecated create_react_agent
@pytest.mark.filterwarnings("ignore::langgraph.warnings.LangGraphDeprecatedSinceV10")
def test_supervisor_and_swarm_projects_serve_unchanged(
        tmp_path: Path, serve_app: Callable[..., Served]) -> None:
    client = get_sync_client(url=serve_app(project(tmp_path, "multi_agent")).url)
    supervisor = client.assistants.search(graph_id="supervisor")[0]["assistant_id"]
    assert set(client.assistants.get_subgraphs(supervisor)) == {"supervisor", "weather_expert"}
    tid = client.threads.create()["thread_id"]
    ask = {"messages": [{"role": "user", "content": "Rain in Bergen?"}]}
    found = events(client.runs.stream(tid, "supervisor", input=ask, stream_mode="updates",
                                      stream_subgraphs=True))
    expert = [data for event, data in found if event.startswith("updates|weather_expert:")]
    assert expert[1]["tools"]["messages"][0]["content"] == "Rain in Bergen tomorrow."
    said = [(m["name"], m["content"]) for m in client.threads.get_state(tid)["values"]["messages"]
            if m["type"] == "ai" and m["content"]]
    assert said[0] == ("weather_expert", "Bergen will be rainy.")
    assert said[-1] == ("supervisor", "The expert says: rain.")

    tid = client.threads.create()["thread_id"]
    first = client.runs.wait(tid, "swarm", input={"messages": [{"role": "user",
                                                                "content": "Boats?"}]})
    assert first["active_agent"] == "bob"
    assert first["messages"][-1]["content"] == "Bob here: boats float."
    second = client.runs.wait(tid, "swarm", input={"messages": [{"role": "user",
                                                                 "content": "More?"}]})
    assert second["messages"][-1]["content"] == "Bob again: still floating."  # Bob stayed on
    history = client.threads.get_history(tid, limit=100)
    assert {h["metadata"]["run_id"] for h in history if h["metadata"].get("run_id")} == {
        r["run_id"] for r in client.runs.list(tid)}
