"""The server's checkpoint saver: the library saver, plus what the Agent Server's saver stores.

`langgraph dev` stores a subgraph checkpoint's parent task (its `langgraph_*` keys) and where
it stands (`checkpoint_ns`, `checkpoint_map`, `thread_id`) in that checkpoint's metadata, so a
client sees them in `get_state(subgraphs=True)` and history over HTTP (issue 18). LangGraph's
library savers leave them out, and so do graphrun's in `checkpoints/`: the server adds them.
"""

from __future__ import annotations

from typing import Any

from checkpoints import InMemorySaver, SqliteSaver

__all__ = ["copy_thread", "server_saver"]

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


def server_saver(path: Any, **postgres: Any) -> Any:
    """The saver of a server: SQLite at `path`, in memory without one, PostgreSQL for a
    `postgresql://` URL (`postgres` are `PostgresSaver`'s options: pool size, prepared
    statements). The PostgreSQL saver is imported only then: it needs the `postgres` extra."""
    if isinstance(path, str) and path.startswith(("postgresql://", "postgres://")):
        return _postgres_saver_class()(path, **postgres)
    return _ServerSqliteSaver(path) if path else _ServerInMemorySaver()


def _postgres_saver_class() -> type:
    from checkpoints import PostgresSaver

    class _ServerPostgresSaver(_TaskMetadata, PostgresSaver):
        pass

    return _ServerPostgresSaver


def _renamed(value: Any, source: str, target: str) -> Any:
    """`value` with every string equal to `source` (a thread id) now `target`."""
    if isinstance(value, dict):
        return {k: _renamed(v, source, target) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, source, target) for v in value]
    return target if value == source else value


async def copy_thread(saver: Any, source: str, target: str) -> None:
    """Copy a thread's checkpoints, then name the copy in their metadata: the reference's copy
    rewrites the thread id there (its `thread_id` key), the library savers' copy does not."""
    await saver.acopy_thread(source, target)
    copied = [t async for t in saver.alist({"configurable": {"thread_id": target}})]
    for saved in copied:
        metadata = _renamed(saved.metadata, source, target)
        if metadata == saved.metadata:
            continue
        conf = saved.parent_config or {"configurable": {
            "thread_id": target, "checkpoint_ns": saved.config["configurable"]["checkpoint_ns"]}}
        await saver.aput(conf, saved.checkpoint, metadata,
                         dict(saved.checkpoint["channel_versions"]))
