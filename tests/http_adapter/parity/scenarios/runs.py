"""Thread runs, multitask strategies, stateless runs, batch (issue 18)."""

from __future__ import annotations

from ..registry import scenario, wait_status
from ..transcript import Session

_MISSING = "00000000-0000-4000-8000-000000000000"


def _thread(s: Session) -> str:
    return s.call("threads.create", s.sdk.threads.create)["thread_id"]


def _running(s: Session, tid: str, rid: str) -> str:
    """Wait (unrecorded) until the run has started and saved its input checkpoint."""
    status = wait_status(lambda: s.sdk.runs.get(tid, rid), ("running", "success", "error"))
    wait_status(lambda: {"status": "saved" if s.sdk.threads.get_state(tid)["values"] else "no"},
                ("saved",))
    return status


@scenario
def runs_create_join_get_list(s: Session) -> None:
    tid = _thread(s)
    run = s.call("create", s.sdk.runs.create, tid, "agent", input={"x": 1}, metadata={"m": 1})
    s.call("join", s.sdk.runs.join, tid, run["run_id"])
    s.call("get", s.sdk.runs.get, tid, run["run_id"])
    s.call("list", s.sdk.runs.list, tid)
    s.call("list status", s.sdk.runs.list, tid, status="success", limit=1)


@scenario
def runs_create_raw(s: Session) -> None:
    tid = _thread(s)
    run = s.request("POST", f"/threads/{tid}/runs", json={"assistant_id": "agent", "input": {"x": 1},
                                                         "config": {"tags": ["t"]}}).json()
    s.request("GET", f"/threads/{tid}/runs/{run['run_id']}/join")
    s.request("GET", f"/threads/{tid}/runs/{run['run_id']}")


@scenario
def runs_wait(s: Session) -> None:
    tid = _thread(s)
    s.call("wait", s.sdk.runs.wait, tid, "agent", input={"x": 3})
    s.request("POST", f"/threads/{tid}/runs/wait", json={"assistant_id": "router", "input": {"x": 1}})


@scenario
def runs_wait_error(s: Session) -> None:
    tid = _thread(s)
    s.request("POST", f"/threads/{tid}/runs/wait", json={"assistant_id": "agent", "input": {"fail": True}})
    s.call("runs", s.sdk.runs.list, tid)


@scenario
def runs_wait_interrupt_resume(s: Session) -> None:
    tid = _thread(s)
    s.call("wait ask", s.sdk.runs.wait, tid, "agent", input={"ask": True})
    s.call("resume", s.sdk.runs.wait, tid, "agent", command={"resume": "yes"})
    s.call("state", s.sdk.threads.get_state, tid)


@scenario
def runs_command_update_goto(s: Session) -> None:
    tid = _thread(s)
    s.call("goto c", s.sdk.runs.wait, tid, "agent", command={"update": {"x": 9}, "goto": "c"})
    s.call("state", s.sdk.threads.get_state, tid)


@scenario
def runs_interrupt_before_after(s: Session) -> None:
    tid = _thread(s)
    s.call("before b", s.sdk.runs.wait, tid, "agent", input={"x": 1}, interrupt_before=["b"])
    s.call("state", s.sdk.threads.get_state, tid)
    s.call("after c", s.sdk.runs.wait, tid, "agent", input=None, interrupt_after=["c"])
    s.call("rest", s.sdk.runs.wait, tid, "agent", input=None)
    s.call("thread", s.sdk.threads.get, tid)


@scenario
def runs_fork_from_checkpoint(s: Session) -> None:
    tid = _thread(s)
    s.sdk.runs.wait(tid, "router", input={"x": 1})
    first = s.sdk.threads.get_history(tid)[-1]["checkpoint"]["checkpoint_id"]
    s.call("fork", s.sdk.runs.wait, tid, "router", input={"x": 2}, checkpoint_id=first)
    s.call("history", s.sdk.threads.get_history, tid)


@scenario
def runs_metadata_in_checkpoints(s: Session) -> None:
    tid = _thread(s)
    s.sdk.runs.wait(tid, "router", input={"x": 1}, metadata={"source": "parity"},
                    config={"configurable": {"user_id": "u1"}})
    s.call("state", s.sdk.threads.get_state, tid)


@scenario
def runs_kwargs(s: Session) -> None:
    tid = _thread(s)
    run = s.call("create", s.sdk.runs.create, tid, "agent", input={"x": 1}, config={"tags": ["k"]},
                 stream_mode=["values", "updates"], interrupt_before=["c"])
    s.sdk.runs.join(tid, run["run_id"])
    s.call("get", s.sdk.runs.get, tid, run["run_id"])


