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

__all__ = [
    "aload_saved", "continues_history", "detached_sink", "load_saved", "mark_replay",
    "nested_sink", "own_history_ns", "runs_detached", "travel_to",
]

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


_CALLBACK_MODES = frozenset(("messages", "tools"))


def runs_detached(config: dict[str, Any] | None, own: Sink, outer: Sink) -> bool:
    """A graph invoked inside a task with a `configurable` of its own (not the task's config,
    which names its `checkpoint_ns`) runs as a root graph of its own, as in LangGraph, where
    that `configurable` replaces the caller's (issue 29): its own namespace and checkpointer,
    no values or updates to the caller. Only an `invoke` (a nested stream keeps its caller's
    namespace), and not under `astream_events`, whose nesting has its own rules."""
    conf = config.get("configurable") if config else None
    return bool(conf) and "checkpoint_ns" not in conf and not own.modes and (
        "events" not in outer.modes)


def detached_sink(outer: Sink) -> Sink:
    """A detached run's sink: what LangChain's callbacks report (`messages`, `tools`) reaches a
    caller streaming subgraphs, under the run's own namespace, as LangGraph's handlers, which
    the run inherits, report it. Its handler stays on either way (`nested_sink` says why)."""
    shown = outer.modes & _CALLBACK_MODES if outer.subgraphs else frozenset()
    outer_push = outer.push

    def push(item: StreamItem) -> None:
        if item[1] in shown:
            outer_push(item)

    return Sink(outer.modes & _CALLBACK_MODES, True, push)


def own_history_ns(ns: str) -> str:
    """Where a subgraph compiled with `checkpointer=True` keeps its one history per thread:
    its namespace without task ids (`inner`, `outer|inner`, a task's second call `inner|1`),
    so each call continues the last one's state, as LangGraph does (issue 27)."""
    return "|".join(part.split(":")[0] for part in ns.split("|"))


def continues_history(saved: Any) -> bool:
    """A `checkpointer=True` subgraph resumes where it stopped only when it stopped on an
    interrupt; any other call applies its input onto the saved state (a new turn)."""
    return any(channel == INTERRUPT for _, channel, _ in saved.pending_writes or ())


def from_root_checkpoint(conf: dict[str, Any]) -> dict[str, str]:
    """A root run given a subgraph checkpoint's config (the task state `get_state(cfg,
    subgraphs=True)` shows) runs from the root checkpoint its `checkpoint_map` names, as
    LangGraph's root graph does (issue 27): replaying or resuming there re-runs the subgraph's
    task, whose interrupt is raised again; it ran the root graph on the subgraph's channels.
    Returns the subgraphs' checkpoints the map names: each starts from its own (`travel_to`)."""
    found = conf.get("checkpoint_map")
    if isinstance(found, dict) and "" in found:
        conf["checkpoint_ns"] = ""
        conf["checkpoint_id"] = found[""]
        del conf["checkpoint_map"]
        return {ns: cid for ns, cid in found.items() if ns}
    return {}


def travel_to(run: Any) -> str | None:
    """The checkpoint a subgraph run starts from when its root was sent back in time through
    a subgraph checkpoint's config, once (a later call of the subgraph continues its history).
    A namespace matches without task ids: the root's replayed step has new ones (a fork)."""
    wanted = run.root.travel_map
    if not wanted:
        return None
    own = own_history_ns(run.ns)
    for ns in list(wanted):
        if own_history_ns(ns) == own:
            run.travelled = True  # it continues from there, as its root does
            return wanted.pop(ns)
    return None


def subgraph_for_update(graph: Any, config: dict[str, Any]) -> Any:
    """The subgraph node a namespaced config (a subgraph checkpoint's) addresses, lent the
    graph's saver, or None for the graph's own config: `update_state` there writes with the
    subgraph's nodes, as LangGraph does (issue 27); the root graph's nodes made the update
    finish the subgraph."""
    ns = (config.get("configurable") or {}).get("checkpoint_ns")
    if not ns or getattr(graph, "addressed_by_ns", False):
        return None  # a lent subgraph writes its own state (never looks further down)
    target = graph
    for part in ns.split("|"):
        node = target.plan.nodes.get(part.split(":")[0])
        if part.isdigit() or node is None or not node.is_subgraph:
            return None if target is graph else _lent(target, graph.checkpointer)
        target = node.callee.fn
    return _lent(target, graph.checkpointer)


