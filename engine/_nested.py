"""Streams of graphs run inside another graph's task (issue 27).

A graph whose `stream()` / `astream()` is iterated inside a running task yields its chunks to
that caller, as LangGraph 1.2.22 does: its own modes go to the caller's iterator and, when the
enclosing stream asked for `subgraphs=True`, its chunks of the enclosing stream's modes also show
there under the nested namespace. `custom` chunks go to the nearest stream that asks for them
(LangGraph gives a node the nested stream's writer then, not the enclosing one's). A nested
`invoke` asks no modes and keeps sharing the enclosing sink (`_pregel._new_run`), so this costs
nothing unless a nested stream is iterated.
"""

from __future__ import annotations


from typing import Any

from checkpoints.base import INTERRUPT

from ._stream import Sink, StreamItem

__all__ = ["continues_history", "nested_sink", "own_history_ns"]

_ALWAYS_UP = frozenset(("events",))
_LANGCHAIN = frozenset(("messages", "events"))


def nested_sink(own: Sink, outer: Sink) -> Sink:
    """The sink of a nested streamed run: `own` (the caller's buffer) and, with `subgraphs`,
    `outer` (what the enclosing run passes to the graphs its tasks call)."""
    own_modes = own.modes
    # `events` (astream_events) show every nested run, as before (issue 17)
    up_modes = outer.modes if outer.subgraphs else outer.modes & _ALWAYS_UP
    own_push = own.push
    outer_push = outer.push

    def push(item: StreamItem) -> None:
        mode = item[1]
        if mode in own_modes:
            own_push(item)
            if mode == "custom":
                return
        if mode in up_modes:
            outer_push(item)

    # An enclosing `messages` stream keeps this run's LangChain handler on (dropped by `push`
    # when neither stream shows it): else a model called here reports to the enclosing task's
    # handler, which took its tokens for its own (LangGraph's handler filters by namespace).
    sink = Sink(own_modes | up_modes | (outer.modes & _LANGCHAIN), True, push)
    # graphs called by this run's tasks reach the caller only when it asked for subgraphs
    sink.children = sink if own.subgraphs else outer
    return sink


def own_history_ns(ns: str) -> str:
    """Where a subgraph compiled with `checkpointer=True` keeps its one history per thread:
    its namespace without task ids (`inner`, `outer|inner`, a task's second call `inner|1`),
    so each call continues the last one's state, as LangGraph does (issue 27)."""
    return "|".join(part.split(":")[0] for part in ns.split("|"))


def continues_history(saved: Any) -> bool:
    """A `checkpointer=True` subgraph resumes where it stopped only when it stopped on an
    interrupt; any other call applies its input onto the saved state (a new turn)."""
    return any(channel == INTERRUPT for _, channel, _ in saved.pending_writes or ())
