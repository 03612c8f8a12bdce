"""Store: put/get/delete, search order and filters, namespaces, errors (issue 18)."""

from __future__ import annotations

from ..registry import scenario
from ..transcript import Session


@scenario
def store_put_get_delete(s: Session) -> None:
    s.call("put", s.sdk.store.put_item, ["users", "u1"], "prefs", {"theme": "dark"})
    s.call("get", s.sdk.store.get_item, ["users", "u1"], "prefs")
    s.request("GET", "/store/items", params={"namespace": "users.u1", "key": "prefs"})
    s.call("put again", s.sdk.store.put_item, ["users", "u1"], "prefs", {"theme": "light"})
    s.call("get again", s.sdk.store.get_item, ["users", "u1"], "prefs")
    s.call("delete", s.sdk.store.delete_item, ["users", "u1"], "prefs")
    s.request("GET", "/store/items", params={"namespace": "users.u1", "key": "prefs"})


@scenario
def store_get_errors(s: Session) -> None:
    s.request("GET", "/store/items", params={"namespace": "users.u1"})
    s.request("GET", "/store/items")
    s.request("PUT", "/store/items", json={"namespace": ["a"], "value": {}})
    s.request("PUT", "/store/items", json={"namespace": ["a.b"], "key": "k", "value": {}})
    s.request("PUT", "/store/items", json={"namespace": ["a"], "key": "k", "value": 3})


@scenario
def store_search(s: Session) -> None:
    for ns, key, value in ((["docs", "a"], "k2", {"n": 2, "tag": "x"}),
                           (["docs", "a"], "k1", {"n": 1, "tag": "y"}),
                           (["docs", "b"], "k3", {"n": 3, "tag": "x"}),
                           (["other"], "k4", {"n": 4, "tag": "x"})):
        s.sdk.store.put_item(ns, key, value)
    s.call("search docs", s.sdk.store.search_items, ["docs"])
    s.call("search filter", s.sdk.store.search_items, ["docs"], filter={"tag": "x"})
    s.call("search paged", s.sdk.store.search_items, ["docs"], limit=1, offset=1)
    s.call("search all", s.sdk.store.search_items, [])


@scenario
def store_namespaces(s: Session) -> None:
    for ns in (["a", "b", "c"], ["a", "d"], ["x", "b"]):
        s.sdk.store.put_item(ns, "k", {"v": 1})
    s.call("all", s.sdk.store.list_namespaces)
    s.call("prefix", s.sdk.store.list_namespaces, prefix=["a"])
    s.call("suffix", s.sdk.store.list_namespaces, suffix=["b"])
    s.call("max_depth", s.sdk.store.list_namespaces, max_depth=1)
    s.call("paged", s.sdk.store.list_namespaces, limit=1, offset=1)
