"""Crash safety (issue 3): a run killed with SIGKILL resumes from its SQLite file.

A real child process runs the graph (tests/checkpoints/crash_graphs.py) and is killed with
SIGKILL once the test sees, in the file, what it wants committed; the test process then reopens
the file, checks that everything in it is complete, and resumes the thread.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from checkpoints import SqliteSaver

from . import crash_graphs as graphs
from .crash_graphs import THREAD, runs

ROOT = Path(__file__).resolve().parents[2]
POLL = 0.002

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")


@contextlib.contextmanager
def child(kind: str, db: Path, workdir: Path, durability: str) -> Iterator[subprocess.Popen[bytes]]:
    """The graph running in a child process, SIGKILLed when the block ends (if still alive)."""
    stderr = workdir / f"{kind}.stderr"
    with open(stderr, "wb") as err:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.checkpoints.crash_graphs",
                kind,
                db,
                workdir,
                durability,
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL, stderr.read_text()


def wait_until(condition: Callable[[], bool], process: subprocess.Popen[bytes]) -> None:
    """Poll the file until `condition` holds (a stuck run ends by the per-test timeout)."""
    while not condition():
        assert process.poll() is None, "the child ended before it could be killed"
        time.sleep(POLL)


def committed(db: Path, sql: str) -> int:
    """A count from the file as an independent read-only connection sees it (0 if not there)."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
            return int(conn.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:  # no file or no tables yet
        return 0


def integrity(db: Path) -> str:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def summary(graph: Any) -> list[tuple[Any, ...]]:
    """The thread's history without run ids and times: what must match an uninterrupted run."""
    return [
        (s.metadata["step"], s.metadata["source"], s.values, s.next)
        for s in graph.get_state_history(THREAD)
    ]


def assert_history_is_whole(graph: Any) -> list[Any]:
    """Every checkpoint loads, steps are contiguous down to the input, parents chain up."""
    history = list(graph.get_state_history(THREAD))
    steps = [s.metadata["step"] for s in history]
    assert steps == list(range(steps[0], -2, -1))
    for newer, older in itertools.pairwise(history):
        assert newer.parent_config == older.config
    assert history[-1].parent_config is None
    return history


# --- a step with a finished and a blocked task ---------------------------------------------------


def uninterrupted(workdir: Path) -> tuple[Any, list[tuple[Any, ...]]]:
    workdir.mkdir()
    (workdir / "release").touch()
    with SqliteSaver(workdir / "graph.db") as saver:
        graph = graphs.parallel_graph(workdir).compile(checkpointer=saver)
        result = graph.invoke(graphs.PARALLEL_INPUT, THREAD)
        return result, summary(graph)


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_a_killed_step_resumes_without_rerunning_finished_tasks(
    tmp_path: Path, durability: str
) -> None:
    db, workdir = tmp_path / "graph.db", tmp_path / "killed"
    workdir.mkdir()
    with child("parallel", db, workdir, durability) as process:
        # The quick task's side effect is visible and its pending write committed; the blocker
        # is still waiting for `release`.
        wait_until(
            lambda: (
                runs(workdir, "quick") == 1
                and runs(workdir, "blocker") == 1
                and committed(db, "SELECT count(*) FROM writes WHERE channel = 'quick'") == 1
            ),
            process,
        )
    assert integrity(db) == "ok"

    (workdir / "release").touch()
    with SqliteSaver(db) as saver:
        graph = graphs.parallel_graph(workdir).compile(checkpointer=saver)
        killed = graph.get_state(THREAD)
        assert killed.metadata["step"] == 1 and killed.next == ("blocker",)
        latest = saver.get_tuple(THREAD)
        assert latest is not None
        # Only the quick task's writes (its values and the join barrier's), nothing of the blocker.
        pending = latest.pending_writes or []
        assert len({task_id for task_id, _, _ in pending}) == 1
        assert {"log", "quick"} <= {channel for _, channel, _ in pending}

        result = graph.invoke(None, THREAD, durability=durability)
        resumed = summary(graph)
        assert_history_is_whole(graph)

    assert {name: runs(workdir, name) for name in ("first", "quick", "blocker", "join")} == {
        "first": 1,
        "quick": 1,  # finished before the kill: not run again
        "blocker": 2,  # killed while running: run again
        "join": 1,
    }
    expected, expected_history = uninterrupted(tmp_path / "reference")
    assert result == expected
    assert result["quick"] == ("done", 2)
    assert resumed == expected_history


# --- a long series of steps ------------------------------------------------------------------------


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_a_kill_during_a_long_series_leaves_only_whole_checkpoints(
    tmp_path: Path, durability: str
) -> None:
    db = tmp_path / "graph.db"
    with child("series", db, tmp_path, durability) as process:
        wait_until(lambda: committed(db, "SELECT count(*) FROM checkpoints") >= 40, process)
    assert integrity(db) == "ok"

    (tmp_path / "stop").touch()
    with SqliteSaver(db) as saver:
        graph = graphs.series_graph(tmp_path).compile(checkpointer=saver)
        history = assert_history_is_whole(graph)
        assert len(history) == committed(db, "SELECT count(*) FROM checkpoints")
        assert "n" not in history[-1].values  # step -1: the input is still a pending write
        for snapshot in history[:-1]:
            n = snapshot.metadata["step"]  # step 0 holds the input, each later step one tick
            assert snapshot.values["n"] == n
            assert snapshot.values["trail"] == list(range(1, n + 1))
            assert snapshot.values["payload"] == (f"{n}:" + "x" * 4000 if n else "")

        # The thread carries on from its last checkpoint. A tick whose writes were committed
        # before the kill is not run again, and its routing (written when `stop` did not exist)
        # holds: one tick more. `stop` then ends the run after the next tick.
        latest = saver.get_tuple(THREAD)
        assert latest is not None
        last = history[0].values["n"] + (2 if latest.pending_writes else 1)
        result = graph.invoke(None, {**THREAD, "recursion_limit": graphs.SERIES_LIMIT})
        assert result["n"] == last
        assert result["trail"] == list(range(1, last + 1))
        assert_history_is_whole(graph)
