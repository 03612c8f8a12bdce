"""The official JS client (`@langchain/langgraph-sdk` from npm) in node against a real
`graphrun dev` (issue 18 "Proof"): a streamed chat turn, an interrupt and its resume, and a
background run joined with `runs.joinStream`. The script is js/node_client.mjs."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from .js_tools import JS_DIR, PROJECT, node
from .test_cli import Running


@pytest.fixture
def node_bin() -> str:
    return node()


@pytest.fixture
def dev(node_bin: str) -> Iterator[Running]:
    server = Running(["dev", "--config", str(PROJECT), "--port", "0", "--in-memory"],
                     cwd=PROJECT.parent)
    yield server
    server.stop()


def ai_texts(events: list[dict[str, Any]]) -> list[str]:
    values = [e["data"] for e in events if e["event"] == "values"]
    return [m["content"] for m in values[-1]["messages"] if m["type"] == "ai"]


def tokens(events: list[dict[str, Any]]) -> str:
    return "".join(e["data"][0]["content"] for e in events if e["event"] == "messages")


def test_node_client_chats_resumes_and_joins(node_bin: str, dev: Running) -> None:
    done = subprocess.run([node_bin, "node_client.mjs", dev.url], cwd=JS_DIR, capture_output=True,
                          text=True, timeout=45)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    # a chat turn, streamed token by token; the run id came from Content-Location
    chat = seen["chat"]
    assert chat[0] == {"event": "metadata", "data": {"run_id": seen["created"]["run_id"],
                                                     "attempt": 1}}
    assert seen["created"]["thread_id"] == seen["thread_id"]
    assert sum(e["event"] == "messages" for e in chat) == 9  # 5 words and 4 spaces
    assert tokens(chat) == "You said: hello (turn 1)"
    assert ai_texts(chat) == ["You said: hello (turn 1)"]
    # an interrupt, then its resume through `command`
    interrupt = [e["data"] for e in seen["ask"] if e["event"] == "updates"][-1]["__interrupt__"]
    assert interrupt[0]["value"] == {"question": "go on?"}
    assert seen["interrupted_status"] == "interrupted"
    assert [i["value"] for i in next(iter(seen["interrupts"].values()))] == [{"question": "go on?"}]
    assert tokens(seen["resumed"]) == "You said: ask me -> yes (turn 2)"
    assert ai_texts(seen["resumed"])[-1] == "You said: ask me -> yes (turn 2)"
    # a background run, joined while it runs: its tokens and final values arrive
    joined = seen["joined"]
    assert seen["background"]["status"] == "pending"
    assert tokens(joined) == "You said: slow please (turn 3)"
    assert ai_texts(joined) == ["You said: hello (turn 1)", "You said: ask me -> yes (turn 2)",
                                "You said: slow please (turn 3)"]
    assert seen["finished_status"] == "success"
    assert seen["history_length"] >= 6
