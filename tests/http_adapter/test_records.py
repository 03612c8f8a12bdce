"""The records protocol (issue 19, SCALEOUT §1) on the embedded `Records`, and the background
jobs that must stay correct when several server processes share one record store: crons fire
once (compare-and-set on the cron record) and thread TTL sweeps delete each thread once.

The "several processes" are two `ServerState`s (each with its own queue, saver and
scheduler) over one `Records` file, or over two `PgRecords` pools on one PostgreSQL database;
`_SlowReads` adds a delay after each listing read, as a slow round trip would, so every
scheduler reads the due cron before any writes."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from http_adapter.agent_server.crons import KIND, Cron, CronScheduler, cron_of, iso
from http_adapter.agent_server.queue import RunQueue
from http_adapter.agent_server.records import Records, RecordStats, RecordStore, now
from http_adapter.agent_server.schemas import Run, Thread
from http_adapter.agent_server.settings import Settings
from http_adapter.agent_server.state import ServerState, assistant_id_for
from http_adapter.agent_server.thread_ttl import ThreadSweeper

from . import graphs

NOW = datetime(2030, 1, 1, 5, 30, tzinfo=UTC)


def _thread(stamp: str | None = None, status: str = "idle") -> Thread:
    stamp = stamp or now()
    return Thread(thread_id=str(uuid.uuid4()), created_at=stamp, updated_at=stamp,
                  state_updated_at=stamp, status=status)  # type: ignore[arg-type]


def _run(thread_id: str, status: str = "pending") -> Run:
    stamp = now()
    return Run(run_id=str(uuid.uuid4()), thread_id=thread_id, assistant_id="a",
               created_at=stamp, updated_at=stamp, status=status)  # type: ignore[arg-type]


# -- the protocol ---------------------------------------------------------------------------------


def test_records_implements_every_protocol_method_async_and_hides_its_indexes() -> None:
    records = Records()
    assert isinstance(records, RecordStore)
    names = [n for n, v in vars(RecordStore).items()
             if inspect.isfunction(v) and not n.startswith("_")]
    assert "replace_extra" in names and "threads_updated_before" in names
    for name in names:
        assert inspect.iscoroutinefunction(getattr(records, name)), name
    public = [n for n, v in vars(records).items() if not n.startswith("_")]
    assert public == []  # nothing outside records.py can reach the indexes


@pytest.mark.anyio
async def test_records_queries_and_reload(tmp_path: Path) -> None:
    path = str(tmp_path / "records.sqlite")
    records = Records(path)
    await records.open()
    old, new = _thread("2020-01-01T00:00:00.000000+00:00"), _thread()
    busy = _thread("2020-01-02T00:00:00.000000+00:00", status="busy")
    for thread in (old, new, busy):
        await records.put_thread(thread)
    first, second = _run(old.thread_id, "success"), _run(old.thread_id)
    await records.put_runs([first, second], [busy])
    assert [t.thread_id for t in await records.threads_updated_before("2021")] == [
        old.thread_id, busy.thread_id]
    assert await records.runs_of(old.thread_id) == [first, second]
    assert await records.runs_with_status("pending") == [second]
    assert await records.stats() == RecordStats(
        assistants=0, threads={"idle": 2, "busy": 1}, runs={"success": 1, "pending": 1})
    await records.put_extra("cron", "c1", {"n": 1})
    await records.close()

    again = Records(path)
    await again.open()
    assert await again.get_run(second.run_id) == second
    assert await again.extras("cron") == {"c1": {"n": 1}}
    await again.delete_thread(old.thread_id)
    await again.delete_thread(old.thread_id)  # idempotent: two sweepers may race
    assert await again.get_run(first.run_id) is None
    assert await again.runs_with_status("pending") == []
    await again.close()


@pytest.mark.anyio
async def test_runs_not_ended_are_indexed_and_answer_as_a_full_scan_would(tmp_path: Path
                                                                        ) -> None:
    """The queue asks for a thread's pending and running runs at every create and pick: an
    index answers (a 1,000-turn thread's scan of every run grew each turn, issue 32). Every
    status change, deletion and reload keeps it what a scan of every run would say."""
    path = str(tmp_path / "records.sqlite")
    records = Records(path)
    await records.open()
    threads = [_thread() for _ in range(3)]
    runs = [_run(t.thread_id, s) for t in threads for s in ("success", "pending", "error")]
    await records.put_runs(runs, threads)

    async def agrees(store: Records) -> None:
        every = list(store._runs.values())
        for status in ("pending", "running", "success"):
            assert await store.runs_with_status(status) == [r for r in every if r.status == status]
            for thread in threads:
                assert await store.runs_of(thread.thread_id, status) == [
                    r for r in every if r.thread_id == thread.thread_id and r.status == status]
        assert await store.runs_with_status("pending", "running") == [
            r for r in every if r.status in ("pending", "running")]

    await agrees(records)
    running = msgspec.structs.replace(runs[1], status="running")
    await records.put_run(running)
    await agrees(records)
    await records.put_run(msgspec.structs.replace(running, status="success"))
    await agrees(records)
    await records.delete_run(runs[4].run_id)
    await records.delete_thread(threads[2].thread_id)
    await agrees(records)
    assert await records.runs_with_status("pending") == []
    await records.put_run(_run(threads[0].thread_id))
    await records.close()
    again = Records(path)
    await again.open()
    await agrees(again)
    assert len(await again.runs_with_status("pending")) == 1
    await again.close()


@pytest.mark.anyio
async def test_replace_extra_is_compare_and_set(tmp_path: Path) -> None:
    records = Records(str(tmp_path / "records.sqlite"))
    await records.open()
    assert not await records.replace_extra("cron", "c", {"n": 0}, {"n": 1})  # absent
    await records.put_extra("cron", "c", {"n": 0, "tag": "x"})
    results: dict[int, bool] = {}

    async def replace(value: int) -> None:
        results[value] = await records.replace_extra("cron", "c", {"tag": "x", "n": 0},
                                                     {"n": value, "tag": "x"})

    async with anyio.create_task_group() as tg:  # both compare before either write ends
        for value in (1, 2):
            tg.start_soon(replace, value)
    assert sorted(results.values()) == [False, True]
    winner = 1 if results[1] else 2
    assert await records.get_extra("cron", "c") == {"n": winner, "tag": "x"}
    assert not await records.replace_extra("cron", "c", {"n": 0, "tag": "x"}, {"n": 9})
    await records.close()
    reloaded = Records(str(tmp_path / "records.sqlite"))
    await reloaded.open()
    assert await reloaded.get_extra("cron", "c") == {"n": winner, "tag": "x"}
    await reloaded.close()


# -- several processes over one record store ------------------------------------------------------


class _Together:
    """The first listing of each kind returns once both hosts have read it (as two slow round
    trips would): neither writes before the other has read. A state, not a delay: a sleep let
    one host's read, held up on a loaded machine, come after the other's deletes (CI)."""

    def __init__(self, hosts: int = 2) -> None:
        self._hosts = hosts
        self._arrived: dict[str, int] = {}
        self._all: dict[str, anyio.Event] = {}
        self._gates: dict[str, anyio.Event] = {}

    def _event(self, listing: str) -> anyio.Event:
        return self._all.setdefault(listing, anyio.Event())

    def gate(self, listing: str) -> anyio.Event:
        """Held readers of `listing` go on only once this is set (a write between)."""
        return self._gates.setdefault(listing, anyio.Event())

    async def read(self, listing: str) -> None:
        """Until every host has read `listing` once."""
        with anyio.fail_after(10):
            await self._event(listing).wait()

    async def arrive(self, listing: str) -> None:
        self._arrived[listing] = self._arrived.get(listing, 0) + 1
        if self._arrived[listing] >= self._hosts:
            self._event(listing).set()
        await self.read(listing)
        gate = self._gates.get(listing)
        if gate is not None:
            with anyio.fail_after(10):
                await gate.wait()


class _SlowReads:
    """A `RecordStore` whose first listings return when both hosts have read them: readers
    that start together all see the state from before any of them writes."""

    def __init__(self, inner: RecordStore, together: _Together) -> None:
        self._inner = inner
        self._together = together

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def extras(self, kind: str) -> dict[str, Any]:
        found = await self._inner.extras(kind)
        await self._together.arrive("extras")
        return found

    async def threads_updated_before(self, stamp: str) -> list[Thread]:
        found = await self._inner.threads_updated_before(stamp)
        await self._together.arrive("threads_updated_before")
        return found


@pytest.fixture(params=["sqlite", "postgres"])
async def hosts(request: pytest.FixtureRequest, tmp_path: Path
                ) -> AsyncIterator[list[ServerState]]:
    """Two server states (two "processes", each with its own saver and queue) sharing one
    record store: one `Records` file, or two `PgRecords` pools on one PostgreSQL database."""
    states = [ServerState(Settings(graphs=graphs.GRAPHS, data_dir=tmp_path / name))
              for name in ("a", "b")]
    together = _Together()
    if request.param == "postgres":
        from http_adapter.agent_server.cluster.records import PgRecords

        url = request.getfixturevalue("pg_url")
        for state in states:
            state.records = _SlowReads(  # type: ignore[assignment]
                PgRecords(url, max_size=2), together)
            await state.open()
    else:
        await states[0].open()
        states[1].records = states[0].records
        for state in states:
            state.records = _SlowReads(state.records, together)  # type: ignore[arg-type, assignment]
    for state in states:
        state.queue = RunQueue(state)  # not served: created runs stay pending
    yield states
    await states[0].close()
    if request.param == "postgres":
        await states[1].close()
    else:
        await states[1].saver.aclose()


@pytest.mark.anyio
async def test_two_schedulers_fire_a_due_cron_once(hosts: list[ServerState]) -> None:
    records = hosts[0].records
    thread = await records.put_thread(_thread())
    cron = Cron(cron_id=str(uuid.uuid4()), assistant_id=assistant_id_for("agent"),
                thread_id=thread.thread_id, schedule="0 * * * *",
                payload={"input": {"x": 1}, "multitask_strategy": "enqueue"},
                next_run_date=iso(NOW - timedelta(minutes=30)), created_at=now())
    await records.put_extra(KIND, cron.cron_id, cron)
    fired: list[int] = []

    async def tick(scheduler: CronScheduler) -> None:
        fired.append(await scheduler.tick())

    async with anyio.create_task_group() as tg:
        for state in hosts:
            tg.start_soon(tick, CronScheduler(state, now=lambda: NOW))
    assert sorted(fired) == [0, 1]
    runs = await records.runs_of(thread.thread_id)
    assert len(runs) == 1 and runs[0].metadata["cron_id"] == cron.cron_id
    after = await cron_of(records, cron.cron_id)
    assert after is not None and after.next_run_date == iso(datetime(2030, 1, 1, 6, tzinfo=UTC))
    # Nothing due any more: a second round on both fires nothing.
    assert [await CronScheduler(s, now=lambda: NOW).tick() for s in hosts] == [0, 0]


@pytest.mark.anyio
async def test_two_thread_sweeps_at_once_delete_expired_threads_safely(
    hosts: list[ServerState],
) -> None:
    """Both sweeps succeed (deletes are idempotent); expired threads go with their runs; a
    busy one, a fresh one and one a run touched between the scan and the delete stay."""
    records = hosts[0].records
    old = [await records.put_thread(_thread(f"2020-01-0{i}T00:00:00.000000+00:00"))
           for i in range(1, 4)]
    touched = await records.put_thread(_thread("2020-01-04T00:00:00.000000+00:00"))
    busy = await records.put_thread(_thread("2020-01-05T00:00:00.000000+00:00", "busy"))
    fresh = await records.put_thread(_thread())
    await records.put_runs([_run(old[0].thread_id, "success")])
    deleted: list[int] = []

    async def sweep(state: ServerState) -> None:
        deleted.append(await ThreadSweeper(state, {"default_ttl": 60}).sweep())

    together = records._together  # type: ignore[attr-defined]
    gate = together.gate("threads_updated_before")

    async def touch() -> None:  # a run ends on it after the sweeps scanned, before they delete
        await together.read("threads_updated_before")
        await records.put_thread(msgspec.structs.replace(touched, updated_at=now()))
        gate.set()

    async with anyio.create_task_group() as tg:
        for state in hosts:
            tg.start_soon(sweep, state)
        tg.start_soon(touch)
    assert all(1 <= n <= len(old) for n in deleted) and len(deleted) == 2, deleted
    left = await records.search_threads()
    assert {t.thread_id for t in left} == {touched.thread_id, busy.thread_id, fresh.thread_id}
    assert await records.runs_of(old[0].thread_id) == []
