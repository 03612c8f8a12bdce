"""What `RemoteGraph` sends and reads back: configs, checkpoints and thread states (issue 29).

IO-free: the config a remote run may carry (JSON primitives only, no checkpoint position of the
caller), the `checkpoint` object the server's state endpoints take, and the `StateSnapshot` a
server's thread state becomes.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from ..types import Interrupt, PregelTask, StateSnapshot

__all__ = [
    "checkpoint_of", "config_of", "interrupt_of", "merge_configs", "sanitize_config", "snapshot_of",
]

# The caller's own checkpoint position: meaningless on the server's thread (LangGraph drops it too)
_DROPPED = frozenset((
    "checkpoint_map", "checkpoint_id", "checkpoint_ns",
    "__pregel_task_id", "__pregel_strict_resume",
))
_CHECKPOINT_KEYS = ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map")
_PRIMITIVES = (str, int, float, bool, UUID)


def merge_configs(*configs: dict[str, Any] | None) -> dict[str, Any]:
    """Later configs win; `configurable` and `metadata` merge key by key, `tags` add up."""
    merged: dict[str, Any] = {}
    for config in configs:
        for key, value in (config or {}).items():
            if value is None:
                continue
            if key in ("configurable", "metadata"):
                merged[key] = {**merged.get(key, {}), **value}
            elif key == "tags":
                tags = merged.setdefault("tags", [])
                tags.extend(tag for tag in value if tag not in tags)
            else:
                merged[key] = value
    return merged


def _primitive(value: Any) -> Any:
    """`value` with everything that is not JSON-like left out (None when nothing is left)."""
    if isinstance(value, _PRIMITIVES):
        return value
    if isinstance(value, dict):
        items = ((k, _primitive(v)) for k, v in value.items() if isinstance(k, str))
        return {k: v for k, v in items if v is not None}
    if isinstance(value, (list, tuple)):
        return [v for v in map(_primitive, value) if v is not None]
    return None


def _primitive_items(values: dict[str, Any], dropped: frozenset[str] = frozenset()) -> dict:
    kept = (k for k in values if isinstance(k, str) and k not in dropped)
    items = ((k, _primitive(values[k])) for k in kept)
    return {k: v for k, v in items if v is not None}


def sanitize_config(config: dict[str, Any]) -> dict[str, Any]:
    """The part of a local config a remote run can take: the recursion limit, string tags,
    and JSON-like metadata and `configurable` values (callbacks, savers, the caller's
    checkpoint position and the engine's own objects stay behind)."""
    out: dict[str, Any] = {}
    if "recursion_limit" in config:
        out["recursion_limit"] = config["recursion_limit"]
    if "tags" in config:
        out["tags"] = [tag for tag in config["tags"] if isinstance(tag, str)]
    if "metadata" in config:
        out["metadata"] = _primitive_items(config["metadata"])
    if "configurable" in config:
        out["configurable"] = _primitive_items(config["configurable"], _DROPPED)
    return out


def checkpoint_of(config: dict[str, Any] | None) -> dict[str, Any] | None:
    """The server's `checkpoint` object for a config's thread position (None for none)."""
    if config is None:
        return None
    conf = config.get("configurable") or {}
    checkpoint = {key: conf[key] for key in _CHECKPOINT_KEYS if key in conf}
    return checkpoint or None


def config_of(checkpoint: dict[str, Any]) -> dict[str, Any]:
    """The local config naming a server checkpoint."""
    return {"configurable": {
        "thread_id": checkpoint["thread_id"],
        "checkpoint_ns": checkpoint["checkpoint_ns"],
        "checkpoint_id": checkpoint["checkpoint_id"],
        "checkpoint_map": checkpoint.get("checkpoint_map") or {},
    }}


def interrupt_of(item: Any) -> Interrupt:
    """A server's interrupt (`{"value", "id", ...}`) as a local `Interrupt`."""
    if isinstance(item, Interrupt):
        return item
    return Interrupt(**{k: item[k] for k in ("value", "id", "ns") if k in item})


def _task_of(task: dict[str, Any]) -> PregelTask:
    if task.get("state"):
        state: Any = snapshot_of(task["state"])
    elif task.get("checkpoint"):
        state = {"configurable": task["checkpoint"]}
    else:
        state = None
    return PregelTask(
        id=task["id"],
        name=task["name"],
        path=(),
        error=Exception(task["error"]) if task.get("error") else None,
        interrupts=tuple(interrupt_of(i) for i in task.get("interrupts") or ()),
        state=state,
        result=task.get("result"),
    )


def snapshot_of(state: dict[str, Any]) -> StateSnapshot:
    """A server thread state (`GET /threads/{id}/state`, history items) as a `StateSnapshot`."""
    tasks = tuple(_task_of(task) for task in state.get("tasks") or ())
    parent = state.get("parent_checkpoint")
    return StateSnapshot(
        values=state["values"],
        next=tuple(state.get("next") or ()),
        config=config_of(state["checkpoint"]),
        metadata=dict(state.get("metadata") or {}),
        created_at=state.get("created_at"),
        parent_config=config_of(parent) if parent else None,
        tasks=tasks,
        interrupts=tuple(i for task in tasks for i in task.interrupts),
    )
