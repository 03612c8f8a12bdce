"""Issue 31 items 1-5: context built into the context schema, graph factories of every form,
a graph that fails to load, a thread deleted during a run, what a cancel reads at once."""

from __future__ import annotations

from ..registry import scenario, wait_status
from ..transcript import Session


def _thread(s: Session) -> str:
    return s.call("threads.create", s.sdk.threads.create)["thread_id"]


def _seen(s: Session, label: str, assistant: str, **kwargs: object) -> None:
    s.call(label, s.sdk.runs.wait, _thread(s), assistant, input={}, **kwargs)


@scenario
def issue31_context(s: Session) -> None:
    _seen(s, "no context", "i31_ctx")
    _seen(s, "context", "i31_ctx", context={"model": "m"})
    _seen(s, "configurable", "i31_ctx", config={"configurable": {"model": "c", "other": 1}})
    assistant = s.call("assistant", s.sdk.assistants.create, "i31_ctx", context={"model": "a"})
    _seen(s, "assistant context", assistant["assistant_id"])
    _seen(s, "assistant and run context", assistant["assistant_id"], context={"model": "r"})


@scenario
def issue31_factories(s: Session) -> None:
    _seen(s, "config", "i31_with_config", config={"configurable": {"model": "q"}})
    _seen(s, "runtime", "i31_with_runtime")
    _seen(s, "both", "i31_with_both", context={"model": "z"})
    _seen(s, "managed", "i31_managed")
    for graph_id, path in (("i31_with_both", "graph"), ("i31_managed", "schemas")):
        found = s.sdk.assistants.search(graph_id=graph_id, metadata={"created_by": "system"})
        s.request("GET", f"/assistants/{found[0]['assistant_id']}/{path}")


@scenario
def issue31_graph_fails_to_load(s: Session) -> None:
    tid = _thread(s)
    run = s.call("create", s.sdk.runs.create, tid, "i31_broken", input={})
    s.note("run status", wait_status(lambda: s.sdk.runs.get(tid, run["run_id"]),
                                     ("success", "error", "interrupted")))
    s.note("thread status", wait_status(lambda: s.sdk.threads.get(tid), ("idle", "error")))
    s.note("thread error", s.sdk.threads.get(tid)["error"])
    s.call("next run", s.sdk.runs.wait, tid, "i31_hold", input={})


@scenario
def issue31_delete_thread_during_run(s: Session) -> None:
    tid = _thread(s)
    # the reference lets the run of a deleted thread go on: it ends by itself, soon, so that
    # the next scenarios do not wait behind it
    run = s.call("create", s.sdk.runs.create, tid, "i31_hold", input={"wait": 3})
    s.note("run status", wait_status(lambda: s.sdk.runs.get(tid, run["run_id"]), ("running",)))
    s.request("DELETE", f"/threads/{tid}")
    s.request("GET", f"/threads/{tid}")
    s.call("search", s.sdk.threads.search, ids=[tid])


@scenario
def issue31_cancel_reads_at_once(s: Session) -> None:
    tid = _thread(s)
    run = s.call("create", s.sdk.runs.create, tid, "i31_hold", input={"wait": True})
    s.note("run status", wait_status(lambda: s.sdk.runs.get(tid, run["run_id"]), ("running",)))
    s.request("POST", f"/threads/{tid}/runs/{run['run_id']}/cancel", params={"wait": "0"})
    s.call("get at once", s.sdk.runs.get, tid, run["run_id"])


@scenario
def issue31_cancel_rollback_idle(s: Session) -> None:
    tid = _thread(s)
    s.call("first", s.sdk.runs.wait, tid, "i31_hold", input={})
    for action in ("interrupt", "rollback"):
        run = s.call(action, s.sdk.runs.create, tid, "i31_hold", input={"wait": True})
        wait_status(lambda: s.sdk.runs.get(tid, run["run_id"]), ("running",))
        wait_status(lambda: {"status": s.sdk.threads.get_state(tid)["next"]}, (["hold"],))
        s.call(f"cancel {action}", s.sdk.runs.cancel, tid, run["run_id"], wait=True,
               action=action)
        s.call(f"thread after {action}", s.sdk.threads.get, tid)