@scenario
def runs_context(s: Session) -> None:
    tid = _thread(s)
    s.call("context", s.sdk.runs.wait, tid, "agent", input={"x": 1}, context={"user": "c"})
    s.request("POST", f"/threads/{tid}/runs/wait", json={
        "assistant_id": "agent", "context": {"a": 1}, "config": {"configurable": {"b": 2}}})


@scenario
def runs_delete(s: Session) -> None:
    tid = _thread(s)
    run = s.sdk.runs.create(tid, "router", input={"x": 1})
    s.sdk.runs.join(tid, run["run_id"])
    s.request("DELETE", f"/threads/{tid}/runs/{run['run_id']}")
    s.request("GET", f"/threads/{tid}/runs/{run['run_id']}")
    s.call("list", s.sdk.runs.list, tid)


@scenario
def runs_errors_404_422(s: Session) -> None:
    tid = _thread(s)
    s.request("GET", f"/threads/{tid}/runs/{_MISSING}")
    s.request("POST", f"/threads/{_MISSING}/runs", json={"assistant_id": "agent"})
    s.request("POST", f"/threads/{tid}/runs", json={"assistant_id": "nope"})
    s.request("POST", f"/threads/{tid}/runs", json={"assistant_id": _MISSING})
    s.request("POST", f"/threads/{tid}/runs", json={"assistant_id": "agent", "stream_mode": "bogus"})
    s.request("POST", f"/threads/{tid}/runs", json={"input": {}})
    s.request("POST", f"/threads/{tid}/runs/{_MISSING}/cancel")
    s.request("GET", f"/threads/{tid}/runs/{_MISSING}/join")


@scenario
def runs_if_not_exists(s: Session) -> None:
    tid = "33333333-4444-4555-8666-777777777777"
    s.request("POST", f"/threads/{tid}/runs/wait", json={"assistant_id": "router", "input": {"x": 1}})
    s.call("create", s.sdk.runs.wait, tid, "router", input={"x": 1}, if_not_exists="create")
    s.call("thread", s.sdk.threads.get, tid)


@scenario
def runs_cancel_interrupt(s: Session) -> None:
    tid = _thread(s)
    run = s.sdk.runs.create(tid, "agent", input={"sleep": 1.0})
    _running(s, tid, run["run_id"])
    s.request("POST", f"/threads/{tid}/runs/{run['run_id']}/cancel", params={"wait": 1})
    s.call("get", s.sdk.runs.get, tid, run["run_id"])
    s.note("thread status", wait_status(lambda: s.sdk.threads.get(tid), ("idle", "error", "interrupted")))


@scenario
def runs_cancel_rollback(s: Session) -> None:
    tid = _thread(s)
    s.sdk.runs.wait(tid, "router", input={"x": 1})
    run = s.sdk.runs.create(tid, "agent", input={"sleep": 1.0})
    _running(s, tid, run["run_id"])
    s.request("POST", f"/threads/{tid}/runs/{run['run_id']}/cancel",
              params={"wait": 1, "action": "rollback"})
    s.request("GET", f"/threads/{tid}/runs/{run['run_id']}")
    s.note("thread status", wait_status(lambda: s.sdk.threads.get(tid), ("idle", "error", "interrupted")))
    s.call("state", s.sdk.threads.get_state, tid)


@scenario
def runs_cancel_no_wait(s: Session) -> None:
    tid = _thread(s)
    run = s.sdk.runs.create(tid, "agent", input={"sleep": 1.0})
    _running(s, tid, run["run_id"])
    s.request("POST", f"/threads/{tid}/runs/{run['run_id']}/cancel")
    s.call("join", s.sdk.runs.join, tid, run["run_id"])
    s.call("get", s.sdk.runs.get, tid, run["run_id"])


@scenario
def runs_cancel_finished(s: Session) -> None:
    tid = _thread(s)
    run = s.sdk.runs.create(tid, "router", input={"x": 1})
    s.sdk.runs.join(tid, run["run_id"])
    s.request("POST", f"/threads/{tid}/runs/{run['run_id']}/cancel", params={"wait": 1})
    s.call("get", s.sdk.runs.get, tid, run["run_id"])


def _queued(s: Session, tid: str, modes: object) -> str:
    """A run that is surely still pending: enqueued behind a running one (unrecorded)."""
    first = s.sdk.runs.create(tid, "agent", input={"sleep": 1.0})
    _running(s, tid, first["run_id"])
    return s.sdk.runs.create(tid, "router", input={"x": 1}, stream_mode=modes)["run_id"]


@scenario
def runs_join_stream(s: Session) -> None:
    tid = _thread(s)
    run_id = _queued(s, tid, ["values", "updates"])
    s.call("join_stream pending", s.sdk.runs.join_stream, tid, run_id)


