"""Blobs this process wrote or read lately, so a read of the checkpoint just written (a run's
next start, the thread's state after it) does not fetch its values again (issue 19).

A blob is named by (thread, namespace, channel, version) and versions are never reused, so a
cached blob stays right; the row that names it is always read from the database. Filled only
with what the database holds: blobs after their commit, and blobs read. A maintenance task
(delete, copy, prune) empties it. Used on the saver's loop thread only (no lock).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

__all__ = ["BlobCache"]

BlobKey = tuple[str, str, str, str]  # thread_id, checkpoint_ns, channel, str(version)
_ENTRY = 120  # bytes an entry costs besides its value (key, tuple, dict slot), roughly


class BlobCache:
    """Least recently used blobs, bounded by their bytes."""

    def __init__(self, max_bytes: int = 8 << 20) -> None:
        self._max = max_bytes
        self._size = 0
        self._blobs: OrderedDict[BlobKey, bytes | None] = OrderedDict()

    def get(self, key: BlobKey) -> tuple[bool, bytes | None]:
        """(found, value); a found value may be None (a blob stored as NULL)."""
        try:
            value = self._blobs[key]
        except KeyError:
            return False, None
        self._blobs.move_to_end(key)
        return True, value

    def put_many(self, rows: Iterable[tuple[Any, ...]]) -> None:
        """Blob rows (thread_id, ns, channel, version, value) the database holds now."""
        for thread_id, ns, channel, version, value in rows:
            self._put((thread_id, ns, channel, str(version)), value)
        while self._size > self._max and self._blobs:
            _, dropped = self._blobs.popitem(last=False)
            self._size -= _ENTRY + (len(dropped) if dropped is not None else 0)

    def _put(self, key: BlobKey, value: bytes | None) -> None:
        old = self._blobs.pop(key, False)
        if old is not False:
            self._size -= _ENTRY + (len(old) if old is not None else 0)
        self._blobs[key] = value
        self._size += _ENTRY + (len(value) if value is not None else 0)

    def clear(self) -> None:
        self._blobs.clear()
        self._size = 0
