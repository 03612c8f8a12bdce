"""Store items (SPEC §3 "Other groups" Store) over the server's `checkpoints` Store.

`PUT|DELETE /store/items` answer 204; `GET /store/items?namespace=a.b&key=k` (the namespace
dot-joined, as langgraph-sdk sends it) answers the item or `null`; `POST /store/items/search`
answers `{"items": [...]}` (each with its `score`, null unless a query ranked it);
`POST /store/namespaces` answers `{"namespaces": [[...]]}`. A namespace label with a period
(it could not travel dot-joined), a bad type or anything the store refuses is a 422, never a
500. Only the store's async methods are called: the sync ones block the event loop.
"""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from checkpoints.store.base import NOT_PROVIDED

from ..authz import authorize
from ..errors import BadRequest, UnprocessableEntity
from ._common import body, json_response, server

__all__ = ["routes"]

# What a store raises for a request it will not run: bad labels (InvalidNamespaceError is a
# ValueError), bad filters, values or pages, and TTLs on a store without them.
_REFUSED = (ValueError, TypeError, KeyError, NotImplementedError)


class _Put(msgspec.Struct, kw_only=True):
    namespace: list[str]
    key: str
    value: dict[str, Any]
    index: bool | list[str] | None = None
    ttl: float | None | msgspec.UnsetType = msgspec.UNSET  # unset: the store's default TTL


class _Delete(msgspec.Struct, kw_only=True):
    namespace: list[str]
    key: str


class _Search(msgspec.Struct, kw_only=True):
    namespace_prefix: list[str] = []
    filter: dict[str, Any] | None = None
    limit: int = 10
    offset: int = 0
    query: str | None = None
    refresh_ttl: bool | None = None


class _Namespaces(msgspec.Struct, kw_only=True):
    prefix: list[str] | None = None
    suffix: list[str] | None = None
    max_depth: int | None = None
    limit: int = 100
    offset: int = 0


def _labels(namespace: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    for label in namespace:
        if not label or "." in label:  # the reference's words (issue 18), as JSON here
            raise UnprocessableEntity(
                f"Namespace label '{label}' must be a non-empty string without periods"
            )
    return tuple(namespace)


async def _call(method: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return await method(*args, **kwargs)
    except _REFUSED as error:
        raise UnprocessableEntity(str(error).strip("'\"")) from None


def _flag(request: Request, name: str) -> bool | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    if raw.lower() in ("true", "1", "yes"):
        return True
    if raw.lower() in ("false", "0", "no"):
        return False
    raise UnprocessableEntity(f"Query parameter '{name}' must be a boolean")


async def _scoped(request: Request, action: str, value: dict[str, Any]) -> dict[str, Any]:
    """Custom auth's store handler on `value`: what it leaves is what the store is asked
    (handlers scope users by rewriting or checking `value["namespace"]`; a filter they return
    is ignored, as LangGraph ignores it). The namespace is checked again afterwards."""
    await authorize(request, "store", action, value)
    if value.get("namespace") is not None:
        value["namespace"] = _labels(tuple(value["namespace"]))
    return value


async def put_item(request: Request) -> Response:
    spec = await body(request, _Put)
    if spec.index is True:
        raise UnprocessableEntity("index must be false, null or a list of field paths")
    ttl = NOT_PROVIDED if spec.ttl is msgspec.UNSET else spec.ttl
    asked = await _scoped(request, "put", {"namespace": _labels(spec.namespace), "key": spec.key,
                                           "value": spec.value, "index": spec.index})
    await _call(server(request).store.aput, asked["namespace"], asked["key"], asked["value"],
                index=asked["index"], ttl=ttl)
    return Response(status_code=204)


async def get_item(request: Request) -> Response:
    # as the reference (issue 18): the namespace is checked first (none is one empty label),
    # then a missing key is 400 with these words
    namespace = _labels((request.query_params.get("namespace") or "").split("."))
    key = request.query_params.get("key")
    if key is None:
        raise BadRequest("Key is required")
    asked = await _scoped(request, "get", {"namespace": namespace, "key": key})
    item = await _call(server(request).store.aget, asked["namespace"], asked["key"],
                       refresh_ttl=_flag(request, "refresh_ttl"))
    return json_response(item.dict() if item is not None else None)


async def delete_item(request: Request) -> Response:
    spec = await body(request, _Delete)
    asked = await _scoped(request, "delete", {"namespace": _labels(spec.namespace),
                                              "key": spec.key})
    await _call(server(request).store.adelete, asked["namespace"], asked["key"])
    return Response(status_code=204)


async def search_items(request: Request) -> Response:
    spec = await body(request, _Search, default=True)
    asked = await _scoped(request, "search", {
        "namespace": _labels(spec.namespace_prefix), "filter": spec.filter, "limit": spec.limit,
        "offset": spec.offset, "query": spec.query,
    })
    items = await _call(
        server(request).store.asearch, asked["namespace"] or (), query=asked["query"],
        filter=asked["filter"], limit=asked["limit"], offset=asked["offset"],
        refresh_ttl=spec.refresh_ttl,
    )
    return json_response({"items": [item.dict() for item in items]})


async def list_namespaces(request: Request) -> Response:
    spec = await body(request, _Namespaces, default=True)
    if spec.max_depth is not None and spec.max_depth < 1:
        raise UnprocessableEntity(f"max_depth: {spec.max_depth} is less than the minimum of 1")
    asked = await _scoped(request, "list_namespaces", {
        "namespace": _labels(spec.prefix) if spec.prefix else None,
        "suffix": _labels(spec.suffix) if spec.suffix else None,
        "max_depth": spec.max_depth, "limit": spec.limit, "offset": spec.offset,
    })
    suffix = asked["suffix"]
    found = await _call(
        server(request).store.alist_namespaces,
        prefix=asked["namespace"] or None, suffix=_labels(tuple(suffix)) if suffix else None,
        max_depth=asked["max_depth"], limit=asked["limit"], offset=asked["offset"],
    )
    return json_response({"namespaces": [list(ns) for ns in found]})


routes = [
    Route("/store/items", put_item, methods=["PUT"]),
    Route("/store/items", get_item, methods=["GET"]),
    Route("/store/items", delete_item, methods=["DELETE"]),
    Route("/store/items/search", search_items, methods=["POST"]),
    Route("/store/namespaces", list_namespaces, methods=["POST"]),
]
