"""The records protocol (issue 19, SCALEOUT §1) on every back end: the embedded `Records` in
memory and on a SQLite file, and `PgRecords` on a real PostgreSQL. One set of assertions for
all three, so a back end that answers differently fails here. PostgreSQL specifics (queue
columns, migrations racing across processes, PgBouncer) follow at the end.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from http_adapter.agent_server.cluster._schema import MIGRATIONS
from http_adapter.agent_server.cluster.records import PgRecords
from http_adapter.agent_server.errors import UnprocessableEntity
from http_adapter.agent_server.records import Records, RecordStats, RecordStore
from http_adapter.agent_server.schemas import Assistant, Run, Thread
from tests.services import PgBouncer

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[3]
BACK_ENDS = ["memory", "sqlite", "postgres"]
Opener = Callable[[], AbstractAsyncContextManager[Any]]


@pytest.fixture(params=BACK_ENDS)
def back_end(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def opener(back_end: str, request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    """Opens (and on exit closes) a record store of the back end; every call opens the same
    storage again (a new instance: a restart, or another host)."""
    if back_end == "postgres":
        url = request.getfixturevalue("pg_url")
        make: Callable[[], Any] = lambda: PgRecords(url, max_size=4)  # noqa: E731
    elif back_end == "sqlite":
        make = lambda: Records(str(tmp_path / "records.db"))  # noqa: E731
    else:
        shared = Records()  # memory: "opening again" is the same instance
        make = lambda: shared  # noqa: E731

    @asynccontextmanager
    async def opened() -> AsyncIterator[Any]:
        records = make()
        assert isinstance(records, RecordStore)
        await records.open()
        try:
            yield records
        finally:
            await records.close()

    return opened


def assistant(assistant_id: str, **fields: Any) -> Assistant:
    fields.setdefault("graph_id", "agent")
    return Assistant(assistant_id=assistant_id, created_at="2026-01-01", **fields)


def thread(thread_id: str, **fields: Any) -> Thread:
    stamp = fields.pop("updated_at", "2026-01-01T00:00:00.000000+00:00")
    return Thread(
        thread_id=thread_id, created_at=stamp, updated_at=stamp, state_updated_at=stamp, **fields
    )


def run(run_id: str, thread_id: str = "t1", **fields: Any) -> Run:
    return Run(run_id=run_id, thread_id=thread_id, assistant_id="a", created_at="c",
               updated_at="u", **fields)


def ids(records: list[Any]) -> list[str]:
    return [getattr(r, "run_id", None) or getattr(r, "thread_id", None) or r.assistant_id
            for r in records]


# --- assistants ----------------------------------------------------------------------------------


async def test_assistant_versions_latest_and_delete(opener: Opener) -> None:
    async with opener() as records:
        assert await records.get_assistant("a1") is None
        assert await records.assistant_versions("a1") == {}
        v1 = await records.put_assistant(assistant("a1", name="one", metadata={"k": "v"}))
        v2 = await records.put_assistant(assistant("a1", name="two", version=2, graph_id="g2"))
        assert await records.get_assistant("a1") == v2
        assert await records.search_assistants(graph_id="g2") == [v2]
        assert await records.set_assistant(v1) == v1  # `/latest`: back to version 1
        assert await records.get_assistant("a1") == v1
        assert await records.search_assistants(graph_id="g2") == []
        assert await records.assistant_versions("a1") == {1: v1, 2: v2}
        await records.put_assistant(assistant("a2"))
    async with opener() as records:  # reopened: all of it was saved
        assert await records.get_assistant("a1") == v1
        assert await records.assistant_versions("a1") == {1: v1, 2: v2}
        await records.delete_assistant("a1")
        await records.delete_assistant("missing")  # a no-op
        assert await records.get_assistant("a1") is None
        assert await records.assistant_versions("a1") == {}
        assert ids(await records.search_assistants()) == ["a2"]
        assert (await records.stats()).assistants == 1


async def test_assistant_search_filters_and_creation_order(opener: Opener) -> None:
    async with opener() as records:
        for n, (name, graph, meta) in enumerate([
            ("Ünïcode Helper", "g1", {"team": "x", "tags": ["a", "b"]}),
            ("plain", "g2", {"team": "x", "n": 1}),
            ("HELPER two", "g1", {"team": "y", "deep": {"a": "b", "c": "d"}}),
            ("", "g1", {}),
        ]):
            await records.put_assistant(assistant(f"a{n}", name=name, graph_id=graph,
                                                  metadata=meta))
        await records.put_assistant(assistant("a0", name="Ünïcode Helper", version=2, graph_id="g1",
                                              metadata={"team": "x", "tags": ["a", "b"]}))
        search = records.search_assistants
        assert ids(await search()) == ["a0", "a1", "a2", "a3"]  # a new version keeps its place
        assert ids(await search(name="helper")) == ["a0", "a2"]
        assert ids(await search(name="ÜNÏ")) == ["a0"]  # case-insensitive beyond ASCII
        assert ids(await search(name="")) == ["a0", "a1", "a2", "a3"]  # empty: no filter
        assert ids(await search(graph_id="g1", name="helper")) == ["a0", "a2"]
        assert ids(await search(metadata={"team": "x"})) == ["a0", "a1"]
        assert ids(await search(metadata={"deep": {"c": "d"}}, graph_id="g1")) == ["a2"]
        assert ids(await search(metadata={"tags": ["a"]})) == []  # lists compare whole
        assert ids(await search(metadata={"tags": ["a", "b"]})) == ["a0"]
        assert ids(await search(metadata={"n": True})) == ["a1"]  # Python: True == 1
        await records.delete_assistant("a0")
        await records.put_assistant(assistant("a0"))
        assert ids(await search()) == ["a1", "a2", "a3", "a0"]  # deleted and made again: last


# --- threads -------------------------------------------------------------------------------------


async def test_thread_search_is_python_containment(opener: Opener) -> None:
    """`matches` recurses into objects and compares everything else with `==`; `jsonb @>`
    would say otherwise for lists, booleans against numbers and empty objects."""
    async with opener() as records:
        await records.put_thread(thread("t0", metadata={"tags": ["a", "b"], "on": 1},
                                        values={"messages": ["hi"], "n": 0}))
        await records.put_thread(thread("t1", metadata={"tags": ["a"], "on": True,
                                                        "user": {"id": "u1", "org": "o"}},
                                        values=["not", "an", "object"]))
        await records.put_thread(thread("t2", metadata={"user": "u1", "tags": []}, status="busy"))
        await records.put_thread(thread("t3", metadata={"x": "nul"}))
        search = records.search_threads
        assert ids(await search()) == ["t0", "t1", "t2", "t3"]
        assert ids(await search(metadata={})) == ["t0", "t1", "t2", "t3"]
        assert ids(await search(metadata={"tags": ["a"]})) == ["t1"]
        assert ids(await search(metadata={"tags": []})) == ["t2"]
        assert ids(await search(metadata={"on": True})) == ["t0", "t1"]
        assert ids(await search(metadata={"on": 1.0})) == ["t0", "t1"]
        assert ids(await search(metadata={"user": {}})) == ["t1", "t2"]  # any value
        assert ids(await search(metadata={"user": {"id": "u1"}})) == ["t1"]
        assert ids(await search(metadata={"user": {"id": "u1", "x": None}})) == []
        assert ids(await search(metadata={"missing": None})) == []
        assert ids(await search(metadata={"x": "nul\x00"})) == []  # jsonb refuses NUL: no error
        assert ids(await search(metadata={"x\x00": "nul"})) == []
        # values are not the store's to filter (issue 32): test_thread_values.py
        assert ids(await search(status="busy")) == ["t2"]
        assert ids(await search(ids=["t2", "t0", "nope", "t0"])) == ["t0", "t2"]  # creation order
        assert ids(await search(ids=[])) == []
        assert ids(await search(ids=["t0", "t1"], metadata={"tags": ["a"]}, status="idle")) == [
            "t1"
        ]


async def test_threads_updated_before_and_reput(opener: Opener) -> None:
    async with opener() as records:
        for n, stamp in enumerate(["2026-01-03", "2026-01-01", "2026-01-02"]):
            await records.put_thread(thread(f"t{n}", updated_at=f"{stamp}T00:00:00.000000+00:00"))
        before = records.threads_updated_before
        assert ids(await before("2026-01-02T00:00:00.000000+00:00")) == ["t1"]
        assert ids(await before("2026-01-03T00:00:00.000000+00:00")) == ["t1", "t2"]
        assert ids(await before("2027")) == ["t0", "t1", "t2"]
        assert await before("2026-01-01") == []
        touched = thread("t1", updated_at="2026-02-01T00:00:00.000000+00:00", status="busy")
        await records.put_thread(touched)  # updated: keeps its place in creation order
        assert await records.get_thread("t1") == touched
        assert ids(await before("2026-01-04")) == ["t0", "t2"]
        assert ids(await records.search_threads()) == ["t0", "t1", "t2"]
        assert (await records.stats()).threads == {"idle": 2, "busy": 1}


# --- runs ----------------------------------------------------------------------------------------


async def test_runs_by_thread_status_and_creation_order(opener: Opener) -> None:
    async with opener() as records:
        await records.put_thread(thread("t1"))
        await records.put_thread(thread("t2"))
        await records.put_run(run("r1"))
        await records.put_run(run("r2", "t2", status="running"))
        await records.put_run(run("r3", status="success"))
        await records.put_run(run("r4", "t2"))
        assert await records.get_run("r2") == run("r2", "t2", status="running")
        assert await records.get_run("missing") is None
        assert ids(await records.runs_of("t1")) == ["r1", "r3"]
        assert ids(await records.runs_of("t1", "success")) == ["r3"]
        assert ids(await records.runs_of("t2", "pending")) == ["r4"]
        assert await records.runs_of("nobody") == []
        assert ids(await records.runs_with_status("pending", "running")) == ["r1", "r2", "r4"]
        assert await records.runs_with_status() == []
        await records.put_run(run("r1", status="running"))  # updated: keeps its place
        assert ids(await records.runs_with_status("running")) == ["r1", "r2"]
        await records.delete_run("r1")
        await records.delete_run("missing")
        await records.put_run(run("r1"))  # made again: last
        assert ids(await records.runs_of("t1")) == ["r3", "r1"]
        assert await records.stats() == RecordStats(
            assistants=0, threads={"idle": 2}, runs={"pending": 2, "running": 1, "success": 1}
        )
    async with opener() as records:
        assert ids(await records.runs_of("t1")) == ["r3", "r1"]
        await records.delete_thread("t1")  # with its runs
        await records.delete_thread("missing")
        assert await records.get_thread("t1") is None
        assert await records.get_run("r3") is None
        assert await records.runs_of("t1") == []
        assert ids(await records.runs_with_status("pending", "running", "success")) == ["r2", "r4"]


async def test_put_runs_writes_runs_and_threads_together(opener: Opener) -> None:
    async with opener() as records:
        await records.put_thread(thread("t1"))
        await records.put_run(run("r0"))
        busy = thread("t1", status="busy", updated_at="2026-01-02")
        await records.put_runs(
            [run("r3"), run("r1"), run("r0", status="running"), run("r2"),
             run("r1", status="error")],  # the same run twice: first place, last body
            [busy, thread("t9", status="error")],
        )
        await records.put_runs([])
    async with opener() as records:
        assert ids(await records.runs_of("t1")) == ["r0", "r3", "r1", "r2"]
        assert (await records.get_run("r1")).status == "error"
        assert (await records.get_run("r0")).status == "running"
        assert await records.get_thread("t1") == busy
        assert ids(await records.search_threads()) == ["t1", "t9"]
        assert (await records.stats()).runs == {"pending": 2, "running": 1, "error": 1}


# --- extras (crons, ...) -------------------------------------------------------------------------


async def test_extras_by_kind_in_creation_order(opener: Opener) -> None:
    async with opener() as records:
        assert await records.get_extra("cron", "c1") is None
        assert await records.extras("cron") == {}
        await records.put_extra("cron", "c2", {"n": 2, "next": "2026-01-01"})
        await records.put_extra("cron", "c1", assistant("as"))  # a Struct: stored as plain JSON
        await records.put_extra("other", "c1", [1, "x"])
        await records.put_extra("cron", "c2", {"n": 3})
    async with opener() as records:
        plain_assistant = await records.get_extra("cron", "c1")
        assert plain_assistant["assistant_id"] == "as"
        assert list(await records.extras("cron")) == ["c2", "c1"]
        assert (await records.extras("cron"))["c2"] == {"n": 3}
        assert await records.extras("other") == {"c1": [1, "x"]}
        await records.delete_extra("cron", "c2")
        await records.delete_extra("cron", "missing")
        assert list(await records.extras("cron")) == ["c1"]


async def test_replace_extra_is_compare_and_set(opener: Opener) -> None:
    async with opener() as records:
        await records.put_extra("cron", "c", {"next": "10:00", "on": 1, "tags": ["a"]})
        assert not await records.replace_extra("cron", "missing", {"x": 1}, {"x": 2})
        assert not await records.replace_extra("cron", "c", {"next": "09:00"}, {"next": "x"})
        assert not await records.replace_extra("cron", "c", None, {"next": "x"})
        assert not await records.replace_extra(  # whole bodies, not containment
            "cron", "c", {"next": "10:00", "on": 1, "tags": []}, {"next": "x"})
        assert await records.replace_extra(  # Python equality: True == 1
            "cron", "c", {"next": "10:00", "on": True, "tags": ["a"]}, {"next": "11:00"})
        assert await records.get_extra("cron", "c") == {"next": "11:00"}
        assert not await records.replace_extra("cron", "c", {"next": "10:00"}, {"next": "x"})
        await records.put_extra("cron", "null", None)
        assert not await records.replace_extra("cron", "null", None, {"x": 1})
        assert await records.get_extra("cron", "null") is None


@pytest.mark.parametrize("expected", [{"next": "10:00"}, {"next": "10:00", "n": 1.0}])
async def test_concurrent_replaces_from_one_body_have_one_winner(
    opener: Opener, back_end: str, expected: dict[str, Any]
) -> None:
    """Eight hosts (eight pools in PostgreSQL) fire the same cron at once: one wins. The
    second body takes `jsonb`'s path (1 == 1.0) and Python's recheck path alike."""
    async with opener() as first:
        await first.put_extra("cron", "c", {"next": "10:00", "n": 1} if "n" in expected
                              else expected)
        hosts = [first] + [None] * 7
        async with _more(opener, back_end, first, 7) as others:
            hosts[1:] = others
            won = await asyncio.gather(*(
                host.replace_extra("cron", "c", expected, {"next": "11:00", "by": n})
                for n, host in enumerate(hosts)
            ))
        assert won.count(True) == 1
        assert await first.get_extra("cron", "c") == {"next": "11:00", "by": won.index(True)}


@asynccontextmanager
async def _more(
    opener: Opener, back_end: str, first: Any, count: int
) -> AsyncIterator[list[Any]]:
    """`count` more instances on the same storage where instances can share it (PostgreSQL);
    the embedded back ends are one process's records, so there it is `first` again."""
    if back_end != "postgres":
        yield [first] * count
        return
    opened = [opener() for _ in range(count)]
    instances = [await o.__aenter__() for o in opened]
    try:
        yield instances
    finally:
        for o in opened:
            await o.__aexit__(None, None, None)


