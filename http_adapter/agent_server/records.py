"""Server records (assistants and their versions, threads, runs, crons) behind one interface.

The embedded default keeps every record in process-local indexes and writes each change
through to SQLite before the call returns, so a restart reloads them (`open()`); `--in-memory`
skips the file. Reads and searches are dictionary work. `RecordStore` is the protocol every back end
implements (issue 19, SCALEOUT §1); `cluster.records.PgRecords` is the PostgreSQL one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar, runtime_checkable

import msgspec

from ._records_file import RecordFile
from .schemas import Assistant, Run, Thread

__all__ = ["RecordStats", "RecordStore", "Records", "matches", "now"]

T = TypeVar("T")
_LIVE = frozenset({"pending", "running"})
_KINDS = {"assistant": Assistant, "assistant_version": Assistant, "thread": Thread, "run": Run}


def now() -> str:
    """ISO-8601 with microseconds and +00:00 (SPEC §3)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def matches(container: Any, subset: dict[str, Any] | None) -> bool:
    """JSON containment: every key of `subset` is in `container` with a containing value."""
    if not subset:
        return True
    if not isinstance(container, dict):
        return False
    for key, value in subset.items():
        if key not in container:
            return False
        have = container[key]
        if isinstance(value, dict):
            if not matches(have, value):
                return False
        elif have != value:
            return False
    return True


def page(items: list[T], limit: int, offset: int) -> list[T]:
    return items[offset : offset + limit] if limit >= 0 else items[offset:]


class RecordStats(msgspec.Struct, frozen=True):
    """Record counts for `/info` and `/metrics`: assistants, and threads and runs by status."""

    assistants: int
    threads: dict[str, int]
    runs: dict[str, int]


@runtime_checkable
class RecordStore(Protocol):
    """The records protocol (issue 19, SCALEOUT §1): routes, the queue and the schedulers see
    only this, so the embedded `Records` and the PostgreSQL back end are interchangeable.
    Searches and listings return creation order."""

    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def get_assistant(self, assistant_id: str) -> Assistant | None: ...
    async def assistant_versions(self, assistant_id: str) -> dict[int, Assistant]: ...
    async def put_assistant(self, assistant: Assistant) -> Assistant: ...
    async def set_assistant(self, assistant: Assistant) -> Assistant: ...
    async def delete_assistant(self, assistant_id: str) -> None: ...
    async def search_assistants(
        self, *, metadata: dict[str, Any] | None = None, graph_id: str | None = None,
        name: str | None = None,
    ) -> list[Assistant]: ...
    async def get_thread(self, thread_id: str) -> Thread | None: ...
    async def put_thread(self, thread: Thread) -> Thread: ...
    async def delete_thread(self, thread_id: str) -> None: ...
    async def search_threads(
        self, *, metadata: dict[str, Any] | None = None, status: str | None = None,
        ids: list[str] | None = None,
    ) -> list[Thread]: ...
    async def threads_updated_before(self, stamp: str) -> list[Thread]: ...
    async def get_run(self, run_id: str) -> Run | None: ...
    async def put_run(self, run: Run) -> Run: ...
    async def put_runs(self, runs: list[Run], threads: Sequence[Thread] = ()) -> None: ...
    async def delete_run(self, run_id: str) -> None: ...
    async def runs_of(self, thread_id: str, status: str | None = None) -> list[Run]: ...
    async def runs_with_status(self, *statuses: str) -> list[Run]: ...
    async def stats(self) -> RecordStats: ...
    async def get_extra(self, kind: str, key: str) -> Any | None: ...
    async def extras(self, kind: str) -> dict[str, Any]: ...
    async def put_extra(self, kind: str, key: str, body: Any) -> None: ...
    async def replace_extra(self, kind: str, key: str, expected: Any, new: Any) -> bool: ...
    async def delete_extra(self, kind: str, key: str) -> None: ...


