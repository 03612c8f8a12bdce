"""The run queue and its worker pool, inside the server process.

- A run starts the moment it is created: creating one wakes the workers (no polling).
- Runs of one thread run one at a time, in creation order; `after_seconds` delays a run.
- Cancellation (action interrupt | rollback), a per-run timeout and webhooks on completion.
- Thread status follows SPEC §3 in every path: busy while a run is pending or running, then
  error / interrupted / idle from how the last run ended, including cancellation.
- On start-up, runs left "running" by a dead process run again from their last checkpoint
  (attempt + 1) and pending runs run: none is lost or left "running".
- On shutdown, `drain(grace)` stops taking runs and gives the running ones `grace` seconds;
  what is still running then is recovered by the next start (issue 19 §5).
"""

from __future__ import annotations

import collections
import logging
import time
from typing import Any

import anyio
import anyio.abc

from .attempt import (
    Active, EndedStateless, cancelled, create_subscribed, drop_checkpoints, stream, thread_after, webhook,
    webhooks_enabled, with_,
)
from .metrics import WaitHistogram, queue_wait
from .encode import dumps
from .errors import Conflict
from .executor import Outcome, after_seconds, is_resumable, started_kwargs
from .loops import keep_going
from .records import now
from .schemas import Run, Thread
from .state import ServerState

__all__ = ["RunQueue"]

logger = logging.getLogger("http_adapter.queue")

# Outcomes of the runs that ended last, kept for `wait`/`outcome` (issue 26 §3: all of them
# were kept, 279 MB for 1,200 runs of 100 KB). Few suffice: a run's waiters are woken when it
# ends and read it at once; a later `join` answers from the records, as after a restart.
_REMEMBERED = 100


