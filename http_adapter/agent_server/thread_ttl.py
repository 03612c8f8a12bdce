"""langgraph.json's `checkpointer.ttl` (issue 18): a background sweep of expired threads.

As LangSmith deployments document it: `default_ttl` (minutes) is how long a thread lives after
its last activity (its `updated_at`: creation, a run, a state update or a patch), checked every
`sweep_interval_minutes` (5 without it), at most `sweep_limit` threads a sweep (10000 without
it). Strategy `delete` (the default) removes the expired thread with its runs and checkpoints;
`keep_latest` keeps the thread and its latest checkpoint and drops older ones. A busy thread is
left for a later sweep. `langgraph dev` itself accepts the section but never sweeps.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import anyio.abc

from .loops import keep_going
from .state import ServerState

__all__ = ["ThreadSweeper"]

_log = logging.getLogger(__name__)
_DEFAULT_INTERVAL = 5.0  # minutes
_DEFAULT_LIMIT = 10_000


class ThreadSweeper:
    """One task in the app's lifespan: sweeps every interval until cancelled."""

    def __init__(self, state: ServerState, section: dict[str, Any]) -> None:
        self.state = state
        self.ttl = timedelta(minutes=float(section["default_ttl"]))
        self.interval = 60.0 * float(section.get("sweep_interval_minutes") or _DEFAULT_INTERVAL)
        self.limit = int(section.get("sweep_limit") or _DEFAULT_LIMIT)
        self.strategy = section.get("strategy") or "delete"

    async def serve(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
                    ) -> None:
        task_status.started()
        await keep_going("checkpointer.ttl sweep", self._turn, log=_log,
                         quiet=self.state.unavailable, failing=self.state.failing)

    async def _turn(self) -> None:
        await anyio.sleep(self.interval)
        await self.sweep()

    def _cutoff(self) -> str:
        return (datetime.now(UTC) - self.ttl).isoformat(timespec="microseconds")

    async def expired(self) -> list[str]:
        """Ids of the idle threads whose last activity is older than the TTL, oldest first."""
        old = [t for t in await self.state.records.threads_updated_before(self._cutoff())
               if t.status != "busy"]
        old.sort(key=lambda t: t.updated_at)
        return [t.thread_id for t in old[:self.limit]]

    async def sweep(self) -> int:
        """Apply the strategy to the expired threads; how many it touched.

        Safe on several processes sharing one record store (issue 19): each thread is read
        again just before it goes, so one a run touched since the scan stays and one already
        deleted is skipped; deleting an absent thread or its checkpoints is a no-op, so two
        sweeps racing on one thread both succeed (and may both count it)."""
        found = await self.expired()
        if not found:
            return 0
        if self.strategy == "keep_latest":
            await self.state.saver.aprune(found, strategy="keep_latest", keep_last=1)
            return len(found)
        deleted = 0
        for thread_id in found:
            thread = await self.state.records.get_thread(thread_id)
            if thread is None or thread.status == "busy" or thread.updated_at >= self._cutoff():
                continue
            await self.state.saver.adelete_thread(thread_id)
            await self.state.records.delete_thread(thread_id)
            deleted += 1
        return deleted
