"""The server data file `fixtures/server_before_issue_32.sqlite`, written by the code before
issue 32's thread records.

`python tests/http_adapter/old_records.py DIR` with the older code first on PYTHONPATH serves
the test graphs on a data dir in DIR, runs three turns of `chat` on one thread (its record then
holds a copy of the thread's values, as records did before issue 32) and one `agent` run on
another, then writes `DIR/server_before_issue_32.sqlite` and what that server answered for
both threads (`server_before_issue_32.json`: `GET /threads/{id}` and the thread search).
The committed pair was made so at eb53874 (main before this change); `test_thread_values.py`
serves it with today's code and expects the same answers.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

NAME = "server_before_issue_32"
TURNS = 3


def message(turn: int) -> dict[str, Any]:
    return {"type": "human", "content": f"turn {turn} " + "x" * 2000, "id": f"human-{turn}"}


def answers(http: Any, thread_ids: list[str]) -> dict[str, Any]:
    """What the server shows of the threads: each one, and the search of both."""
    found = http.post("/threads/search", json={"ids": thread_ids, "sort_order": "asc"})
    return {"threads": [http.get(f"/threads/{t}").json() for t in thread_ids],
            "search": found.json()}


def write(out: Path) -> None:
    import httpx

    from http_adapter.agent_server import create_app
    from http_adapter.agent_server.settings import Settings
    from tests.http_adapter import graphs
    from tests.http_adapter.conftest import Served

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        settings = Settings(graphs=graphs.GRAPHS, data_dir=data)
        served = Served(create_app(settings), settings)
        try:
            http = httpx.Client(base_url=served.url, timeout=30)
            chat = http.post("/threads", json={}).json()["thread_id"]
            for turn in range(TURNS):
                http.post(f"/threads/{chat}/runs/wait", json={
                    "assistant_id": "chat", "input": {"messages": [message(turn)]}
                }).raise_for_status()
            agent = http.post("/threads", json={}).json()["thread_id"]
            http.post(f"/threads/{agent}/runs/wait",
                      json={"assistant_id": "agent", "input": {"x": 1}}).raise_for_status()
            expected = answers(http, [chat, agent])
        finally:
            served.stop()
        shutil.copyfile(data / "graphrun.sqlite", out / f"{NAME}.sqlite")
    (out / f"{NAME}.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    write(Path(sys.argv[1]))