class RunQueue:
    def __init__(self, state: ServerState) -> None:
        self.state = state
        self._idle: collections.deque[anyio.Event] = collections.deque()  # one per idle worker
        self._pending_wakes = 0  # wakes that found no idle worker: the next one to idle re-checks
        self._active: dict[str, Active] = {}
        self._done: dict[str, anyio.Event] = {}
        self._outcomes: collections.OrderedDict[str, Outcome] = collections.OrderedDict()
        self._attempts: dict[str, int] = {}
        self._stateless: dict[str, Run] = {}
        self.ended_stateless = EndedStateless()  # issue 31 item 8: joinable once after the end
        self._not_before: dict[str, float] = {}
        self._draining = False
        self.waits = WaitHistogram()  # how long runs waited for a worker (/metrics)
        self._api_url = state.settings.api_url
        self._webhooks = webhooks_enabled(state.settings)

    # -- lifecycle ------------------------------------------------------------------------------

    async def serve(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Recover, then run the workers until cancelled (the app's lifespan owns this)."""
        await self._recover()
        async with anyio.create_task_group() as tg:
            for _ in range(self.state.settings.workers):
                tg.start_soon(self._worker)
            task_status.started()

    async def _recover(self) -> None:
        records = self.state.records
        for run in await records.runs_with_status("running"):
            self._attempts[run.run_id] = self._attempts.get(run.run_id, 1) + 1
            await records.put_run(with_(run, status="pending"))
        pending = await records.runs_with_status("pending")
        inflight = {run.run_id for run in pending}
        for run_id, attempt in (await records.extras("run_attempt")).items():
            # Only in-flight runs': older versions left one for every run (issue 26 §3); they
            # stay in the file (a delete each would slow the first start by ~1 ms per run).
            if run_id in inflight:
                self._attempts[run_id] = max(self._attempts.get(run_id, 1), int(attempt))
        for run in pending:
            self.state.broker.open(run.run_id, resumable=is_resumable(run.kwargs))
            self._done.setdefault(run.run_id, anyio.Event())
        self.wake()

    async def drain(self, grace: float) -> None:
        """Take no more runs; wait up to `grace` seconds for the running ones (SIGTERM).

        Runs still running after it stay "running" in the records: the next start re-runs
        them from their last checkpoint (`_recover`), so none is lost.
        """
        self._draining = True
        for event in self._idle:
            event.set()
        with anyio.move_on_after(grace):
            while self._active:
                await anyio.sleep(0.02)

    def busy(self) -> int:
        """Runs this process executes now (its busy workers)."""
        return len(self._active)

    def waiting_stateless(self) -> list[Run]:
        """Stateless runs this process holds that no worker has taken yet (`/metrics`)."""
        return [run for run_id, run in self._stateless.items() if run_id not in self._active]

    def wake(self) -> None:
        """Wake one idle worker (not all of them: each would rescan the queue for nothing)."""
        while self._idle:
            event = self._idle.popleft()
            if not event.is_set():
                event.set()
                return
        self._pending_wakes += 1

    # -- creating -------------------------------------------------------------------------------

    async def create(self, run: Run, thread: Thread | None, *, subscribe: bool = False) -> Any:
        """Queue a thread run (applying its multitask strategy) or a stateless one.

        With `subscribe`, returns (run, subscription): the subscription is taken before the
        run can publish anything, so a streaming caller misses nothing.
        """
        self._done[run.run_id] = anyio.Event()
        return await create_subscribed(
            self.state.broker, run, subscribe, lambda: self._create(run, thread)
        )

    async def _create(self, run: Run, thread: Thread | None) -> Run:
        after = after_seconds(run.kwargs)
        if after:
            self._not_before[run.run_id] = time.monotonic() + float(after)
        if thread is None:
            self._stateless[run.run_id] = run
            self.wake()
            return run
        records = self.state.records
        inflight = await self._inflight(thread.thread_id)
        strategy = run.multitask_strategy
        if inflight and strategy == "reject":
            self.state.broker.forget(run.run_id)
            self._done.pop(run.run_id, None)
            raise Conflict(
                "Thread is already running a task. Wait for it to finish or choose a different "
                "multitask strategy."
            )
        await records.put_runs([run], [with_(thread, status="busy", updated_at=now())])
        if inflight and strategy in ("interrupt", "rollback"):
            for other in inflight:
                await self.cancel(other.run_id, strategy)
        self.wake()
        return run

    # -- workers --------------------------------------------------------------------------------

    async def _eligible(self) -> tuple[Run | None, float | None]:
        """The oldest runnable run, and how long until a delayed one becomes runnable.

        The embedded `Records` getters never suspend, so this scan and the claim in `_worker`
        stay one atomic step, as when they were plain dict reads."""
        now_ = time.monotonic()
        soonest: float | None = None
        records = self.state.records
        busy_threads = {
            r.thread_id for rid in list(self._active)
            if (r := await records.get_run(rid)) is not None
        }
        candidates = list(self._stateless.values()) + await records.runs_with_status("pending")
        candidates.sort(key=lambda r: r.created_at)
        for run in candidates:
            if run.run_id in self._active:
                continue
            start = self._not_before.get(run.run_id)
            if start is not None and start > now_:
                soonest = start - now_ if soonest is None else min(soonest, start - now_)
                continue
            if run.run_id not in self._stateless and run.thread_id in busy_threads:
                continue
            return run, soonest
        return None, soonest

    async def _worker(self) -> None:
        # A failing turn (the records unreadable) is retried with backoff (issue 26 §1): its
        # exception would end the lifespan's task group and every background task with it.
        await keep_going("run worker", self._turn, until=lambda: self._draining, log=logger,
                         quiet=self.state.unavailable, failing=self.state.failing)

    async def _turn(self) -> None:
        """Run the oldest eligible run, or wait until one may be."""
        run, wait = await self._eligible()
        if run is None:
            if self._pending_wakes:
                self._pending_wakes -= 1
                return
            event = anyio.Event()
            self._idle.append(event)
            with anyio.move_on_after(wait if wait is not None else 3600):
                await event.wait()
            if not event.is_set():  # timed out (a delayed run is due): leave the line
                try:
                    self._idle.remove(event)
                except ValueError:
                    pass
            return
        active = Active(anyio.CancelScope())
        self._active[run.run_id] = active
        if self._attempts.get(run.run_id, 1) == 1:  # a retry waited while it ran before
            self.waits.observe(queue_wait(run))
        try:
            await self._execute(run, active)
        except Exception as error:  # the graph's errors are handled inside; this is ours
            logger.exception("Run %s failed in the queue", run.run_id)
            await self._fail(run, error, active)
        finally:
            self._active.pop(run.run_id, None)
            self._not_before.pop(run.run_id, None)
            self.wake()

    # -- executing ------------------------------------------------------------------------------

    async def _execute(self, run: Run, active: Active) -> None:
        stateless = run.run_id in self._stateless
        records = self.state.records
        attempt = self._attempts.get(run.run_id, 1)
        if not stateless:
            run = with_(run, status="running", updated_at=now(),
                        kwargs=started_kwargs(run.kwargs, attempt, self._api_url))
            await records.put_run(run)
            if attempt > 1:  # a first attempt is the default: no record per run (issue 26 §3)
                await records.put_extra("run_attempt", run.run_id, attempt)
        outcome = await stream(self.state, run, active, stateless=stateless, attempt=attempt,
                               resume=attempt > 1)
        await self._finish(run, outcome, stateless, active)

    async def _finish(self, run: Run, outcome: Outcome, stateless: bool, active: Active) -> None:
        state = self.state
        records = state.records
        if active.action == "delete" and not stateless:
            # its thread is being deleted (issue 31): write nothing that would bring it back,
            # and drop the checkpoints its last step saved after the thread's were deleted
            await state.saver.adelete_thread(run.thread_id)
            outcome = cancelled("interrupt")
        elif active.action == "rollback" and not stateless:
            await self._rollback(run)
        elif not stateless:
            updated = with_(run, status=outcome.status, updated_at=now())
            thread = await records.get_thread(run.thread_id)
            threads = (
                [await self._thread_after(thread, outcome, finished=run.run_id, run=run)]
                if thread is not None else []
            )
            await records.put_runs([updated], threads)
            run = updated
        await self._forget_attempt(run.run_id)
        self._remember(run.run_id, outcome)
        if self._stateless.pop(run.run_id, None) is not None:
            self.ended_stateless.add(run, outcome)
        state.broker.close(run.run_id)
        done = self._done.pop(run.run_id, None)
        if done is not None:
            done.set()
        if self._webhooks and run.kwargs.get("webhook"):
            await webhook(self.state, run.kwargs["webhook"], run, outcome)

    def _remember(self, run_id: str, outcome: Outcome) -> None:
        """Keep the outcome for the run's waiters; only the last `_REMEMBERED` (issue 26 §3)."""
        self._outcomes[run_id] = outcome
        while len(self._outcomes) > _REMEMBERED:
            self._outcomes.popitem(last=False)

    async def _forget_attempt(self, run_id: str) -> None:
        """An ended run is never recovered: its attempt number goes (issue 26 §3)."""
        if self._attempts.pop(run_id, 1) > 1:
            await self.state.records.delete_extra("run_attempt", run_id)

    async def _fail(self, run: Run, error: Exception, active: Active) -> None:
        """The queue itself failed a run: end it as an error so no stream or wait hangs."""
        detail = {"error": type(error).__name__, "message": str(error)}
        self.state.broker.publish(run.run_id, "error", dumps(detail))
        try:
            await self._finish(run, Outcome("error", error=detail), run.run_id in self._stateless,
                               active)
        except Exception:
            logger.exception("Run %s could not be closed out", run.run_id)
            self.state.broker.close(run.run_id)
            done = self._done.pop(run.run_id, None)
            if done is not None:
                done.set()

    async def _thread_after(
        self, thread: Thread, outcome: Outcome, finished: str | None = None,
        run: Run | None = None,
    ) -> Thread:
        """Thread status, values and interrupts after a run ended (SPEC §3 rules)."""
        others = any(r.run_id != finished for r in await self._inflight(thread.thread_id))
        return await thread_after(self.state, thread, outcome, others=others, run=run)

    async def _inflight(self, thread_id: str) -> list[Run]:
        """The thread's runs not ended (the records index them: no scan of its every run)."""
        records = self.state.records
        return await records.runs_of(thread_id, "running") + await records.runs_of(
            thread_id, "pending")

    async def _rollback(self, run: Run) -> None:
        """Drop the run and the checkpoints it wrote: the thread is as before the run."""
        records = self.state.records
        await drop_checkpoints(self.state.saver, run)
        await records.delete_run(run.run_id)
        thread = await records.get_thread(run.thread_id)
        if thread is not None:
            await records.put_thread(
                await self._thread_after(thread, cancelled("rollback"), finished=run.run_id,
                                         run=run)
            )

    # -- control --------------------------------------------------------------------------------

    async def cancel(self, run_id: str, action: str = "interrupt") -> None:
        """Stop a run: a running one is cancelled, a pending one never starts. `delete`: as
        `interrupt`, for a run whose thread is being deleted (its end writes no record)."""
        active = self._active.get(run_id)
        if active is not None:
            active.action = action
            active.scope.cancel()
            await self._read_interrupted(run_id)
            return
        run = await self.state.records.get_run(run_id) or self._stateless.get(run_id)
        if run is None or run.status not in ("pending",):
            return
        self._active[run_id] = Active(anyio.CancelScope(), action)
        try:
            await self._finish(
                run, cancelled(action), run_id in self._stateless, self._active[run_id]
            )
        finally:
            self._active.pop(run_id, None)

    async def _read_interrupted(self, run_id: str) -> None:
        """A cancelled run reads `interrupted` at once, as the reference's (issue 31), while
        its worker winds it down (`_finish` writes its record again)."""
        run = await self.state.records.get_run(run_id)
        if run is not None and run.status == "running":
            await self.state.records.put_run(with_(run, status="interrupted", updated_at=now()))

    async def wait(self, run_id: str) -> Outcome | None:
        done = self._done.get(run_id)
        if done is not None:
            await done.wait()
        return self._outcomes.get(run_id)

    async def outcome(self, run_id: str) -> Outcome | None:
        return self._outcomes.get(run_id)

    def stateless(self, run_id: str) -> Run | None:
        """A stateless run (not in the records) while it is pending or running: joinable."""
        return self._stateless.get(run_id)

    async def attempt(self, run_id: str) -> int:
        return self._attempts.get(run_id, 1)
