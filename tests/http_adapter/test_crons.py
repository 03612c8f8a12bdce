"""Crons against a real server: CRUD, search and count through langgraph-sdk, shapes and
status codes through httpx, and the scheduler firing in real time (`* * * * * *`: croniter's
trailing seconds field) and across a restart (an injected clock)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient
from langgraph_sdk.errors import NotFoundError

from http_adapter.agent_server import crons as crons_module
from http_adapter.agent_server.crons import next_run
from http_adapter.agent_server.errors import UnprocessableEntity
from http_adapter.agent_server.state import assistant_id_for

from . import graphs
from .conftest import Served

# Issue 19 §11: every test here runs on SQLite and on PostgreSQL + Redis (conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgres")

CRON_KEYS = {"cron_id", "assistant_id", "thread_id", "user_id", "schedule", "timezone",
             "end_time", "payload", "next_run_date", "metadata", "on_run_completed", "enabled",
             "created_at", "updated_at"}
AGENT = assistant_id_for("agent")
EVERY_SECOND = "* * * * * *"
HOURLY = "0 * * * *"


@pytest.fixture
def http(server: Served) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        yield client


@pytest.fixture
def sdk(server: Served) -> Iterator[SyncLangGraphClient]:
    with get_sync_client(url=server.url) as client:
        yield client


def _until(check: Callable[[], Any], timeout: float = 3.0) -> Any:
    """Poll `check` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s (last: {found!r})")
        time.sleep(0.05)


def _runs(http: httpx.Client, thread_id: str) -> list[dict[str, Any]]:
    return http.get(f"/threads/{thread_id}/runs", params={"limit": 100}).json()  # type: ignore[no-any-return]


def _at(value: str) -> datetime:
    return datetime.fromisoformat(value)


# -- schedule arithmetic ---------------------------------------------------------------------------


def test_next_run_reads_timezones_and_the_seconds_field() -> None:
    winter = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)
    assert next_run("0 9 * * *", "America/New_York", winter) == datetime(2026, 1, 15, 14, tzinfo=UTC)
    summer = datetime(2026, 7, 15, 12, 0, tzinfo=UTC)
    assert next_run("0 9 * * *", "America/New_York", summer) == datetime(2026, 7, 15, 13, tzinfo=UTC)
    assert next_run("0 9 * * *", None, winter) == datetime(2026, 1, 16, 9, tzinfo=UTC)
    start = datetime(2026, 1, 15, 12, 0, 0, 500_000, tzinfo=UTC)
    assert next_run(EVERY_SECOND, None, start) == datetime(2026, 1, 15, 12, 0, 1, tzinfo=UTC)
    assert next_run("* * * * * */10", None, start) == datetime(2026, 1, 15, 12, 0, 10, tzinfo=UTC)
    for bad in ("bad", "61 * * * *", "0 0 31 2 *", ""):
        with pytest.raises(UnprocessableEntity):
            next_run(bad, None, start)


# -- CRUD, search, count ----------------------------------------------------------------------------


