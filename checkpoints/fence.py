"""Fenced writes (issue 26): a writer's checkpoints and writes stored only while it may write.

A process that paused longer than its right to write lasted (a VM stall, a partition) must not
store one more checkpoint when it resumes: that checkpoint would become the thread's latest and
roll it back under whoever writes it now. A `Fence` says what that right is, in the saver's own
terms: `sql`, a boolean SQL expression over `fence` (a jsonb array of the fence's `args`),
evaluated in the very statement that stores the write, so the check and the write are one atomic
step; it may lock the rows it reads (``FOR KEY SHARE``) so that a concurrent change of them waits
for the write, or the write sees the change. `holds`, a cheap local check, is asked before a
write is handed over at all, so a writer that knows it lost the right stops at once.

The saver knows nothing of what the fence stands for (a run's attempt token, a lease): the
caller supplies both parts (`PostgresSaver.fenced`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

__all__ = ["Fence", "FenceRefused"]


class FenceRefused(RuntimeError):
    """A write was refused because its fence no longer holds: nothing of it was stored, and the
    writer should stop (someone else writes what it wrote)."""


class Fence:
    """The condition a writer's writes are stored under; see the module docstring.

    Once one of its writes is refused, every later one is refused at once (`refused`).
    """

    __slots__ = ("_error", "_holds", "_lock", "args", "refused", "sql")

    def __init__(self, sql: str, args: Sequence[str],
                 holds: Callable[[], bool] | None = None) -> None:
        self.sql = sql
        self.args = tuple(args)
        self._holds = holds
        self.refused = False
        self._error: BaseException | None = None  # a background write's failure, for `flush`
        self._lock = threading.Lock()

    def holds(self) -> bool:
        """Whether the writer may still write, as far as it knows here (no round trip)."""
        return not self.refused and (self._holds is None or self._holds())

    def check(self) -> None:
        """Raise `FenceRefused` if a write was refused before or `holds` says no (called
        before a write is handed over, in the writer's thread)."""
        if not self.holds():
            raise self.refuse()

    def refuse(self) -> FenceRefused:
        """Mark the fence refused; the error to raise."""
        self.refused = True
        return FenceRefused(f"write refused: fence {self.args!r} no longer holds")

    def failed(self, error: BaseException) -> None:
        """A write handed over without waiting failed: kept for the writer's next `flush`."""
        if isinstance(error, FenceRefused):
            self.refused = True
        with self._lock:
            if self._error is None:
                self._error = error

    def take_error(self) -> BaseException | None:
        """The first failure since the last call (cleared once reported)."""
        with self._lock:
            error, self._error = self._error, None
        return error
