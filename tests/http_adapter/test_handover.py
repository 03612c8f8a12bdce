"""`--handover` (issue 26, finding 8): a second server on the same SQLite file waits, answering
`/ok` in standby and holding other requests, until the first has drained and stopped; then it
opens the file. A run the first finished in its grace is not run again; one it gave up is run
again once, by the second, from its last checkpoint."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, TypedDict

import anyio
import httpx

from engine import START, StateGraph

from .test_drain import settings_for, start_slow_run


class _State(TypedDict, total=False):
    log: str
    x: int


async def _logged_nap(state: _State) -> dict[str, Any]:
    """Naps 3 s, logging when it starts, is cancelled and ends (each attempt of the run)."""
    with open(state["log"], "a") as file:
        file.write("start\n")
    try:
        await anyio.sleep(3.0)
    except BaseException:
        with open(state["log"], "a") as file:
            file.write("cancelled\n")
        raise
    with open(state["log"], "a") as file:
        file.write("end\n")
    return {"x": 1}


_graph = StateGraph(_State)
_graph.add_node("nap", _logged_nap)
_graph.add_edge(START, "nap")
LOGGED = _graph.compile()


def _held(url: str, path: str) -> tuple[threading.Thread, dict[str, Any]]:
    """GET `path` in a thread (it waits at the gate); the answer lands in the dict."""
    answer: dict[str, Any] = {}

    def get() -> None:
        response = httpx.get(f"{url}{path}", timeout=30)
        answer.update(status=response.status_code, body=response.json())

    thread = threading.Thread(target=get, daemon=True)
    thread.start()
    return thread, answer


def _attempt(record: dict[str, Any]) -> int:
    return int(record["kwargs"]["config"]["metadata"]["run_attempt"])


def test_the_second_server_waits_and_does_not_run_a_drained_run_again(
    serve_app: Any, tmp_path: Path
) -> None:
    first = serve_app(settings_for(tmp_path, drain_grace=10.0, handover=True))
    thread, run_id = start_slow_run(first.url, 1.0)
    second = serve_app(settings_for(tmp_path, drain_grace=10.0, handover=True))
    ok = httpx.get(f"{second.url}/ok")
    assert ok.status_code == 200 and ok.headers["x-graphrun-standby"] == "1"
    waiter, answer = _held(second.url, f"/threads/{thread}/runs/{run_id}")
    first.stop()  # SIGTERM's path: the run ends within the grace, then the file is let go
    waiter.join(30)
    assert answer["status"] == 200, answer
    assert answer["body"]["status"] == "success" and _attempt(answer["body"]) == 1
    assert "x-graphrun-standby" not in httpx.get(f"{second.url}/ok").headers
    with httpx.Client(base_url=second.url, timeout=20) as client:
        runs = client.get(f"/threads/{thread}/runs").json()
        assert [(r["run_id"], r["status"]) for r in runs] == [(run_id, "success")]
        later = client.post(f"/threads/{thread}/runs/wait",
                            json={"assistant_id": "nap", "input": {"nap": 0}})
        assert later.status_code == 200 and later.json()["x"] == 1


def test_a_run_past_the_grace_is_run_again_once_by_the_second_server(
    serve_app: Any, tmp_path: Path
) -> None:
    settings = settings_for(tmp_path, drain_grace=0.2, handover=True)
    settings.graphs = {"nap": LOGGED}
    log = tmp_path / "attempts.log"
    first = serve_app(settings)
    with httpx.Client(base_url=first.url, timeout=10) as client:
        thread = client.post("/threads", json={}).json()["thread_id"]
        run_id = client.post(f"/threads/{thread}/runs", json={
            "assistant_id": "nap", "input": {"log": str(log)}}).json()["run_id"]
    deadline = time.monotonic() + 10
    while not log.exists():
        assert time.monotonic() < deadline, "the run never started"
        time.sleep(0.02)
    second = serve_app(settings)
    assert httpx.get(f"{second.url}/ok").headers["x-graphrun-standby"] == "1"
    first.stop()  # gives the run up after 0.2 s
    with httpx.Client(base_url=second.url, timeout=20) as client:
        joined = client.get(f"/threads/{thread}/runs/{run_id}/join")
        assert joined.status_code == 200 and joined.json()["x"] == 1
        record = client.get(f"/threads/{thread}/runs/{run_id}").json()
    assert record["status"] == "success" and _attempt(record) == 2
    # The second attempt began only once the first was given up: never both at once.
    assert log.read_text().splitlines() == ["start", "cancelled", "start", "end"]


def test_without_handover_nothing_waits(serve_app: Any, tmp_path: Path) -> None:
    first = serve_app(settings_for(tmp_path, handover=True))
    second = serve_app(settings_for(tmp_path / "other", handover=True))  # another file
    plain = serve_app(settings_for(tmp_path))  # no --handover: no lock, no gate
    for served in (first, second, plain):
        ok = httpx.get(f"{served.url}/ok")
        assert ok.status_code == 200 and "x-graphrun-standby" not in ok.headers
