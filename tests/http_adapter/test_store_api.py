"""Store endpoints against a real server: round trips through langgraph-sdk's `client.store`,
shapes and status codes through httpx (null for a missing item, 204s, 422s, never a 500)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client, get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from .conftest import Served

# Issue 19 §11: every test here runs on SQLite and on PostgreSQL + Redis (conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgres")

ITEM_KEYS = {"namespace", "key", "value", "created_at", "updated_at"}


@pytest.fixture
def http(server: Served) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        yield client


@pytest.fixture(params=["file", "memory"])
def sdk(request: pytest.FixtureRequest, serve_app: Callable[..., Served], backend: str
        ) -> Iterator[SyncLangGraphClient]:
    """The SDK against each store back end: the SQLite file and `--in-memory`, or the
    PostgreSQL store."""
    if request.param == "memory" and backend == "postgres":
        pytest.skip("--in-memory is a SQLite-mode option; on PostgreSQL [file] is the store")
    served = serve_app() if request.param == "file" else serve_app(data_dir=None)
    with get_sync_client(url=served.url) as client:
        yield client


def test_round_trip_through_the_sdk(sdk: SyncLangGraphClient) -> None:
    store = sdk.store
    store.put_item(["users", "u1"], "prefs", {"theme": "dark", "size": 3})
    store.put_item(["users", "u1"], "profile", {"name": "Ada", "size": 10})
    store.put_item(["users", "u2"], "prefs", {"theme": "light", "size": 5})
    store.put_item(["docs", "u1", "reports"], "r1", {"title": "Q1"})

    item = store.get_item(["users", "u1"], key="prefs")
    assert set(item) == ITEM_KEYS
    assert item["namespace"] == ["users", "u1"] and item["key"] == "prefs"
    assert item["value"] == {"theme": "dark", "size": 3}
    assert item["created_at"].endswith("+00:00") and item["created_at"] == item["updated_at"]
    assert store.get_item(["users", "u1"], key="missing") is None

    store.put_item(["users", "u1"], "prefs", {"theme": "blue"})
    again = store.get_item(["users", "u1"], key="prefs")
    assert again["value"] == {"theme": "blue"} and again["created_at"] == item["created_at"]
    assert datetime.fromisoformat(again["updated_at"]) > datetime.fromisoformat(item["updated_at"])

    found = store.search_items(["users"])["items"]
    assert {(tuple(i["namespace"]), i["key"]) for i in found} == {
        (("users", "u1"), "prefs"), (("users", "u1"), "profile"), (("users", "u2"), "prefs")}
    assert all(set(i) == ITEM_KEYS | {"score"} and i["score"] is None for i in found)
    big = store.search_items(["users"], filter={"size": {"$gt": 4}})["items"]
    assert sorted(i["key"] for i in big) == ["prefs", "profile"]
    assert [i["value"] for i in store.search_items(["users"], filter={"theme": "light"})
            ["items"]] == [{"theme": "light", "size": 5}]
    assert len(store.search_items(["users"], limit=2)["items"]) == 2
    assert len(store.search_items(["users"], limit=2, offset=2)["items"]) == 1
    assert store.search_items(["nobody"])["items"] == []

    assert store.list_namespaces() == {"namespaces": [
        ["docs", "u1", "reports"], ["users", "u1"], ["users", "u2"]]}
    assert store.list_namespaces(prefix=["users"]) == {"namespaces": [["users", "u1"],
                                                                      ["users", "u2"]]}
    assert store.list_namespaces(suffix=["u1"]) == {"namespaces": [["users", "u1"]]}
    assert store.list_namespaces(max_depth=1) == {"namespaces": [["docs"], ["users"]]}
    assert store.list_namespaces(limit=1, offset=1) == {"namespaces": [["users", "u1"]]}

    store.delete_item(["users", "u1"], key="prefs")
    assert store.get_item(["users", "u1"], key="prefs") is None
    store.delete_item(["users", "u1"], key="prefs")  # deleting a missing item is fine


@pytest.mark.anyio
async def test_async_sdk_and_query_search(server: Served) -> None:
    async with get_client(url=server.url) as client:
        await client.store.put_item(["notes"], "n1", {"text": "cats purr"}, ttl=10)
        await client.store.put_item(["notes"], "n2", {"text": "dogs bark"}, index=False)
        ranked = await client.store.search_items(["notes"], query="cats")
        assert {i["key"] for i in ranked["items"]} == {"n1", "n2"}
        assert all("score" in i for i in ranked["items"])
        got = await client.store.get_item(["notes"], key="n1", refresh_ttl=False)
        assert got is not None and got["value"] == {"text": "cats purr"}


def test_raw_shapes_and_status_codes(http: httpx.Client) -> None:
    put = http.put("/store/items", json={"namespace": ["a", "b"], "key": "k", "value": {"v": 1}})
    assert put.status_code == 204 and put.content == b""
    got = http.get("/store/items", params={"namespace": "a.b", "key": "k"})
    assert got.status_code == 200 and got.headers["content-type"] == "application/json"
    assert got.json()["value"] == {"v": 1}
    missing = http.get("/store/items", params={"namespace": "a.b", "key": "nope"})
    assert missing.status_code == 200 and missing.content == b"null"
    found = http.post("/store/items/search", json={"namespace_prefix": ["a"]})
    assert found.status_code == 200 and [i["key"] for i in found.json()["items"]] == ["k"]
    assert http.post("/store/items/search").json()["items"][0]["key"] == "k"  # empty body
    assert http.post("/store/namespaces").json() == {"namespaces": [["a", "b"]]}
    deleted = http.request("DELETE", "/store/items", json={"namespace": ["a", "b"], "key": "k"})
    assert deleted.status_code == 204 and deleted.content == b""
    assert http.get("/store/items", params={"namespace": "a.b", "key": "k"}).json() is None


@pytest.mark.parametrize(
    ("method", "path", "payload", "needle"),
    [
        ("PUT", "/store/items", {"namespace": ["a.b"], "key": "k", "value": {}}, "periods"),
        ("DELETE", "/store/items", {"namespace": ["x", "a.b"], "key": "k"}, "periods"),
        ("POST", "/store/items/search", {"namespace_prefix": ["a.b"]}, "periods"),
        ("POST", "/store/namespaces", {"prefix": ["a.b"]}, "periods"),
        ("POST", "/store/namespaces", {"suffix": ["a.b"]}, "periods"),
        ("PUT", "/store/items", {"namespace": ["a", ""], "key": "k", "value": {}}, "empty"),
        ("PUT", "/store/items", {"namespace": [], "key": "k", "value": {}}, "empty"),
        ("PUT", "/store/items", {"namespace": ["langgraph"], "key": "k", "value": {}}, "reserved"),
        ("PUT", "/store/items", {"namespace": ["a"], "key": "k", "value": [1]}, "value"),
        ("PUT", "/store/items", {"namespace": ["a"], "key": "k", "value": "text"}, "value"),
        ("PUT", "/store/items", {"namespace": "a", "key": "k", "value": {}}, "namespace"),
        ("PUT", "/store/items", {"namespace": [1], "key": "k", "value": {}}, "namespace"),
        ("PUT", "/store/items", {"namespace": ["a"], "value": {}}, "key"),
        ("PUT", "/store/items", {"namespace": ["a"], "key": "k", "value": {}, "ttl": -1}, "ttl"),
        ("PUT", "/store/items", {"namespace": ["a"], "key": "k", "value": {}, "index": True},
         "index"),
        ("PUT", "/store/items", {"namespace": ["a"], "key": "k", "value": {}, "ttl": "x"}, "ttl"),
        ("DELETE", "/store/items", {"namespace": ["a"]}, "key"),
        ("POST", "/store/items/search", {"filter": {"a": {"$regex": "x"}}}, "$regex"),
        ("POST", "/store/items/search", {"filter": "a"}, "filter"),
        ("POST", "/store/items/search", {"limit": -1}, "limit"),
        ("POST", "/store/items/search", {"offset": "x"}, "offset"),
        ("POST", "/store/namespaces", {"max_depth": 0}, "max_depth"),
        ("POST", "/store/namespaces", {"limit": -5}, "limit"),
        ("PUT", "/store/items", None, "JSON"),
    ],
)
def test_bad_requests_are_422(http: httpx.Client, method: str, path: str, payload: Any,
                              needle: str) -> None:
    if payload is None:
        response = http.request(method, path, content=b"{not json")
    else:
        response = http.request(method, path, json=payload)
    assert response.status_code == 422, response.text
    assert needle in response.json()["detail"]


def test_bad_get_queries_are_4xx(http: httpx.Client) -> None:
    no_key = http.get("/store/items", params={"namespace": "a"})  # 400, as langgraph dev
    assert no_key.status_code == 400 and no_key.json() == {"detail": "Key is required"}
    empty_label = http.get("/store/items", params={"namespace": "a..b", "key": "k"})
    assert empty_label.status_code == 422 and "empty" in empty_label.json()["detail"]
    flag = http.get("/store/items", params={"namespace": "a", "key": "k", "refresh_ttl": "maybe"})
    assert flag.status_code == 422 and "refresh_ttl" in flag.json()["detail"]
