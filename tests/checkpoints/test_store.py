"""The long-term store (SPEC §2 Store), run against every back end."""

from __future__ import annotations

import sqlite3
import string
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import checkpoints.store as store_pkg
from checkpoints import SchemaError
from checkpoints.store import (
    BaseStore,
    GetOp,
    IndexConfig,
    InMemoryStore,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    PostgresStore,
    PutOp,
    SearchOp,
    SqliteStore,
)


class FakeClock:
    """An injectable store clock: TTL tests advance it instead of sleeping."""

    def __init__(self) -> None:
        self.now = datetime(2025, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, minutes: float) -> None:
        self.now += timedelta(minutes=minutes)


def letters(texts: Sequence[str]) -> list[list[float]]:
    """A deterministic toy embedding: how often each letter occurs."""
    return [[float(t.lower().count(c)) for c in string.ascii_lowercase] for t in texts]


async def aletters(texts: Sequence[str]) -> list[list[float]]:
    return letters(texts)


class LetterEmbeddings:
    """The LangChain `Embeddings` duck type; queries embed differently to prove they are used."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return letters(texts)

    def embed_query(self, text: str) -> list[float]:
        return letters([text + " zzzz"])[0]


INDEX: IndexConfig = {"dims": 26, "embed": letters, "fields": ["text"]}

Make = Callable[..., BaseStore]


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_store(
    backend: str, tmp_path: Path, clock: FakeClock, request: pytest.FixtureRequest
) -> Iterator[Make]:
    made: list[BaseStore] = []
    url = request.getfixturevalue("pg_url") if backend == "postgres" else ""

    def make(**kwargs: Any) -> BaseStore:
        kwargs.setdefault("clock", clock)
        if backend == "memory":
            made.append(InMemoryStore(**kwargs))
        elif backend == "postgres":
            made.append(PostgresStore(url, **kwargs))
        else:
            made.append(SqliteStore(tmp_path / "store.db", **kwargs))
        return made[-1]

    yield make
    for store in made:
        store.close()


@pytest.fixture
def store(make_store: Make) -> BaseStore:
    return make_store()


def keys(items: Sequence[Item]) -> list[str]:
    return [item.key for item in items]


def row_count(path: Path, table: str) -> int:
    with sqlite3.connect(path) as conn:
        count: int = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    conn.close()
    return count


def test_public_names_are_sorted_and_exported() -> None:
    assert store_pkg.__all__ == sorted(store_pkg.__all__)
    assert all(hasattr(store_pkg, name) for name in store_pkg.__all__)


# -- basic CRUD ------------------------------------------------------------------------------


def test_put_get_delete(store: BaseStore) -> None:
    store.put(("users", "1"), "prefs", {"theme": "dark"})
    item = store.get(("users", "1"), "prefs")
    assert item is not None
    assert (item.namespace, item.key, item.value) == (("users", "1"), "prefs", {"theme": "dark"})
    assert item.created_at.tzinfo is not None and item.created_at.utcoffset() == timedelta(0)
    store.delete(("users", "1"), "prefs")
    assert store.get(("users", "1"), "prefs") is None
    store.delete(("users", "1"), "prefs")  # deleting twice is fine


def test_item_dict_is_the_wire_shape(store: BaseStore, clock: FakeClock) -> None:
    store.put(("a", "b"), "k", {"x": [1, {"y": None}]})
    item = store.get(("a", "b"), "k")
    assert item is not None
    assert item.dict() == {
        "namespace": ["a", "b"],
        "key": "k",
        "value": {"x": [1, {"y": None}]},
        "created_at": "2025-01-01T00:00:00.000000+00:00",
        "updated_at": "2025-01-01T00:00:00.000000+00:00",
    }


def test_overwrite_keeps_created_at_and_bumps_updated_at(
    store: BaseStore, clock: FakeClock
) -> None:
    store.put(("a",), "k", {"v": 1})
    first = store.get(("a",), "k")
    clock.advance(5)
    store.put(("a",), "k", {"v": 2})
    second = store.get(("a",), "k")
    assert first is not None and second is not None
    assert second.value == {"v": 2}
    assert second.created_at == first.created_at
    assert second.updated_at - first.updated_at >= timedelta(minutes=5)


def test_writes_in_the_same_instant_still_order(store: BaseStore) -> None:
    # The fake clock never moves here: the store keeps timestamps strictly increasing.
    for key in "abc":
        store.put(("ns",), key, {})
    store.put(("ns",), "a", {"again": True})
    assert keys(store.search(("ns",))) == ["a", "c", "b"]


def test_returned_values_are_copies(store: BaseStore) -> None:
    value = {"list": [1]}
    store.put(("a",), "k", value)
    value["list"].append(2)
    item = store.get(("a",), "k")
    assert item is not None and item.value == {"list": [1]}
    item.value["list"].append(3)
    assert store.search(("a",))[0].value == {"list": [1]}


def test_key_is_converted_to_str(store: BaseStore) -> None:
    store.put(("a",), 7, {"v": 1})  # type: ignore[arg-type]
    item = store.get(("a",), "7")
    assert item is not None and item.key == "7"


# -- validation at the edge ------------------------------------------------------------------


@pytest.mark.parametrize(
    "namespace", [(), ("",), ("a.b",), ("a", ""), ("langgraph", "x"), ("a", 1), ("nul\x00",)]
)
def test_invalid_namespace_on_put(store: BaseStore, namespace: tuple[Any, ...]) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.put(namespace, "k", {"v": 1})


def test_string_namespace_is_caught(store: BaseStore) -> None:
    with pytest.raises(InvalidNamespaceError, match=r"did you mean \('users',\)"):
        store.put("users", "k", {})  # type: ignore[arg-type]


def test_invalid_labels_on_reads(store: BaseStore) -> None:
    with pytest.raises(InvalidNamespaceError, match=r"contains '\.'"):
        store.get(("a.b",), "k")
    with pytest.raises(InvalidNamespaceError):
        store.search(("",))
    with pytest.raises(InvalidNamespaceError):
        store.list_namespaces(prefix=("a.b",))
    with pytest.raises(InvalidNamespaceError):
        store.delete(("a", ""), "k")


def test_a_nul_in_a_key_is_kept_or_refused_whole(store: BaseStore, backend: str) -> None:
    """PostgreSQL's text cannot hold U+0000: there the batch is a ValueError and writes
    nothing; reads and deletes of such a key find nothing. The others keep it (issue 19)."""
    if backend != "postgres":
        store.put(("a",), "k\x00", {"v": 1})
        assert store.get(("a",), "k\x00").value == {"v": 1}
        return
    with pytest.raises(ValueError, match="NUL"):
        store.batch([PutOp(("a",), "k", {"v": 1}), PutOp(("a",), "k\x00", {"v": 2})])
    assert store.get(("a",), "k") is None and store.get(("a",), "k\x00") is None
    store.delete(("a",), "k\x00")


def test_invalid_namespace_error_is_a_value_error() -> None:
    assert issubclass(InvalidNamespaceError, ValueError)


@pytest.mark.parametrize("value", [[1, 2], "text", 3])
def test_value_must_be_a_dict(store: BaseStore, value: Any) -> None:
    with pytest.raises(TypeError, match="must be dicts"):
        store.batch([PutOp(("a",), "k", {"ok": 1}), PutOp(("a",), "k2", value)])
    assert store.get(("a",), "k") is None  # the batch was rejected before any write


def test_value_must_be_json(store: BaseStore) -> None:
    with pytest.raises(TypeError, match="JSON-serializable"):
        store.put(("a",), "k", {"v": object()})
    assert store.get(("a",), "k") is None


@pytest.mark.parametrize("kwargs", [{"limit": -1}, {"offset": -1}])
def test_negative_paging_is_rejected(store: BaseStore, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        store.search(("a",), **kwargs)
    with pytest.raises(ValueError):
        store.list_namespaces(**kwargs)


def test_non_positive_ttl_is_rejected(store: BaseStore) -> None:
    with pytest.raises(ValueError, match="ttl"):
        store.put(("a",), "k", {}, ttl=0)


# -- search ------------------------------------------------------------------------------------


def test_search_by_prefix_matches_whole_labels(store: BaseStore) -> None:
    store.put(("a", "b"), "1", {})
    store.put(("a", "b", "c"), "2", {})
    store.put(("a", "bc"), "3", {})
    store.put(("ab",), "4", {})
    assert sorted(keys(store.search(("a", "b")))) == ["1", "2"]
    assert sorted(keys(store.search(("a",)))) == ["1", "2", "3"]
    assert sorted(keys(store.search(()))) == ["1", "2", "3", "4"]
    assert store.search(("zzz",)) == []


def test_search_is_newest_first(store: BaseStore, clock: FakeClock) -> None:
    for key in ["old", "mid", "new"]:
        store.put(("ns",), key, {})
        clock.advance(1)
    assert keys(store.search(("ns",))) == ["new", "mid", "old"]
    assert all(item.score is None for item in store.search(("ns",)))


@pytest.fixture
def people(store: BaseStore, clock: FakeClock) -> BaseStore:
    rows: dict[str, dict[str, Any]] = {
        "ann": {"age": 30, "city": "Oslo", "tags": ["a", "b"], "meta": {"lvl": 2, "ok": True}},
        "bob": {"age": 40, "city": "Rome", "tags": ["b"], "meta": {"lvl": 5, "ok": False}},
        "cid": {"age": 50, "city": "Oslo", "meta": {"lvl": 9}},
        "dee": {"city": "Lima", "born": "1999-05-01"},
    }
    for key, value in rows.items():
        store.put(("people",), key, value)
        clock.advance(1)
    return store


@pytest.mark.parametrize(
    ("filter", "expected"),
    [
        ({"city": "Oslo"}, ["ann", "cid"]),
        ({"city": {"$eq": "Oslo"}}, ["ann", "cid"]),
        ({"city": {"$ne": "Oslo"}}, ["bob", "dee"]),
        ({"age": {"$gt": 30}}, ["bob", "cid"]),
        ({"age": {"$gte": 40}}, ["bob", "cid"]),
        ({"age": {"$lt": 40}}, ["ann"]),
        ({"age": {"$lte": 40}}, ["ann", "bob"]),
        ({"age": {"$gt": 30, "$lt": 50}}, ["bob"]),
        ({"age": 30.0}, ["ann"]),
        ({"city": "Oslo", "age": {"$gt": 40}}, ["cid"]),
        ({"tags": ["b"]}, ["bob"]),
        ({"meta": {"lvl": 5}}, ["bob"]),
        ({"meta": {"ok": True}}, ["ann"]),
        ({"meta.lvl": {"$gte": 5}}, ["bob", "cid"]),
        ({"born": {"$lt": "2000-01-01"}}, ["dee"]),
        ({"missing": None}, ["ann", "bob", "cid", "dee"]),
        ({"city": "Paris"}, []),
    ],
)
def test_filters(people: BaseStore, filter: dict[str, Any], expected: list[str]) -> None:
    assert sorted(keys(people.search(("people",), filter=filter))) == expected


def test_filter_results_keep_recency_order(people: BaseStore) -> None:
    assert keys(people.search(("people",), filter={"city": "Oslo"})) == ["cid", "ann"]


def test_ordering_operators_skip_values_that_do_not_compare(people: BaseStore) -> None:
    # LangGraph's InMemoryStore raises here; a missing or non-numeric field simply fails.
    assert sorted(keys(people.search(("people",), filter={"age": {"$gt": 0}}))) == [
        "ann",
        "bob",
        "cid",
    ]
    assert keys(people.search(("people",), filter={"city": {"$gt": 5}})) == []


def test_unknown_filter_operator_is_rejected(store: BaseStore) -> None:
    with pytest.raises(ValueError, match=r"\$regex"):
        store.search(("a",), filter={"x": {"$regex": "a.*"}})


def test_limit_and_offset(store: BaseStore, clock: FakeClock) -> None:
    for i in range(7):
        store.put(("ns",), f"k{i}", {"i": i})
        clock.advance(1)
    assert keys(store.search(("ns",), limit=3)) == ["k6", "k5", "k4"]
    assert keys(store.search(("ns",), limit=3, offset=3)) == ["k3", "k2", "k1"]
    assert keys(store.search(("ns",), limit=3, offset=6)) == ["k0"]
    assert store.search(("ns",), offset=10) == []
    assert keys(store.search(("ns",), filter={"i": {"$ne": 5}}, limit=2, offset=1)) == ["k4", "k3"]


# -- list_namespaces ---------------------------------------------------------------------------


@pytest.fixture
def namespaced(store: BaseStore) -> BaseStore:
    for ns in [("a", "b", "c"), ("a", "b", "d"), ("a", "e"), ("x", "b", "c"), ("y",)]:
        store.put(ns, "k", {})
    return store


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, [("a", "b", "c"), ("a", "b", "d"), ("a", "e"), ("x", "b", "c"), ("y",)]),
        ({"prefix": ("a",)}, [("a", "b", "c"), ("a", "b", "d"), ("a", "e")]),
        ({"prefix": ("a", "b")}, [("a", "b", "c"), ("a", "b", "d")]),
        ({"suffix": ("c",)}, [("a", "b", "c"), ("x", "b", "c")]),
        ({"prefix": ("*", "b")}, [("a", "b", "c"), ("a", "b", "d"), ("x", "b", "c")]),
        ({"prefix": ("a",), "suffix": ("d",)}, [("a", "b", "d")]),
        ({"max_depth": 1}, [("a",), ("x",), ("y",)]),
        ({"max_depth": 2}, [("a", "b"), ("a", "e"), ("x", "b"), ("y",)]),
        ({"prefix": ("a",), "max_depth": 2}, [("a", "b"), ("a", "e")]),
        ({"limit": 2}, [("a", "b", "c"), ("a", "b", "d")]),
        ({"limit": 2, "offset": 3}, [("x", "b", "c"), ("y",)]),
        ({"prefix": ("zzz",)}, []),
    ],
)
def test_list_namespaces(
    namespaced: BaseStore, kwargs: dict[str, Any], expected: list[tuple[str, ...]]
) -> None:
    assert namespaced.list_namespaces(**kwargs) == expected


def test_list_namespaces_forgets_emptied_namespaces(namespaced: BaseStore) -> None:
    namespaced.delete(("y",), "k")
    namespaced.get(("never", "written"), "k")
    assert ("y",) not in namespaced.list_namespaces()
    assert ("never", "written") not in namespaced.list_namespaces()


# -- batch -------------------------------------------------------------------------------------


def test_batch_runs_ops_in_order(store: BaseStore) -> None:
    results = store.batch(
        [
            PutOp(("a",), "k", {"v": 1}),
            GetOp(("a",), "k"),
            SearchOp(("a",)),
            ListNamespacesOp(),
            PutOp(("a",), "k", None),
            GetOp(("a",), "k"),
        ]
    )
    assert results[0] is None
    assert isinstance(results[1], Item) and results[1].value == {"v": 1}
    assert isinstance(results[2], list) and keys(results[2]) == ["k"]  # type: ignore[arg-type]
    assert results[3] == [("a",)]
    assert results[4:] == [None, None]


def test_concurrent_threads(store: BaseStore) -> None:
    def writer(n: int) -> None:
        for i in range(25):
            store.put(("t", str(n)), str(i), {"i": i})

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.search(("t",), limit=1000)) == 150


# -- TTL ---------------------------------------------------------------------------------------


def test_expired_items_are_invisible_at_once(store: BaseStore, clock: FakeClock) -> None:
    store.put(("a", "b"), "short", {"v": 1}, ttl=1)
    store.put(("a", "b"), "forever", {"v": 2})
    clock.advance(0.5)
    assert store.get(("a", "b"), "short", refresh_ttl=False) is not None
    clock.advance(0.6)
    assert store.get(("a", "b"), "short") is None
    assert keys(store.search(("a",))) == ["forever"]
    store.delete(("a", "b"), "forever")
    assert store.list_namespaces() == []


def test_put_over_an_expired_item_starts_fresh(store: BaseStore, clock: FakeClock) -> None:
    store.put(("a",), "k", {"v": 1}, ttl=1)
    clock.advance(2)
    store.put(("a",), "k", {"v": 2})
    item = store.get(("a",), "k")
    assert item is not None and item.created_at == clock.now


def test_default_ttl_and_explicit_none(make_store: Make, clock: FakeClock) -> None:
    store = make_store(ttl_config={"default_ttl": 1})
    store.put(("a",), "default", {})
    store.put(("a",), "kept", {}, ttl=None)
    store.put(("a",), "longer", {}, ttl=10)
    clock.advance(2)
    assert sorted(keys(store.search(("a",)))) == ["kept", "longer"]


def test_reads_refresh_ttl(store: BaseStore, clock: FakeClock) -> None:
    for name in ["got", "searched", "untouched"]:
        store.put(("a",), name, {"name": name}, ttl=1)
    clock.advance(0.8)
    assert store.get(("a",), "got") is not None
    assert keys(store.search(("a",), filter={"name": "searched"})) == ["searched"]
    clock.advance(0.8)  # 1.6 minutes after the puts, 0.8 after the reads
    assert sorted(keys(store.search(("a",), refresh_ttl=False))) == ["got", "searched"]
    clock.advance(0.3)  # that search did not refresh: both are past their 1 minute now
    assert store.search(("a",)) == []


def test_refresh_can_be_turned_off(make_store: Make, clock: FakeClock) -> None:
    store = make_store(ttl_config={"refresh_on_read": False})
    store.put(("a",), "k", {}, ttl=1)
    store.put(("a",), "forced", {}, ttl=1)
    clock.advance(0.8)
    assert store.get(("a",), "k") is not None
    assert store.get(("a",), "forced", refresh_ttl=True) is not None
    clock.advance(0.8)
    assert store.get(("a",), "k") is None
    assert store.get(("a",), "forced") is not None


def test_sweep_deletes_expired_rows(
    make_store: Make, backend: str, clock: FakeClock, tmp_path: Path
) -> None:
    store = make_store(index=INDEX)
    store.put(("a",), "gone", {"text": "bye"}, ttl=1)
    store.put(("a",), "stays", {"text": "hi"})
    assert store.sweep_ttl() == 0  # type: ignore[attr-defined]
    clock.advance(2)
    assert store.sweep_ttl() == 1  # type: ignore[attr-defined]
    assert keys(store.search(("a",))) == ["stays"]
    if backend == "sqlite":
        assert row_count(tmp_path / "store.db", "store_items") == 1
        assert row_count(tmp_path / "store.db", "store_vectors") == 1


def test_sweeper_thread_sweeps_and_stops(
    store: BaseStore, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    swept = threading.Event()
    sweep = store.sweep_ttl  # type: ignore[attr-defined]

    def observed_sweep() -> int:
        count: int = sweep()
        if count:
            swept.set()
        return count

    monkeypatch.setattr(store, "sweep_ttl", observed_sweep)
    store.put(("a",), "k", {}, ttl=1)
    clock.advance(2)
    future = store.start_ttl_sweeper(sweep_interval_minutes=0.0001)  # type: ignore[attr-defined]
    assert store.start_ttl_sweeper() is future  # type: ignore[attr-defined]
    assert swept.wait(30)
    assert store.stop_ttl_sweeper(timeout=30) is True  # type: ignore[attr-defined]
    assert future.done() and future.result() is None


def test_cancelling_the_sweeper_future_stops_it(store: BaseStore) -> None:
    future = store.start_ttl_sweeper(sweep_interval_minutes=60)  # type: ignore[attr-defined]
    assert future.cancel()
    assert store.stop_ttl_sweeper(timeout=30) is True  # type: ignore[attr-defined]


# -- semantic search ---------------------------------------------------------------------------


@pytest.fixture
def docs(make_store: Make, clock: FakeClock) -> BaseStore:
    store = make_store(index=INDEX)
    store.put(("docs",), "cat", {"text": "cat", "kind": "pet"})
    store.put(("docs",), "cart", {"text": "cart", "kind": "thing"})
    store.put(("docs",), "dog", {"text": "dog", "kind": "pet"})
    store.put(("docs",), "raw", {"text": "cat"}, index=False)
    clock.advance(1)
    return store


def test_query_ranks_by_cosine(docs: BaseStore) -> None:
    results = docs.search(("docs",), query="cat")
    assert keys(results) == ["cat", "cart", "dog", "raw"]
    scores = [item.score for item in results]
    assert scores[0] == pytest.approx(1.0)
    assert scores[1] == pytest.approx(3 / (3**0.5 * 4**0.5))
    assert scores[2] == pytest.approx(0.0)
    assert scores[3] is None  # not indexed: after every scored item


def test_query_with_filter_and_paging(docs: BaseStore) -> None:
    assert keys(docs.search(("docs",), query="cat", filter={"kind": "pet"})) == ["cat", "dog"]
    assert keys(docs.search(("docs",), query="cat", limit=1, offset=1)) == ["cart"]


def test_per_put_index_fields(docs: BaseStore) -> None:
    docs.put(("docs",), "other", {"text": "zzz", "title": "cat"}, index=["title"])
    assert keys(docs.search(("docs",), query="cat", limit=2)) in (
        ["cat", "other"],
        ["other", "cat"],
    )
    docs.put(("docs",), "other", {"text": "zzz", "title": "cat"}, index=False)
    assert keys(docs.search(("docs",), query="cat", limit=2)) == ["cat", "cart"]


def test_every_text_of_a_field_is_embedded(make_store: Make) -> None:
    store = make_store(index={"dims": 26, "embed": letters, "fields": ["tags[*]"]})
    store.put(("d",), "pets", {"tags": ["dog", "cat"]})
    store.put(("d",), "cars", {"tags": ["cart"]})
    assert keys(store.search(("d",), query="cat")) == ["pets", "cars"]


def test_whole_value_is_embedded_by_default(make_store: Make) -> None:
    store = make_store(index={"dims": 26, "embed": letters})
    store.put(("d",), "a", {"t": "aaaa"})
    store.put(("d",), "b", {"t": "bbbb"})
    assert keys(store.search(("d",), query="bbbbbbbb")) == ["b", "a"]


def test_embeddings_object_uses_embed_query(make_store: Make) -> None:
    store = make_store(index={"dims": 26, "embed": LetterEmbeddings(), "fields": ["text"]})
    store.put(("d",), "cat", {"text": "cat"})
    store.put(("d",), "zoo", {"text": "zzzz"})
    assert keys(store.search(("d",), query="cat")) == ["zoo", "cat"]


def test_query_without_index_is_ignored(store: BaseStore, clock: FakeClock) -> None:
    store.put(("d",), "a", {"text": "cat"})
    clock.advance(1)
    store.put(("d",), "b", {"text": "dog"})
    results = store.search(("d",), query="cat")
    assert keys(results) == ["b", "a"] and results[0].score is None


def test_wrong_dims_fail_before_writing(make_store: Make) -> None:
    store = make_store(index={"dims": 3, "embed": letters, "fields": ["text"]})
    with pytest.raises(ValueError, match="dims=3"):
        store.put(("d",), "k", {"text": "cat"})
    assert store.get(("d",), "k") is None


def test_async_embedder_needs_async_methods(make_store: Make) -> None:
    store = make_store(index={"dims": 26, "embed": aletters, "fields": ["text"]})
    with pytest.raises(ValueError, match="async"):
        store.put(("d",), "k", {"text": "cat"})


@pytest.mark.anyio
async def test_async_embedder(make_store: Make) -> None:
    store = make_store(index={"dims": 26, "embed": aletters, "fields": ["text"]})
    await store.aput(("d",), "cat", {"text": "cat"})
    await store.aput(("d",), "dog", {"text": "dog"})
    assert keys(await store.asearch(("d",), query="cat")) == ["cat", "dog"]


@pytest.mark.anyio
async def test_sync_embedder_from_async_code(docs: BaseStore) -> None:
    assert keys(await docs.asearch(("docs",), query="dog", limit=1)) == ["dog"]


# -- async API ---------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_async_methods(store: BaseStore, clock: FakeClock) -> None:
    await store.aput(("a", "b"), "k1", {"v": 1})
    await store.aput(("a", "c"), "k2", {"v": 2}, ttl=1)
    item = await store.aget(("a", "b"), "k1")
    assert item is not None and item.value == {"v": 1}
    assert keys(await store.asearch(("a",), filter={"v": {"$gte": 2}})) == ["k2"]
    assert await store.alist_namespaces(prefix=("a",)) == [("a", "b"), ("a", "c")]
    await store.adelete(("a", "b"), "k1")
    assert await store.aget(("a", "b"), "k1") is None
    clock.advance(2)
    assert await store.asweep_ttl() == 1  # type: ignore[attr-defined]
    assert await store.alist_namespaces() == []
    assert (await store.abatch([GetOp(("a", "c"), "k2")])) == [None]


@pytest.mark.anyio
async def test_async_context_manager(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store: BaseStore = (
        InMemoryStore()
        if backend == "memory"
        else PostgresStore(request.getfixturevalue("pg_url"))
        if backend == "postgres"
        else SqliteStore(tmp_path / "s.db")
    )
    async with store:
        await store.aput(("a",), "k", {})
        store.start_ttl_sweeper(sweep_interval_minutes=60)  # type: ignore[attr-defined]
    assert store.stop_ttl_sweeper(timeout=0) is True  # type: ignore[attr-defined]


# -- SQLite specifics --------------------------------------------------------------------------


def test_sqlite_data_survives_reopening(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "store.db"
    with SqliteStore(path, index=INDEX, clock=clock) as store:
        store.put(("docs",), "cat", {"text": "cat"}, ttl=10)
        store.put(("docs",), "dog", {"text": "dog"})
        created = store.get(("docs",), "cat")
    with SqliteStore(path, index=INDEX, clock=clock) as store:
        results = store.search(("docs",), query="cat")
        assert keys(results) == ["cat", "dog"] and results[0].score == pytest.approx(1.0)
        assert results[0] == created
        clock.advance(11)
        assert keys(store.search(("docs",))) == ["dog"]


def test_sqlite_schema_is_versioned(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    SqliteStore(path).close()
    with sqlite3.connect(path) as conn:
        query = "SELECT version FROM graphrun_schema WHERE component = 'store'"
        assert conn.execute(query).fetchone() == (1,)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.execute("UPDATE graphrun_schema SET version = 99 WHERE component = 'store'")
    conn.close()
    with pytest.raises(SchemaError, match="schema version 99 for 'store'"):
        SqliteStore(path)


def test_sqlite_values_are_plain_json(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with SqliteStore(path) as store:
        store.put(("a", "b"), "k", {"x": [1, "two"]})
    with sqlite3.connect(path) as conn:
        row = conn.execute(
            "SELECT prefix, json_extract(value, '$.x[1]') FROM store_items"
        ).fetchone()
    conn.close()
    assert row == ("a.b", "two")


def test_sqlite_closed_store_says_so(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "store.db")
    store.close()
    store.close()
    with pytest.raises(RuntimeError, match="closed"):
        store.get(("a",), "k")


def test_sqlite_from_conn_string(tmp_path: Path) -> None:
    with SqliteStore.from_conn_string(str(tmp_path / "store.db")) as store:
        store.setup()
        store.put(("a",), "k", {"v": 1})
        assert store.get(("a",), "k") is not None


@pytest.mark.parametrize("index", [{"embed": letters}, {"dims": 0, "embed": letters}, {"dims": 26}])
def test_index_config_is_checked(make_store: Make, index: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="index config needs"):
        make_store(index=index)


def test_sqlite_batch_is_one_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with SqliteStore(tmp_path / "store.db", index=INDEX) as store:
        store.put(("a",), "before", {"text": "x"})
        write = store._write
        calls: list[tuple[Any, ...]] = []

        def write_then_fail(*args: Any) -> None:
            write(*args)  # the row and its vectors are written ...
            calls.append(args)
            if len(calls) == 2:
                raise OSError("disk gone")  # ... and a later failure undoes the whole batch

        monkeypatch.setattr(store, "_write", write_then_fail)
        with pytest.raises(OSError):
            store.batch([PutOp(("a",), "one", {"text": "a"}), PutOp(("a",), "two", {"text": "b"})])
        monkeypatch.undo()
        assert keys(store.search(("a",))) == ["before"]
        assert row_count(tmp_path / "store.db", "store_vectors") == 1
        store.put(("a",), "after", {"text": "y"})  # the connection is usable again
        assert sorted(keys(store.search(("a",)))) == ["after", "before"]


# -- PostgreSQL specifics ----------------------------------------------------------------------


def test_postgres_ttl_sweeps_run_on_one_host_at_a_time(pg_url: str, clock: FakeClock) -> None:
    """Issue 19 §8: while one process sweeps (holds the sweep's advisory lock), another
    process's sweep skips its round and deletes nothing; afterwards it sweeps as usual."""
    import asyncpg
    import anyio

    from checkpoints.store.postgres import _SWEEP_KEY

    with PostgresStore(pg_url, clock=clock) as store:
        store.put(("a",), "k", {"v": 1}, ttl=1)
        clock.advance(120)

        async def holding() -> int:
            conn = await asyncpg.connect(pg_url)
            try:
                async with conn.transaction():
                    await conn.execute("SELECT pg_advisory_xact_lock($1)", _SWEEP_KEY)
                    return await anyio.to_thread.run_sync(store.sweep_ttl)
            finally:
                await conn.close()

        assert anyio.run(holding) == 0  # another host is sweeping: this one skips
        assert store.sweep_ttl() == 1
