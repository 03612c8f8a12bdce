"""The run queue on PostgreSQL: many server processes, one queue (issue 19 §2-5, §7).

Same public methods as the embedded `queue.RunQueue`; the database decides who runs what
(`ledger.py`), so any host may create, wait for, or cancel any run. Workers claim runs from
the ledger while a slot is free; a heartbeat thread keeps their leases (`leases.py`); a reaper
on every host takes back runs whose host died. Wake-ups, completion and cancels are pushed
through an optional `Signals` (Redis pub/sub); without it, or while Redis is down, each host
polls the database every `poll` seconds and the queue keeps draining (§7).

Stateless runs stay in the receiving process (not durable), as in the embedded queue.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.abc
import asyncpg

from checkpoints import Fence
from checkpoints.postgres_files import connect_options

from ..attempt import (
    Active, EndedStateless, cancelled, create_subscribed, drop_checkpoints, failure, stream,
    thread_after, webhook, webhooks_enabled, with_,
)
from ..encode import dumps, plain
from ..errors import Conflict, UnprocessableEntity
from ..executor import Outcome, after_seconds, is_resumable, started_kwargs
from ..loops import keep_going
from ..metrics import WaitHistogram, queue_wait
from ..records import now
from ..schemas import Run, Thread
from ..thread_values import values_at
from .leases import Heartbeat
from .ledger import FENCE, Claim, Enqueued, Ledger, Reaped
from .queue_stats import queue_stats

__all__ = ["ClusterQueue"]

logger = logging.getLogger("http_adapter.cluster.queue")

_INFLIGHT = ("pending", "running")
_STOPPED = ("release", "lost")  # a drained or stale attempt: it writes nothing
_REMEMBERED = 10_000  # outcomes of runs that ended on this host, kept for `wait`


async def _no_reset(conn: asyncpg.Connection) -> None:
    """The ledger keeps no session state (its advisory locks are transaction-scoped; no SET,
    LISTEN or cursor), so asyncpg's reset query, one more round trip each time a connection
    goes back to the pool (~9 a run), is skipped."""


def _host_name() -> str:
    """This process's name in `server_runs.owner` (unique per process)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class ClusterQueue:
    """A host's share of the cluster's run queue. `serve()` runs it; `drain()` on SIGTERM."""

    def __init__(self, state: Any, url: str, *, signals: Any = None, host: str | None = None,
                 lease: float = 30.0, heartbeat: float | None = None, reaper: float = 5.0,
                 poll: float = 1.5, pool_size: int = 10, prepared_statements: bool = True
                 ) -> None:
        self.state = state
        self.url = url
        self.signals = signals
        self.host = host or _host_name()
        self._lease = lease
        self._beat_every = heartbeat or lease / 3
        self._reap_every = reaper
        self._poll = poll
        self._pool_size = pool_size
        self._options = connect_options(prepared_statements)
        self.ledger: Ledger | None = None
        self._heartbeat: Heartbeat | None = None
        self._slots = anyio.Semaphore(max(1, state.settings.workers))
        self._wake = anyio.Event()
        self._draining = False
        self._serving = False  # the dispatcher runs (`serve`)
        self._tasks: anyio.abc.TaskGroup | None = None  # where attempts run, while serving
        self.waits = WaitHistogram()  # how long runs waited for a worker of this host (/metrics)
        self._active: dict[str, Active] = {}
        self._claims: dict[str, Claim] = {}
        self._gone = anyio.Event()  # set whenever an attempt leaves this host
        self._waiters: dict[str, anyio.Event] = {}
        self._watchers: dict[str, int] = {}  # waiters per run in `_waiters` (`_watching`)
        # How runs ended here: answers `wait` without a query (stateless and rolled-back runs
        # have no stored outcome). Bounded: older ones are read from the database.
        self._outcomes: collections.OrderedDict[str, Outcome] = collections.OrderedDict()
        self._stateless: dict[str, Run] = {}
        self._stateless_due: dict[str, float] = {}
        self.ended_stateless = EndedStateless()  # issue 31 item 8: joinable once after the end
        self._unsubscribe: list[Any] = []
        self._webhooks = webhooks_enabled(state.settings)

    # -- lifecycle ------------------------------------------------------------------------------

    async def open(self) -> Ledger:
        """Connect and migrate (idempotent): `create` may be called before `serve`."""
        if self.ledger is None:
            pool = await asyncpg.create_pool(
                self.url, min_size=1, max_size=self._pool_size, reset=_no_reset,
                **self._options
            )
            self.ledger = Ledger(pool, host=self.host, lease=self._lease)
            await self.ledger.migrate()
            self._subscribe()  # waits and cancels here are pushed even when not serving
        return self.ledger

    async def serve(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
                    ) -> None:
        """Claim and run until cancelled (the app's lifespan owns this)."""
        ledger = await self.open()
        self._draining = False
        self._heartbeat = Heartbeat(
            self.url, ledger, interval=self._beat_every, on_cancel=self._cancel_local,
            on_lost=self._lost, connect_options=self._options,
        )
        self._heartbeat.start()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._dispatch, tg)
                tg.start_soon(self._reap_forever)
                self._tasks = tg
                self._serving = True
                task_status.started()
        finally:
            self._serving = False
            self._tasks = None
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self._heartbeat.stop)
                await self.close()

    async def close(self) -> None:
        """Close the database pool (idempotent; `open` or any call opens it again)."""
        ledger, self.ledger = self.ledger, None
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        if ledger is not None:
            await ledger.pool.close()

    def _subscribe(self) -> None:
        if self.signals is None:
            return
        self._unsubscribe = [
            self.signals.subscribe("wake", self._on_wake_signal),
            self.signals.subscribe("done", self._notify),
            self.signals.subscribe("cancel", self._on_cancel_signal),
        ]

    def wake(self) -> None:
        """A run may be claimable: the dispatcher looks at once instead of at its next poll."""
        self._wake.set()

    def _on_wake_signal(self, sender: str) -> None:
        """Another host's wake-up (our own came back through Redis: `wake()` was called)."""
        if sender != self.host:
            self.wake()

    def _signal(self, channel: str, message: str = "") -> None:
        if self.signals is not None:
            self.signals.publish(channel, message)

    async def stats(self) -> dict[str, Any]:
        """Every host's pending and running runs and their waits (`/metrics`)."""
        return await queue_stats((await self.open()).pool)

    async def drain(self, grace: float) -> None:
        """SIGTERM (issue 19 §5): stop claiming, let running attempts finish for `grace`
        seconds, then stop the rest and give them back without spending an attempt."""
        self._draining = True
        self.wake()
        with anyio.move_on_after(grace):
            while self._active:
                await self._left()
        claims = list(self._claims.values())
        for run_id in list(self._active):
            self._stop(run_id, "release")
        with anyio.move_on_after(max(self._lease, 5)):
            while self._active:
                await self._left()
        if claims and self.ledger is not None:
            released = await self.ledger.release(claims)
            logger.info("Drained: released %d runs to other hosts", len(released))
            if released:
                self._signal("wake", self.host)

    async def _left(self) -> None:
        self._gone = anyio.Event()
        await self._gone.wait()

    # -- creating -------------------------------------------------------------------------------

    async def create(self, run: Run, thread: Thread | None, *, subscribe: bool = False) -> Any:
        """Queue a thread run (its multitask strategy decided by the database) or a stateless
        one. With `subscribe`, returns (run, subscription) taken before the run can publish."""
        return await create_subscribed(
            self.state.broker, run, subscribe, lambda: self._create(run, thread)
        )

    async def _create(self, run: Run, thread: Thread | None) -> Run:
        if thread is None:
            self._stateless[run.run_id] = run
            self._stateless_due[run.run_id] = time.monotonic() + after_seconds(run.kwargs)
            self.wake()
            return run
        done = await self._enqueue(await self.open(), run, thread)
        if done is None:  # claimed by its enqueue: it runs here already
            return run
        for run_id in done.running:  # multitask interrupt / rollback: their owners stop them
            self._cancel_running(run_id, run.multitask_strategy)
        for ended in done.finalised:
            await self._ended(ended, cancelled(run.multitask_strategy))
        for run_id in done.deleted:  # its record is gone: `wait` answers from here
            self._remember(run_id, cancelled("rollback"))
            self._closed(run_id)
        self.wake()
        if not self._claims_here():
            self._signal("wake", self.host)
        return run

    async def _enqueue(self, ledger: Ledger, run: Run, thread: Thread) -> Enqueued | None:
        """Enqueue a thread run; None when its enqueue claimed it for this host and it started
        here (a free worker slot is taken first and given back when it was not)."""
        slot = self._free_slot()
        sent = time.monotonic()  # a claim's lease runs from here by this host's clock
        try:
            # Shielded: a run claimed for this host by the statement must be started here
            # even if the request was cancelled meanwhile (else it waits for its lease).
            with anyio.CancelScope(shield=slot):
                done = await ledger.enqueue(run, thread, now(), after_seconds(run.kwargs),
                                            started=self._started(run, 1) if slot else None)
        except BaseException as error:
            if slot:
                self._slots.release()
            if isinstance(error, Conflict):
                self.state.broker.forget(run.run_id)
            raise
        if done.claim is not None:
            if self._tasks is not None:
                self._start(self._tasks, done.claim, sent)
                return None
            await ledger.release([done.claim])  # stopped serving meanwhile: pending again
        if slot:
            self._slots.release()
        return done

    def _free_slot(self) -> bool:
        """Take a worker slot for a run created here, to claim it as it is enqueued: on an idle
        host a run then starts without the claim and the attempt's first write (two round
        trips and a hop through the dispatcher, issue 19 §7)."""
        if not self._claims_here() or self._tasks is None:
            return False
        try:
            self._slots.acquire_nowait()
        except anyio.WouldBlock:
            return False
        return True

    def _started(self, run: Run, attempt: int) -> Run:
        """The run as a worker of this host starts its `attempt` (what the record then shows)."""
        return with_(run, status="running", updated_at=now(),
                     kwargs=started_kwargs(run.kwargs, attempt, self.state.settings.api_url))

    def _claims_here(self) -> bool:
        """Whether this host's dispatcher is about to claim a run just queued here: it serves,
        is not draining and has a free worker slot. Then other hosts are not woken (§7 is
        about an idle host starting work at once: this one is it). Waking them anyway made
        every host race for every run and answer its waiter through Redis (2 processes were
        slower than 1). Should the slot be taken first, the others' poll finds the run."""
        return self._serving and not self._draining and self._slots.value > 0

    # -- dispatching ----------------------------------------------------------------------------

    async def _dispatch(self, tg: anyio.abc.TaskGroup) -> None:
        """Start runs while a worker slot is free; sleep until woken or the next poll. A failed
        claim (the database down) is retried with backoff (issue 26 §1)."""
        await keep_going("run dispatcher", lambda: self._dispatch_one(tg), log=logger,
                         until=lambda: self._draining, quiet=self.state.unavailable,
                         failing=self.state.failing)

    async def _dispatch_one(self, tg: anyio.abc.TaskGroup) -> None:
        await self._slots.acquire()
        started = more = False
        try:
            started, more = await self._start_one(tg)
        finally:
            if not started:
                self._slots.release()
        if not (started and more):  # nothing else was due: no empty claim, wait for a wake
            await self._idle()

    async def _start_one(self, tg: anyio.abc.TaskGroup) -> tuple[bool, bool]:
        """(a run was started, others may be due now)."""
        run = self._due_stateless()
        if run is not None:
            self._stateless_due.pop(run.run_id, None)
            self.waits.observe(queue_wait(run))
            tg.start_soon(self._run_stateless, run)
            return True, True
        if self._draining:
            return False, False
        sent = time.monotonic()
        claim = await self.ledger.claim() if self.ledger is not None else None
        if claim is None:
            return False, False
        self._start(tg, claim, sent)
        return True, claim.more

    def _start(self, tg: anyio.abc.TaskGroup, claim: Claim, sent: float) -> None:
        """Run a claimed attempt here (its worker slot is taken; its claim was sent at
        `sent`, by `time.monotonic()`)."""
        if not claim.claimed_before:  # a retried run waited while it ran before
            self.waits.observe(queue_wait(claim.run))
        active = Active(anyio.CancelScope(), fence=self._fence(claim))
        self._active[claim.run.run_id] = active
        self._claims[claim.run.run_id] = claim
        assert self._heartbeat is not None
        self._heartbeat.track(claim.run.run_id, claim.token, sent)
        tg.start_soon(self._run_claim, claim, active)

    def _fence(self, claim: Claim) -> Fence | None:
        """The attempt's right to write (issue 26): its checkpoints are stored only while its
        token is the run's (checked in the statement that stores them, `ledger.FENCE`), and
        none is even sent once its lease ran out by this host's clock."""
        if not hasattr(self.state.saver, "fenced"):
            return None
        heartbeat, run_id, token = self._heartbeat, claim.run.run_id, claim.token
        assert heartbeat is not None
        return Fence(FENCE, (run_id, str(token)), holds=lambda: heartbeat.holds(run_id, token))

    def _due_stateless(self) -> Run | None:
        clock = time.monotonic()
        for run_id, due in self._stateless_due.items():
            if due <= clock and run_id not in self._active:
                return self._stateless[run_id]
        return None

    async def _idle(self) -> None:
        wait = self._poll
        if self._stateless_due:
            wait = max(0.0, min(wait, min(self._stateless_due.values()) - time.monotonic()))
        with anyio.move_on_after(wait):
            await self._wake.wait()
        self._wake = anyio.Event()

    # -- executing ------------------------------------------------------------------------------

    async def _run_claim(self, claim: Claim, active: Active) -> None:
        run_id = claim.run.run_id
        others = True  # another run may wait for this one's end: the dispatcher looks again
        try:
            if claim.cancel_action is not None:  # cancelled between its claim and now
                self._stop(run_id, claim.cancel_action)
            others = await self._attempt(claim, active)
        except Exception as error:  # the graph's errors are handled inside; this is ours
            if _refused(active):  # a stale attempt stops; the run's owner ends it (issue 26)
                logger.warning("Run %s: stale attempt stopped (%s)", run_id, error)
                await self._refused(run_id)
                return
            logger.exception("Run %s failed in the queue", run_id)
            outcome = failure(error)
            self.state.broker.publish(run_id, "error", dumps(outcome.error))
            try:
                # A NUL in the run's values (refused by jsonb, so the end of the attempt was
                # not written): the run ends in error, its thread keeps its last stored values
                # (retrying would run the graph again to the same refusal).
                refused = isinstance(error, UnprocessableEntity)
                await self._settle(claim, claim.run, outcome, active, values=not refused)
            except Exception:  # e.g. the database is down: the reaper retries the run
                logger.exception("Run %s could not be closed out", run_id)
        finally:
            if self._heartbeat is not None:
                self._heartbeat.untrack(run_id)
            self._active.pop(run_id, None)
            self._claims.pop(run_id, None)
            self._gone.set()
            self._slots.release()
            if others:  # else no run waited for this one: no claim that would find nothing
                self.wake()

    async def _attempt(self, claim: Claim, active: Active) -> bool:
        """Run one attempt; False when it ended with no other run of its thread in flight."""
        state = self.state
        assert self.ledger is not None
        run = claim.run if claim.started else self._started(claim.run, claim.attempt)
        # Its events are dropped once a later attempt wrote the stream (issue 26).
        state.broker.open(run.run_id, resumable=is_resumable(run.kwargs), attempt=claim.attempt)
        if not claim.started and not await self.ledger.started(claim, run):
            await self._stale(run.run_id)
            return True
        # A run claimed before resumes from its checkpoints if it wrote any, whatever the
        # attempt number says (a drained run gave its attempt back): finished steps are not
        # run again (§3). A first claim has none: no look-up.
        outcome = await stream(state, run, active, stateless=False, attempt=claim.attempt,
                               resume=claim.claimed_before)
        if active.action == "release":
            # Given back now: once this attempt ends its lease is no longer renewed, and had
            # it waited for the drain's slower attempts, the reaper would have taken the run
            # back and spent an attempt.
            if await self.ledger.release([claim]):
                self._signal("wake", self.host)
            return True
        if active.action in _STOPPED:
            return True
        if _refused(active):
            # Stale (issue 26): a write was refused or the lease ran out; the run's owner, or
            # the reaper once the lease lapsed, ends it. Nothing of this attempt is written.
            logger.warning("Run %s: stale attempt stopped (its lease ran out)", run.run_id)
            await self._refused(run.run_id)
            return True
        return await self._settle(claim, run, outcome, active)

    async def _refused(self, run_id: str) -> None:
        """A stale attempt stopped: its run may be gone (its thread was deleted), then nobody
        else ends its stream and waiters (`_stale`)."""
        try:
            await self._stale(run_id)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
            logger.warning("Run %s: stale attempt not closed out: %s", run_id, error)

    async def _settle(self, claim: Claim, run: Run, outcome: Outcome, active: Active, *,
                      values: bool = True) -> bool:
        """Write the attempt's end (token-conditioned), then tell waiters and webhooks;
        without `values`, the thread's stored values are kept (not read from checkpoints).
        False when the end was written and no other run of the thread is in flight."""
        assert self.ledger is not None
        thread = await self.ledger.thread(run.thread_id)
        stamp = now()
        if active.action == "rollback":
            await drop_checkpoints(self.state.saver, run)
            after = await self._thread_after(thread, outcome, run)
            if await self.ledger.finish_rollback(claim, after, stamp):
                self._remember(run.run_id, outcome)  # its record is gone: `wait` answers here
                self._closed(run.run_id)
            else:
                await self._stale(run.run_id)
            return True
        ended = with_(run, status=outcome.status, updated_at=stamp)
        if values or thread is None:
            after = await self._thread_after(thread, outcome, run)
        else:
            after = with_(thread, status="error", error=outcome.error, updated_at=stamp)
        finished = await self.ledger.finish(claim, ended, _stored(outcome, after), after, stamp)
        if not finished.written:
            await self._stale(run.run_id)
            return True
        await self._ended(ended, outcome)
        return finished.others

    async def _stale(self, run_id: str) -> None:
        """The attempt's end was refused. If another host owns the run now, its stream goes
        on there; if the run was deleted (its thread was), nobody else will end it."""
        assert self.ledger is not None
        if await self.ledger.state(run_id) is None:
            self._closed(run_id)

    async def _thread_after(self, thread: Thread | None, outcome: Outcome,
                            run: Run | None = None) -> Thread | None:
        """The thread's record as if no other run were in flight (the ledger makes it busy
        when one is, under the thread's row lock); `run`: the run that ended, whose graph
        names the thread (issue 28)."""
        if thread is None:
            return None
        return await thread_after(self.state, thread, outcome, others=False, run=run)

    async def _ended(self, run: Run, outcome: Outcome) -> None:
        self._remember(run.run_id, outcome)
        self._closed(run.run_id)
        if self._webhooks and run.kwargs.get("webhook"):
            await webhook(self.state, run.kwargs["webhook"], run, outcome)

    def _remember(self, run_id: str, outcome: Outcome) -> None:
        self._outcomes[run_id] = outcome
        while len(self._outcomes) > _REMEMBERED:
            self._outcomes.popitem(last=False)

    def _closed(self, run_id: str) -> None:
        """A run ended here: end its stream, wake its waiters on every host."""
        self.state.broker.close(run_id)
        self._notify(run_id)
        self._signal("done", run_id)

    async def _run_stateless(self, run: Run) -> None:
        active = Active(anyio.CancelScope())
        self._active[run.run_id] = active
        self._stateless_due.pop(run.run_id, None)
        try:
            outcome = await stream(self.state, run, active, stateless=True, attempt=1,
                                   resume=False)
        except Exception as error:
            logger.exception("Stateless run %s failed in the queue", run.run_id)
            outcome = failure(error)
        finally:
            self._active.pop(run.run_id, None)
            self._gone.set()
            self._slots.release()
        self._end_stateless(run, outcome)
        if self._webhooks and run.kwargs.get("webhook"):
            await webhook(self.state, run.kwargs["webhook"], with_(run, status=outcome.status),
                          outcome)

    def _end_stateless(self, run: Run, outcome: Outcome) -> None:
        self._remember(run.run_id, outcome)
        if self._stateless.pop(run.run_id, None) is not None:
            self.ended_stateless.add(run, outcome)
        self._stateless_due.pop(run.run_id, None)
        self.state.broker.close(run.run_id)
        self._notify(run.run_id)

    # -- the reaper -----------------------------------------------------------------------------

    async def _reap_forever(self) -> None:
        await keep_going("reaper", self._reap_turn, log=logger, quiet=self.state.unavailable,
                         failing=self.state.failing)

    async def _reap_turn(self) -> None:
        await anyio.sleep(self._reap_every)
        await self.reap()

    async def reap(self) -> Reaped | None:
        """One pass of the reaper (None: another host is reaping)."""
        assert self.ledger is not None
        reaped = await self.ledger.reap(now())
        if reaped is None:
            return None
        if reaped.requeued:
            logger.warning("Requeued %d runs whose lease lapsed", len(reaped.requeued))
            self.wake()
            self._signal("wake", self.host)
        for run in reaped.rolled_back:
            await drop_checkpoints(self.state.saver, run)
        for run in reaped.interrupted + reaped.rolled_back + reaped.exhausted:
            try:
                await self._after_reaped(run)
            except Exception:  # the run and thread are already final in the database
                logger.exception("Run %s: thread values after reaping not refreshed", run.run_id)
        return reaped

    async def _after_reaped(self, run: Run) -> None:
        """A run the reaper ended: its thread's values from the checkpoints, waiters woken."""
        assert self.ledger is not None
        found = await self.ledger.state(run.run_id)
        outcome = (await _outcome(self.state, found[1]) if found and found[1]
                   else cancelled("rollback"))
        thread = await self.ledger.thread(run.thread_id)
        if thread is not None and thread.status != "busy":
            after = await thread_after(self.state, thread, outcome, others=False)
            await self.ledger.settle_thread(after, now())
        await self._ended(with_(run, status=outcome.status), outcome)

    # -- control --------------------------------------------------------------------------------

    async def cancel(self, run_id: str, action: str = "interrupt") -> None:
        """Stop a run, durably: its cancel flag is set in the database (the owner's heartbeat
        and the reaper read it back) and signalled; a pending run ends at once. `delete` (its
        thread is being deleted) is `interrupt` here: a deleted run's end is refused anyway."""
        action = "interrupt" if action == "delete" else action
        if run_id in self._stateless:
            self._cancel_stateless(run_id, action)
            return
        ledger = await self.open()
        status = await ledger.request_cancel(run_id, action)
        if status == "running":
            self._cancel_running(run_id, action)
        elif status == "pending":
            await self._cancel_pending(run_id, action)

    async def _cancel_pending(self, run_id: str, action: str) -> None:
        assert self.ledger is not None
        body = await self.ledger.run(run_id)
        if body is None:
            return
        outcome = cancelled(action)
        thread = await self._thread_after(await self.ledger.thread(body.thread_id), outcome)
        ended = await self.ledger.cancel_pending(run_id, action, thread, now())
        if ended is None:  # claimed meanwhile: its owner sees the flag
            self._cancel_running(run_id, action)
            return
        await self._ended(ended, outcome)

    def _cancel_running(self, run_id: str, action: str) -> None:
        if run_id in self._active:
            self._stop(run_id, action)
        else:
            self._signal("cancel", f"{action} {run_id}")

    def _cancel_stateless(self, run_id: str, action: str) -> None:
        if run_id in self._active:
            self._stop(run_id, action)
        else:
            self._end_stateless(self._stateless[run_id], cancelled(action))

    def _stop(self, run_id: str, action: str) -> None:
        active = self._active.get(run_id)
        if active is not None and active.action is None:
            active.action = action
            active.scope.cancel()

    def _cancel_local(self, run_id: str, action: str) -> None:
        """The heartbeat read a cancel flag (the path that works without Redis)."""
        self._stop(run_id, action)

    def _on_cancel_signal(self, message: str) -> None:
        action, _, run_id = message.partition(" ")
        self._stop(run_id, action)

    def _lost(self, run_id: str) -> None:
        """Our lease lapsed and the run went back to the queue: this attempt is stale."""
        logger.warning("Run %s lost its lease; stopping the stale attempt", run_id)
        self._stop(run_id, "lost")

    def _notify(self, run_id: str) -> None:
        event = self._waiters.pop(run_id, None)
        if event is not None:
            event.set()

    # -- reading --------------------------------------------------------------------------------

    async def wait(self, run_id: str) -> Outcome | None:
        """Until the run ends, on whichever host it runs; its stored outcome."""
        seen = False
        while True:
            if run_id in self._stateless:
                await self._wait_signal(run_id, None)
                continue
            if run_id in self._outcomes:
                return self._outcomes[run_id]
            # Watched BEFORE the look-up: a completion pushed while the query is in flight
            # sets the event instead of finding no waiter (the waiter then slept a whole poll:
            # 10 clients over 2 processes ran 31 runs/s, most of their time in that sleep).
            with self._watching(run_id) as event:
                found = await (await self.open()).state(run_id)
                if found is None:  # gone while we waited: rolled back on another host
                    return cancelled("rollback") if seen else None
                seen = True
                status, stored, _ = found
                if status not in _INFLIGHT:
                    return await _outcome(self.state, stored) if stored is not None else None
                with anyio.move_on_after(self._poll):
                    await event.wait()

    @contextlib.contextmanager
    def _watching(self, run_id: str) -> Iterator[anyio.Event]:
        """The event `_notify(run_id)` sets, shared by this host's waiters of the run and
        dropped with the last of them (a run that ended unseen leaves nothing behind)."""
        event = self._waiters.setdefault(run_id, anyio.Event())
        self._watchers[run_id] = self._watchers.get(run_id, 0) + 1
        try:
            yield event
        finally:
            left = self._watchers.pop(run_id) - 1
            if left:
                self._watchers[run_id] = left
            elif self._waiters.get(run_id) is event:
                del self._waiters[run_id]

    async def _wait_signal(self, run_id: str, timeout: float | None) -> None:
        with self._watching(run_id) as event, anyio.move_on_after(
            timeout if timeout is not None else 3600
        ):
            await event.wait()

    async def outcome(self, run_id: str) -> Outcome | None:
        """How the run ended, None while it is in flight (any host answers)."""
        if run_id in self._outcomes:
            return self._outcomes[run_id]
        if run_id in self._stateless:
            return None
        found = await (await self.open()).state(run_id)
        if found is None or found[0] in _INFLIGHT or found[1] is None:
            return None
        return await _outcome(self.state, found[1])

    async def finished(self, run_id: str) -> bool:
        """Whether a run is over (or unknown): for a broker deciding an endless stream ended."""
        if run_id in self._stateless:
            return False
        return not await (await self.open()).in_flight(run_id)

    def busy(self) -> int:
        """Runs executing on this host now (for /metrics and the shutdown's drain)."""
        return len(self._active)

    def waiting_stateless(self) -> list[Run]:
        """Stateless runs this host holds that no worker has taken yet (`/metrics`)."""
        return [self._stateless[run_id] for run_id in self._stateless_due
                if run_id in self._stateless]

    def pool_stats(self) -> dict[str, int]:
        """The queue's connection pool: size, connections in use, bound (for /metrics)."""
        if self.ledger is None:
            return {}
        pool = self.ledger.pool
        size = pool.get_size()
        return {"size": size, "in_use": size - pool.get_idle_size(), "max": pool.get_max_size()}

    def stateless(self, run_id: str) -> Run | None:
        """A stateless run (kept by the host that received it) while in flight: joinable."""
        return self._stateless.get(run_id)

    async def attempt(self, run_id: str) -> int:
        """The run's current (or last) attempt number."""
        if run_id in self._stateless:
            return 1
        found = await (await self.open()).state(run_id)
        return max(1, found[2]) if found is not None else 1


