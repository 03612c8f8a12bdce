"""`GET /threads/{thread_id}/stream` (the SDK's `threads.join_stream`, issue 31): every run of a
thread in one endless SSE stream, each run closed by `metadata {"status": "run_done"}`. The
parity scenario `sdk_methods` compares a replay with `langgraph dev`; these tests cover a run
created while the stream is open, the `lifecycle` filter and the errors."""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client

from .conftest import Served, wait_for
from .parity.transcript import parse_sse

pytestmark = pytest.mark.backends("sqlite", "postgres")


class _Reader(threading.Thread):
    """Reads a thread's stream into `events` until `runs` runs are done (or the test ends)."""

    def __init__(self, url: str, thread_id: str, runs: int, **params: Any) -> None:
        super().__init__(daemon=True)
        self.url, self.path, self.runs, self.params = url, f"/threads/{thread_id}/stream", runs, params
        self.events: list[dict[str, Any]] = []
        self.start()

    def done(self) -> int:
        return sum(e["event"] == "metadata" and e["data"].get("status") == "run_done"
                   for e in self.events)

    def run(self) -> None:
        headers = {"Last-Event-ID": "-1"}  # replay the resumable runs: no race with the join
        with httpx.stream("GET", self.url + self.path, params=self.params, headers=headers,
                          timeout=30) as response:
            buffer = ""
            for text in response.iter_text():
                buffer += text
                *frames, buffer = buffer.split("\r\n\r\n")
                self.events += parse_sse("\r\n\r\n".join(frames) + "\r\n\r\n") if frames else []
                if self.done() >= self.runs:
                    return


def test_runs_before_and_after_the_join_each_end_with_run_done(server: Served) -> None:
    sdk = get_sync_client(url=server.url, api_key=None)
    tid = sdk.threads.create()["thread_id"]
    first = sdk.runs.create(tid, "agent", input={"x": 0}, stream_resumable=True)
    sdk.runs.join(tid, first["run_id"])
    reader = _Reader(server.url, tid, runs=2)
    wait_for(lambda: reader.done() == 1)  # the stream is past its join: the next run is new
    second = sdk.runs.create(tid, "agent", input={"x": 5}, stream_resumable=True)
    reader.join(30)
    names = [(e["event"], e["data"].get("run_id")) for e in reader.events
             if e["event"] == "metadata"]
    assert names == [("metadata", first["run_id"]), ("metadata", first["run_id"]),
                     ("metadata", second["run_id"]), ("metadata", second["run_id"])]
    values = [e["data"] for e in reader.events if e["event"] == "values"]
    assert values[-1] == sdk.threads.get_state(tid)["values"]
    ids = [e["id"] for e in reader.events]
    keys = [tuple(map(int, i.split("-"))) for i in ids]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)  # run_done ids follow their run


def test_lifecycle_mode_sends_starts_and_ends_only(server: Served) -> None:
    sdk = get_sync_client(url=server.url, api_key=None)
    tid = sdk.threads.create()["thread_id"]
    run = sdk.runs.create(tid, "agent", input={"x": 0}, stream_resumable=True)
    sdk.runs.join(tid, run["run_id"])
    reader = _Reader(server.url, tid, runs=1, stream_modes="lifecycle")
    reader.join(30)
    assert [e["data"] for e in reader.events] == [
        {"run_id": run["run_id"], "attempt": 1},
        {"status": "run_done", "run_id": run["run_id"]},
    ]


def test_errors(server: Served) -> None:
    with httpx.Client(base_url=server.url, timeout=10) as http:
        missing = "00000000-0000-4000-8000-000000000000"
        assert http.get(f"/threads/{missing}/stream").json() == {"detail": "Thread not found"}
        assert http.get("/threads/nope/stream").status_code == 422
        tid = http.post("/threads", json={}).json()["thread_id"]
        bad = http.get(f"/threads/{tid}/stream", params={"stream_modes": "values"})
        assert (bad.status_code, bad.json()) == (422, {"detail": "Invalid stream mode: values"})
