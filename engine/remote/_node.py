"""A `RemoteGraph` called inside a graph's task: its stream, namespace and resume (issue 29).

The task's config names its namespace (`checkpoint_ns`); the running task's scope gives the
enclosing stream (what a local subgraph run would push to) and the resume values the enclosing
run was given. LangGraph 1.2.22 re-sends the task's input when the enclosing graph is resumed,
so the remote thread starts over and asks again (LangGraph issue #4879); here, when the enclosing
run holds an answer for one of the remote thread's pending interrupts, the remote run is sent
`Command(resume=...)` instead, as the task of a local subgraph would be resumed.
"""

from __future__ import annotations

from typing import Any

from .._context import NOTHING, TaskScope, current_scope
from ._chunks import NS_SEP

__all__ = ["Caller", "caller_of"]


class Caller:
    """Where a remote call stands: the task's namespace, its scope and enclosing stream."""

    __slots__ = ("ns", "scope", "sink")

    def __init__(self, ns: tuple[str, ...], scope: TaskScope | None, sink: Any) -> None:
        self.ns = ns
        self.scope = scope
        self.sink = sink

    def may_resume(self) -> bool:
        """Whether the enclosing run holds resume values (then the remote state is read)."""
        if self.scope is None:
            return False
        root = self.scope.run.root
        return bool(root.resume_map) or root.null_resume is not NOTHING

    def resume_command(self, state: dict[str, Any]) -> dict[str, Any] | None:
        """`{"resume": ...}` for the remote thread's pending interrupts this run answers."""
        assert self.scope is not None
        tasks = state.get("tasks") or ()
        pending = [i["id"] for task in tasks for i in task.get("interrupts") or ()]
        answers = {}
        for iid in pending:
            value = self.scope.run.take_resume(iid)
            if value is not NOTHING:
                answers[iid] = value
        if not answers:
            return None
        if len(pending) == 1:
            return {"resume": answers[pending[0]]}
        return {"resume": answers}


def caller_of(config: dict[str, Any] | None) -> Caller:
    """The caller of a remote run given this config: a graph's task when the config names the
    task's namespace (LangGraph's rule) and a task is running."""
    ns_text = ((config or {}).get("configurable") or {}).get("checkpoint_ns")
    if not ns_text:
        return Caller((), None, None)
    ns = tuple(ns_text.split(NS_SEP))
    scope = current_scope.get()
    if scope is None:
        return Caller(ns, None, None)
    sink = scope.run.sink.children
    # the enclosing stream shows a nested run only when it asked for subgraphs (`_nested`)
    return Caller(ns, scope, sink if sink.subgraphs and sink.modes else None)
