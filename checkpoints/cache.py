"""Node result cache (`compile(cache=...)` with a node's `CachePolicy`): keyed data with a TTL.

The engine stores a task's writes under (namespace, key) and reads them back instead of
running the node again; the cache knows nothing of graphs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from .serde import Serializer, default_serializer

__all__ = ["BaseCache", "InMemoryCache"]

CacheKey = tuple[tuple[str, ...], str]


class BaseCache:
    """get/set/clear by (namespace, key); values are copied (serialized) on the way in."""

    def get(self, keys: Sequence[CacheKey]) -> dict[CacheKey, Any]:
        raise NotImplementedError

    def set(self, items: dict[CacheKey, tuple[Any, float | None]]) -> None:
        raise NotImplementedError

    def clear(self, namespaces: Sequence[tuple[str, ...]] | None = None) -> None:
        raise NotImplementedError

    async def aget(self, keys: Sequence[CacheKey]) -> dict[CacheKey, Any]:
        return self.get(keys)

    async def aset(self, items: dict[CacheKey, tuple[Any, float | None]]) -> None:
        self.set(items)

    async def aclear(self, namespaces: Sequence[tuple[str, ...]] | None = None) -> None:
        self.clear(namespaces)


class InMemoryCache(BaseCache):
    """A thread-safe in-process cache; `ttl` in seconds (None: forever)."""

    def __init__(
        self, *, serde: Serializer | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._serde = serde or default_serializer
        self._clock = clock
        self._data: dict[CacheKey, tuple[bytes, float | None]] = {}
        self._lock = threading.Lock()

    def get(self, keys: Sequence[CacheKey]) -> dict[CacheKey, Any]:
        now = self._clock()
        found: dict[CacheKey, Any] = {}
        with self._lock:
            for key in keys:
                entry = self._data.get(key)
                if entry is None:
                    continue
                blob, expires = entry
                if expires is not None and expires <= now:
                    del self._data[key]
                    continue
                found[key] = self._serde.loads(blob)
        return found

    def set(self, items: dict[CacheKey, tuple[Any, float | None]]) -> None:
        now = self._clock()
        encoded = {
            key: (self._serde.dumps(value), None if ttl is None else now + ttl)
            for key, (value, ttl) in items.items()
        }
        with self._lock:
            self._data.update(encoded)

    def clear(self, namespaces: Sequence[tuple[str, ...]] | None = None) -> None:
        with self._lock:
            if namespaces is None:
                self._data.clear()
                return
            drop = set(namespaces)
            for key in [k for k in self._data if k[0] in drop]:
                del self._data[key]
