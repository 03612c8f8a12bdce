"""`InMemoryStore`: the store in a dict, for tests and single-process servers.

Values are kept as JSON text, like the SQLite store, so both return the same data and a caller
mutating a returned value never changes what is stored.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime

from ._core import Row
from ._embed import Vector
from ._rowstore import RowStore
from .base import IndexConfig, TTLConfig

__all__ = ["InMemoryStore"]


class InMemoryStore(RowStore):
    """A thread-safe in-process store with TTL and optional semantic search.

    Drop-in for LangGraph's ``InMemoryStore(index=...)``; it also takes `ttl_config` and a
    `clock`. Data is lost when the process exits.
    """

    def __init__(
        self,
        *,
        index: IndexConfig | None = None,
        ttl_config: TTLConfig | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        super().__init__(index=index, ttl_config=ttl_config, clock=clock)
        self._rows: dict[tuple[str, ...], dict[str, Row]] = {}
        self._lock = threading.Lock()

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[None]:
        # Ops cannot fail half-way (values are encoded and embedded beforehand), so a lock is
        # all a batch needs to be atomic.
        with self._lock:
            yield

    def _read(self, namespace: tuple[str, ...], key: str, now: int) -> Row | None:
        row = self._rows.get(namespace, {}).get(key)
        return row if row is not None and row.alive(now) else None

    def _write(self, row: Row, vectors: list[tuple[str, Vector]]) -> None:
        row.vectors = [vector for _, vector in vectors]
        self._rows.setdefault(row.namespace, {})[row.key] = row

    def _remove(self, namespace: tuple[str, ...], key: str) -> None:
        keys = self._rows.get(namespace)
        if keys is not None and keys.pop(key, None) is not None and not keys:
            del self._rows[namespace]

    def _touch(self, rows: list[Row]) -> None:
        """Rows are the stored objects themselves; their new expiry is already in place."""

    def _scan(
        self, prefix: tuple[str, ...], now: int, *, limit: int | None, vectors: bool
    ) -> list[Row]:
        n = len(prefix)
        rows = [
            row
            for namespace, keys in self._rows.items()
            if namespace[:n] == prefix
            for row in keys.values()
            if row.alive(now)
        ]
        rows.sort(key=lambda row: (-row.updated_at, row.namespace, row.key))
        return rows[:limit]

    def _namespaces(self, now: int) -> list[tuple[str, ...]]:
        return [ns for ns, keys in self._rows.items() if any(r.alive(now) for r in keys.values())]

    def _expire(self, now: int) -> int:
        expired = [
            row for keys in self._rows.values() for row in keys.values() if not row.alive(now)
        ]
        for row in expired:
            self._remove(row.namespace, row.key)
        return len(expired)
