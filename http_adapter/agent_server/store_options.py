"""The server's store as langgraph.json's `store` section configures it (issue 18): `index`
(semantic search through the project's embedding function or a `"provider:model"` string) and
`ttl` (a default expiry in minutes, refreshed on reads unless `refresh_on_read` is false, and a
sweeper that deletes expired items every `sweep_interval_minutes`)."""

from __future__ import annotations

from typing import Any

from checkpoints.store import InMemoryStore, SqliteStore

from .settings import Settings

__all__ = ["make_store"]


def make_store(settings: Settings) -> Any:
    """A SQLite store in the server's file (an in-memory one with `--in-memory`), or a
    PostgreSQL one with `settings.database_url` (issue 19)."""
    section = settings.extra.get("store") or {}
    options = {"index": section.get("index"), "ttl_config": section.get("ttl")}
    path = settings.db_path
    if settings.database_url is not None:
        from checkpoints.store import PostgresStore  # the `postgres` extra

        store: Any = PostgresStore(settings.database_url, **options,
                                   prepared_statements=settings.prepared_statements)
    else:
        store = SqliteStore(path, **options) if path else InMemoryStore(**options)
    if (section.get("ttl") or {}).get("sweep_interval_minutes"):
        store.start_ttl_sweeper()  # stopped by the store's close() at shutdown
    return store