def test_crud_search_and_count_through_the_sdk(sdk: SyncLangGraphClient, http: httpx.Client
                                               ) -> None:
    client = sdk
    thread = client.threads.create()
    before = datetime.now(UTC)
    stateless = client.crons.create(
        "agent", schedule="0 9 * * *", timezone="America/New_York", input={"x": 1},
        metadata={"owner": "a"}, config={"tags": ["t"]}, stream_mode=["values", "updates"],
    )
    assert set(stateless) == CRON_KEYS
    assert stateless["assistant_id"] == AGENT and stateless["thread_id"] is None
    assert stateless["on_run_completed"] == "delete" and stateless["enabled"] is True
    assert stateless["user_id"] == "" and stateless["end_time"] is None  # as langgraph dev
    assert stateless["timezone"] == "America/New_York" and stateless["metadata"] == {"owner": "a"}
    assert stateless["payload"] == {
        "assistant_id": AGENT, "input": {"x": 1}, "metadata": {"owner": "a"},
        "config": {"tags": ["t"], "configurable": {"cron_id": stateless["cron_id"]}},
        "stream_mode": ["values", "updates"], "schedule": "0 9 * * *",
    }
    next_date = _at(stateless["next_run_date"])
    assert next_date == next_run("0 9 * * *", "America/New_York", before)
    assert stateless["next_run_date"].endswith("+00:00") and "." in stateless["next_run_date"]

    on_thread = client.crons.create_for_thread(thread["thread_id"], "agent", schedule=HOURLY,
                                               metadata={"owner": "b"})
    assert on_thread["thread_id"] == thread["thread_id"] and on_thread["on_run_completed"] is None
    assert _at(on_thread["next_run_date"]).minute == 0

    assert http.get(f"/runs/crons/{stateless['cron_id']}").json() == stateless
    found = client.crons.search()
    assert [c["cron_id"] for c in found] == [on_thread["cron_id"], stateless["cron_id"]]
    assert [c["cron_id"] for c in client.crons.search(thread_id=thread["thread_id"])] == [
        on_thread["cron_id"]]
    assert len(client.crons.search(assistant_id="agent")) == 2
    assert len(client.crons.search(assistant_id=AGENT, metadata={"owner": "a"})) == 1
    assert client.crons.search(assistant_id=assistant_id_for("chat")) == []
    asc = client.crons.search(sort_by="next_run_date", sort_order="asc")
    assert asc[0]["next_run_date"] <= asc[1]["next_run_date"]
    assert client.crons.search(select=["cron_id", "schedule"], limit=1, offset=1) == [
        {"cron_id": stateless["cron_id"], "schedule": "0 9 * * *"}]
    assert client.crons.count() == 2
    assert client.crons.count(thread_id=thread["thread_id"]) == 1
    assert client.crons.count(metadata={"owner": "nobody"}) == 0

    page = http.post("/runs/crons/search", json={"limit": 1})
    assert page.headers["x-pagination-total"] == "2" and page.headers["x-pagination-next"] == "1"

    updated = client.crons.update(stateless["cron_id"], schedule="*/5 * * * *", timezone="UTC",
                                  enabled=False, input={"x": 2}, on_run_completed="keep")
    assert updated["schedule"] == "*/5 * * * *" and updated["enabled"] is False
    assert updated["payload"]["input"] == {"x": 2} and updated["on_run_completed"] == "keep"
    assert updated["payload"]["config"]["tags"] == ["t"]  # untouched fields stay
    assert _at(updated["next_run_date"]).minute % 5 == 0
    assert updated["updated_at"] > stateless["updated_at"]
    assert updated["created_at"] == stateless["created_at"]
    assert client.crons.search(enabled=False)[0]["cron_id"] == stateless["cron_id"]

    end = datetime.now(UTC) + timedelta(days=2)
    ended = client.crons.update(on_thread["cron_id"], end_time=end)
    assert _at(ended["end_time"]) == end
    assert client.crons.update(on_thread["cron_id"], end_time=None)["end_time"] is None

    client.crons.delete(stateless["cron_id"])
    assert http.get(f"/runs/crons/{stateless['cron_id']}").status_code == 404
    with pytest.raises(NotFoundError):
        client.crons.delete(stateless["cron_id"])
    assert client.crons.count() == 1


