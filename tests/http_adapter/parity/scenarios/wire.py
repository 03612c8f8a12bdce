"""What other clients' suites and LangChain's templates saw differ on the wire (issue 31, items
6-13)."""

from __future__ import annotations

from ..registry import scenario, wait_status
from ..transcript import Session


def _thread(s: Session) -> str:
    return s.call("threads.create", s.sdk.threads.create)["thread_id"]


@scenario
def wire_custom_routes_in_openapi(s: Session) -> None:
    """Item 7: the `http.app` routes are listed in /openapi.json."""
    s.request("GET", "/custom/hello")
    paths = s.http.get("/openapi.json").json()["paths"]
    s.note("custom paths", {path: paths[path] for path in sorted(paths) if path.startswith("/custom")})


@scenario
def wire_join_stateless_background(s: Session) -> None:
    """Item 8: a background stateless run can be joined (before or after it ended)."""
    run = s.call("create", s.sdk.runs.create, None, "router", input={"x": 1})
    s.call("join", s.sdk.runs.join, run["thread_id"], run["run_id"])
    s.call("join again", s.sdk.runs.join, run["thread_id"], run["run_id"])


@scenario
def wire_join_stream_before_output(s: Session) -> None:
    """Item 9: joining the stream of a run that has produced nothing yet starts with metadata."""
    tid = _thread(s)
    first = s.sdk.runs.create(tid, "agent", input={"x": 1, "sleep": 2})
    wait_status(lambda: s.sdk.runs.get(tid, first["run_id"]), ("running",))
    queued = s.call("enqueue", s.sdk.runs.create, tid, "router", input={"x": 1},
                    multitask_strategy="enqueue")
    s.call("join stream", s.sdk.runs.join_stream, tid, queued["run_id"])


@scenario
def wire_graph_id_of_later_assistant(s: Session) -> None:
    """Item 10: a run's metadata names its own assistant's graph, not the thread's first."""
    tid = _thread(s)
    s.sdk.runs.wait(tid, "agent", input={"x": 2})
    run = s.sdk.runs.create(tid, "router", input={"x": 1})
    s.sdk.runs.join(tid, run["run_id"])
    s.call("run", s.sdk.runs.get, tid, run["run_id"])
    s.call("thread", s.sdk.threads.get, tid)
    s.call("state", s.sdk.threads.get_state, tid)


@scenario
def wire_events_subgraphs(s: Session) -> None:
    """Item 11: `events` with subgraphs, inner graph events in the reference's order."""
    tid = _thread(s)
    s.call("stream", s.sdk.runs.stream, tid, "agent", input={"x": 1}, stream_mode="events",
           stream_subgraphs=True)


@scenario
def wire_output_schema_runs(s: Session) -> None:
    """Item 12: a graph with an output schema answers only the output keys."""
    tid = _thread(s)
    s.call("wait", s.sdk.runs.wait, tid, "answer", input={"x": 1})
    s.call("wait stateless", s.sdk.runs.wait, None, "answer", input={"x": 1})
    s.call("stream", s.sdk.runs.stream, tid, "answer", input={"x": 1},
           stream_mode=["values", "updates"])
    s.call("state", s.sdk.threads.get_state, tid)


@scenario
def wire_output_schema_assistant(s: Session) -> None:
    """Item 12: schemas of a graph with output and context schemas; a compiled graph's name."""
    built_in = s.call("built-in", s.sdk.assistants.search, graph_id="answer")
    s.call("schemas", s.sdk.assistants.get_schemas, built_in[0]["assistant_id"])
    s.call("created", s.sdk.assistants.create, "answer")
    tid = s.sdk.threads.create()["thread_id"]
    s.sdk.runs.wait(tid, "answer", input={"x": 1})
    s.call("thread", s.sdk.threads.get, tid)


@scenario
def wire_copied_thread_get(s: Session) -> None:
    """Item 13: a copied thread's GET has no `values: null`."""
    tid = _thread(s)
    copied = s.call("copy empty", s.sdk.threads.copy, tid)
    s.request("GET", f"/threads/{copied['thread_id']}")
    s.sdk.runs.wait(tid, "router", input={"x": 1})
    copied = s.call("copy", s.sdk.threads.copy, tid)
    s.request("GET", f"/threads/{copied['thread_id']}")
