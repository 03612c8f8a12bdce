"""Server records (assistants and their versions, threads, runs, crons) behind one interface.

The embedded default keeps every record in process-local indexes and writes each change
through to SQLite before the call returns, so a restart reloads them (`open()`); `--in-memory`
skips the file. Reads and searches are dictionary work. A later PostgreSQL back end implements
the same methods with queries (DESIGN: records are a scaling seam).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import msgspec

from ._records_file import RecordFile
from .schemas import Assistant, Run, Thread

__all__ = ["RecordStats", "Records", "matches", "now"]

T = TypeVar("T")
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


class RecordStats(msgspec.Struct, frozen=True):
    """Record counts for `/info` and `/metrics`: assistants, and threads and runs by status."""

    assistants: int
    threads: dict[str, int]
    runs: dict[str, int]


def page(items: list[T], limit: int, offset: int) -> list[T]:
    return items[offset : offset + limit] if limit >= 0 else items[offset:]


class Records:
    """All records of one server; one instance per process."""

    def __init__(self, path: str | None = None) -> None:
        self._file = RecordFile(path) if path else None
        self.assistants: dict[str, Assistant] = {}
        self.versions: dict[str, dict[int, Assistant]] = {}
        self.threads: dict[str, Thread] = {}
        self.runs: dict[str, Run] = {}
        self.thread_runs: dict[str, list[str]] = {}
        self.extra: dict[str, dict[str, Any]] = {}  # other kinds (crons...) by kind then id

    async def open(self) -> None:
        if self._file is None:
            return
        await self._file.open()
        for kind, key, body in await self._file.load():
            struct = _KINDS.get(kind)
            if struct is None:
                self.extra.setdefault(kind, {})[key] = msgspec.json.decode(body)
                continue
            record = msgspec.json.decode(body, type=struct)
            self._index(kind, record)

    async def close(self) -> None:
        if self._file is not None:
            await self._file.close()

    def _index(self, kind: str, record: Any) -> None:
        if kind == "assistant":
            self.assistants[record.assistant_id] = record
        elif kind == "assistant_version":
            self.versions.setdefault(record.assistant_id, {})[record.version] = record
        elif kind == "thread":
            self.threads[record.thread_id] = record
        elif kind == "run":
            if record.run_id not in self.runs:
                self.thread_runs.setdefault(record.thread_id, []).append(record.run_id)
            self.runs[record.run_id] = record

    async def _save(self, changes: list[tuple[str, str, Any]], deletes: Iterable[tuple[str, str]] = ()) -> None:
        if self._file is not None:
            await self._file.write(
                [(kind, key, msgspec.json.encode(rec)) for kind, key, rec in changes], list(deletes)
            )

    # -- assistants -----------------------------------------------------------------------------

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
        versions = self.versions.pop(assistant_id, {})
        await self._save(
            [],
            [("assistant", assistant_id)]
            + [("assistant_version", f"{assistant_id}:{v}") for v in versions],
        )
        self.assistants.pop(assistant_id, None)

    def search_assistants(
        self, *, metadata: dict[str, Any] | None = None, graph_id: str | None = None,
        name: str | None = None,
    ) -> list[Assistant]:
        """Assistants matching every given filter: `graph_id` exactly, `name` as a
        case-insensitive substring, `metadata` by JSON containment. Creation order."""
        needle = name.lower() if name else None
        return [
            a for a in self.assistants.values()
            if (graph_id is None or a.graph_id == graph_id)
            and (needle is None or needle in (a.name or "").lower())
            and matches(a.metadata, metadata)
        ]

    # -- threads --------------------------------------------------------------------------------

    async def put_thread(self, thread: Thread) -> Thread:
        await self._save([("thread", thread.thread_id, thread)])
        self._index("thread", thread)
        return thread

    async def delete_thread(self, thread_id: str) -> None:
        run_ids = self.thread_runs.pop(thread_id, [])
        await self._save([], [("thread", thread_id)] + [("run", r) for r in run_ids])
        self.threads.pop(thread_id, None)
        for run_id in run_ids:
            self.runs.pop(run_id, None)

    def search_threads(
        self, *, metadata: dict[str, Any] | None = None, values: dict[str, Any] | None = None,
        status: str | None = None, ids: list[str] | None = None,
    ) -> list[Thread]:
        """Threads matching every given filter (`metadata`/`values` by JSON containment; a
        thread without values never matches a `values` filter). Creation order."""
        if ids is not None:
            wanted = set(ids)
            pool: Iterable[Thread] = (t for i, t in self.threads.items() if i in wanted)
        else:
            pool = self.threads.values()
        return [
            t for t in pool
            if (status is None or t.status == status)
            and matches(t.metadata, metadata)
            and (not values or matches(t.values, values))
        ]

    # -- runs -----------------------------------------------------------------------------------

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
        run = self.runs.pop(run_id, None)
        await self._save([], [("run", run_id)])
        if run is not None:
            ids = self.thread_runs.get(run.thread_id, [])
            if run_id in ids:
                ids.remove(run_id)

    def runs_of(self, thread_id: str, status: str | None = None) -> list[Run]:
        """A thread's runs in creation order."""
        runs = [self.runs[r] for r in self.thread_runs.get(thread_id, ()) if r in self.runs]
        return [r for r in runs if status is None or r.status == status]

    # -- other kinds (crons, ...) ---------------------------------------------------------------

    async def put_extra(self, kind: str, key: str, record: Any) -> None:
        await self._save([(kind, key, record)])
        self.extra.setdefault(kind, {})[key] = record

    async def delete_extra(self, kind: str, key: str) -> None:
        await self._save([], [(kind, key)])
        self.extra.get(kind, {}).pop(key, None)


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
