"""Graphs for the SIGKILL tests (test_crash.py), runnable as a child process.

    python -m tests.checkpoints.crash_graphs parallel DB WORKDIR DURABILITY
    python -m tests.checkpoints.crash_graphs series DB WORKDIR DURABILITY

DB is a SQLite file, or a ``postgresql://`` URL for `PostgresSaver` (issue 19).

Nodes record each run by appending a line to a file in WORKDIR; the blocking ones wait for a
file the test creates (`release` or `stop`), so a killed run and its resumption can be told
apart. Not collected by pytest (no ``test_`` prefix).
"""

from __future__ import annotations

import operator
import sys
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

from checkpoints import SqliteSaver
from engine import END, START, StateGraph

THREAD = {"configurable": {"thread_id": "crash"}}
WAIT_LIMIT = 30.0  # a child the test forgot to kill gives up instead of lingering


def record(workdir: Path, name: str) -> None:
    with open(workdir / f"{name}.runs", "a") as runs:
        runs.write(f"{name}\n")


def wait_for(path: Path) -> None:
    deadline = time.monotonic() + WAIT_LIMIT
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} never appeared")
        time.sleep(0.005)


def runs(workdir: Path, name: str) -> int:
    path = workdir / f"{name}.runs"
    return len(path.read_text().splitlines()) if path.exists() else 0


# --- parallel: first -> (quick, blocker) -> join ----------------------------------------------


class ParallelState(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    quick: tuple[str, int]
    blocker: str


def parallel_graph(workdir: Path) -> Any:
    def first(state: ParallelState) -> ParallelState:
        record(workdir, "first")
        return {"log": ["first"]}

    def quick(state: ParallelState) -> ParallelState:
        record(workdir, "quick")
        return {"log": ["quick"], "quick": ("done", len(state["log"]))}

    def blocker(state: ParallelState) -> ParallelState:
        record(workdir, "blocker")
        wait_for(workdir / "release")
        return {"log": ["blocker"], "blocker": "done"}

    def join(state: ParallelState) -> ParallelState:
        record(workdir, "join")
        return {"log": ["join"]}

    builder: Any = StateGraph(ParallelState)
    for node in (first, quick, blocker, join):
        builder.add_node(node.__name__, node)
    builder.add_edge(START, "first")
    builder.add_edge("first", "quick")
    builder.add_edge("first", "blocker")
    builder.add_edge(["quick", "blocker"], "join")
    builder.add_edge("join", END)
    return builder


PARALLEL_INPUT: ParallelState = {"log": ["input"]}


# --- series: tick -> tick -> ... until the `stop` file exists ---------------------------------


class SeriesState(TypedDict):
    n: int
    trail: Annotated[list[int], operator.add]
    payload: str


def series_graph(workdir: Path) -> Any:
    def tick(state: SeriesState) -> dict[str, Any]:
        n = state["n"] + 1
        # Big enough that a commit takes a moment; derived from n so every step can be checked.
        return {"n": n, "trail": [n], "payload": f"{n}:" + "x" * 4000}

    def again(state: SeriesState) -> str:
        return END if (workdir / "stop").exists() else "tick"

    builder: Any = StateGraph(SeriesState)
    builder.add_node("tick", tick)
    builder.add_edge(START, "tick")
    builder.add_conditional_edges("tick", again, ["tick", END])
    return builder


SERIES_INPUT: SeriesState = {"n": 0, "trail": [], "payload": ""}
SERIES_LIMIT = 100_000  # steps; the test stops the run long before


def main(kind: str, db: str, workdir: str, durability: str) -> None:
    graphs = {
        "parallel": (parallel_graph, PARALLEL_INPUT, {}),
        "series": (series_graph, SERIES_INPUT, {"recursion_limit": SERIES_LIMIT}),
    }
    make, value, extra = graphs[kind]
    if db.startswith("postgresql://"):
        from checkpoints import PostgresSaver  # only with the postgres extra

        saver: SqliteSaver | PostgresSaver = PostgresSaver(db)
    else:
        saver = SqliteSaver(db)
    with saver:
        graph = make(Path(workdir)).compile(checkpointer=saver)
        graph.invoke(value, {**THREAD, **extra}, durability=durability)


if __name__ == "__main__":
    main(*sys.argv[1:])