# --- PostgreSQL specifics --------------------------------------------------------------------------


async def _rows(url: str, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    conn = await asyncpg.connect(url)
    try:
        return [tuple(row) for row in await conn.fetch(sql, *args)]
    finally:
        await conn.close()


async def test_put_run_leaves_the_queue_columns_alone(pg_url: str) -> None:
    """The queue owns attempt, token, owner, lease, cancel, not_before and outcome; a run's
    status is its column, whatever its body says."""
    records = PgRecords(pg_url)
    await records.open()
    try:
        await records.put_run(run("r1"))
        queue_columns = ("attempt, token, owner, lease_until, cancel_action, not_before, "
                         "outcome::text")
        await _rows(pg_url, "UPDATE server_runs SET status = 'running', attempt = 2, "
                    "token = gen_random_uuid(), owner = 'host-b', lease_until = now(), "
                    "cancel_action = 'interrupt', not_before = now() - interval '1 h', "
                    "outcome = '{\"status\": \"x\"}' WHERE run_id = 'r1'")
        before = await _rows(pg_url, f"SELECT {queue_columns} FROM server_runs")
        # a running run with a cancel flag reads `interrupted` at once (issue 31); the queue's
        # column still says running until its owner ends it
        assert (await records.get_run("r1")).status == "interrupted"
        assert ids(await records.runs_of("t1", "running")) == ["r1"]
        # ... but `/runs/cancel` by status no longer finds it, as the reference's (issue 31)
        assert ids(await records.runs_with_status("running")) == []
        await records.put_run(run("r1", status="success", metadata={"m": 1}))
        await records.put_runs([run("r1", status="error")], [thread("t1")])
        assert await _rows(pg_url, f"SELECT {queue_columns} FROM server_runs") == before
        assert (await records.get_run("r1")).status == "error"
    finally:
        await records.close()


async def test_a_nul_character_is_refused_whole(pg_url: str) -> None:
    """`jsonb` cannot hold U+0000 (the embedded back end can): the write fails with a 422
    (not the database's error, a 500) and nothing of it is stored, neither the run nor the
    thread written with it."""
    records = PgRecords(pg_url)
    await records.open()
    try:
        with pytest.raises(UnprocessableEntity, match="NUL character"):
            await records.put_runs([run("r1")], [thread("t1", metadata={"x": "\x00"})])
        assert await records.get_run("r1") is None
        assert await records.stats() == RecordStats(assistants=0, threads={}, runs={})
    finally:
        await records.close()


_RACER = """
import asyncio, os, sys, time
from http_adapter.agent_server.cluster.records import PgRecords
from http_adapter.agent_server.errors import UnprocessableEntity
from http_adapter.agent_server.schemas import Thread

async def main(url, go):
    records = PgRecords(url)
    while not os.path.exists(go):
        time.sleep(0.001)
    await records.open()
    stamp = "2026-01-01T00:00:00.000000+00:00"
    await records.put_thread(Thread(thread_id=f"t{os.getpid()}", created_at=stamp,
                                    updated_at=stamp, state_updated_at=stamp))
    await records.close()
    print(records.found_version)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def test_five_processes_open_an_empty_database_and_migrate_it_once(
    pg_url: str, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    racers = [
        subprocess.Popen([sys.executable, "-c", _RACER, pg_url, str(go)], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(5)
    ]
    try:
        go.touch()
        outputs = [racer.communicate(timeout=40) for racer in racers]
    finally:
        for racer in racers:
            racer.kill()
    for racer, (_, err) in zip(racers, outputs, strict=True):
        assert racer.returncode == 0, err
    # Exactly one process found the database empty (version 0) and created the tables.
    latest = str(len(MIGRATIONS))
    assert sorted(out.strip() for out, _ in outputs) == ["0"] + [latest] * 4
    assert asyncio.run(_rows(pg_url, "SELECT component, version FROM graphrun_schema")) == [
        ("server", len(MIGRATIONS))
    ]
    assert asyncio.run(_rows(pg_url, "SELECT count(*) FROM server_threads")) == [(5,)]


async def test_works_behind_pgbouncer_in_transaction_mode(
    pg_url: str, pgbouncer: PgBouncer
) -> None:
    """Three pools share PgBouncer's one server session per database: named prepared
    statements would collide there; `prepared_statements=False` does without them."""
    url = pgbouncer.url(pg_url.rsplit("/", 1)[1])
    hosts = [PgRecords(url, max_size=3, prepared_statements=False) for _ in range(3)]
    for host in hosts:
        await host.open()
    try:
        async def work(n: int, host: PgRecords) -> None:
            for k in range(10):
                await host.put_runs([run(f"r{n}-{k}", f"t{n}")], [thread(f"t{n}", status="busy")])
                assert (await host.get_run(f"r{n}-{k}")).run_id == f"r{n}-{k}"
                assert ids(await host.search_threads(metadata={}, status="busy"))

        await asyncio.gather(*(work(n, host) for n, host in enumerate(hosts * 2)))
        stats = await hosts[0].stats()
        assert stats.runs == {"pending": 60} and stats.threads == {"busy": 6}
    finally:
        for host in hosts:
            await host.close()


async def test_connections_the_server_dropped_are_replaced(pg_url: str) -> None:
    """A failover or a restarted PgBouncer ends the pool's sessions; the next calls reconnect."""
    records = PgRecords(pg_url, min_size=3, max_size=3)
    await records.open()
    try:
        await records.put_run(run("r1"))
        await _rows(pg_url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        await asyncio.sleep(0.2)  # the pool's connections read the server's goodbye
        for _ in range(5):
            assert (await records.get_run("r1")).run_id == "r1"
    finally:
        await records.close()