@scenario
def runs_join_stream_raw(s: Session) -> None:
    tid = _thread(s)
    run_id = _queued(s, tid, "updates")
    s.stream("GET", f"/threads/{tid}/runs/{run_id}/stream")
    s.stream("GET", f"/threads/{tid}/runs/{run_id}/stream")


@scenario
def runs_join_stream_running(s: Session) -> None:
    tid = _thread(s)
    run = s.sdk.runs.create(tid, "agent", input={"sleep": 1.0}, stream_mode=["values", "updates"])
    _running(s, tid, run["run_id"])
    s.call("join_stream running", s.sdk.runs.join_stream, tid, run["run_id"])


@scenario
def runs_join_finished(s: Session) -> None:
    tid = _thread(s)
    run = s.sdk.runs.create(tid, "router", input={"x": 1})
    s.sdk.runs.join(tid, run["run_id"])
    s.call("join again", s.sdk.runs.join, tid, run["run_id"])
    s.call("join_stream after end", s.sdk.runs.join_stream, tid, run["run_id"])


def _busy(s: Session, strategy: str) -> None:
    tid = _thread(s)
    first = s.sdk.runs.create(tid, "agent", input={"sleep": 1.0})
    _running(s, tid, first["run_id"])
    second = s.request("POST", f"/threads/{tid}/runs", json={
        "assistant_id": "router", "input": {"x": 1}, "multitask_strategy": strategy}).json()
    if "run_id" in second:
        s.call("join second", s.sdk.runs.join, tid, second["run_id"])
    s.call("join first", s.sdk.runs.join, tid, first["run_id"])
    s.request("GET", f"/threads/{tid}/runs/{first['run_id']}")
    s.call("state", s.sdk.threads.get_state, tid)


@scenario
def multitask_reject(s: Session) -> None:
    _busy(s, "reject")


@scenario
def multitask_enqueue(s: Session) -> None:
    _busy(s, "enqueue")


@scenario
def multitask_interrupt(s: Session) -> None:
    _busy(s, "interrupt")


@scenario
def multitask_rollback(s: Session) -> None:
    _busy(s, "rollback")


@scenario
def stateless_wait(s: Session) -> None:
    s.call("wait", s.sdk.runs.wait, None, "agent", input={"x": 1})
    s.request("POST", "/runs/wait", json={"assistant_id": "agent", "input": {"fail": True}})
    s.request("POST", "/runs/wait", json={"assistant_id": "agent", "input": {"ask": True}})


@scenario
def stateless_stream(s: Session) -> None:
    s.call("stream", s.sdk.runs.stream, None, "agent", input={"x": 1}, stream_mode=["values", "updates"])
    s.stream("POST", "/runs/stream", json={"assistant_id": "router", "input": {"x": 1}})


@scenario
def stateless_background_join(s: Session) -> None:
    run = s.request("POST", "/runs", json={"assistant_id": "agent", "input": {"sleep": 1.0}}).json()
    s.request("GET", f"/threads/{run['thread_id']}/runs/{run['run_id']}/join")


@scenario
def stateless_on_completion(s: Session) -> None:
    keep = s.sdk.runs.create(None, "router", input={"x": 1}, on_completion="keep")
    s.request("GET", f"/threads/{keep['thread_id']}/runs/{keep['run_id']}/join")
    s.call("kept thread", s.sdk.threads.get, keep["thread_id"])
    gone = s.sdk.runs.create(None, "agent", input={"sleep": 1.0}, on_completion="delete")
    s.request("GET", f"/threads/{gone['thread_id']}/runs/{gone['run_id']}/join")
    wait_status(lambda: _gone(s, gone["thread_id"]), ("gone",))
    s.request("GET", f"/threads/{gone['thread_id']}")


def _gone(s: Session, tid: str) -> dict[str, str]:
    return {"status": "gone" if s.http.get(f"/threads/{tid}").status_code == 404 else "there"}


@scenario
def stateless_errors(s: Session) -> None:
    s.request("POST", "/runs/wait", json={"assistant_id": "nope"})
    s.request("POST", "/runs", json={"assistant_id": "agent", "on_completion": "sometimes"})
    s.request("POST", "/runs/stream", json={"assistant_id": "agent", "multitask_strategy": "x"})


@scenario
def runs_batch(s: Session) -> None:
    runs = s.call("batch", s.sdk.runs.create_batch, [
        {"assistant_id": "router", "input": {"x": 1}, "on_completion": "keep"},
        {"assistant_id": "router", "input": {"x": 2}, "on_completion": "keep"},
    ])
    for run in runs:
        s.request("GET", f"/threads/{run['thread_id']}/runs/{run['run_id']}/join")
    s.request("POST", "/runs/batch", json=[{"assistant_id": "nope"}])
