"""Every stream mode, with and without subgraphs, multi-mode, interrupts over SSE (issue 18)."""

from __future__ import annotations

from typing import Any

from ..registry import scenario
from ..transcript import Session


def _stream(s: Session, graph: str, modes: Any, subgraphs: bool = False, **kwargs: Any) -> None:
    tid = s.call("threads.create", s.sdk.threads.create)["thread_id"]
    kwargs.setdefault("input", {"x": 1})
    s.call(f"stream {modes} subgraphs={subgraphs}", s.sdk.runs.stream, tid, graph,
           stream_mode=modes, stream_subgraphs=subgraphs, **kwargs)


def _chat(**extra: Any) -> dict[str, Any]:
    return {"input": {"messages": [{"type": "human", "content": "hi", "id": "human-1"}]}, **extra}


def _define(name: str, graph: str, modes: Any, subgraphs: bool = False, **kwargs: Any) -> None:
    def run(s: Session) -> None:
        _stream(s, graph, modes, subgraphs, **kwargs)

    run.__name__ = name
    scenario(run)


for _mode in ("values", "updates", "debug", "custom", "tasks", "checkpoints"):
    _define(f"stream_{_mode}", "agent", _mode)
    _define(f"stream_{_mode}_subgraphs", "agent", _mode, True)
_define("stream_updates_nested_subgraphs", "nested", "updates", True)
_define("stream_values_router", "router", "values")
_define("stream_events_router", "router", "events")
_define("stream_multi_mode", "agent", ["values", "updates", "custom"])
_define("stream_multi_mode_subgraphs", "agent", ["updates", "tasks", "checkpoints"], True)
_define("stream_messages_tuple", "chat", "messages-tuple", **_chat())
_define("stream_messages_legacy", "chat", "messages", **_chat())
_define("stream_messages_tuple_bound_model", "chat_bound", "messages-tuple", **_chat())
_define("stream_messages_legacy_bound_model", "chat_bound", "messages", **_chat())
_define("stream_messages_tuple_bound_model_config", "chat_bound_config", "messages-tuple", **_chat())
_define("stream_messages_legacy_bound_model_config", "chat_bound_config", "messages", **_chat())
_define("stream_messages_tuple_bound_model_async", "chat_bound_async", "messages-tuple", **_chat())
_define("stream_messages_legacy_bound_model_async", "chat_bound_async", "messages", **_chat())
_define("stream_messages_and_values", "chat", ["messages-tuple", "values"], **_chat())
_define("stream_events_chat", "chat", "events", **_chat())
_define("stream_error", "agent", ["values", "updates"], input={"fail": True})
_define("stream_debug_interrupt", "agent", "debug", input={"ask": True})


@scenario
def stream_interrupt_and_resume(s: Session) -> None:
    tid = s.call("threads.create", s.sdk.threads.create)["thread_id"]
    s.call("stream ask", s.sdk.runs.stream, tid, "agent", input={"ask": True},
           stream_mode=["values", "updates"])
    s.call("stream resume", s.sdk.runs.stream, tid, "agent", command={"resume": "ok"},
           stream_mode=["values", "updates"])


@scenario
def stream_interrupt_in_subgraph(s: Session) -> None:
    tid = s.call("threads.create", s.sdk.threads.create)["thread_id"]
    s.call("stream ask", s.sdk.runs.stream, tid, "nested", input={"ask": True},
           stream_mode="updates", stream_subgraphs=True)
    s.call("state", s.sdk.threads.get_state, tid, subgraphs=True)
    s.call("stream resume", s.sdk.runs.stream, tid, "nested", command={"resume": "ok"},
           stream_mode="updates", stream_subgraphs=True)


@scenario
def stream_raw_framing(s: Session) -> None:
    tid = s.call("threads.create", s.sdk.threads.create)["thread_id"]
    s.stream("POST", f"/threads/{tid}/runs/stream", json={
        "assistant_id": "router", "input": {"x": 1}, "stream_mode": ["updates", "custom"]})


@scenario
def stream_raw_messages_tuple(s: Session) -> None:
    s.stream("POST", "/runs/stream", json={"assistant_id": "chat", "stream_mode": "messages-tuple",
                                           **_chat()})


@scenario
def stream_resumable_replay(s: Session) -> None:
    tid = s.call("threads.create", s.sdk.threads.create)["thread_id"]
    events = s.stream("POST", f"/threads/{tid}/runs/stream", json={
        "assistant_id": "router", "input": {"x": 1}, "stream_mode": "updates",
        "stream_resumable": True})
    run_id = events[0]["data"]["run_id"]
    s.stream("GET", f"/threads/{tid}/runs/{run_id}/stream", headers={"Last-Event-ID": "-1"})
    s.stream("GET", f"/threads/{tid}/runs/{run_id}/stream", headers={"Last-Event-ID": events[1]["id"]})


@scenario
def stream_unknown_mode_422(s: Session) -> None:
    s.request("POST", "/runs/stream", json={"assistant_id": "agent", "stream_mode": ["values", "nope"]})
