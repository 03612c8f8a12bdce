"""Fuzzing the agent server's threads, runs, state, history and copy (issue 16).

Hypothesis draws sequences of requests on the issue's graph (`first -> inner(a -> b) -> last`,
each node returning `trail + [label]`): runs with input, forks from an earlier checkpoint of
the history (with or without a state update first), state updates with and without `as_node`,
copies. A real server (uvicorn, SQLite with every storage shortcut) answers them; graphrun run
in-process on an `InMemorySaver(full_values=True)` does the same, and after every request every
thread's history and state must read back alike, and no answer may be a 5xx.
"""

from __future__ import annotations

import operator
import uuid
from typing import Annotated, Any, TypedDict

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from checkpoints import InMemorySaver
from engine import START, StateGraph
from tests.fuzz_profiles import fuzz_settings, time_limit

# Issue 19 §11: every test here runs on SQLite and on PostgreSQL + Redis (conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgres")


class State(TypedDict, total=False):
    trail: list
    items: Annotated[list, operator.add]
    text: str


def _step(label: Any) -> Any:
    def node(state: State) -> dict[str, Any]:
        return {"trail": (state.get("trail") or []) + [label], "items": [label]}

    return node


def issue_graph(checkpointer: Any = None) -> Any:
    inner = StateGraph(State)
    inner.add_node("a", _step(2))
    inner.add_node("b", _step(3))
    inner.add_edge(START, "a")
    inner.add_edge("a", "b")
    outer = StateGraph(State)
    outer.add_node("first", _step(1))
    outer.add_node("inner", inner.compile())
    outer.add_node("last", _step(4))
    outer.add_edge(START, "first")
    outer.add_edge("first", "inner")
    outer.add_edge("inner", "last")
    return outer.compile(checkpointer=checkpointer)


NODES = ["first", "inner", "last"]
LABELS = st.sampled_from([0, 1, 5, "a", "zz"])
VALUES = st.fixed_dictionaries({}, optional={
    "trail": st.lists(LABELS, max_size=3), "items": st.lists(LABELS, max_size=2),
    "text": st.sampled_from(["u", "v"]),
}).filter(bool)
THREAD = st.integers(0, 3)
OPS = st.one_of(
    st.tuples(st.just("run"), THREAD, VALUES),
    st.tuples(st.just("fork"), THREAD, st.integers(0, 9), st.none() | VALUES,
              st.sampled_from([None, *NODES])),
    st.tuples(st.just("update"), THREAD, VALUES, st.sampled_from([None, *NODES])),
    st.tuples(st.just("copy"), THREAD),
)


def _ok(response: httpx.Response) -> Any:
    assert response.status_code < 500, (response.status_code, response.text)
    assert response.status_code == 200, response.text
    return response.json()


