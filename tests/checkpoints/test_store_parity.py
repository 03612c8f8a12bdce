"""Our stores against LangGraph 1.2.22's `InMemoryStore`, op for op, through the same calls.

Known, deliberate differences are left out of the compared sequence (see test_store.py):
search without a query is newest-first here (LangGraph's SQL stores order by `updated_at DESC`;
its InMemoryStore returns dict order), so those results are compared as sets; LangGraph keeps
listing a namespace after its last item is deleted or after a mere `get` of it; its ordering
operators raise on missing or text fields; equal scores keep insertion order there, recency here.
"""

from __future__ import annotations

import string
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import InvalidNamespaceError as LangGraphInvalidNamespace
from langgraph.store.memory import InMemoryStore as LangGraphStore

from checkpoints.store import (
    BaseStore,
    InMemoryStore,
    InvalidNamespaceError,
    PostgresStore,
    SqliteStore,
)


def letters(texts: Sequence[str]) -> list[list[float]]:
    return [[float(t.lower().count(c)) for c in string.ascii_lowercase] for t in texts]


INDEX: dict[str, Any] = {"dims": 26, "embed": letters, "fields": ["text", "tags[*]"]}

PUTS: list[tuple[tuple[str, ...], str, dict[str, Any], Any]] = [
    (("docs", "en"), "cat", {"text": "cat", "n": 1, "kind": "pet", "meta": {"a": 1}}, None),
    (("docs", "en"), "cart", {"text": "cart", "n": 2, "kind": "thing", "tags": ["x"]}, None),
    (("docs", "fr"), "chart", {"text": "chart", "n": 3, "kind": "thing"}, None),
    (("docs", "fr"), "dog", {"text": "dog", "n": 4, "kind": "pet", "meta": {"a": 2}}, None),
    (("docs", "fr", "old"), "catalog", {"text": "catalog", "n": 5, "kind": "book"}, None),
    (("docs", "en"), "tagged", {"text": "qqq", "n": 6, "tags": ["dogs", "charts"]}, None),
    (("docs", "en"), "titled", {"text": "zzz", "title": "good", "n": 7}, ["title"]),
    (("users", "1", "prefs"), "theme", {"text": "dark", "n": 8}, None),
    (("users", "2", "prefs"), "theme", {"text": "light", "n": 9}, None),
    (("users", "2", "prefs"), "lang", {"text": "en", "n": 11}, None),
    (("docs", "en"), "cat", {"text": "cat", "n": 10, "kind": "pet", "meta": {"a": 1}}, None),
]

FILTERS: list[dict[str, Any]] = [
    {},
    {"kind": "pet"},
    {"kind": {"$eq": "thing"}},
    {"kind": {"$ne": "pet"}},
    {"n": {"$gt": 4}},
    {"n": {"$gte": 4}},
    {"n": {"$lt": 3}},
    {"n": {"$lte": 3}},
    {"n": {"$gt": 1, "$lt": 9}},
    {"kind": "thing", "n": {"$lte": 2}},
    {"meta": {"a": 2}},
    {"tags": ["x"]},
    {"missing": None},
]

QUERIES: list[tuple[tuple[str, ...], str, dict[str, Any] | None, int, int]] = [
    (("docs",), "cat", None, 5, 0),
    (("docs",), "cat", None, 3, 2),
    (("docs",), "dog", None, 3, 0),
    (("docs", "fr"), "chart", None, 10, 0),
    (("docs",), "cat", {"kind": "thing"}, 10, 0),
]

LIST_ARGS: list[dict[str, Any]] = [
    {},
    {"prefix": ("docs",)},
    {"prefix": ("docs", "fr")},
    {"suffix": ("prefs",)},
    {"prefix": ("users", "*", "prefs")},
    {"prefix": ("docs",), "suffix": ("old",)},
    {"max_depth": 1},
    {"max_depth": 2},
    {"prefix": ("docs",), "max_depth": 2},
    {"limit": 2, "offset": 1},
    {"max_depth": 2, "limit": 2, "offset": 2},
]


