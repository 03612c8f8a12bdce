"""Issue 31 items 1-5 through the real `langgraph-sdk` client, on SQLite and PostgreSQL + Redis:
a run's `context` built into the graph's context schema, every graph factory form, a graph that
fails to load, a thread deleted during a run, and what a cancelled run reads at once."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.errors import APIStatusError

from . import graphs_issue31 as g31
from .conftest import Served, wait_for

pytestmark = pytest.mark.backends("sqlite", "postgres")




@pytest.fixture
def served(serve_app: Callable[..., Served]) -> Served:
    return serve_app(graphs=g31.GRAPHS)


@pytest.fixture
def client(served: Served) -> Any:
    return get_sync_client(url=served.url, api_key=None)


def _seen(client: Any, assistant: str, **kwargs: Any) -> list[Any]:
    thread = client.threads.create()
    return client.runs.wait(thread["thread_id"], assistant, input={}, **kwargs)["seen"]


# -- 1. context ------------------------------------------------------------------------------


def test_context_is_built_into_the_graph_context_schema(client: Any) -> None:
    assert _seen(client, "ctx") == ["Ctx(model='default')", None]
    assert _seen(client, "ctx", context={"model": "m"}) == ["Ctx(model='m')", "m"]
    # configurable stands for context when no context is given; keys the schema lacks are
    # left out (as the reference filters them by the context schema)
    assert _seen(client, "ctx", config={"configurable": {"model": "c", "other": 1}}) == [
        "Ctx(model='c')", "c"]


def test_assistant_context_merges_with_the_run_context(client: Any) -> None:
    assistant = client.assistants.create("ctx", context={"model": "a"})
    assert _seen(client, assistant["assistant_id"]) == ["Ctx(model='a')", "a"]
    assert _seen(client, assistant["assistant_id"], context={"model": "r"}) == [
        "Ctx(model='r')", "r"]


# -- 2. graph factories ----------------------------------------------------------------------


def test_every_factory_form_serves_runs(client: Any) -> None:
    assert _seen(client, "no_args") == ["no_args"]
    assert _seen(client, "with_config", config={"configurable": {"model": "q"}}) == ["config:q"]
    assert _seen(client, "with_runtime") == ["runtime:threads.create_run"]
    assert _seen(client, "with_both", context={"model": "z"}) == [
        "both:threads.create_run:{'model': 'z'}:z"]
    assert _seen(client, "async_factory") == ["async"]
    g31.EXITED.clear()
    assert _seen(client, "managed") == ["managed:threads.create_run:True"]
    assert "threads.create_run" in g31.EXITED  # the context manager was left after the run


def test_every_factory_form_answers_graph_and_schemas(client: Any) -> None:
    for graph_id in g31.FACTORIES:
        assistant = client.assistants.search(graph_id=graph_id)[0]["assistant_id"]
        drawn = client.assistants.get_graph(assistant)
        assert "tag" in {node["id"] for node in drawn["nodes"]}, graph_id
        assert client.assistants.get_schemas(assistant)["graph_id"] == graph_id


# -- 3. a graph that fails to load -----------------------------------------------------------


def test_a_graph_that_fails_to_load_ends_its_run_and_frees_the_thread(client: Any) -> None:
    thread_id = client.threads.create()["thread_id"]
    run = client.runs.create(thread_id, "broken", input={})
    joined = client.runs.join(thread_id, run["run_id"])
    ended = client.runs.get(thread_id, run["run_id"])
    assert ended["status"] == "error", ended
    assert "the model key is missing" in str(joined)
    thread = client.threads.get(thread_id)
    assert thread["status"] == "error"
    assert "the model key is missing" in thread["error"]["message"]
    after = client.runs.wait(thread_id, "hold", input={})  # the thread takes the next run
    assert after["seen"] == ["held"]


def test_graph_and_schemas_of_a_graph_that_fails_to_load_name_the_cause(
    served: Served, client: Any
) -> None:
    assistant = client.assistants.search(graph_id="broken")[0]["assistant_id"]
    for path in ("graph", "schemas", "subgraphs"):
        response = httpx.get(f"{served.url}/assistants/{assistant}/{path}")
        assert response.status_code >= 400, (path, response.text)
        assert "the model key is missing" in response.json()["detail"], (path, response.text)


# -- 4. a thread deleted during a run --------------------------------------------------------


def _workers_active(served: Served) -> int:
    return httpx.get(f"{served.url}/metrics", params={"format": "json"}).json()["workers"][
        "active"]


def test_a_thread_deleted_during_a_run_stays_deleted(served: Served, client: Any) -> None:
    thread_id = client.threads.create()["thread_id"]
    run = client.runs.create(thread_id, "hold", input={"wait": True})
    wait_for(lambda: client.runs.get(thread_id, run["run_id"])["status"] == "running")
    client.threads.delete(thread_id)
    wait_for(lambda: _workers_active(served) == 0)  # the cancelled run has ended
    with pytest.raises(APIStatusError) as gone:
        client.threads.get(thread_id)
    assert gone.value.response.status_code == 404
    assert client.threads.search(ids=[thread_id]) == []
    assert thread_id not in {t["thread_id"] for t in client.threads.search(limit=100)}


# -- 5. cancel -------------------------------------------------------------------------------


def test_cancel_without_waiting_reads_interrupted_at_once(client: Any) -> None:
    thread_id = client.threads.create()["thread_id"]
    run = client.runs.create(thread_id, "hold", input={"wait": True})
    wait_for(lambda: client.runs.get(thread_id, run["run_id"])["status"] == "running")
    client.runs.cancel(thread_id, run["run_id"], wait=False)
    assert client.runs.get(thread_id, run["run_id"])["status"] == "interrupted"
    client.runs.join(thread_id, run["run_id"])
    assert client.runs.get(thread_id, run["run_id"])["status"] == "interrupted"


def _cancelled_while_running(client: Any, thread_id: str, action: str) -> None:
    run = client.runs.create(thread_id, "hold", input={"wait": True})
    wait_for(lambda: client.runs.get(thread_id, run["run_id"])["status"] == "running")
    # `hold` has started and its step is saved (so an interrupted thread waits there)
    wait_for(lambda: client.threads.get_state(thread_id)["next"] == ["hold"])
    client.runs.cancel(thread_id, run["run_id"], wait=True, action=action)


def test_cancel_with_rollback_leaves_the_thread_idle(client: Any) -> None:
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, "hold", input={})
    _cancelled_while_running(client, thread_id, "interrupt")  # the thread waits at `hold`
    assert client.threads.get(thread_id)["status"] == "interrupted"
    _cancelled_while_running(client, thread_id, "rollback")
    thread = client.threads.get(thread_id)
    # the reference ends a rolled-back run with no checkpoint of its own: the thread is idle
    assert thread["status"] == "idle", thread
    assert thread["values"] == {"seen": ["held"], "wait": True}  # the interrupted run's input

