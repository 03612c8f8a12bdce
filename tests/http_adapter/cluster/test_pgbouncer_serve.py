"""Whole `graphrun serve` processes behind PgBouncer in transaction mode (issue 19 §9): two hosts
and Redis, every database connection through one PgBouncer whose clients' transactions take
turns on two server connections, `--no-prepared-statements`. Threads, runs (wait, background
joined on the other host, streamed, cancelled), state and history, and the store all work."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.services import PgBouncer

from .hosts import Hosts, log_lines, wait_until


@pytest.fixture
def bounced(tmp_path: Path, pg_url: str, pgbouncer: PgBouncer, redis_url: str
            ) -> Iterator[Hosts]:
    url = pgbouncer.url(pg_url.rsplit("/", 1)[1])
    made = Hosts(tmp_path, url, redis_url, ["--no-prepared-statements", "--pool-max", "4"])
    yield made
    made.close()


def _lines(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.read()
    return [line[7:] for line in response.iter_lines() if line.startswith("event: ")]


def test_two_hosts_serve_everything_through_pgbouncer(bounced: Hosts) -> None:
    """Mutation-checked: without `--no-prepared-statements` a host fails to start (a statement
    prepared on one server connection is bound on another: "incorrect binary data format")."""
    a, b = bounced.start(2)
    bounced.go()  # the slow node does not wait
    with a.client() as on_a, b.client() as on_b:
        thread = on_a.post("/threads", json={"metadata": {"owner": "pgb"}}).json()["thread_id"]
        body = {"assistant_id": "agent", "input": {"tag": "w", "log": []}}
        done = on_a.post(f"/threads/{thread}/runs/wait", json=body)
        assert done.status_code == 200 and done.json()["log"] == ["first", "slow", "last"]
        # a background run made on A, joined on B; then a streamed one on B
        run = on_a.post(f"/threads/{thread}/runs", json={**body, "input": {"tag": "b"}}).json()
        joined = on_b.get(f"/threads/{thread}/runs/{run['run_id']}/join").json()
        assert joined["log"] == ["first", "slow", "last"] * 2
        with on_b.stream("POST", f"/threads/{thread}/runs/stream",
                         json={**body, "input": {"tag": "s"}, "stream_mode": ["updates"]}
                         ) as streamed:
            assert _lines(streamed) == ["metadata", "updates", "updates", "updates"]
        state = on_b.get(f"/threads/{thread}/state").json()
        assert state["values"]["log"] == ["first", "slow", "last"] * 3
        history = on_a.post(f"/threads/{thread}/history", json={"limit": 100}).json()
        assert len(history) == 3 * 5  # input, its loop step, then 3 steps, each run
        assert [r["status"] for r in on_a.get(f"/threads/{thread}/runs").json()] == [
            "success"] * 3
        found = on_b.post("/threads/search", json={"metadata": {"owner": "pgb"}}).json()
        assert [t["thread_id"] for t in found] == [thread]
        assert on_b.get(f"/threads/{thread}").json()["status"] == "idle"
        _cancel_across_hosts(bounced, on_a, on_b)
        _store(on_a, on_b)
        stateless = on_b.post("/runs/wait", json={"assistant_id": "quick", "input": {}})
        assert stateless.status_code == 200 and stateless.json()["log"] == ["quick"]
        assert on_a.get("/ok", params={"check_db": "1"}).json()["services"] == {
            "postgres": "ok", "redis": "ok"}
    counts = Counter((line[0], line[1]) for line in log_lines(bounced.project))
    assert all(counts[(tag, "last")] == 1 for tag in ("w", "b", "s"))
    for host in (a, b):
        text = host.log_path.read_text()
        assert "Traceback" not in text and "prepared statement" not in text, text[-3000:]


def _cancel_across_hosts(hosts: Hosts, on_a: httpx.Client, on_b: httpx.Client) -> None:
    (hosts.project / "go").unlink()
    thread = on_a.post("/threads", json={}).json()["thread_id"]
    run = on_a.post(f"/threads/{thread}/runs", json={
        "assistant_id": "agent_async", "input": {"tag": "c", "log": []}}).json()
    wait_until(lambda: any(line[:2] == ["c", "slow-start"]
                           for line in log_lines(hosts.project)), what="the slow node")
    path = f"/threads/{thread}/runs/{run['run_id']}"
    assert on_b.post(f"{path}/cancel", params={"wait": "true"}).status_code == 200
    assert on_a.get(path).json()["status"] == "interrupted"
    assert on_a.get(f"/threads/{thread}").json()["status"] != "busy"
    hosts.go()


def _store(on_a: httpx.Client, on_b: httpx.Client) -> None:
    item = {"namespace": ["users", "u1"], "key": "prefs", "value": {"theme": "dark"}}
    assert on_a.put("/store/items", json=item).status_code in (200, 204)
    got = on_b.get("/store/items", params={"namespace": "users.u1", "key": "prefs"})
    assert got.status_code == 200 and got.json()["value"] == {"theme": "dark"}, got.text
    found = on_b.post("/store/items/search", json={"namespace_prefix": ["users"]}).json()
    assert [i["key"] for i in found["items"]] == ["prefs"]
    spaces = on_a.post("/store/namespaces", json={}).json()["namespaces"]
    assert ["users", "u1"] in spaces
    gone = on_b.request("DELETE", "/store/items", json={"namespace": ["users", "u1"],
                                                        "key": "prefs"})
    assert gone.status_code in (200, 204)
    after = on_a.get("/store/items", params={"namespace": "users.u1", "key": "prefs"})
    assert after.status_code == 200 and after.json() is None  # the reference's "no item"