class Server:
    """The requests on the real server; threads by index, created on first use."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        self.threads: list[str] = []

    def thread(self, index: int) -> str:
        while len(self.threads) <= index % 4 and len(self.threads) < 4:
            self.threads.append(_ok(self.http.post("/threads", json={}))["thread_id"])
        return self.threads[index % len(self.threads)]

    def run(self, thread: str, **body: Any) -> Any:
        return _ok(self.http.post(f"/threads/{thread}/runs/wait",
                                  json={"assistant_id": "issue", **body}))

    def history(self, thread: str) -> list[dict[str, Any]]:
        return _ok(self.http.post(f"/threads/{thread}/history", json={"limit": 1000}))

    def update(self, thread: str, values: dict[str, Any], as_node: str | None,
               checkpoint_id: str | None = None) -> str:
        body: dict[str, Any] = {"values": values}
        if as_node:
            body["as_node"] = as_node
        if checkpoint_id:
            body["checkpoint_id"] = checkpoint_id
        return _ok(self.http.post(f"/threads/{thread}/state", json=body))["checkpoint"][
            "checkpoint_id"]

    def apply(self, op: tuple[Any, ...]) -> None:
        kind, thread = op[0], self.thread(op[1])
        if kind == "run":
            self.run(thread, input=op[2])
        elif kind == "update" and self.history(thread):
            self.update(thread, op[2], op[3])
        elif kind == "fork":
            history = self.history(thread)
            if len(history) < 2:
                return
            picked = history[1 + op[2] % (len(history) - 1)]["checkpoint_id"]
            if op[3] is not None:
                picked = self.update(thread, op[3], op[4], picked)
            self.run(thread, input=None, checkpoint_id=picked)
        elif kind == "copy":
            self.threads.append(_ok(self.http.post(f"/threads/{thread}/copy"))["thread_id"])

    def read(self) -> list[Any]:
        found = []
        for thread in self.threads:
            history = self.history(thread)
            state = _ok(self.http.get(f"/threads/{thread}/state"))
            if history:
                assert state["checkpoint_id"] == history[0]["checkpoint_id"]
            found.append([_row(h["values"], h["next"], h["metadata"]) for h in history])
        return found


class Oracle:
    """The same requests as engine calls on an in-process saver storing full values."""

    def __init__(self) -> None:
        self.graph = issue_graph(InMemorySaver(full_values=True))
        self.threads: list[str] = []

    def thread(self, index: int) -> str:
        while len(self.threads) <= index % 4 and len(self.threads) < 4:
            self.threads.append(str(uuid.uuid4()))
        return self.threads[index % len(self.threads)]

    def history(self, thread: str) -> list[Any]:
        return list(self.graph.get_state_history({"configurable": {"thread_id": thread}}))

    def apply(self, op: tuple[Any, ...]) -> None:
        kind, thread = op[0], self.thread(op[1])
        config = {"configurable": {"thread_id": thread}}
        if kind == "run":
            self.graph.invoke(op[2], config)
        elif kind == "update" and self.history(thread):
            self.graph.update_state(config, op[2], as_node=op[3])
        elif kind == "fork":
            history = self.history(thread)
            if len(history) < 2:
                return
            picked = history[1 + op[2] % (len(history) - 1)].config
            if op[3] is not None:
                picked = self.graph.update_state(picked, op[3], as_node=op[4])
            self.graph.invoke(None, picked)
        elif kind == "copy":
            copied = str(uuid.uuid4())
            self.graph.checkpointer.copy_thread(thread, copied)
            self.threads.append(copied)

    def read(self) -> list[Any]:
        return [
            [_row(s.values, list(s.next), s.metadata) for s in self.history(thread)]
            for thread in self.threads
        ]


def _row(values: Any, next_: Any, metadata: Any) -> tuple[Any, ...]:
    return (values, list(next_), metadata["source"], metadata["step"])


@time_limit
def test_the_server_reads_back_every_history(serve_app: Any) -> None:
    served = serve_app(graphs={"issue": issue_graph()})

    @fuzz_settings(ci_examples=30, long_examples=500)
    @given(st.lists(OPS, min_size=2, max_size=7))
    def check(ops: list[tuple[Any, ...]]) -> None:
        run_ops(served, ops)

    check()


def run_ops(served: Any, ops: list[tuple[Any, ...]]) -> None:
    with httpx.Client(base_url=served.url, timeout=30) as http:
        server, oracle = Server(http), Oracle()
        for index, op in enumerate([("run", 0, {"trail": []}), *ops]):
            server.apply(op)
            oracle.apply(op)
            assert server.read() == oracle.read(), f"after {ops[:index]}"


@pytest.mark.parametrize("back", range(5))
def test_the_issue_over_http(serve_app: Any, back: int) -> None:
    """Issue 16's steps: fork from a checkpoint of the history with a state update, run on,
    read the history back (before the fix: 500 for good, and the connection dropped)."""
    served = serve_app(graphs={"issue": issue_graph()})
    run_ops(served, [("fork", 0, back, {"text": "u"}, None), ("copy", 0),
                     ("fork", 1, back + 1, None, None), ("update", 1, {"trail": [5]}, "first")])
