"""What only the SQLite saver promises: storage layout, durability, migrations, concurrency."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from checkpoints import SchemaError, SqliteSaver
from checkpoints import _sqlite_schema as schema
from checkpoints import _sqlite_writer as writer_module
from checkpoints.base import empty_checkpoint, thread_config


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "checkpoints.db"


@pytest.fixture
def saver(path: Path) -> Iterator[SqliteSaver]:
    with SqliteSaver(path) as opened:
        yield opened


def checkpoint_with(values: dict[str, Any], versions: dict[str, int]) -> Any:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = values
    checkpoint["channel_versions"] = versions
    return checkpoint


def execute(path: Path, *statements: str) -> list[Any]:
    """Run statements on an independent connection to the file; the last one's rows."""
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        rows: list[Any] = []
        for sql in statements:
            rows = conn.execute(sql).fetchall()
        return rows


def count(path: Path, table: str) -> int:
    """Rows committed to the file, as another connection sees them."""
    return int(execute(path, f"SELECT count(*) FROM {table}")[0][0])


def test_only_changed_channels_are_stored(saver: SqliteSaver, path: Path) -> None:
    values = {"big": "x" * 1000, "small": 0}
    config = saver.put(
        thread_config("t"),
        checkpoint_with(values, {"big": 1, "small": 1}),
        {},
        {"big": 1, "small": 1},
    )
    assert count(path, "blobs") == 2
    for step in range(1, 4):
        values = {"big": "x" * 1000, "small": step}
        versions = {"big": 1, "small": step + 1}
        config = saver.put(config, checkpoint_with(values, versions), {}, {"small": step + 1})
        assert count(path, "blobs") == 2 + step
    latest = saver.get_tuple(thread_config("t"))
    assert latest is not None
    assert latest.checkpoint["channel_values"] == values


def test_put_and_put_writes_are_durable_on_return(saver: SqliteSaver, path: Path) -> None:
    config = saver.put(thread_config("t"), checkpoint_with({"a": 1}, {"a": 1}), {}, {"a": 1})
    assert count(path, "checkpoints") == 1
    saver.put_writes(config, [("a", 2), ("b", 3)], "task")
    assert count(path, "writes") == 2


def test_data_survives_reopening(path: Path) -> None:
    with SqliteSaver(path) as first:
        config = first.put(
            thread_config("t"), checkpoint_with({"a": (1,)}, {"a": 1}), {"step": 1}, {"a": 1}
        )
        first.put_writes(config, [("a", 2)], "task")
    with SqliteSaver(str(path)) as second:
        loaded = second.get_tuple(thread_config("t"))
        assert loaded is not None
        assert loaded.checkpoint["channel_values"] == {"a": (1,)}
        assert loaded.metadata == {"step": 1}
        assert loaded.pending_writes == [("task", "a", 2)]


def test_a_sync_read_of_an_unknown_thread_answers_in_the_callers_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """"Nothing stored" is answered without the loop thread; any stored or queued checkpoint
    (this saver's or another's on the same file) still takes the full read."""
    path = tmp_path / "odd ?#% name.db"  # the probe opens the file by URI
    with SqliteSaver(path) as saver, SqliteSaver(path) as other:
        hops: list[str] = []
        real_run = saver._loop_thread.run

        def run(coro: Any) -> Any:
            hops.append("loop")
            return real_run(coro)

        monkeypatch.setattr(saver._loop_thread, "run", run)
        assert saver.get_tuple(thread_config("new")) is None
        assert hops == []

        # queued, not yet committed: the read waits for it (read your own writes)
        saver.put_nowait(thread_config("mine"), checkpoint_with({"a": 1}, {"a": 1}), {}, {"a": 1})
        mine = saver.get_tuple(thread_config("mine"))
        assert mine is not None and mine.checkpoint["channel_values"] == {"a": 1}

        # committed by another saver on the same file
        other.put(thread_config("theirs"), checkpoint_with({"b": 2}, {"b": 1}), {}, {"b": 1})
        theirs = saver.get_tuple(thread_config("theirs"))
        assert theirs is not None and theirs.checkpoint["channel_values"] == {"b": 2}
        missing_id = {"configurable": {**thread_config("theirs")["configurable"],
                                       "checkpoint_id": "no-such-id"}}
        before = len(hops)
        assert saver.get_tuple(missing_id) is None
        assert len(hops) == before  # a named checkpoint that is not there: no round trip
    with pytest.raises(RuntimeError):
        saver.get_tuple(thread_config("new"))  # closed: the probe no longer answers