def test_raw_status_codes_and_errors(http: httpx.Client) -> None:
    thread_id = http.post("/threads", json={}).json()["thread_id"]
    created = http.post("/runs/crons", json={"assistant_id": "agent", "schedule": HOURLY})
    assert created.status_code == 200 and created.headers["content-type"] == "application/json"
    cron_id = created.json()["cron_id"]

    def detail(response: httpx.Response, status: int) -> str:
        assert response.status_code == status, response.text
        return response.json()["detail"]  # type: ignore[no-any-return]

    bad = http.post("/runs/crons", json={"assistant_id": "agent", "schedule": "61 * * * *"})
    assert detail(bad, 422).startswith("Invalid cron schedule: '61 * * * *'. Reason:")
    bad = http.post("/runs/crons", json={"assistant_id": "agent", "schedule": "every day"})
    assert detail(bad, 422).startswith("Invalid cron schedule: 'every day'. Reason:")
    never = http.post("/runs/crons", json={"assistant_id": "agent", "schedule": "0 0 31 2 *"})
    assert detail(never, 422).startswith("Invalid cron schedule: '0 0 31 2 *'. Reason:")
    zone = http.post("/runs/crons", json={"assistant_id": "agent", "schedule": HOURLY,
                                          "timezone": "Mars/Olympus"})
    assert "Mars/Olympus" in detail(zone, 422)
    end = http.post("/runs/crons", json={"assistant_id": "agent", "schedule": HOURLY,
                                         "end_time": "tomorrow"})
    assert "end_time" in detail(end, 422)
    assert http.post("/runs/crons", json={"assistant_id": "agent"}).status_code == 422
    assert http.post("/runs/crons", json={"assistant_id": "agent", "schedule": HOURLY,
                                          "stream_mode": "nope"}).status_code == 422
    assert http.post("/runs/crons", json={"assistant_id": "nope", "schedule": HOURLY}
                     ).status_code == 404
    missing = "00000000-0000-0000-0000-000000000000"
    assert http.post(f"/threads/{missing}/runs/crons",
                     json={"assistant_id": "agent", "schedule": HOURLY}).status_code == 404
    assert detail(http.post("/threads/nope/runs/crons", json={}), 422) == (
        "Invalid thread ID: must be a UUID")
    assert detail(http.get("/runs/crons/nope"), 422) == "Invalid cron ID: must be a UUID"
    assert http.get(f"/runs/crons/{missing}").status_code == 404
    assert http.patch(f"/runs/crons/{missing}", json={"enabled": False}).status_code == 404

    assert "Mars" in detail(http.patch(f"/runs/crons/{cron_id}", json={"timezone": "Mars"}), 422)
    assert detail(http.patch(f"/runs/crons/{cron_id}", json={"schedule": "x"}), 422)
    assert http.get(f"/runs/crons/{cron_id}").json() == created.json()  # unchanged
    for search in ({"limit": 0}, {"offset": -1}, {"sort_by": "schedule"}, {"select": ["nope"]},
                   {"sort_order": "up"}):
        assert http.post("/runs/crons/search", json=search).status_code == 422, search
    assert http.post("/runs/crons/search").json()[0]["cron_id"] == cron_id  # empty body
    assert http.post("/runs/crons/count", json={"thread_id": thread_id}).json() == 0

    deleted = http.delete(f"/runs/crons/{cron_id}")
    assert deleted.status_code == 204 and deleted.content == b""


# -- firing -----------------------------------------------------------------------------------------


def test_every_second_stateless_cron_fires_once_per_tick(serve_app: Callable[..., Served]) -> None:
    server = serve_app(graphs={**graphs.GRAPHS, "hits": graphs.hits})
    with get_sync_client(url=server.url) as client, \
            httpx.Client(base_url=server.url, timeout=10) as http:
        kept = client.crons.create("agent", schedule=EVERY_SECOND, input={"x": 5},
                                   on_run_completed="keep", metadata={"kind": "kept"})
        dropped = client.crons.create("hits", schedule=EVERY_SECOND, input={"x": 7})
        started = time.monotonic()
        threads = _until(lambda: (found := client.threads.search(limit=100)) and len(found) >= 2
                         and found, timeout=3.5)
        client.crons.delete(kept["cron_id"])
        client.crons.delete(dropped["cron_id"])
        elapsed = time.monotonic() - started
        # Every firing of the kept cron made one new thread with exactly one run.
        runs = [r for t in threads for r in _runs(http, t["thread_id"])]
        assert len(runs) == len(threads) >= 2
        assert len(threads) <= elapsed + 1
        assert {r["metadata"]["cron_id"] for r in runs} == {kept["cron_id"]}
        assert all(r["metadata"]["kind"] == "kept" for r in runs)
        seconds = [_at(r["created_at"]).replace(microsecond=0) for r in runs]
        assert len(set(seconds)) == len(seconds)  # no tick fired twice
        _until(lambda: all(r["status"] == "success" for t in threads
                           for r in _runs(http, t["thread_id"])))
        assert client.threads.get(threads[0]["thread_id"])["values"]["x"] == 6
        # The default on_run_completed="delete" leaves no thread behind, but the runs ran.
        assert all(t["metadata"]["assistant_id"] == AGENT for t in client.threads.search())
        hits = _until(lambda: client.store.search_items(["hits"], limit=100)["items"])
        assert len(hits) >= 1 and all(h["value"] == {"x": 7} for h in hits)
        # Deleted crons stop firing.
        time.sleep(0.3)
        settled = len(client.threads.search(limit=100)), len(
            client.store.search_items(["hits"], limit=100)["items"])
        time.sleep(1.2)
        assert (len(client.threads.search(limit=100)), len(
            client.store.search_items(["hits"], limit=100)["items"])) == settled


