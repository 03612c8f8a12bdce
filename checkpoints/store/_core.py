"""The IO-free core both back ends share: stored rows, time arithmetic, the embedding plan of a
batch, and search ranking. Back ends only fetch and write rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from itertools import islice
from typing import Any

import msgspec

from ._embed import Embedder, Vector, cosine, field_texts
from ._match import matches
from .base import Item, Op, PutOp, SearchItem, SearchOp

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(dict[str, Any]).decode


def to_micros(moment: datetime) -> int:
    """Exact microseconds since the epoch (floats would round off the last digit)."""
    return (moment - _EPOCH) // _MICROSECOND


def from_micros(micros: int) -> datetime:
    """Inverse of `to_micros`, tz-aware UTC."""
    return _EPOCH + timedelta(microseconds=micros)


def expiry(now: int, ttl_minutes: float | None) -> int | None:
    """When an item written or read at `now` expires; None keeps it forever."""
    return None if ttl_minutes is None else now + round(ttl_minutes * 60_000_000)


def utcnow() -> datetime:
    """The default store clock."""
    return datetime.now(UTC)


class Row(msgspec.Struct):
    """An item as stored: its value as JSON text, times in microseconds since the epoch."""

    namespace: tuple[str, ...]
    key: str
    raw: str
    created_at: int
    updated_at: int
    expires_at: int | None = None
    ttl_minutes: float | None = None
    vectors: list[Vector] = []

    def alive(self, now: int) -> bool:
        """Not yet expired: expired rows are invisible before the sweeper deletes them."""
        return self.expires_at is None or self.expires_at > now

    def item(self) -> Item:
        """The public form; decodes afresh so callers never share a dict with the store."""
        return Item(
            value=_decode(self.raw),
            key=self.key,
            namespace=self.namespace,
            created_at=from_micros(self.created_at),
            updated_at=from_micros(self.updated_at),
        )

    def search_item(self, value: dict[str, Any] | None, score: float | None) -> SearchItem:
        """The search-result form; `value` is reused when the filter already decoded it."""
        return SearchItem(
            self.namespace,
            self.key,
            _decode(self.raw) if value is None else value,
            from_micros(self.created_at),
            from_micros(self.updated_at),
            score,
        )


def encode_value(value: Any) -> str:
    """JSON text of a value, so every back end stores (and returns) the same portable data."""
    try:
        return _encode(value).decode()
    except (TypeError, msgspec.EncodeError) as exc:
        raise TypeError(f"Store values must be JSON-serializable: {exc}") from exc


class Plan:
    """What a batch needs before it touches storage: encoded values and vectors.

    Built and embedded outside the storage lock or transaction, so a slow embedder never blocks
    other callers and a failure (bad value, embedder error) happens before anything is written.
    """

    def __init__(self, ops: Sequence[Op], fields: Sequence[str] | None) -> None:
        self.raw: dict[int, str] = {}
        self.fields: dict[int, list[tuple[str, str]]] = {}
        self.queries: set[str] = set()
        for i, op in enumerate(ops):
            if isinstance(op, PutOp) and op.value is not None:
                value = dict(op.value)
                self.raw[i] = encode_value(value)
                if fields is not None and op.index is not False:
                    self.fields[i] = field_texts(value, fields if op.index is None else op.index)
            elif isinstance(op, SearchOp) and op.query and fields is not None:
                self.queries.add(op.query)
        self.texts = sorted({text for pairs in self.fields.values() for _, text in pairs})
        self.text_vectors: dict[str, Vector] = {}
        self.query_vectors: dict[str, Vector] = {}

    def embed(self, embedder: Embedder) -> None:
        """Embed every text and query of the batch (blocking)."""
        if self.texts:
            self._keep(embedder.documents(self.texts))
        self.query_vectors = {q: embedder.query(q) for q in self.queries}

    async def aembed(self, embedder: Embedder) -> None:
        """Async form of `embed`."""
        if self.texts:
            self._keep(await embedder.adocuments(self.texts))
        self.query_vectors = {q: await embedder.aquery(q) for q in self.queries}

    def _keep(self, vectors: list[Vector]) -> None:
        if len(vectors) != len(self.texts):
            raise ValueError(
                f"The embedder returned {len(vectors)} vectors for {len(self.texts)} texts."
            )
        self.text_vectors = dict(zip(self.texts, vectors, strict=True))

    def vectors(self, i: int) -> list[tuple[str, Vector]]:
        """The ``(field, vector)`` pairs to store with put op number `i`."""
        return [(field, self.text_vectors[text]) for field, text in self.fields.get(i, ())]


def _filtered(rows: Iterable[Row], op: SearchOp) -> Iterator[tuple[Row, dict[str, Any] | None]]:
    if not op.filter:
        yield from ((row, None) for row in rows)
        return
    for row in rows:
        value = _decode(row.raw)
        if matches(value, op.filter):
            yield row, value


def _score(row: Row, query: Vector) -> float | None:
    # An item embeds one vector per field; its best field decides (max pooling, as LangGraph).
    return max((cosine(query, v) for v in row.vectors), default=None)


Ranked = list[tuple[Row, dict[str, Any] | None, float | None]]


def rank(rows: Iterable[Row], op: SearchOp, query: Vector | None) -> Ranked:
    """One page of ``(row, decoded value or None, score)`` from rows given newest first.

    With a query vector: scored items by similarity (ties keep recency order), then items with
    no vectors, newest first, as LangGraph's InMemoryStore fills a page with them.
    """
    candidates = _filtered(rows, op)
    end = op.offset + op.limit
    if query is None:
        return [(row, value, None) for row, value in islice(candidates, op.offset, end)]
    scored = [(_score(row, query), row, value) for row, value in candidates]
    scored.sort(key=lambda entry: (entry[0] is None, -(entry[0] or 0.0)))
    return [(row, value, score) for score, row, value in scored[op.offset : end]]