def observe(store: Any) -> list[Any]:
    """Everything a caller can see after `PUTS` (and a delete), normalized for comparison."""
    for namespace, key, value, index in PUTS:
        store.put(namespace, key, value, index)
    store.delete(("users", "2", "prefs"), "theme")
    seen: list[Any] = []
    for namespace, key, _, _ in PUTS:
        item = store.get(namespace, key)
        seen.append(None if item is None else (item.namespace, item.key, item.value))
    seen.append(store.get(("docs", "en"), "nope"))
    for filter in FILTERS:
        found = store.search(("docs",), filter=filter, limit=100)
        seen.append(sorted((item.namespace, item.key) for item in found))
    for prefix, query, where, limit, offset in QUERIES:
        found = store.search(prefix, query=query, filter=where, limit=limit, offset=offset)
        seen.append([(item.key, round(item.score, 4)) for item in found])
    for kwargs in LIST_ARGS:
        seen.append(store.list_namespaces(**kwargs))
    return seen


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def ours(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseStore]:
    if request.param == "memory":
        store: BaseStore = InMemoryStore(index=INDEX)  # type: ignore[arg-type]
    elif request.param == "postgres":
        url = request.getfixturevalue("pg_url")
        store = PostgresStore(url, index=INDEX)  # type: ignore[arg-type]
    else:
        store = SqliteStore(tmp_path / "store.db", index=INDEX)  # type: ignore[arg-type]
    yield store
    store.close()


def test_same_observations_as_langgraph(ours: BaseStore) -> None:
    expected = observe(LangGraphStore(index=INDEX))  # type: ignore[arg-type]
    assert observe(ours) == expected


def test_same_item_shape_as_langgraph(ours: BaseStore) -> None:
    reference = LangGraphStore()
    for store in (reference, ours):
        store.put(("a", "b"), "k", {"v": [1, {"w": None}]})
    theirs, mine = reference.get(("a", "b"), "k"), ours.get(("a", "b"), "k")
    assert theirs is not None and mine is not None
    assert mine.dict().keys() == theirs.dict().keys()
    assert {k: v for k, v in mine.dict().items() if not k.endswith("_at")} == {
        k: v for k, v in theirs.dict().items() if not k.endswith("_at")
    }
    assert mine.dict()["created_at"].endswith("+00:00")
    assert reference.search(("a",))[0].dict().keys() == ours.search(("a",))[0].dict().keys()


@pytest.mark.parametrize(
    ("method", "namespace"),
    [("put", ()), ("put", ("a.b",)), ("put", ("",)), ("put", ("langgraph",)), ("get", ("a.b",))],
)
def test_same_namespace_errors_as_langgraph(ours: BaseStore, method: str, namespace: Any) -> None:
    args = (namespace, "k", {"v": 1}) if method == "put" else (namespace, "k")
    with pytest.raises(LangGraphInvalidNamespace):
        getattr(LangGraphStore(), method)(*args)
    with pytest.raises(InvalidNamespaceError):
        getattr(ours, method)(*args)


@pytest.mark.anyio
async def test_async_observations_match_sync(ours: BaseStore) -> None:
    reference = LangGraphStore(index=INDEX)  # type: ignore[arg-type]
    for store in (reference, ours):
        for namespace, key, value, index in PUTS:
            await store.aput(namespace, key, value, index)
    for prefix, query, where, limit, offset in QUERIES:
        theirs = await reference.asearch(
            prefix, query=query, filter=where, limit=limit, offset=offset
        )
        mine = await ours.asearch(prefix, query=query, filter=where, limit=limit, offset=offset)
        assert [i.key for i in mine] == [i.key for i in theirs]
    assert await ours.alist_namespaces(max_depth=2) == await reference.alist_namespaces(max_depth=2)


class LetterEmbeddings(Embeddings):
    """A real LangChain `Embeddings` subclass; its async methods are LangChain's defaults."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return letters(texts)

    def embed_query(self, text: str) -> list[float]:
        return letters([text])[0]


@pytest.mark.anyio
async def test_langchain_embeddings_object(tmp_path: Path) -> None:
    index: Any = {"dims": 26, "embed": LetterEmbeddings(), "fields": ["text"]}
    reference = LangGraphStore(index=index)
    with SqliteStore(tmp_path / "store.db", index=index) as ours:
        for store in (reference, ours):
            store.put(("d",), "cat", {"text": "cat"})
            await store.aput(("d",), "dog", {"text": "dog"})
            await store.aput(("d",), "catalog", {"text": "catalog"})
        for query in ["cat", "dog", "log"]:
            theirs = [i.key for i in reference.search(("d",), query=query)]
            assert [i.key for i in ours.search(("d",), query=query)] == theirs
            assert [i.key for i in await ours.asearch(("d",), query=query)] == theirs
