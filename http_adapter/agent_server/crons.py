"""Crons (SPEC §3 "Records" Cron): the record, schedule arithmetic and the scheduler.

The scheduler is one task in the app's lifespan task group. It sleeps until the earliest
`next_run_date` of an enabled cron (a create, change or delete wakes it early; there is no
polling), fires every due cron through the run queue and moves its `next_run_date` to the
first occurrence after *now*. So each due time fires one run, and a schedule missed while
the server was down fires once on start-up (not once per missed tick), then carries on from
now. Firing and recording the new `next_run_date` are shielded from cancellation, so a
graceful shutdown never leaves a fired cron due again.

Several server processes sharing one record store each run a scheduler (issue 19 §8): a
scheduler claims a firing by moving `next_run_date` with a compare-and-set on the whole cron
record (`RecordStore.replace_extra`) BEFORE it creates the run; the schedulers that lose the
compare skip, so each due time fires exactly one run across processes. A cron created or
changed on another process wakes nobody here, so with shared records (`rescan`) the scheduler
also looks again every `rescan` seconds: every host learns of every cron, and one whose host
died still fires.

Schedules are croniter expressions (5 fields, or 6 with croniter's trailing seconds field,
e.g. `* * * * * *` fires every second), read in the cron's IANA `timezone` (UTC when null).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo

import anyio
import anyio.abc
import msgspec
from croniter import CroniterError, croniter  # type: ignore[import-untyped]

from .errors import ServerError, UnprocessableEntity
from .loops import keep_going
from .records import RecordStore
from .state import ServerState

__all__ = [
    "KIND",
    "Cron",
    "CronScheduler",
    "all_crons",
    "cron_of",
    "check_timezone",
    "iso",
    "next_run",
    "parse_time",
    "utcnow",
]

logger = logging.getLogger("http_adapter.crons")

KIND = "cron"  # the records kind crons are persisted under (`RecordStore.put_extra`)


class Cron(msgspec.Struct, kw_only=True):
    """A cron as the API returns and the records keep it (SPEC §3, langgraph-sdk `Cron`)."""

    cron_id: str
    assistant_id: str
    thread_id: str | None = None
    user_id: str | None = None
    schedule: str
    timezone: str | None = None
    end_time: str | None = None
    payload: dict[str, Any] = {}
    next_run_date: str | None = None
    metadata: dict[str, Any] = {}
    on_run_completed: Literal["delete", "keep"] | None = None
    enabled: bool = True
    created_at: str = ""
    updated_at: str = ""


def utcnow() -> datetime:
    """The scheduler's default clock; looked up on every call, so tests can patch it."""
    return datetime.now(UTC)


def _following(cron: Cron, now: datetime, end: datetime | None) -> datetime | None:
    """The cron's next run date after firing at `now` (None: it never fires again)."""
    try:
        following = next_run(cron.schedule, cron.timezone, now)
    except UnprocessableEntity:  # checked on create; only a hand-edited record
        return None
    return None if end is not None and following > end else following


def _default_now() -> datetime:
    return utcnow()


