"""Fenced writes on `PostgresSaver` (issue 26): a view's writes are stored only while its fence
holds, checked in the statement that stores them; a refused write stores nothing and stops the
writer, without touching what other writers of the same saver hand over beside it."""

from __future__ import annotations

from typing import Any

import pytest

from checkpoints import Fence, FenceRefused, PostgresSaver
from checkpoints import _postgres_writer as writer_module
from checkpoints import _sqlite_writer as sqlite_writer_module
from checkpoints.base import empty_checkpoint, thread_config

from .test_postgres import query

# What the agent server's fence looks like: a row of another table, locked while the write runs.
OWNER = (
    "EXISTS (SELECT 1 FROM fence_owner WHERE name = fence->>0 AND token = fence->>1 "
    "FOR KEY SHARE)"
)


def _owners(url: str, **tokens: str) -> None:
    query(url, "CREATE TABLE IF NOT EXISTS fence_owner (name text PRIMARY KEY, token text)")
    for name, token in tokens.items():
        query(url, "INSERT INTO fence_owner VALUES ($1, $2) ON CONFLICT (name) DO UPDATE "
                   "SET token = excluded.token", name, token)


def _put(saver: Any, thread: str, step: int, *, wait: bool = True) -> dict[str, Any]:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"], checkpoint["channel_versions"] = {"a": step}, {"a": step}
    put = saver.put if wait else saver.put_nowait
    return put(thread_config(thread), checkpoint, {"step": step}, {"a": step})  # type: ignore[no-any-return]


def _steps(url: str, thread: str) -> list[int]:
    rows = query(url, "SELECT checkpoint_id FROM checkpoints WHERE thread_id = $1", thread)
    with PostgresSaver(url) as saver:
        return sorted(t.metadata["step"] for t in saver.list(thread_config(thread))
                      if t.checkpoint["id"] in {r[0] for r in rows})


@pytest.mark.parametrize("form", ["json", "arrays"])
def test_a_write_is_stored_only_while_its_fence_holds(
    pg_url: str, form: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if form == "arrays":
        monkeypatch.setattr(writer_module, "JSON_LIMIT", 0)
    _owners(pg_url, run="a")
    with PostgresSaver(pg_url) as saver:
        view = saver.fenced(Fence(OWNER, ["run", "a"]))
        config = _put(view, "t", 0)
        view.put_writes(config, [("a", 1)], "task")
        _owners(pg_url, run="b")  # another writer owns it now
        with pytest.raises(FenceRefused):
            _put(view, "t", 1)
        with pytest.raises(FenceRefused):  # refused at once from now on, no round trip
            view.put_writes(config, [("a", 2)], "task")
        _put(saver, "t", 2)  # the saver itself is not fenced
    assert _steps(pg_url, "t") == [0, 2]
    assert query(pg_url, "SELECT count(*) FROM checkpoint_writes") == [(1,)]


def test_a_refused_background_write_fails_only_its_own_flush(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Handed over without waiting, beside writes of a fence that holds and of the saver itself
    (one batch, one statement): only the stale writer's rows are left out, and only its own
    `flush` reports it."""
    monkeypatch.setattr(sqlite_writer_module, "LINGER", 60.0)  # all in one batch
    _owners(pg_url, stale="old", live="x")
    with PostgresSaver(pg_url) as saver:
        stale = saver.fenced(Fence(OWNER, ["stale", "old"]))
        live = saver.fenced(Fence(OWNER, ["live", "x"]))
        _owners(pg_url, stale="new")
        _put(stale, "s", 0, wait=False)  # its fence no longer holds, unknown to it yet
        _put(live, "l", 0, wait=False)
        _put(saver, "u", 0, wait=False)
        live.flush()
        saver.flush()
        with pytest.raises(FenceRefused):
            stale.flush()
        assert stale.flush() is None  # reported once
    assert (_steps(pg_url, "s"), _steps(pg_url, "l"), _steps(pg_url, "u")) == ([], [0], [0])


def test_a_fence_known_lost_refuses_before_anything_is_sent(pg_url: str) -> None:
    _owners(pg_url, run="a")
    held = [True]
    with PostgresSaver(pg_url) as saver:
        view = saver.fenced(Fence(OWNER, ["run", "a"], holds=lambda: held[0]))
        _put(view, "t", 0, wait=False)
        held[0] = False  # e.g. the writer's lease ran out by its own clock
        with pytest.raises(FenceRefused):
            _put(view, "t", 1, wait=False)
        view.flush()
    assert _steps(pg_url, "t") == [0]


def test_maintenance_through_a_view_is_fenced_too(pg_url: str) -> None:
    _owners(pg_url, run="a")
    with PostgresSaver(pg_url) as saver:
        view = saver.fenced(Fence(OWNER, ["run", "a"]))
        _put(view, "t", 0)
        _owners(pg_url, run="b")
        with pytest.raises(FenceRefused):
            view.delete_thread("t")
    assert _steps(pg_url, "t") == [0]