def test_handed_over_changes_commit_together_and_flush(saver: SqliteSaver, path: Path) -> None:
    config = thread_config("t")
    for step in range(50):
        if step:
            saver.put_writes_nowait(config, [("n", step)], f"task-{step}")
        config = saver.put_nowait(
            config, checkpoint_with({"n": step}, {"n": step + 1}), {}, {"n": step + 1}
        )
    # A read waits for what was handed over before it.
    latest = saver.get_tuple(thread_config("t"))
    assert latest is not None
    assert latest.checkpoint["channel_values"] == {"n": 49}
    saver.flush()
    assert count(path, "checkpoints") == 50
    assert count(path, "writes") == 49


def test_a_caller_outrunning_the_writer_is_held_back(
    saver: SqliteSaver, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without a bound, a CPU-bound graph queues steps faster than the GIL-starved writer commits
    # them: memory grows and a crash loses them all. At most a batch in flight plus a full queue
    # may be uncommitted when `put_nowait` returns.
    monkeypatch.setattr(writer_module, "BACKLOG", 4)
    config = thread_config("t")
    for step in range(40):
        checkpoint = checkpoint_with({"n": step}, {"n": step + 1})
        config = saver.put_nowait(config, checkpoint, {}, {"n": step + 1})
        assert count(path, "checkpoints") >= step + 1 - 2 * 4
    saver.flush()
    assert count(path, "checkpoints") == 40


def test_a_put_held_back_lets_other_threads_hand_theirs_over(
    saver: SqliteSaver, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A put that finds the writer `BACKLOG` behind waits after handing its change over, outside
    # the lock that keeps puts in order: a concurrent step's other tasks go on handing theirs
    # over instead of queueing on that lock one commit at a time (fanout_to_subgraph_100x on
    # SQLite: ~430 -> ~300 ms).
    monkeypatch.setattr(writer_module, "BACKLOG", 4)
    monkeypatch.setattr(writer_module, "LINGER", 60.0)  # nothing commits before the backlog
    gate, waiting, committing = threading.Event(), threading.Event(), threading.Event()
    commit = writer_module.Rows.insert_and_commit

    def held(rows: Any, raw: Any, committed: Any = None) -> None:
        committing.set()
        gate.wait(30)
        commit(rows, raw, committed)

    monkeypatch.setattr(writer_module.Rows, "insert_and_commit", held)
    catch_up = saver._writer.catch_up

    def caught_up() -> None:
        waiting.set()
        catch_up()

    monkeypatch.setattr(saver._writer, "catch_up", caught_up)

    def puts(thread_id: str, steps: int) -> None:
        config = thread_config(thread_id)
        for step in range(steps):
            config = saver.put_nowait(config, checkpoint_with({"n": step}, {"n": step + 1}), {},
                                      {"n": step + 1})

    first = threading.Thread(target=puts, args=("a", 4))
    first.start()
    assert waiting.wait(20)  # its 4th put found the writer behind: it waits for the commit
    assert committing.wait(20)  # of all four, taken from the queue
    second = threading.Thread(target=puts, args=("b", 1))
    second.start()
    second.join(20)
    assert not second.is_alive() and first.is_alive()  # handed over while the first waits
    gate.set()
    first.join(30)
    saver.flush()
    assert count(path, "checkpoints") == 5


def test_a_failed_background_change_is_reported_by_flush(saver: SqliteSaver, path: Path) -> None:
    execute(
        path,
        "CREATE TRIGGER refuse BEFORE INSERT ON writes "
        "BEGIN SELECT RAISE(ABORT, 'writes refused'); END",
    )
    first = saver.put_nowait(thread_config("t"), checkpoint_with({}, {}), {}, {})
    saver.put_writes_nowait(first, [("a", 1)], "task")
    saver.put_nowait(first, checkpoint_with({}, {}), {}, {})

    with pytest.raises(sqlite3.IntegrityError, match="writes refused"):
        saver.flush()
    saver.flush()  # reported once
    # Only the failing change was lost; the others in its batch were committed.
    assert count(path, "checkpoints") == 2


def test_a_failed_durable_put_raises_to_its_caller(saver: SqliteSaver, path: Path) -> None:
    execute(
        path,
        "CREATE TRIGGER refuse BEFORE INSERT ON checkpoints "
        "BEGIN SELECT RAISE(ABORT, 'checkpoints refused'); END",
    )
    with pytest.raises(sqlite3.IntegrityError, match="checkpoints refused"):
        saver.put(thread_config("t"), checkpoint_with({"a": 1}, {"a": 1}), {}, {"a": 1})
    assert count(path, "blobs") == 0  # the checkpoint's blobs rolled back with it


def test_in_memory_database() -> None:
    with SqliteSaver(":memory:") as saver:
        config = saver.put(thread_config("t"), checkpoint_with({"a": 1}, {"a": 1}), {}, {"a": 1})
        saver.put_writes(config, [("a", 2)], "task")
        loaded = saver.get_tuple(thread_config("t"))
        assert loaded is not None
        assert loaded.pending_writes == [("task", "a", 2)]


def test_close_is_idempotent_and_final(path: Path) -> None:
    saver = SqliteSaver(path)
    saver.close()
    saver.close()
    with pytest.raises(RuntimeError, match="closed"):
        saver.put(thread_config("t"), checkpoint_with({}, {}), {}, {})


@pytest.mark.anyio
async def test_async_context_manager_and_flush(path: Path) -> None:
    async with SqliteSaver(path) as saver:
        saver.put_nowait(thread_config("t"), checkpoint_with({"a": 1}, {"a": 1}), {}, {"a": 1})
        await saver.aflush()
        assert count(path, "checkpoints") == 1
    await saver.aclose()


# --- migrations ---------------------------------------------------------------------------------


def saver_version(path: Path) -> int | None:
    """The saver's row in the file's shared schema table (None: no row)."""
    rows = execute(path, "SELECT version FROM graphrun_schema WHERE component = 'checkpoints'")
    return int(rows[0][0]) if rows else None


def test_a_file_without_the_saver_is_upgraded(path: Path) -> None:
    execute(path, "CREATE TABLE unrelated (x)", "INSERT INTO unrelated VALUES (1)")
    with SqliteSaver(path) as saver:
        saver.put(thread_config("t"), checkpoint_with({}, {}), {}, {})
    assert saver_version(path) == len(schema.MIGRATIONS)
    assert count(path, "unrelated") == 1
    assert execute(path, "PRAGMA user_version") == [(0,)]  # left for others to use


def test_an_older_file_is_upgraded_in_place(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with SqliteSaver(path) as saver:
        saver.put(thread_config("t"), checkpoint_with({"a": 1}, {"a": 1}), {}, {"a": 1})
    released = len(schema.MIGRATIONS)

    async def add_column(conn: Any) -> None:
        await conn.execute("ALTER TABLE checkpoints ADD COLUMN note TEXT NOT NULL DEFAULT ''")

    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, add_column])
    with SqliteSaver(path) as saver:
        loaded = saver.get_tuple(thread_config("t"))
        assert loaded is not None
        assert loaded.checkpoint["channel_values"] == {"a": 1}
    assert saver_version(path) == released + 1
    assert execute(path, "SELECT note FROM checkpoints") == [("",)]


def test_a_file_from_a_newer_release_is_refused(path: Path) -> None:
    SqliteSaver(path).close()
    newer = len(schema.MIGRATIONS) + 1
    execute(path, f"UPDATE graphrun_schema SET version = {newer} WHERE component = 'checkpoints'")
    with pytest.raises(SchemaError, match=f"schema version {newer} for 'checkpoints'"):
        SqliteSaver(path)
    assert saver_version(path) == newer


def test_a_failed_migration_leaves_the_file_untouched(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(conn: Any) -> None:
        await conn.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("migration bug")

    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, broken])
    with pytest.raises(RuntimeError, match="migration bug"):
        SqliteSaver(path)
    assert execute(path, "SELECT name FROM sqlite_master") == []