def iso(moment: datetime) -> str:
    """ISO-8601 with microseconds and +00:00 (SPEC §3 conventions)."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def parse_time(value: str, field: str) -> datetime:
    """An ISO-8601 time from a request (naive means UTC); 422 when it is not one."""
    try:
        moment = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise UnprocessableEntity(f"{field}: {value!r} is not an ISO-8601 date-time") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def check_timezone(timezone: str | None) -> None:
    """422 unless `timezone` is null or an IANA zone name."""
    if timezone is None:
        return
    try:
        ZoneInfo(timezone)
    except (KeyError, ValueError, OSError):  # unknown key, bad path, directory, too long
        raise UnprocessableEntity(f"Invalid timezone {timezone!r}: not a known IANA time zone") from None


def next_run(schedule: str, timezone: str | None, after: datetime) -> datetime:
    """The first occurrence of `schedule` strictly after `after`, in UTC.

    Raises 422 with the reference's message for a schedule that does not parse or never fires.
    """
    zone = ZoneInfo(timezone) if timezone else UTC
    try:
        found = croniter(schedule, after.astimezone(zone)).get_next(datetime)
    except (CroniterError, ValueError, TypeError, KeyError) as error:
        raise UnprocessableEntity(  # the reference's words, which clients show (issue 18)
            f"Invalid cron schedule: {schedule!r}. Reason: Invalid cron schedule. Ensure the "
            "schedule uses the standard cron format (minute hour day_of_month month "
            "day_of_week). Example: '*/5 * * * *' for every 5 minutes."
        ) from None
    return found.astimezone(UTC)  # type: ignore[no-any-return]


async def all_crons(records: RecordStore) -> dict[str, Cron]:
    """The crons by id, creation order (the store keeps plain JSON bodies)."""
    return {key: msgspec.convert(body, Cron) for key, body in (await records.extras(KIND)).items()}


async def cron_of(records: RecordStore, cron_id: str) -> Cron | None:
    body = await records.get_extra(KIND, cron_id)
    return None if body is None else msgspec.convert(body, Cron)


class CronScheduler:
    """Fires due crons; owned by the app's lifespan task group (`serve`).

    `now` is the clock (an aware datetime in UTC); the routes use it too, so a test that
    injects one controls both `next_run_date` and firing.
    """

    def __init__(self, state: ServerState, *, now: Callable[[], datetime] | None = None,
                 rescan: float | None = None) -> None:
        self.state = state
        self.now = now if now is not None else _default_now
        self.rescan = rescan  # shared records: other processes' crons show up within this
        self._wake = anyio.Event()
        self._sleep_for: float | None = None  # seconds until the next scan; None: until woken

    def wake(self) -> None:
        """Recompute the sleep: a cron was created, changed or deleted."""
        self._wake.set()

    async def serve(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Fire due crons until cancelled; those missed while the server was down fire first."""
        task_status.started()
        # A tick that fails (the database down) is retried with backoff (issue 26 §1): before,
        # its exception ended the lifespan's task group and every other background task.
        await keep_going("cron scheduler", self._scan, then=self._sleep, log=logger,
                         quiet=self.state.unavailable, failing=self.state.failing)

    async def _scan(self) -> None:
        """Fire what is due; note how long to sleep until the next due time or rescan."""
        self._wake = anyio.Event()  # before the scan: a change during it wakes us at once
        await self.tick()
        delay = await self._delay()
        if self.rescan is not None:
            delay = self.rescan if delay is None else min(delay, self.rescan)
        self._sleep_for = delay

    async def _sleep(self) -> None:
        """Until the next due time, a wake-up (a cron changed) or the rescan."""
        if self._sleep_for is None:
            await self._wake.wait()
        elif self._sleep_for > 0:
            with anyio.move_on_after(self._sleep_for):
                await self._wake.wait()

    async def tick(self) -> int:
        """Fire every enabled cron whose `next_run_date` has come; how many fired."""
        now = self.now()
        fired = 0
        for body in (await self.state.records.extras(KIND)).values():
            cron = msgspec.convert(body, Cron)
            due = cron.next_run_date
            if cron.enabled and due is not None and datetime.fromisoformat(due) <= now:
                fired += await self._fire(cron, body, now)
        return fired

    async def _delay(self) -> float | None:
        """Seconds until the earliest enabled cron is due (None: nothing scheduled)."""
        dates = [c.next_run_date for c in (await all_crons(self.state.records)).values()
                 if c.enabled and c.next_run_date is not None]
        if not dates:
            return None
        soonest = min(datetime.fromisoformat(d) for d in dates)
        return max(0.0, (soonest - self.now()).total_seconds())

    async def _fire(self, cron: Cron, body: Any, now: datetime) -> int:
        """Fire one due cron (1) or retire it (0), shielded: a shutdown cannot split the run
        from the new `next_run_date`, so a fired cron is never due again after a restart."""
        fired = 0
        with anyio.CancelScope(shield=True):
            fired = await self._fire_due(cron, body, now)
        return fired

    async def _fire_due(self, cron: Cron, body: Any, now: datetime) -> int:
        """`body` is the stored record `cron` was read from: what the claim compares."""
        records = self.state.records
        due = datetime.fromisoformat(cron.next_run_date or "")
        end = datetime.fromisoformat(cron.end_time) if cron.end_time else None
        if end is not None and due > end:
            await self._advance(cron, body, None)
            return 0
        if cron.thread_id is not None and await records.get_thread(cron.thread_id) is None:
            # The thread is gone: its crons go with it (as a foreign key would cascade).
            logger.warning("Deleting cron %s: its thread %s no longer exists",
                           cron.cron_id, cron.thread_id)
            await records.delete_extra(KIND, cron.cron_id)
            return 0
        if not await self._advance(cron, body, _following(cron, now, end)):
            return 0  # another scheduler fired this due time, or the cron changed meanwhile
        try:
            await self._start_run(cron)
        except ServerError as error:  # refused as a request would be: gone assistant, busy thread
            logger.warning("Cron %s did not start a run: %s", cron.cron_id, error.detail)
        except Exception:  # a failed firing must not stop the scheduler
            logger.exception("Cron %s could not start its run", cron.cron_id)
        return 1

    async def _advance(self, cron: Cron, body: Any, following: datetime | None) -> bool:
        """Move the cron to its next run date by compare-and-set against `body`, the record
        as this scheduler read it: False, nothing written, when another scheduler got there
        first or the cron was changed or deleted meanwhile (issue 19 §8: fire once across
        processes)."""
        updated = msgspec.structs.replace(
            cron, next_run_date=iso(following) if following is not None else None
        )
        return await self.state.records.replace_extra(KIND, cron.cron_id, body, updated)

    async def _start_run(self, cron: Cron) -> None:
        """One run with the cron's payload: on its thread, or stateless on a new one."""
        from .routes.runs import _create  # the one place runs are built
        from .schemas import RunCreate

        body = dict(cron.payload)
        body["assistant_id"] = cron.assistant_id
        body["metadata"] = {**(body.get("metadata") or {}), "cron_id": cron.cron_id}
        if cron.thread_id is None:
            body["on_completion"] = cron.on_run_completed or "delete"
        payload = msgspec.convert(body, RunCreate)
        await _create(self.state, payload, cron.thread_id)