def test_thread_cron_runs_on_its_thread(sdk: SyncLangGraphClient, http: httpx.Client) -> None:
    client = sdk
    thread_id = client.threads.create()["thread_id"]
    cron = client.crons.create_for_thread(thread_id, "agent", schedule=EVERY_SECOND,
                                          input={"x": 1})
    runs = _until(lambda: len(found := _runs(http, thread_id)) >= 2 and found)
    client.crons.delete(cron["cron_id"])
    assert all(r["thread_id"] == thread_id and r["metadata"]["cron_id"] == cron["cron_id"]
               for r in runs)
    _until(lambda: all(r["status"] == "success" for r in _runs(http, thread_id)))
    done = _runs(http, thread_id)
    assert len(done) >= 2 and client.threads.get_state(thread_id)["values"]["x"] == 2
    assert client.threads.search(limit=100) == [client.threads.get(thread_id)]  # no new threads

    # A thread's crons go with it.
    doomed = client.threads.create()["thread_id"]
    orphan = client.crons.create_for_thread(doomed, "agent", schedule=EVERY_SECOND)
    client.threads.delete(doomed)
    _until(lambda: http.get(f"/runs/crons/{orphan['cron_id']}").status_code == 404)


def test_enabled_false_and_end_time_stop_firing(sdk: SyncLangGraphClient, http: httpx.Client
                                                ) -> None:
    client = sdk
    paused_thread = client.threads.create()["thread_id"]
    paused = client.crons.create_for_thread(paused_thread, "agent", schedule=EVERY_SECOND,
                                            enabled=False)
    ending_thread = client.threads.create()["thread_id"]
    end = datetime.now(UTC) + timedelta(seconds=1.2)
    ending = client.crons.create_for_thread(ending_thread, "agent", schedule=EVERY_SECOND,
                                            end_time=end)
    time.sleep(1.3)
    assert _runs(http, paused_thread) == []

    client.crons.update(paused["cron_id"], enabled=True)
    _until(lambda: _runs(http, paused_thread))
    client.crons.update(paused["cron_id"], enabled=False)
    time.sleep(0.2)
    fired = len(_runs(http, paused_thread))

    ended = _until(lambda: (c := http.get(f"/runs/crons/{ending['cron_id']}").json())
                   ["next_run_date"] is None and c)
    assert _at(ended["end_time"]) == end
    ended_runs = _runs(http, ending_thread)
    assert 1 <= len(ended_runs) <= 2
    assert all(_at(r["created_at"]) <= end + timedelta(seconds=0.5) for r in ended_runs)
    time.sleep(1.1)
    assert len(_runs(http, paused_thread)) == fired
    assert len(_runs(http, ending_thread)) == len(ended_runs)


class _Clock:
    """Real time shifted by `offset`: sleeps stay real, the date is whatever a test says."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def set(self, moment: datetime) -> None:
        self.offset = moment - datetime.now(UTC)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


def test_missed_schedule_fires_once_after_restart(
    serve_app: Callable[..., Served], monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = _Clock()
    monkeypatch.setattr(crons_module, "utcnow", clock)
    clock.set(datetime(2030, 1, 1, 5, 10, tzinfo=UTC))
    first = serve_app()
    with get_sync_client(url=first.url) as client:
        thread_id = client.threads.create()["thread_id"]
        cron = client.crons.create_for_thread(thread_id, "agent", schedule=HOURLY, input={"x": 1})
    assert _at(cron["next_run_date"]) == datetime(2030, 1, 1, 6, tzinfo=UTC)
    first.stop()

    # Down over three due times (06:00, 07:00, 08:00); up again four seconds before 09:00
    # (a margin for a slow start-up on a loaded machine: the clock runs from here).
    clock.set(datetime(2030, 1, 1, 8, 59, 56, tzinfo=UTC))
    second = serve_app()
    with get_sync_client(url=second.url) as client, \
            httpx.Client(base_url=second.url, timeout=10) as http:
        caught_up = _until(lambda: _runs(http, thread_id), timeout=3)
        assert len(caught_up) == 1
        after = http.get(f"/runs/crons/{cron['cron_id']}").json()
        assert _at(after["next_run_date"]) == datetime(2030, 1, 1, 9, tzinfo=UTC)
        assert {k: v for k, v in after.items() if k != "next_run_date"} == {
            k: v for k, v in cron.items() if k != "next_run_date"}
        # Then the regular schedule: 09:00 fires once, and the next is 10:00.
        regular = _until(lambda: len(found := _runs(http, thread_id)) >= 2 and found, timeout=6)
        assert len(regular) == 2
        after = http.get(f"/runs/crons/{cron['cron_id']}").json()
        assert _at(after["next_run_date"]) == datetime(2030, 1, 1, 10, tzinfo=UTC)
        time.sleep(0.5)
        assert len(_runs(http, thread_id)) == 2
        assert client.crons.count() == 1
