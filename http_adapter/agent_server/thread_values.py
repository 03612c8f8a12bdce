"""A thread record's `values`, named by checkpoint instead of copied (issue 32).

The wire's Thread carries the state its last run (or state update) left. Copying those values
into the record meant a long thread's whole history was encoded and written again at every
turn, twice (the run's start and its end) on every back end: at 1,000 turns of 1 KB messages,
~2.3 MB a write and most of a turn over HTTP. The record now names the checkpoint instead
(`Thread.values_checkpoint`) and the values are read from it when a Thread is shown: the
saver's latest-state cache answers that read without decoding anything while it is the
thread's latest checkpoint.

A record keeps its values inline where no checkpoint holds them (the graph failed to load, a
thread without checkpoints) and as written before issue 32: such records read as they did.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .encode import plain
from .errors import ServerError
from .records import matches
from .schemas import Thread

__all__ = ["by_reference", "matching", "values_at", "values_of"]


def by_reference(thread: Thread, values: Any, checkpoint_id: str | None, **changes: Any
                 ) -> Thread:
    """`thread` with `changes`, showing `values`: by the checkpoint that holds them when there
    is one (`checkpoint_id`), else inline."""
    if checkpoint_id is None:
        return msgspec.structs.replace(thread, values=values, values_checkpoint=None, **changes)
    return msgspec.structs.replace(thread, values=None, values_checkpoint=checkpoint_id,
                                   **changes)


async def values_of(st: Any, thread: Thread) -> Any:
    """The values the thread shows (wire-ready: the encoder handles message objects). A named
    checkpoint that is gone (pruned, rolled back) shows the thread's latest state instead;
    a graph that cannot load shows none."""
    if thread.values_checkpoint is None:
        return thread.values
    graph_id = (thread.metadata or {}).get("graph_id")
    return await values_at(st, thread.thread_id, graph_id, thread.values_checkpoint)


async def values_at(st: Any, thread_id: str, graph_id: str | None, checkpoint_id: str) -> Any:
    """The state values of `graph_id` at one checkpoint of the thread (its latest when that
    one is gone; None when there is none or the graph cannot load)."""
    graph = await _graph(st, graph_id)
    if graph is None:
        return None
    conf = {"thread_id": thread_id, "checkpoint_ns": ""}
    snapshot = await graph.aget_state({"configurable": {**conf, "checkpoint_id": checkpoint_id}})
    if snapshot.metadata is None:
        snapshot = await graph.aget_state({"configurable": conf})
    return snapshot.values if snapshot.metadata is not None else None


async def matching(st: Any, threads: list[Thread], subset: dict[str, Any] | None
                   ) -> list[Thread]:
    """The threads whose values contain `subset` (JSON containment, as `records.matches`; a
    thread without values never matches). Each named checkpoint is read, so a values filter
    costs a state read per candidate thread."""
    if not subset:
        return threads
    kept = []
    for thread in threads:
        values = await values_of(st, thread)
        if values is not None and matches(plain(values), subset):
            kept.append(thread)
    return kept


async def _graph(st: Any, graph_id: str | None) -> Any:
    if graph_id is None or graph_id not in st.settings.graphs:
        return None
    try:
        return await st.graph(graph_id)
    except ServerError:  # the graph fails to load (issue 31): its values cannot be shown
        return None

