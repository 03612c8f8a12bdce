"""Store semantics over a few row primitives, shared by the memory, SQLite and PostgreSQL stores.

Validation, TTL, embedding and ranking live here once (STYLE 7); a back end supplies a
transaction and reads/writes of `Row`s. `batch` and `abatch` differ only in how they call the
embedder and in `_offload`, which lets a blocking back end run its transaction off the loop.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Any, Self, TypeVar

import anyio.to_thread

from ._core import Plan, Row, expiry, rank, to_micros, utcnow
from ._embed import Embedder, Vector
from ._match import select_namespaces
from ._sweeper import Sweeper
from .base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op,
)

T = TypeVar("T")

_DEFAULT_SWEEP_MINUTES = 5.0  # LangGraph's default


def _writes(ops: Sequence[Op]) -> bool:
    # Reads that refresh a TTL write too; the back end may open a write transaction up front.
    return any(isinstance(op, PutOp) or getattr(op, "refresh_ttl", False) for op in ops)


class RowStore(BaseStore):
    """`BaseStore` over row primitives, with TTL (`ttl_config`) and semantic search (`index`).

    `clock` returns the current tz-aware UTC time; tests inject one to expire items without
    sleeping. Timestamps are strictly increasing per store, so an overwrite always moves
    `updated_at` forward and "newest first" is the order of writes.
    """

    supports_ttl = True

    def __init__(
        self,
        *,
        index: IndexConfig | None = None,
        ttl_config: TTLConfig | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.index_config = dict(index) if index else None
        self.ttl_config = ttl_config
        self._embedder = Embedder(index.get("embed"), index.get("dims")) if index else None
        self._fields = list(index.get("fields") or ["$"]) if index else None
        self._clock = clock or utcnow
        self._last_micros = 0
        self._sweeper: Sweeper | None = None

    # -- primitives a back end supplies (called inside `_transaction`) -------------------------

    @abstractmethod
    def _transaction(self, write: bool) -> AbstractContextManager[None]:
        """Exclusive access for one batch; all of it is applied or none (on error)."""

    @abstractmethod
    def _read(self, namespace: tuple[str, ...], key: str, now: int) -> Row | None:
        """The live row at (namespace, key)."""

    @abstractmethod
    def _write(self, row: Row, vectors: list[tuple[str, Vector]]) -> None:
        """Insert or replace a row and replace its vectors."""

    @abstractmethod
    def _remove(self, namespace: tuple[str, ...], key: str) -> None:
        """Delete a row and its vectors, if present."""

    @abstractmethod
    def _touch(self, rows: list[Row]) -> None:
        """Persist the new `expires_at` of these rows."""

    @abstractmethod
    def _scan(
        self, prefix: tuple[str, ...], now: int, *, limit: int | None, vectors: bool
    ) -> Iterable[Row]:
        """Live rows under `prefix`, newest first; the first `limit` suffice when given."""

    @abstractmethod
    def _namespaces(self, now: int) -> Iterable[tuple[str, ...]]:
        """Namespaces holding at least one live row."""

    @abstractmethod
    def _expire(self, now: int) -> int:
        """Delete rows expired at `now`; return how many."""

    async def _offload(self, fn: Callable[..., T], *args: Any) -> T:
        """Run blocking storage work from async code; in-memory work is quick enough inline."""
        return fn(*args)

    # -- batch -----------------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ops in order in one transaction, one result per op."""
        checked = _validated(ops)
        plan = Plan(checked, self._fields)
        if self._embedder is not None:
            plan.embed(self._embedder)
        return self._execute(checked, plan)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async form of `batch`; embedding and storage never block the event loop."""
        checked = _validated(ops)
        plan = Plan(checked, self._fields)
        if self._embedder is not None:
            await plan.aembed(self._embedder)
        return await self._offload(self._execute, checked, plan)

    def _tick(self) -> int:
        now = max(to_micros(self._clock()), self._last_micros + 1)
        self._last_micros = now
        return now

    def _execute(self, ops: list[Op], plan: Plan) -> list[Result]:
        with self._transaction(write=_writes(ops)):
            now = self._tick()
            return [self._apply(i, op, plan, now) for i, op in enumerate(ops)]

    def _apply(self, i: int, op: Op, plan: Plan, now: int) -> Result:
        if isinstance(op, GetOp):
            return self._get(op, now)
        if isinstance(op, SearchOp):
            return self._search(op, plan.query_vectors.get(op.query or ""), now)
        if isinstance(op, ListNamespacesOp):
            conditions = [(c.match_type, c.path) for c in op.match_conditions or ()]
            found = select_namespaces(self._namespaces(now), conditions, op.max_depth)
            return found[op.offset : op.offset + op.limit]
        if op.value is None:
            self._remove(op.namespace, op.key)
        else:
            self._put(op, plan.raw[i], plan.vectors(i), now)
        return None

    def _get(self, op: GetOp, now: int) -> Item | None:
        row = self._read(op.namespace, op.key, now)
        if row is None:
            return None
        self._refresh_ttl([row], op.refresh_ttl, now)
        return row.item()

    def _search(self, op: SearchOp, query: Vector | None, now: int) -> list[SearchItem]:
        # Without a filter or ranking, the page is a plain slice the back end can cut short.
        stop = None if op.filter or query is not None else op.offset + op.limit
        rows = self._scan(op.namespace_prefix, now, limit=stop, vectors=query is not None)
        page = rank(rows, op, query)
        self._refresh_ttl([row for row, _, _ in page], op.refresh_ttl, now)
        return [row.search_item(value, score) for row, value, score in page]

    def _put(self, op: PutOp, raw: str, vectors: list[tuple[str, Vector]], now: int) -> None:
        existing = self._read(op.namespace, op.key, now)
        row = Row(
            namespace=op.namespace,
            key=op.key,
            raw=raw,
            created_at=now if existing is None else existing.created_at,
            updated_at=now,
            expires_at=expiry(now, op.ttl),
            ttl_minutes=op.ttl,
        )
        self._write(row, vectors)

    def _refresh_ttl(self, rows: list[Row], refresh: bool, now: int) -> None:
        touched = [row for row in rows if refresh and row.ttl_minutes is not None]
        for row in touched:
            row.expires_at = expiry(now, row.ttl_minutes)
        if touched:
            self._touch(touched)

    # -- TTL sweeping ----------------------------------------------------------------------------

    def sweep_ttl(self) -> int:
        """Delete expired items now; return how many. Reads already hide them."""
        with self._transaction(write=True):
            return self._expire(self._tick())

    async def asweep_ttl(self) -> int:
        """Async form of `sweep_ttl`."""
        return await self._offload(self.sweep_ttl)

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> Future[None]:
        """Sweep every `sweep_interval_minutes` (else `ttl_config`'s, else 5) on a daemon thread.

        Returns a future that resolves when the sweeper stops; cancelling it stops the sweeper.
        Calling again while one runs returns the running sweeper's future.
        """
        if self._sweeper is not None and self._sweeper.alive():
            return self._sweeper.future
        minutes = (
            sweep_interval_minutes
            or (self.ttl_config or {}).get("sweep_interval_minutes")
            or _DEFAULT_SWEEP_MINUTES
        )
        self._sweeper = Sweeper(self.sweep_ttl, minutes * 60)
        return self._sweeper.future

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; False if it did not end within `timeout` seconds."""
        if self._sweeper is None:
            return True
        stopped = self._sweeper.stop(timeout)
        if stopped:
            self._sweeper = None
        return stopped

    def close(self) -> None:
        """Stop the sweeper. Idempotent."""
        self.stop_ttl_sweeper()

    async def aclose(self) -> None:
        """Async form of `close`; joining the sweeper thread happens off the event loop."""
        await anyio.to_thread.run_sync(self.close)


class OpenedRowStore(RowStore):
    """A `RowStore` whose constructor opens a database named by one string (a path or a URL):
    the SQLite and PostgreSQL stores (issue 19)."""

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str,
        *,
        index: IndexConfig | None = None,
        ttl_config: TTLConfig | None = None,
    ) -> Iterator[Self]:
        """LangGraph's constructor spelling: a store closed when the block ends."""
        open_store: Callable[..., Self] = cls
        with open_store(conn_string, index=index, ttl_config=ttl_config) as store:
            yield store


def _validated(ops: Iterable[Op]) -> list[Op]:
    checked = list(ops)
    for op in checked:
        validate_op(op)
    return checked
