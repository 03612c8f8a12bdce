"""Threads: create/get/patch/delete, search/count, state, history, copy, update state."""

from __future__ import annotations

from ..registry import scenario
from ..transcript import Session

_MISSING = "00000000-0000-4000-8000-000000000000"


def _thread(s: Session, **kwargs: object) -> str:
    return s.call("threads.create", s.sdk.threads.create, **kwargs)["thread_id"]


@scenario
def threads_create_get(s: Session) -> None:
    tid = _thread(s, metadata={"owner": "me"})
    s.call("threads.get", s.sdk.threads.get, tid)
    s.request("GET", f"/threads/{tid}")


@scenario
def threads_create_if_exists(s: Session) -> None:
    tid = "22222222-3333-4444-8555-666666666666"
    _thread(s, thread_id=tid, metadata={"n": 1})
    s.call("do_nothing", s.sdk.threads.create, thread_id=tid, metadata={"n": 2}, if_exists="do_nothing")
    s.request("POST", "/threads", json={"thread_id": tid})


@scenario
def threads_create_with_graph_and_supersteps(s: Session) -> None:
    tid = s.call("create supersteps", s.sdk.threads.create, graph_id="agent", supersteps=[
        {"updates": [{"values": {"x": 5}, "as_node": "a"}]},
    ])["thread_id"]
    s.call("state", s.sdk.threads.get_state, tid)


@scenario
def threads_patch(s: Session) -> None:
    tid = _thread(s, metadata={"a": 1})
    s.call("update", s.sdk.threads.update, tid, metadata={"b": 2})
    s.request("PATCH", f"/threads/{_MISSING}", json={"metadata": {}})


@scenario
def threads_delete(s: Session) -> None:
    tid = _thread(s)
    s.request("DELETE", f"/threads/{tid}")
    s.request("GET", f"/threads/{tid}")
    s.request("DELETE", f"/threads/{tid}")


@scenario
def threads_404_and_bad_uuid(s: Session) -> None:
    s.request("GET", f"/threads/{_MISSING}")
    s.request("GET", f"/threads/{_MISSING}/state")
    s.request("GET", "/threads/not-a-uuid")
    s.request("POST", f"/threads/{_MISSING}/history", json={})


@scenario
def threads_search(s: Session) -> None:
    for n in (1, 2, 3):
        tid = _thread(s, metadata={"suite": "search", "n": n})
        if n == 2:
            s.sdk.runs.wait(tid, "agent", input={"x": n})
    s.call("by metadata", s.sdk.threads.search, metadata={"suite": "search"})
    s.call("by status", s.sdk.threads.search, metadata={"suite": "search"}, status="idle")
    s.call("sorted paged", s.sdk.threads.search, metadata={"suite": "search"}, sort_by="created_at",
           sort_order="asc", limit=2, offset=1)
    s.request("POST", "/threads/search", json={"metadata": {"suite": "search"}, "limit": 1,
                                               "select": ["thread_id", "status"]})


@scenario
def threads_count(s: Session) -> None:
    for n in (1, 2):
        _thread(s, metadata={"suite": "count", "n": n})
    s.call("count metadata", s.sdk.threads.count, metadata={"suite": "count"})
    s.call("count status", s.sdk.threads.count, status="idle")


@scenario
def threads_state_after_run(s: Session) -> None:
    tid = _thread(s)
    s.call("wait", s.sdk.runs.wait, tid, "agent", input={"x": 1}, metadata={"source": "test"})
    s.call("state", s.sdk.threads.get_state, tid)
    s.call("thread", s.sdk.threads.get, tid)


@scenario
def threads_state_empty(s: Session) -> None:
    tid = _thread(s)
    s.call("state", s.sdk.threads.get_state, tid)
    s.call("history", s.sdk.threads.get_history, tid)