# --- concurrency --------------------------------------------------------------------------------


def run_steps(saver: SqliteSaver, thread_id: str, steps: int) -> None:
    config = thread_config(thread_id)
    for step in range(steps):
        if step:
            saver.put_writes(config, [("n", step)], f"task-{step}")
        config = saver.put(
            config, checkpoint_with({"n": step}, {"n": step + 1}), {}, {"n": step + 1}
        )


def test_two_savers_on_one_file_from_many_threads(path: Path) -> None:
    errors: list[BaseException] = []

    def worker(saver: SqliteSaver, thread_id: str) -> None:
        try:
            run_steps(saver, thread_id, 25)
            assert len(list(saver.list(thread_config(thread_id)))) == 25
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    with SqliteSaver(path) as one, SqliteSaver(path) as two:
        workers = [
            threading.Thread(target=worker, args=(saver, f"{name}-{i}"))
            for name, saver in (("one", one), ("two", two))
            for i in range(3)
        ]
        for thread in workers:
            thread.start()
        for thread in workers:
            thread.join()
    assert errors == []
    assert count(path, "checkpoints") == 6 * 25


@pytest.mark.anyio
async def test_async_tasks_on_two_thread_ids_of_one_file(path: Path) -> None:
    async def steps(saver: SqliteSaver, thread_id: str) -> None:
        config = thread_config(thread_id)
        for step in range(25):
            await saver.aput_writes(config, [("n", step)], "task") if step else None
            checkpoint = checkpoint_with({"n": step}, {"n": step + 1})
            config = await saver.aput(config, checkpoint, {}, {"n": step + 1})

    async with SqliteSaver(path) as one, SqliteSaver(path) as two:
        async with anyio.create_task_group() as group:
            group.start_soon(steps, one, "a")
            group.start_soon(steps, two, "b")
            group.start_soon(steps, one, "c")
        for thread_id in ("a", "b", "c"):
            latest = await two.aget_tuple(thread_config(thread_id))
            assert latest is not None
            assert latest.checkpoint["channel_values"] == {"n": 24}


