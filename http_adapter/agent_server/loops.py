"""Background loops that outlive a failing dependency (issue 26 §1).

The server's background tasks (cron scheduler, thread TTL sweeper, run queue dispatcher and
workers, reaper, Redis flusher and listeners) all share the lifespan's task group, so one
exception escaping any of them cancelled every other one and closed the records, saver and
queue, while uvicorn kept answering (`PgRecords is not open` on every route, no run executed,
for good). A PostgreSQL outage of 5 s was enough: the cron tick read the database unguarded.

So each loop runs its body through `keep_going`: an `Exception` is logged, the loop waits
with exponential backoff and runs the body again; a success resets the backoff and says the
loop recovered. Cancellation (shutdown) and `BaseException`s pass through. `Failing` keeps
which loops fail right now, for `/ok`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

import anyio

__all__ = ["BACKOFF", "Failing", "Step", "keep_going"]

logger = logging.getLogger("http_adapter.loops")

BACKOFF = (0.1, 2.0)  # seconds: first retry, longest wait (a recovered database is used soon)
_REPEAT = 30.0  # seconds between reminders that a loop still fails


class Failing:
    """The loops failing now (name -> the latest error), shared by one server's loops."""

    def __init__(self) -> None:
        self.now: dict[str, str] = {}

    def set(self, name: str, error: BaseException | None) -> None:
        """The loop's latest turn failed with `error`, or succeeded (None)."""
        if error is None:
            self.now.pop(name, None)
        else:
            self.now[name] = f"{type(error).__name__}: {error}"


Step = Callable[[], Awaitable[object]]


def _never() -> bool:
    return False


class _Streak:
    """One loop's run of failures: what to log, and when."""

    def __init__(self, name: str, log: logging.Logger, quiet: tuple[type[BaseException], ...]
                 ) -> None:
        self.name, self.log, self.quiet = name, log, quiet
        self.since: float | None = None
        self.told = 0.0

    def failed(self, error: Exception) -> None:
        """The first failure of a streak is logged (with its traceback unless it is one of
        the `quiet` errors: a dependency out of reach), then a reminder every `_REPEAT` s."""
        clock = time.monotonic()
        if self.since is None:
            self.since = self.told = clock
            trace = not isinstance(error, self.quiet)
            self.log.warning("%s failed (retrying with backoff): %r", self.name, error,
                             exc_info=error if trace else None)
        elif clock - self.told >= _REPEAT:
            self.told = clock
            self.log.warning("%s still failing after %.0f s: %r", self.name,
                             clock - self.since, error)

    def succeeded(self) -> None:
        if self.since is not None:
            self.log.warning("%s recovered after %.1f s", self.name,
                             time.monotonic() - self.since)
            self.since = None


async def keep_going(name: str, body: Step, *,
                     log: logging.Logger = logger, until: Callable[[], bool] = _never,
                     quiet: tuple[type[BaseException], ...] = (OSError,),
                     failing: Failing | None = None, then: Step | None = None,
                     backoff: tuple[float, float] = BACKOFF) -> None:
    """Run `body()` again and again until `until()` is true or the task is cancelled.

    `body` is one turn of the loop; `then()`, when given, the wait after a turn that
    succeeded (the loop counts as recovered before it, however long it waits). When either
    raises, the error is logged and the next turn starts after a backoff (doubling from
    `backoff[0]` up to `backoff[1]`); `failing` shows the loop as failing meanwhile."""
    streak = _Streak(name, log, quiet)
    delay = backoff[0]
    while not until():
        try:
            await body()
            streak.succeeded()
            if failing is not None:
                failing.set(name, None)
            delay = backoff[0]
            if then is not None:
                await then()
        except Exception as error:
            streak.failed(error)
            if failing is not None:
                failing.set(name, error)
            await anyio.sleep(delay)
            delay = min(delay * 2, backoff[1])
