"""Blobs this process wrote or read lately, so a read of the checkpoint just written (a run's
next start, the thread's state after it) does not fetch its values again (issue 19).

A blob is named by (thread, namespace, channel, version: the object the checkpoint names) and
versions are never reused, so a cached blob stays right; the row that names it is always read
from the database. Filled only with what the database holds: blobs after their commit, and
blobs read. A maintenance task (delete, copy, prune) empties it. Used on the saver's loop
thread only (no lock).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["BlobCache"]

BlobKey = tuple[str, str, str, Any]  # thread_id, checkpoint_ns, channel, version (as named)
_ENTRY = 120  # bytes an entry costs besides its value (key, tuple, dict slot), roughly


class BlobCache:
    """Least recently used blobs, bounded by their bytes (a dict keeps insertion order: a hit
    moves its entry to the end)."""

    def __init__(self, max_bytes: int = 8 << 20) -> None:
        self._max = max_bytes
        self._size = 0
        self._blobs: dict[BlobKey, bytes | None] = {}

    def get(self, key: BlobKey) -> tuple[bool, bytes | None]:
        """(found, value); a found value may be None (a blob stored as NULL)."""
        blobs = self._blobs
        if key not in blobs:
            return False, None
        value = blobs[key] = blobs.pop(key)
        return True, value

    def put_many(self, rows: Iterable[tuple[Any, ...]]) -> None:
        """Blob rows (thread_id, ns, channel, version, value) the database holds now. On the
        writer's path after every commit: ~0.4 µs a row (a 100-step chain stores 200)."""
        blobs, size = self._blobs, self._size
        for row in rows:
            key, value = row[:4], row[4]
            if key in blobs:
                old = blobs.pop(key)
                size -= _ENTRY + (len(old) if old is not None else 0)
            blobs[key] = value
            size += _ENTRY + (len(value) if value is not None else 0)
        while size > self._max and blobs:
            dropped = blobs.pop(next(iter(blobs)))
            size -= _ENTRY + (len(dropped) if dropped is not None else 0)
        self._size = size

    def clear(self) -> None:
        self._blobs.clear()
        self._size = 0
