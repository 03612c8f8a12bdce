"""The long-term store protocol: items in namespaces, and the operations on them.

Shapes follow SPEC §2 (Store) and LangGraph's `langgraph.store.base` so that code written for
LangGraph's `BaseStore` runs unchanged: the same method names, arguments, op tuples and errors.

A back end implements only `batch`/`abatch`; the named methods build one op each. Validation
happens at that edge (`validate_op`), so an op passed straight to `batch` is checked too.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, Literal, NamedTuple, Self, TypedDict

from ._match import validate_filter

__all__ = [
    "BaseStore",
    "GetOp",
    "IndexConfig",
    "InvalidNamespaceError",
    "Item",
    "ListNamespacesOp",
    "MatchCondition",
    "NOT_PROVIDED",
    "NamespacePath",
    "NotProvided",
    "Op",
    "PutOp",
    "Result",
    "SearchItem",
    "SearchOp",
    "TTLConfig",
    "validate_op",
]


class NotProvided:
    """Marks an argument the caller left out (distinct from an explicit ``None``)."""

    def __bool__(self) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return "NOT_PROVIDED"


NOT_PROVIDED = NotProvided()


def _as_datetime(value: datetime | str) -> datetime:
    return datetime.fromisoformat(value) if isinstance(value, str) else value


class Item:
    """A stored value with its address and timestamps (tz-aware UTC datetimes)."""

    __slots__ = ("created_at", "key", "namespace", "updated_at", "value")

    def __init__(
        self,
        *,
        value: dict[str, Any],
        key: str,
        namespace: tuple[str, ...],
        created_at: datetime | str,
        updated_at: datetime | str,
    ) -> None:
        self.value = value
        self.key = key
        self.namespace = tuple(namespace)
        self.created_at = _as_datetime(created_at)
        self.updated_at = _as_datetime(updated_at)

    def __eq__(self, other: object) -> bool:
        # Fields only, not the type: a search result equals the item it found (as LangGraph).
        if not isinstance(other, Item):
            return NotImplemented
        return (self.namespace, self.key, self.value, self.created_at, self.updated_at) == (
            other.namespace,
            other.key,
            other.value,
            other.created_at,
            other.updated_at,
        )

    def __hash__(self) -> int:
        return hash((self.namespace, self.key))

    def dict(self) -> dict[str, Any]:
        """The JSON shape of SPEC §3 (Records: Item), timestamps as ISO strings."""
        return {
            "namespace": list(self.namespace),
            "key": self.key,
            "value": self.value,
            "created_at": self.created_at.isoformat(timespec="microseconds"),
            "updated_at": self.updated_at.isoformat(timespec="microseconds"),
        }

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.dict().items())
        return f"{type(self).__name__}({fields})"


class SearchItem(Item):
    """An item returned by `search`; `score` is the cosine similarity when a query ranked it."""

    __slots__ = ("score",)

    def __init__(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        created_at: datetime | str,
        updated_at: datetime | str,
        score: float | None = None,
    ) -> None:
        super().__init__(
            value=value, key=key, namespace=namespace, created_at=created_at, updated_at=updated_at
        )
        self.score = score

    def dict(self) -> dict[str, Any]:
        """The JSON shape of a search result: an item plus its score."""
        return {**super().dict(), "score": self.score}


NamespacePath = tuple[str, ...]
"""A namespace pattern for `list_namespaces`; the label ``"*"`` matches any one label."""


class GetOp(NamedTuple):
    """Read one item."""

    namespace: tuple[str, ...]
    key: str
    refresh_ttl: bool = True


class SearchOp(NamedTuple):
    """List items under a namespace prefix, filtered and optionally ranked by a query."""

    namespace_prefix: tuple[str, ...]
    filter: dict[str, Any] | None = None
    limit: int = 10
    offset: int = 0
    query: str | None = None
    refresh_ttl: bool = True


class MatchCondition(NamedTuple):
    """A prefix or suffix pattern a namespace must match."""

    match_type: Literal["prefix", "suffix"]
    path: NamespacePath


class ListNamespacesOp(NamedTuple):
    """List distinct namespaces holding live items."""

    match_conditions: tuple[MatchCondition, ...] | None = None
    max_depth: int | None = None
    limit: int = 100
    offset: int = 0


class PutOp(NamedTuple):
    """Write an item, or delete it when `value` is None; `ttl` is in minutes."""

    namespace: tuple[str, ...]
    key: str
    value: Mapping[str, Any] | None
    index: Literal[False] | list[str] | None = None  # type: ignore[assignment]  # LangGraph's name
    ttl: float | None = None


Op = GetOp | SearchOp | PutOp | ListNamespacesOp
Result = Item | list[Item] | list[SearchItem] | list[tuple[str, ...]] | None


class InvalidNamespaceError(ValueError):
    """A namespace that cannot be stored: empty, or with a bad label (SPEC §2)."""


class TTLConfig(TypedDict, total=False):
    """Store-wide expiry settings; durations in minutes."""

    refresh_on_read: bool
    default_ttl: float | None
    sweep_interval_minutes: float | None
    omit_expired: bool  # accepted for LangGraph parity; expired items are always omitted


EmbedFunc = Callable[[Sequence[str]], list[list[float]]]
AEmbedFunc = Callable[[Sequence[str]], Awaitable[list[list[float]]]]


class IndexConfig(TypedDict, total=False):
    """Semantic-search settings: vector size, the embedder, and which value paths to embed."""

    dims: int
    embed: Any  # EmbedFunc | AEmbedFunc | an Embeddings-like object | "provider:model"
    fields: list[str] | None


def _validate_labels(namespace: tuple[str, ...]) -> None:
    for label in namespace:
        if not isinstance(label, str):
            raise InvalidNamespaceError(
                f"Namespace labels must be strings; got {type(label).__name__} {label!r} in "
                f"{namespace}."
            )
        if not label:
            raise InvalidNamespaceError(f"Namespace labels cannot be empty strings: {namespace}.")
        if "." in label or "\x00" in label:
            raise InvalidNamespaceError(
                f"Namespace label {label!r} in {namespace} contains '.' or a NUL byte; labels "
                "are joined with '.' on the wire (SPEC §3 Store)."
            )


def _validate_put(op: PutOp) -> None:
    if not op.namespace:
        raise InvalidNamespaceError("Namespace cannot be empty.")
    if op.namespace[0] == "langgraph":
        raise InvalidNamespaceError(f'The root label "langgraph" is reserved: {op.namespace}.')
    if not isinstance(op.value, Mapping):
        raise TypeError(f"Store values must be dicts; got {type(op.value).__name__}.")
    if op.ttl is not None and op.ttl <= 0:
        raise ValueError(f"ttl must be a positive number of minutes or None; got {op.ttl}.")


def _validate_page(limit: int, offset: int) -> None:
    if limit < 0 or offset < 0:
        raise ValueError(f"limit and offset must be >= 0; got limit={limit}, offset={offset}.")


def validate_op(op: Op) -> None:
    """Reject an op a back end must not store or run; raise before any work is done."""
    if isinstance(op, PutOp):
        _validate_labels(op.namespace)
        if op.value is not None:
            _validate_put(op)
    elif isinstance(op, GetOp):
        _validate_labels(op.namespace)
    elif isinstance(op, SearchOp):
        _validate_labels(op.namespace_prefix)
        _validate_page(op.limit, op.offset)
        validate_filter(op.filter)
    elif isinstance(op, ListNamespacesOp):
        for condition in op.match_conditions or ():
            _validate_labels(condition.path)
        _validate_page(op.limit, op.offset)
    else:
        raise TypeError(f"Unknown store operation: {type(op).__name__}.")


def _namespace(namespace: Sequence[str]) -> tuple[str, ...]:
    # ("users") is a str, not a 1-tuple: catch the missing comma instead of storing
    # ("u", "s", "e", "r", "s").
    if isinstance(namespace, str):
        raise InvalidNamespaceError(
            f"Namespace must be a tuple of labels, not the string {namespace!r} "
            f"(did you mean ({namespace!r},)?)."
        )
    return tuple(namespace)


def _list_op(
    prefix: NamespacePath | None,
    suffix: NamespacePath | None,
    max_depth: int | None,
    limit: int,
    offset: int,
) -> ListNamespacesOp:
    conditions = []
    if prefix:
        conditions.append(MatchCondition("prefix", _namespace(prefix)))
    if suffix:
        conditions.append(MatchCondition("suffix", _namespace(suffix)))
    return ListNamespacesOp(tuple(conditions), max_depth, limit, offset)


class BaseStore(ABC):
    """A key-value store of JSON dicts addressed by (namespace tuple, key).

    Back ends implement `batch` and `abatch`; every named method is one op through them, so
    sync and async callers get the same behaviour. Items with a TTL disappear from reads as soon
    as they expire; back ends that support TTL set `supports_ttl`.
    """

    supports_ttl: bool = False
    ttl_config: TTLConfig | None = None

    @abstractmethod
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ops in order, one result per op (None for puts and deletes)."""

    @abstractmethod
    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async form of `batch`."""

    # -- op builders: shared by the sync and async methods ------------------------------------

    def _wants_refresh(self, refresh_ttl: bool | None) -> bool:
        if refresh_ttl is not None:
            return refresh_ttl
        return (self.ttl_config or {}).get("refresh_on_read", True)

    def _put_op(
        self,
        namespace: Sequence[str],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None,
        ttl: float | NotProvided | None,
    ) -> PutOp:
        if isinstance(ttl, NotProvided):
            ttl = (self.ttl_config or {}).get("default_ttl")
        elif ttl is not None and not self.supports_ttl:
            raise NotImplementedError(f"TTL is not supported by {type(self).__name__}.")
        return PutOp(_namespace(namespace), str(key), value, index, ttl)

    def _search_op(
        self,
        namespace_prefix: Sequence[str],
        query: str | None,
        filter: dict[str, Any] | None,
        limit: int,
        offset: int,
        refresh_ttl: bool | None,
    ) -> SearchOp:
        return SearchOp(
            _namespace(namespace_prefix),
            filter,
            limit,
            offset,
            query,
            self._wants_refresh(refresh_ttl),
        )

    # -- sync API ------------------------------------------------------------------------------

    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """The live item at (namespace, key), or None."""
        op = GetOp(_namespace(namespace), str(key), self._wants_refresh(refresh_ttl))
        return self.batch([op])[0]  # type: ignore[return-value]

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        """Create or replace an item; `index` picks fields to embed (False: none), `ttl` minutes."""
        self.batch([self._put_op(namespace, key, value, index, ttl)])

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        """Remove an item; removing a missing item is not an error."""
        self.batch([PutOp(_namespace(namespace), str(key), None)])

    def search(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Items under a prefix: newest first, or by similarity to `query` when indexed."""
        op = self._search_op(namespace_prefix, query, filter, limit, offset, refresh_ttl)
        return self.batch([op])[0]  # type: ignore[return-value]

    def list_namespaces(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """Distinct namespaces with live items, sorted, optionally truncated to `max_depth`."""
        op = _list_op(prefix, suffix, max_depth, limit, offset)
        return self.batch([op])[0]  # type: ignore[return-value]

    # -- async API -----------------------------------------------------------------------------

    async def aget(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """Async form of `get`."""
        op = GetOp(_namespace(namespace), str(key), self._wants_refresh(refresh_ttl))
        return (await self.abatch([op]))[0]  # type: ignore[return-value]

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        """Async form of `put`."""
        await self.abatch([self._put_op(namespace, key, value, index, ttl)])

    async def adelete(self, namespace: tuple[str, ...], key: str) -> None:
        """Async form of `delete`."""
        await self.abatch([PutOp(_namespace(namespace), str(key), None)])

    async def asearch(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Async form of `search`."""
        op = self._search_op(namespace_prefix, query, filter, limit, offset, refresh_ttl)
        return (await self.abatch([op]))[0]  # type: ignore[return-value]

    async def alist_namespaces(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """Async form of `list_namespaces`."""
        op = _list_op(prefix, suffix, max_depth, limit, offset)
        return (await self.abatch([op]))[0]  # type: ignore[return-value]

    # -- lifecycle -----------------------------------------------------------------------------

    def close(self) -> None:  # noqa: B027 - a store with nothing to release keeps this
        """Release resources (connections, sweeper threads). Idempotent."""

    async def aclose(self) -> None:
        """Async form of `close`."""
        self.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