def _lent(sub: Any, saver: Any) -> Any:
    import copy

    view = copy.copy(sub)
    view.addressed_by_ns = True
    if not view.checkpointer or view.checkpointer is True:
        view.checkpointer = saver
    return view


def with_map(result: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """A subgraph update's config maps its ancestors' checkpoints and its new one (LangGraph)."""
    found = (config.get("configurable") or {}).get("checkpoint_map")
    if found is None:
        return result
    conf = result["configurable"]
    return {"configurable": {
        **conf, "checkpoint_map": {**found, conf["checkpoint_ns"]: conf["checkpoint_id"]}
    }}


def with_parents_map(snapshot: Any) -> Any:
    """A subgraph checkpoint's snapshot names its ancestors' checkpoints (its metadata's
    `parents`) and its own in a `checkpoint_map`, in `config` and `parent_config`, as
    LangGraph's `get_state`/`get_state_history` do (issue 27). A root's has no parents."""
    parents = (snapshot.metadata or {}).get("parents")
    if not parents:
        return snapshot
    return snapshot._replace(
        config=_mapped(snapshot.config, parents),
        parent_config=_mapped(snapshot.parent_config, parents),
    )


def _mapped(config: dict[str, Any] | None, parents: dict[str, str]) -> dict[str, Any] | None:
    if config is None:
        return None
    conf = config["configurable"]
    own = {conf["checkpoint_ns"]: conf["checkpoint_id"]}
    return {**config, "configurable": {**conf, "checkpoint_map": {**parents, **own}}}


def ancestors_of(config: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The enclosing graphs' checkpoints a subgraph checkpoint's `checkpoint_map` names: its
    update checkpoint's `parents` metadata, as LangGraph records them (issue 27)."""
    conf = config.get("configurable") or {}
    found = conf.get("checkpoint_map")
    if not isinstance(found, dict):
        return ()
    own = conf.get("checkpoint_ns")
    return tuple((ns, cid) for ns, cid in found.items() if ns != own)


def mark_replay(run: Any, saved: Any) -> None:
    """A root run sent back in time: the checkpoint its `checkpointer=True` subgraphs load
    their state as of, on their first call (LangGraph's replay bound). A fork or an update
    was made after the subgraphs' checkpoints it follows: its parent bounds them."""
    if run.parent is not None or saved is None:
        return
    bound = saved.config
    if (saved.metadata or {}).get("source") in ("update", "fork") and saved.parent_config:
        bound = saved.parent_config
    run.replay_before = bound["configurable"]["checkpoint_id"]
    run.replay_seen = set()


def _replay_bound(run: Any, lookup: dict[str, Any]) -> dict[str, Any] | None:
    """For the first call of a `checkpointer=True` subgraph under a root sent back in time:
    the `before` filter finding its last checkpoint older than the root's replayed one."""
    root = run.root
    if root.replay_before is None or run.parent is None or run.graph.checkpointer is not True:
        return None
    if "checkpoint_id" in lookup["configurable"] or run.ns in root.replay_seen:
        return None
    root.replay_seen.add(run.ns)
    return {"configurable": {"checkpoint_id": root.replay_before}}


def load_saved(run: Any, lookup: dict[str, Any] | None) -> Any:
    """The checkpoint a run starts from: the latest (or the one `lookup` names), or for a
    subgraph replayed by its root the one before the replay, its input applied anew."""
    if lookup is None:
        return None
    before = _replay_bound(run, lookup)
    if before is None:
        return run.checkpointer.get_tuple(lookup)
    found = next(iter(run.checkpointer.list(lookup, before=before, limit=1)), None)
    return found._replace(pending_writes=[]) if found is not None else None


async def aload_saved(run: Any, lookup: dict[str, Any] | None) -> Any:
    """Async `load_saved`."""
    if lookup is None:
        return None
    before = _replay_bound(run, lookup)
    if before is None:
        return await run.checkpointer.aget_tuple(lookup)
    async for found in run.checkpointer.alist(lookup, before=before, limit=1):
        return found._replace(pending_writes=[])
    return None
