"""The server's checkpoint saver: the library saver, plus what the Agent Server's saver stores.

`langgraph dev` stores a subgraph checkpoint's parent task (its `langgraph_*` keys) and where
it stands (`checkpoint_ns`, `checkpoint_map`, `thread_id`) in that checkpoint's metadata, so a
client sees them in `get_state(subgraphs=True)` and history over HTTP (issue 18). LangGraph's
library savers leave them out, and so do graphrun's in `checkpoints/`: the server adds them.
"""

from __future__ import annotations

from typing import Any

from checkpoints import InMemorySaver, SqliteSaver

__all__ = ["server_saver"]

_WHERE = ("checkpoint_map", "checkpoint_ns", "thread_id")


def _with_task(config: dict[str, Any], metadata: Any) -> Any:
    conf = config.get("configurable") or {}
    if not conf.get("checkpoint_ns") or not isinstance(metadata, dict):
        return metadata  # a root checkpoint: stored as the library saver stores it
    task = config.get("metadata") or {}
    found = {k: v for k, v in task.items() if k.startswith("langgraph_")}
    found.update({k: conf[k] for k in _WHERE if k in conf})
    return {**found, **metadata}


class _TaskMetadata:
    """Mixed in before a library saver: its writes of a subgraph checkpoint add the keys."""

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return super().put(config, checkpoint, _with_task(config, metadata), new_versions)  # type: ignore[misc]

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return await super().aput(  # type: ignore[misc]
            config, checkpoint, _with_task(config, metadata), new_versions
        )

    def put_nowait(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return super().put_nowait(  # type: ignore[misc]
            config, checkpoint, _with_task(config, metadata), new_versions
        )


class _ServerInMemorySaver(_TaskMetadata, InMemorySaver):
    pass


class _ServerSqliteSaver(_TaskMetadata, SqliteSaver):
    pass


def server_saver(path: Any) -> Any:
    """The saver of a server: SQLite at `path`, in memory without one."""
    return _ServerSqliteSaver(path) if path else _ServerInMemorySaver()