class Records:
    """All records of one server process (the embedded `RecordStore`): process-local indexes,
    written through to SQLite. The indexes are private: other modules go through the
    protocol, so they work the same over the PostgreSQL back end."""

    def __init__(self, path: str | None = None) -> None:
        self._file = RecordFile(path) if path else None
        self._assistants: dict[str, Assistant] = {}
        self._versions: dict[str, dict[int, Assistant]] = {}
        self._threads: dict[str, Thread] = {}
        self._runs: dict[str, Run] = {}
        self._thread_runs: dict[str, list[str]] = {}
        # runs not ended (pending, running), by thread and all: the queue asks for them at every
        # create and pick, and scanning every run ever made grew with a long thread (issue 32)
        self._live: dict[str, None] = {}
        self._live_of: dict[str, dict[str, None]] = {}
        # other kinds (crons...) by kind then key; bodies as plain JSON values, as reloaded
        self._extra: dict[str, dict[str, Any]] = {}

    async def open(self) -> None:
        if self._file is None:
            return
        await self._file.open()
        for kind, key, body in await self._file.load():
            struct = _KINDS.get(kind)
            if struct is None:
                self._extra.setdefault(kind, {})[key] = msgspec.json.decode(body)
                continue
            record = msgspec.json.decode(body, type=struct)
            self._index(kind, record)

    async def close(self) -> None:
        if self._file is not None:
            await self._file.close()

    def _index(self, kind: str, record: Any) -> None:
        if kind == "assistant":
            self._assistants[record.assistant_id] = record
        elif kind == "assistant_version":
            self._versions.setdefault(record.assistant_id, {})[record.version] = record
        elif kind == "thread":
            self._threads[record.thread_id] = record
        elif kind == "run":
            if record.run_id not in self._runs:
                self._thread_runs.setdefault(record.thread_id, []).append(record.run_id)
            self._runs[record.run_id] = record
            if record.status in _LIVE:
                self._live[record.run_id] = None
                self._live_of.setdefault(record.thread_id, {})[record.run_id] = None
            else:
                self._unlive(record)

    def _unlive(self, run: Run) -> None:
        self._live.pop(run.run_id, None)
        of = self._live_of.get(run.thread_id)
        if of is not None:
            of.pop(run.run_id, None)
            if not of:
                del self._live_of[run.thread_id]

    async def _save(self, changes: list[tuple[str, str, Any]], deletes: Iterable[tuple[str, str]] = ()) -> None:
        if self._file is not None:
            await self._file.write(
                [(kind, key, msgspec.json.encode(rec)) for kind, key, rec in changes], list(deletes)
            )

    # -- assistants -----------------------------------------------------------------------------

    async def get_assistant(self, assistant_id: str) -> Assistant | None:
        return self._assistants.get(assistant_id)

    async def assistant_versions(self, assistant_id: str) -> dict[int, Assistant]:
        """Every version of an assistant by number (a copy: the caller may keep it)."""
        return dict(self._versions.get(assistant_id, {}))

    async def put_assistant(self, assistant: Assistant) -> Assistant:
        """Create an assistant (version 1) or add a new latest version to it."""
        await self._save([
            ("assistant", assistant.assistant_id, assistant),
            ("assistant_version", f"{assistant.assistant_id}:{assistant.version}", assistant),
        ])
        self._index("assistant", assistant)
        self._index("assistant_version", assistant)
        return assistant

    async def set_assistant(self, assistant: Assistant) -> Assistant:
        """Point an assistant at one of its versions (`/latest`)."""
        await self._save([("assistant", assistant.assistant_id, assistant)])
        self._index("assistant", assistant)
        return assistant

    async def delete_assistant(self, assistant_id: str) -> None:
        versions = self._versions.pop(assistant_id, {})
        await self._save(
            [],
            [("assistant", assistant_id)]
            + [("assistant_version", f"{assistant_id}:{v}") for v in versions],
        )
        self._assistants.pop(assistant_id, None)

    async def search_assistants(
        self, *, metadata: dict[str, Any] | None = None, graph_id: str | None = None,
        name: str | None = None,
    ) -> list[Assistant]:
        """Assistants matching every given filter: `graph_id` exactly, `name` as a
        case-insensitive substring, `metadata` by JSON containment. Creation order."""
        needle = name.lower() if name else None
        return [
            a for a in self._assistants.values()
            if (graph_id is None or a.graph_id == graph_id)
            and (needle is None or needle in (a.name or "").lower())
            and matches(a.metadata, metadata)
        ]

    # -- threads --------------------------------------------------------------------------------

    async def get_thread(self, thread_id: str) -> Thread | None:
        return self._threads.get(thread_id)

    async def put_thread(self, thread: Thread) -> Thread:
        await self._save([("thread", thread.thread_id, thread)])
        self._index("thread", thread)
        return thread

    async def delete_thread(self, thread_id: str) -> None:
        """The thread with its runs; deleting a missing thread is a no-op (sweeps race)."""
        run_ids = self._thread_runs.pop(thread_id, [])
        await self._save([], [("thread", thread_id)] + [("run", r) for r in run_ids])
        self._threads.pop(thread_id, None)
        for run_id in run_ids:
            run = self._runs.pop(run_id, None)
            if run is not None:
                self._unlive(run)

    async def search_threads(
        self, *, metadata: dict[str, Any] | None = None, status: str | None = None,
        ids: list[str] | None = None,
    ) -> list[Thread]:
        """Threads matching every given filter (`metadata` by JSON containment). Creation
        order. Values are not filtered here: a record names them (`thread_values.py`)."""
        if ids is not None:
            wanted = set(ids)
            pool: Iterable[Thread] = (t for i, t in self._threads.items() if i in wanted)
        else:
            pool = self._threads.values()
        return [
            t for t in pool
            if (status is None or t.status == status)
            and matches(t.metadata, metadata)
        ]

    async def threads_updated_before(self, stamp: str) -> list[Thread]:
        """Threads last updated before `stamp` (ISO-8601, as `now()`), creation order."""
        return [t for t in self._threads.values() if t.updated_at < stamp]

    # -- runs -----------------------------------------------------------------------------------

    async def get_run(self, run_id: str) -> Run | None:
        return self._runs.get(run_id)

    async def put_run(self, run: Run) -> Run:
        await self._save([("run", run.run_id, run)])
        self._index("run", run)
        return run

    async def put_runs(self, runs: list[Run], threads: Sequence[Thread] = ()) -> None:
        """Several records in one transaction (a run's status with its thread's)."""
        await self._save(
            [("run", r.run_id, r) for r in runs] + [("thread", t.thread_id, t) for t in threads]
        )
        for run in runs:
            self._index("run", run)
        for thread in threads:
            self._index("thread", thread)

    async def delete_run(self, run_id: str) -> None:
        run = self._runs.pop(run_id, None)
        await self._save([], [("run", run_id)])
        if run is not None:
            self._unlive(run)
            ids = self._thread_runs.get(run.thread_id, [])
            if run_id in ids:
                ids.remove(run_id)

    async def runs_of(self, thread_id: str, status: str | None = None) -> list[Run]:
        """A thread's runs in creation order (those not ended: in the order they became so)."""
        ids: Iterable[str] = (self._live_of.get(thread_id, {}) if status in _LIVE
                              else self._thread_runs.get(thread_id, ()))
        runs = [self._runs[r] for r in ids if r in self._runs]
        return [r for r in runs if status is None or r.status == status]

    async def runs_with_status(self, *statuses: str) -> list[Run]:
        """Every run (all threads) in one of `statuses`, creation order (those not ended: in
        the order they became so)."""
        pool = ((self._runs[r] for r in self._live) if _LIVE.issuperset(statuses)
                else self._runs.values())
        return [r for r in pool if r.status in statuses]

    async def stats(self) -> RecordStats:
        return RecordStats(
            assistants=len(self._assistants),
            threads=dict(Counter(t.status for t in self._threads.values())),
            runs=dict(Counter(r.status for r in self._runs.values())),
        )

    # -- other kinds (crons, ...) ---------------------------------------------------------------

    async def get_extra(self, kind: str, key: str) -> Any | None:
        return self._extra.get(kind, {}).get(key)

    async def extras(self, kind: str) -> dict[str, Any]:
        """A kind's bodies by key, creation order (a copy)."""
        return dict(self._extra.get(kind, {}))

    async def put_extra(self, kind: str, key: str, body: Any) -> None:
        plain = msgspec.to_builtins(body)  # stored as it reads back from the file
        await self._save([(kind, key, plain)])
        self._extra.setdefault(kind, {})[key] = plain

    async def replace_extra(self, kind: str, key: str, expected: Any, new: Any) -> bool:
        """Compare-and-set on the whole body: write `new` only while the body is still
        `expected` (False otherwise, nothing written). Crons fire once (issue 19 §8)."""
        bodies = self._extra.get(kind, {})
        old = bodies.get(key)
        if old is None or old != msgspec.to_builtins(expected):
            return False
        plain = msgspec.to_builtins(new)
        bodies[key] = plain  # before any await: a concurrent replace now compares against it
        try:
            await self._save([(kind, key, plain)])
        except BaseException:
            if bodies.get(key) is plain:
                bodies[key] = old
            raise
        return True

    async def delete_extra(self, kind: str, key: str) -> None:
        await self._save([], [(kind, key)])
        self._extra.get(kind, {}).pop(key, None)


def sort_records(
    items: list[T], sort_by: str | None, sort_order: str | None, default: str,
    key: Callable[[T, str], Any] = lambda r, f: getattr(r, f, None),
) -> list[T]:
    """`items` (in creation order) ordered by one field (`default` when `sort_by` is None),
    `desc` unless `sort_order` is `asc`. Missing values sort last in `asc`, first in `desc`;
    equal values fall back to creation order (newest first in `desc`), so pages are stable."""
    field = sort_by or default

    def sort_key(pair: tuple[int, T]) -> tuple[bool, Any, int]:
        value = key(pair[1], field)
        return (value is None, "" if value is None else value, pair[0])

    ordered = sorted(enumerate(items), key=sort_key,
                     reverse=(sort_order or "desc").lower() == "desc")
    return [item for _, item in ordered]