@pytest.mark.anyio
async def test_sync_methods_from_a_worker_thread_of_a_running_loop(saver: SqliteSaver) -> None:
    await anyio.to_thread.run_sync(run_steps, saver, "t", 5)
    latest = await anyio.to_thread.run_sync(saver.get_tuple, thread_config("t"))
    assert latest is not None
    assert latest.checkpoint["channel_values"] == {"n": 4}


@pytest.mark.anyio
async def test_sync_methods_on_a_thread_running_an_event_loop(saver: SqliteSaver) -> None:
    asyncio.get_running_loop()  # the saver's own loop is separate, so this cannot deadlock
    run_steps(saver, "t", 3)
    assert len(list(saver.list(thread_config("t")))) == 3


def test_reads_after_close_raise(path: Path) -> None:
    saver = SqliteSaver(path)
    saver.close()
    with pytest.raises(RuntimeError, match="closed"):
        saver.get_tuple(thread_config("t"))


def test_the_wal_is_copied_into_the_file_in_the_background(path: Path) -> None:
    """Large puts do not wait for SQLite's inline WAL copy: the saver copies in the background,
    so the main file holds the data while the saver is still open, and it all reads back."""
    from checkpoints._sqlite_wal_copy import INLINE_PAGES, THRESHOLD

    payload = "x" * (256 << 10)  # 256 KiB per value
    count = 2 * THRESHOLD // len(payload) + 2
    with SqliteSaver(path) as saver:
        config = thread_config("t")
        for version in range(1, count + 1):
            checkpoint = checkpoint_with({"big": f"{version}{payload}"}, {"big": version})
            config = saver.put(config, checkpoint, {"step": version}, {"big": version})
        saver.flush()
        saver.wait_idle()
        copied = path.stat().st_size
        assert copied >= THRESHOLD  # without the background copy the file stays near empty
        assert INLINE_PAGES * 4096 > count * len(payload)  # so SQLite's inline copy never ran
        latest = saver.get_tuple(thread_config("t"))
        assert latest is not None
        assert latest.checkpoint["channel_values"]["big"] == f"{count}{payload}"
    with SqliteSaver(path) as reopened:
        assert reopened.get_tuple(config) is not None
    assert execute(path, "PRAGMA integrity_check") == [("ok",)]


def test_a_thread_id_is_any_value_with_a_str(saver: SqliteSaver) -> None:
    # issue 27: LangGraph's SQLite saver stores str(thread_id), so a UUID names a thread
    thread = uuid.uuid4()
    config = saver.put(thread_config(thread), checkpoint_with({"x": 1}, {"x": 1}), {}, {"x": 1})
    saver.put_writes(config, [("x", 2)], "task")
    for lookup in (thread, str(thread)):
        found = saver.get_tuple(thread_config(lookup))
        assert found is not None and found.checkpoint["channel_values"] == {"x": 1}
        assert found.pending_writes == [("task", "x", 2)]
        assert [t.config for t in saver.list(thread_config(lookup))] == [found.config]
    saver.delete_thread(thread)
    assert saver.get_tuple(thread_config(str(thread))) is None


@pytest.mark.anyio
async def test_a_uuid_thread_id_through_the_async_methods(saver: SqliteSaver) -> None:
    thread = uuid.uuid4()
    checkpoint = checkpoint_with({"x": 1}, {"x": 1})
    config = await saver.aput(thread_config(thread), checkpoint, {}, {"x": 1})
    await saver.aput_writes(config, [("x", 2)], "task")
    found = await saver.aget_tuple(thread_config(thread))
    assert found is not None and found.pending_writes == [("task", "x", 2)]
    assert [t.config async for t in saver.alist(thread_config(thread))] == [found.config]
    await saver.adelete_thread(thread)
    assert await saver.aget_tuple(thread_config(str(thread))) is None