def _refused(active: Active) -> bool:
    """Whether the attempt lost its right to write (issue 26): it must not end the run."""
    return active.fence is not None and not active.fence.holds()


def _stored(outcome: Outcome, thread: Thread | None = None) -> dict[str, Any]:
    """An outcome as the `outcome` column keeps it (plain JSON). Not `dataclasses.asdict`:
    it deep-copies the values first (1.5 ms a run once a thread's list held ~900 items).
    Values that are the thread's whole state at the checkpoint its record names are stored
    as that name (issue 32: a copy in every run's row made a long thread's runs quadratic)."""
    if outcome.whole and thread is not None and thread.values_checkpoint is not None:
        at = {"thread_id": thread.thread_id, "checkpoint_id": thread.values_checkpoint,
              "graph_id": (thread.metadata or {}).get("graph_id")}
        return plain({"status": outcome.status, "values_at": at, "error": outcome.error,
                      "interrupts": outcome.interrupts})
    return plain({"status": outcome.status, "values": outcome.values, "error": outcome.error,
                  "interrupts": outcome.interrupts})


async def _outcome(state: Any, stored: dict[str, Any]) -> Outcome:
    """A stored outcome, its values read back from the checkpoint it names (issue 32)."""
    values, at = stored.get("values"), stored.get("values_at")
    if at is not None:
        values = await values_at(state, at["thread_id"], at.get("graph_id"),
                                 at["checkpoint_id"])
    return Outcome(stored["status"], values=values, error=stored.get("error"),
                   interrupts=stored.get("interrupts") or [])
