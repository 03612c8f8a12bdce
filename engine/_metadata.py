"""What a run's metadata and config look like where LangGraph 1.2.22 shows them: checkpoints,
nodes and message chunks, task events, checkpoint events (issue 18 compared them over HTTP)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._run import Run
    from ._step import Task

__all__ = [
    "NOT_METADATA", "caller_metadata", "event_config", "root_metadata", "task_event_metadata",
    "task_state",
]

# Configurable keys LangGraph's `ensure_config` copies into a run's metadata when set.
_PROPAGATED = ("thread_id", "checkpoint_id", "checkpoint_ns", "task_id", "run_id", "assistant_id",
               "graph_id")

# Keys a checkpoint's metadata never copies from the config (LangGraph's savers skip them too).
NOT_METADATA = frozenset({
    "thread_id", "checkpoint_id", "checkpoint_ns", "checkpoint_map", "langgraph_step",
    "langgraph_node", "langgraph_triggers", "langgraph_path", "langgraph_checkpoint_ns",
})


def root_metadata(config: dict[str, Any]) -> dict[str, Any]:
    """A root checkpoint's caller metadata: the config's `metadata`, then its `configurable`
    scalars (not `__private`), as LangGraph's savers store them (a server run's `user_id`,
    `langgraph_request_id` show in `get_state` metadata)."""
    metadata = dict(config.get("metadata") or {})
    for key, value in (config.get("configurable") or {}).items():
        if (key not in metadata and key not in NOT_METADATA and not key.startswith("__")
                and isinstance(value, str | int | float | bool)):
            metadata[key] = value
    return metadata


def caller_metadata(config: dict[str, Any]) -> dict[str, Any]:
    """The config's metadata as nodes and message chunks see it: with the ids LangGraph copies
    from `configurable` (thread, run, assistant, graph...; a stateless server run's token
    metadata names its graph this way)."""
    found = dict(config.get("metadata") or {})
    conf = config.get("configurable") or {}
    for key in _PROPAGATED:
        if key not in found and conf.get(key):
            found[key] = conf[key]
    return found


def task_event_metadata(caller: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Task-start chunks' metadata: the caller's without LangGraph's own keys, plus the user's
    tags (not the `seq:step` ones)."""
    found = {k: v for k, v in caller.items() if k not in NOT_METADATA}
    tags = [t for t in config.get("tags") or () if not t.startswith("seq:step")]
    if tags:
        found["tags"] = tags
    return found


def event_config(run: Run, config: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint event's config: the run's configurable (no `__pregel_` keys) with the
    checkpoint's ids; a subgraph's also maps its ancestors' checkpoints and its own."""
    conf = {k: v for k, v in (run.config.get("configurable") or {}).items()
            if not k.startswith("__pregel_")}
    conf.update(config["configurable"])
    conf.setdefault("checkpoint_ns", run.ns)
    if run.parent is not None:
        conf["checkpoint_map"] = {**_ancestor_checkpoints(run), run.ns: conf["checkpoint_id"]}
    return {"configurable": conf}


def _ancestor_checkpoints(run: Run) -> dict[str, Any]:
    found: dict[str, Any] = {}
    ancestor = run.parent
    while ancestor is not None:
        if ancestor.checkpoint_config is not None:
            found[ancestor.ns] = ancestor.checkpoint_config["configurable"].get("checkpoint_id")
        ancestor = ancestor.parent
    return dict(reversed(found.items()))


def task_state(run: Run, task: Task) -> dict[str, Any] | None:
    """Where a subgraph task's state will be, as LangGraph's checkpoint events show it."""
    if not task.node.is_subgraph:
        return None
    return {"configurable": {"thread_id": run.thread_id, "checkpoint_ns": task.ns}}
