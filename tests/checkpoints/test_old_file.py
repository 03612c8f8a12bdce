"""A SQLite file written before issue 32 opens and reads back the same, and goes on growing.

`fixtures/before_issue_32.sqlite` and the values that code read from it were written by
`old_file.py` under main at 4d7c393 (full values, capped delta chains, sourced deltas, write
references, a fork, an update, a pending interrupt): today's saver must read every checkpoint
the same, migrate the file's schema version, and store new turns on it as issue-32 deltas.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import engine
from checkpoints import SqliteSaver
from checkpoints._sqlite_schema import MIGRATIONS

from .old_file import NAME, build, read_back

FIXTURES = Path(__file__).parent / "fixtures"


def copied(tmp_path: Path) -> Path:
    path = tmp_path / f"{NAME}.sqlite"
    shutil.copyfile(FIXTURES / f"{NAME}.sqlite", path)
    return path


def test_a_file_written_before_issue_32_reads_back_the_same(tmp_path: Path) -> None:
    path = copied(tmp_path)
    expected = json.loads((FIXTURES / f"{NAME}.json").read_text())
    with SqliteSaver(path) as saver:
        assert read_back(saver) == expected
    with sqlite3.connect(path) as conn:
        version = conn.execute(
            "SELECT version FROM graphrun_schema WHERE component = 'checkpoints'"
        ).fetchone()
    assert version == (len(MIGRATIONS),)
    with SqliteSaver(path) as saver:  # and again, migrated, from a fresh saver
        assert read_back(saver) == expected


def test_a_file_written_before_issue_32_goes_on_growing(tmp_path: Path) -> None:
    path = copied(tmp_path)
    config = {"configurable": {"thread_id": "f"}, "recursion_limit": 200}
    with SqliteSaver(path) as saver:
        graph = build(engine, 40).compile(checkpointer=saver)
        before = graph.get_state(config).values
        assert graph.get_state(config).next == ()
        graph.invoke({"items": [{"extra": 1}]}, config)  # one more step, then the question
        more = graph.invoke(engine.Command(resume="answer"), config)
    n = len(before["items"])
    assert more["items"][:n] == before["items"]
    assert more["items"][n:] == [{"extra": 1}, {"step": 40, "text": "item 40"}, "answer"]
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT value FROM blobs WHERE channel = 'items'").fetchall()
    assert any(r[0][:2] == b"\xc1\x95" for r in rows)  # new turns stored as issue-32 deltas
    with SqliteSaver(path) as saver:
        graph = build(engine, 40).compile(checkpointer=saver)
        assert graph.get_state(config).values["items"] == more["items"]
