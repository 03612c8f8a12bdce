"""The saver protocol, run against every back end."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from checkpoints import BaseCheckpointSaver, InMemorySaver, PostgresSaver, SqliteSaver
from checkpoints.base import ERROR, INTERRUPT, empty_checkpoint, thread_config


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseCheckpointSaver]:
    if request.param == "memory":
        yield InMemorySaver()
        return
    if request.param == "postgres":
        with PostgresSaver(request.getfixturevalue("pg_url")) as postgres_saver:
            yield postgres_saver
        return
    with SqliteSaver(tmp_path / "checkpoints.db") as sqlite_saver:
        yield sqlite_saver


def put(
    saver: BaseCheckpointSaver,
    config: dict[str, Any],
    values: dict[str, Any],
    new_versions: dict[str, int],
    *,
    versions: dict[str, int] | None = None,
    age: timedelta | None = None,
    **metadata: Any,
) -> dict[str, Any]:
    """Save a checkpoint holding `values` whose changed channels are `new_versions`."""
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = values
    checkpoint["channel_versions"] = versions or dict(new_versions)
    if age is not None:
        checkpoint["ts"] = (datetime.now(timezone.utc) - age).isoformat()
    stored: Any = {"source": "loop", **metadata}
    return saver.put(config, checkpoint, stored, new_versions)


def history(saver: BaseCheckpointSaver, thread_id: str = "t", ns: str = "") -> list[str]:
    return [
        t.config["configurable"]["checkpoint_id"] for t in saver.list(thread_config(thread_id, ns))
    ]


def test_put_then_get_latest_and_by_id(saver: BaseCheckpointSaver) -> None:
    first = put(saver, thread_config("t"), {"a": (1, 2)}, {"a": 1}, step=-1)
    second = put(saver, first, {"a": (1, 2), "b": "x"}, {"b": 1}, versions={"a": 1, "b": 1}, step=0)

    assert set(second["configurable"]) == {"thread_id", "checkpoint_ns", "checkpoint_id"}
    latest = saver.get_tuple(thread_config("t"))
    assert latest is not None
    assert latest.config == second
    assert latest.checkpoint["channel_values"] == {"a": (1, 2), "b": "x"}
    assert latest.metadata == {"source": "loop", "step": 0}
    assert latest.parent_config == first

    older = saver.get_tuple(first)
    assert older is not None
    assert older.checkpoint["channel_values"] == {"a": (1, 2)}
    assert older.parent_config is None


def test_get_missing_returns_none(saver: BaseCheckpointSaver) -> None:
    assert saver.get_tuple(thread_config("nobody")) is None
    put(saver, thread_config("t"), {}, {})
    assert saver.get_tuple(thread_config("t", "", "no-such-id")) is None
    assert saver.get_tuple(thread_config("t", "other-ns")) is None


def test_a_channel_emptied_by_a_new_version_is_absent(saver: BaseCheckpointSaver) -> None:
    config = put(saver, thread_config("t"), {"a": 1, "b": 2}, {"a": 1, "b": 1})
    put(saver, config, {"a": 1}, {"b": 2}, versions={"a": 1, "b": 2})
    latest = saver.get_tuple(thread_config("t"))
    assert latest is not None
    assert latest.checkpoint["channel_values"] == {"a": 1}


def test_stored_checkpoints_are_copies(saver: BaseCheckpointSaver) -> None:
    items = [1]
    config = put(saver, thread_config("t"), {"items": items}, {"items": 1})
    items.append(2)
    loaded = saver.get_tuple(config)
    assert loaded is not None
    assert loaded.checkpoint["channel_values"]["items"] == [1]
    loaded.checkpoint["channel_values"]["items"].append(3)
    again = saver.get_tuple(config)
    assert again is not None
    assert again.checkpoint["channel_values"]["items"] == [1]


def test_list_is_newest_first_with_limit_before_and_filter(saver: BaseCheckpointSaver) -> None:
    config = thread_config("t")
    ids = []
    for step in range(4):
        config = put(saver, config, {"n": step}, {"n": step + 1}, step=step, parity=step % 2)
        ids.append(config["configurable"]["checkpoint_id"])

    assert history(saver) == ids[::-1]
    assert [t.checkpoint["channel_values"] for t in saver.list(thread_config("t"), limit=2)] == [
        {"n": 3},
        {"n": 2},
    ]
    before = thread_config("t", "", ids[2])
    assert [t.config for t in saver.list(thread_config("t"), before=before)] == [
        thread_config("t", "", ids[1]),
        thread_config("t", "", ids[0]),
    ]
    odd = saver.list(thread_config("t"), filter={"parity": 1, "source": "loop"})
    assert [t.metadata["step"] for t in odd] == [3, 1]
    assert [t.metadata["step"] for t in saver.list(thread_config("t"), filter={"step": 2})] == [2]
    limited = saver.list(thread_config("t"), filter={"parity": 1}, limit=1)
    assert [t.metadata["step"] for t in limited] == [3]


def test_list_scopes_threads_and_namespaces(saver: BaseCheckpointSaver) -> None:
    a = put(saver, thread_config("a"), {}, {})
    b = put(saver, thread_config("b"), {}, {})
    sub = put(saver, thread_config("a", "child:1"), {}, {})

    assert [t.config for t in saver.list(None)] == [sub, b, a]
    assert [t.config for t in saver.list({"configurable": {"thread_id": "a"}})] == [sub, a]
    assert [t.config for t in saver.list(thread_config("a"))] == [a]
    assert [t.config for t in saver.list(thread_config("a", "child:1"))] == [sub]
    assert [t.config for t in saver.list(a)] == [a]  # a config with checkpoint_id names one


def test_pending_writes_order_upserts_and_idempotency(saver: BaseCheckpointSaver) -> None:
    config = put(saver, thread_config("t"), {}, {})
    saver.put_writes(config, [("a", 1), ("b", (2,))], "task-1", "path-1")
    saver.put_writes(config, [(ERROR, "first failure")], "task-2")
    saver.put_writes(config, [("c", 3)], "task-3")
    # A retried save keeps the first regular writes; special channels take the latest value.
    saver.put_writes(config, [("a", 100), ("b", 200)], "task-1", "path-1")
    saver.put_writes(config, [(ERROR, "second failure")], "task-2")
    saver.put_writes(config, [(INTERRUPT, {"value": "ask"})], "task-3")

    loaded = saver.get_tuple(config)
    assert loaded is not None
    assert loaded.pending_writes == [
        ("task-1", "a", 1),
        ("task-1", "b", (2,)),
        ("task-2", ERROR, "second failure"),
        ("task-3", "c", 3),
        ("task-3", INTERRUPT, {"value": "ask"}),
    ]


def test_writes_belong_to_their_checkpoint(saver: BaseCheckpointSaver) -> None:
    first = put(saver, thread_config("t"), {}, {})
    saver.put_writes(first, [("a", 1)], "task")
    second = put(saver, first, {}, {})
    latest = saver.get_tuple(second)
    assert latest is not None
    assert latest.pending_writes == []
    assert [t.pending_writes for t in saver.list(thread_config("t"))] == [[], [("task", "a", 1)]]


def test_delete_thread_removes_only_that_thread(saver: BaseCheckpointSaver) -> None:
    keep = put(saver, thread_config("keep"), {"a": 1}, {"a": 1})
    gone = put(saver, thread_config("gone"), {"a": 1}, {"a": 1})
    put(saver, thread_config("gone", "sub"), {}, {})
    saver.put_writes(gone, [("a", 2)], "task")

    saver.delete_thread("gone")

    assert list(saver.list({"configurable": {"thread_id": "gone"}})) == []
    kept = saver.get_tuple(keep)
    assert kept is not None
    assert kept.checkpoint["channel_values"] == {"a": 1}


def test_copy_thread_copies_namespaces_values_and_writes(saver: BaseCheckpointSaver) -> None:
    first = put(saver, thread_config("src"), {"a": [1]}, {"a": 1}, step=0)
    second = put(saver, first, {"a": [1], "b": 2}, {"b": 1}, versions={"a": 1, "b": 1}, step=1)
    saver.put_writes(second, [("a", 5), (ERROR, "e")], "task")
    put(saver, thread_config("src", "child"), {"c": 3}, {"c": 1})

    saver.copy_thread("src", "dst")

    for thread_id in ("src", "dst"):
        copied = list(saver.list({"configurable": {"thread_id": thread_id}}))
        assert [t.checkpoint["channel_values"] for t in copied] == [
            {"c": 3},
            {"a": [1], "b": 2},
            {"a": [1]},
        ]
        assert copied[1].pending_writes == [("task", "a", 5), ("task", ERROR, "e")]
        assert copied[1].parent_config == thread_config(
            thread_id, "", first["configurable"]["checkpoint_id"]
        )
        assert {t.config["configurable"]["thread_id"] for t in copied} == {thread_id}


def test_prune_keep_latest_keeps_values_still_referenced(saver: BaseCheckpointSaver) -> None:
    config = put(saver, thread_config("t"), {"a": "kept", "n": 0}, {"a": 1, "n": 1})
    for n in range(1, 4):
        saver.put_writes(config, [("n", n)], f"task-{n}")
        config = put(
            saver, config, {"a": "kept", "n": n}, {"n": n + 1}, versions={"a": 1, "n": n + 1}
        )
    for _ in range(3):
        put(saver, thread_config("t", "child"), {}, {})
    ids, child_ids = history(saver), history(saver, ns="child")

    saver.prune(["t"], keep_last=2)

    assert history(saver) == ids[:2]
    assert history(saver, ns="child") == child_ids[:2]
    latest = saver.get_tuple(thread_config("t"))
    assert latest is not None
    assert latest.checkpoint["channel_values"] == {"a": "kept", "n": 3}
    assert [t.pending_writes for t in saver.list(thread_config("t"))] == [[], [("task-3", "n", 3)]]


def test_prune_older_than_keeps_recent_and_latest(saver: BaseCheckpointSaver) -> None:
    config = thread_config("t")
    for age in (timedelta(hours=3), timedelta(hours=2), timedelta(seconds=0)):
        config = put(saver, config, {}, {}, age=age)
    old_only = thread_config("old")
    for age in (timedelta(hours=3), timedelta(hours=2)):
        old_only = put(saver, old_only, {}, {}, age=age)
    recent = history(saver)[0]

    saver.prune(["t", "old"], keep_last=1, older_than_seconds=3600)

    assert history(saver) == [recent]
    assert history(saver, "old") == [old_only["configurable"]["checkpoint_id"]]


def test_prune_delete_removes_threads(saver: BaseCheckpointSaver) -> None:
    put(saver, thread_config("a"), {"x": 1}, {"x": 1})
    put(saver, thread_config("b"), {}, {})
    put(saver, thread_config("idle"), {}, {}, age=timedelta(days=2))

    saver.prune(["a"], strategy="delete")
    saver.prune(["b", "idle"], strategy="delete", older_than_seconds=86400)

    assert history(saver, "a") == []
    assert len(history(saver, "b")) == 1
    assert history(saver, "idle") == []


def test_concurrent_threads_on_distinct_thread_ids(saver: BaseCheckpointSaver) -> None:
    errors: list[BaseException] = []

    def run(thread_id: str) -> None:
        try:
            config = thread_config(thread_id)
            for step in range(20):
                saver.put_writes(config, [("n", step)], "task") if step else None
                config = put(saver, config, {"n": step}, {"n": step + 1})
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    workers = [threading.Thread(target=run, args=(f"t{i}",)) for i in range(6)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()

    assert errors == []
    for i in range(6):
        assert len(history(saver, f"t{i}")) == 20
        latest = saver.get_tuple(thread_config(f"t{i}"))
        assert latest is not None
        assert latest.checkpoint["channel_values"] == {"n": 19}


@pytest.mark.anyio
async def test_async_methods(saver: BaseCheckpointSaver) -> None:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"a": {1, 2}}
    checkpoint["channel_versions"] = {"a": 1}
    config = await saver.aput(thread_config("t"), checkpoint, {"source": "input"}, {"a": 1})
    await saver.aput_writes(config, [("a", 3)], "task")

    loaded = await saver.aget_tuple(thread_config("t"))
    assert loaded is not None
    assert loaded.checkpoint["channel_values"] == {"a": {1, 2}}
    assert loaded.pending_writes == [("task", "a", 3)]
    assert [t.config async for t in saver.alist(thread_config("t"))] == [config]

    await saver.acopy_thread("t", "u")
    await saver.aprune(["u"], strategy="delete")
    await saver.adelete_thread("t")
    assert [t async for t in saver.alist(None)] == []


@pytest.mark.anyio
async def test_handed_over_changes_are_visible_after_flush(saver: Any) -> None:
    config = thread_config("t")
    for step in range(3):
        if step:
            saver.put_writes_nowait(config, [("n", step)], f"task-{step}")
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"n": step}
        checkpoint["channel_versions"] = {"n": step + 1}
        config = saver.put_nowait(config, checkpoint, {"step": step}, {"n": step + 1})
    saver.flush()
    await saver.aflush()
    assert [t.metadata["step"] for t in saver.list(thread_config("t"))] == [2, 1, 0]
    assert [t.pending_writes for t in saver.list(thread_config("t"))][1] == [("task-2", "n", 2)]