@scenario
def threads_history(s: Session) -> None:
    tid = _thread(s)
    s.sdk.runs.wait(tid, "router", input={"x": 1})
    history = s.call("history", s.sdk.threads.get_history, tid)
    s.call("history limit", s.sdk.threads.get_history, tid, limit=2)
    s.call("history before", s.sdk.threads.get_history, tid,
           before={"configurable": {"checkpoint_id": history[1]["checkpoint"]["checkpoint_id"]}})
    s.call("history metadata", s.sdk.threads.get_history, tid, metadata={"step": 1})
    s.request("GET", f"/threads/{tid}/history", params={"limit": 1})


@scenario
def threads_state_at_checkpoint(s: Session) -> None:
    tid = _thread(s)
    s.sdk.runs.wait(tid, "router", input={"x": 2})
    history = s.sdk.threads.get_history(tid)
    checkpoint_id = history[-2]["checkpoint"]["checkpoint_id"]
    s.call("state at", s.sdk.threads.get_state, tid, checkpoint_id=checkpoint_id)
    s.request("GET", f"/threads/{tid}/state/{checkpoint_id}")
    s.request("POST", f"/threads/{tid}/state/checkpoint",
              json={"checkpoint": {"checkpoint_id": checkpoint_id}})


@scenario
def threads_interrupted_state(s: Session) -> None:
    tid = _thread(s)
    s.call("wait", s.sdk.runs.wait, tid, "agent", input={"ask": True})
    s.call("thread", s.sdk.threads.get, tid)
    s.call("state", s.sdk.threads.get_state, tid)


@scenario
def threads_state_subgraphs(s: Session) -> None:
    tid = _thread(s)
    s.call("wait", s.sdk.runs.wait, tid, "nested", input={"ask": True})
    s.call("state", s.sdk.threads.get_state, tid)
    s.call("state subgraphs", s.sdk.threads.get_state, tid, subgraphs=True)


@scenario
def threads_error_status(s: Session) -> None:
    tid = _thread(s)
    s.request("POST", f"/threads/{tid}/runs/wait", json={"assistant_id": "agent", "input": {"fail": True}})
    s.call("thread", s.sdk.threads.get, tid)
    s.call("state", s.sdk.threads.get_state, tid)


@scenario
def threads_update_state(s: Session) -> None:
    tid = _thread(s)
    s.sdk.runs.wait(tid, "agent", input={"x": 1})
    s.call("update values", s.sdk.threads.update_state, tid, {"x": 40})
    s.call("update as_node", s.sdk.threads.update_state, tid, {"log": ["manual"]}, as_node="c")
    s.call("state", s.sdk.threads.get_state, tid)
    s.call("history", s.sdk.threads.get_history, tid, limit=2)


@scenario
def threads_update_state_then_resume(s: Session) -> None:
    tid = _thread(s)
    s.sdk.runs.wait(tid, "agent", input={"ask": True})
    s.call("update as b", s.sdk.threads.update_state, tid, {"answer": "manual", "log": ["b:manual"]},
           as_node="b")
    s.call("state", s.sdk.threads.get_state, tid)
    s.call("continue", s.sdk.runs.wait, tid, "agent", input=None)


@scenario
def threads_update_state_errors(s: Session) -> None:
    tid = _thread(s)
    s.request("POST", f"/threads/{tid}/state", json={"values": {"x": 1}})
    s.sdk.runs.wait(tid, "agent", input={"x": 1})
    s.request("POST", f"/threads/{tid}/state", json={"values": {"x": 1}, "as_node": "nope"})


@scenario
def threads_copy(s: Session) -> None:
    tid = _thread(s, metadata={"k": "v"})
    s.call("copy empty", s.sdk.threads.copy, tid)
    s.sdk.runs.wait(tid, "router", input={"x": 1})
    copied = s.call("copy", s.sdk.threads.copy, tid)
    s.call("copied state", s.sdk.threads.get_state, copied["thread_id"])
    s.call("copied history", s.sdk.threads.get_history, copied["thread_id"])
    s.request("POST", f"/threads/{_MISSING}/copy")
