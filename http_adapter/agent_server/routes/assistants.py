"""Assistants (SPEC §3): CRUD, search, count, versions, latest, graph, schemas, subgraphs."""

from __future__ import annotations

import typing
import uuid
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from engine import CompiledStateGraph

from ..errors import Conflict, NotFound, UnprocessableEntity
from ..records import matches, now, page, sort_records
from ..schemas import Assistant, AssistantCreate, AssistantPatch, AssistantSearch
from ..schemas import AssistantVersionsSearch
from ..state import ServerState
from ._common import body, json_response, paginated, path_uuid, server

__all__ = ["routes"]


class _Latest(msgspec.Struct, kw_only=True):
    version: int


def _assistant(st: ServerState, request: Request) -> Assistant:
    raw = request.path_params["assistant_id"]
    if raw in st.settings.graphs:  # a graph name addresses its built-in assistant
        return st.assistant(raw)
    assistant_id = path_uuid(request, "assistant_id", "assistant")
    found = st.records.assistants.get(assistant_id)
    if found is None:
        raise NotFound(f"Assistant {assistant_id} not found")
    return found


async def create_assistant(request: Request) -> Response:
    st = server(request)
    spec = await body(request, AssistantCreate)
    if spec.graph_id not in st.settings.graphs:
        raise NotFound(f"Graph '{spec.graph_id}' not found")
    assistant_id = spec.assistant_id or str(uuid.uuid4())
    existing = st.records.assistants.get(assistant_id)
    if existing is not None:
        if spec.if_exists == "do_nothing":
            return json_response(existing)
        raise Conflict(f"Assistant {assistant_id} already exists")
    stamp = now()
    assistant = Assistant(
        assistant_id=assistant_id, graph_id=spec.graph_id, config=spec.config or {},
        context=spec.context or {}, metadata=spec.metadata or {},
        name=spec.name or "Untitled", description=spec.description, version=1,
        created_at=stamp, updated_at=stamp,
    )
    return json_response(await st.records.put_assistant(assistant))


async def get_assistant(request: Request) -> Response:
    return json_response(_assistant(server(request), request))


async def patch_assistant(request: Request) -> Response:
    st = server(request)
    current = _assistant(st, request)
    spec = await body(request, AssistantPatch, default=True)
    if spec.graph_id is not None and spec.graph_id not in st.settings.graphs:
        raise NotFound(f"Graph '{spec.graph_id}' not found")
    versions = st.records.versions.get(current.assistant_id, {})
    updated = msgspec.structs.replace(
        current,
        graph_id=spec.graph_id or current.graph_id,
        config=spec.config if spec.config is not None else current.config,
        context=spec.context if spec.context is not None else current.context,
        metadata={**current.metadata, **(spec.metadata or {})},
        name=spec.name if spec.name is not None else current.name,
        description=spec.description if spec.description is not None else current.description,
        version=max(versions, default=current.version) + 1,
        updated_at=now(),
    )
    return json_response(await st.records.put_assistant(updated))


async def delete_assistant(request: Request) -> Response:
    st = server(request)
    assistant = _assistant(st, request)
    await st.records.delete_assistant(assistant.assistant_id)
    return Response(status_code=204)


def _search(st: ServerState, spec: AssistantSearch) -> list[Assistant]:
    return st.records.search_assistants(metadata=spec.metadata, graph_id=spec.graph_id,
                                        name=spec.name)


async def search_assistants(request: Request) -> Response:
    st = server(request)
    spec = await body(request, AssistantSearch, default=True)
    found = sort_records(_search(st, spec), spec.sort_by, spec.sort_order, "created_at")
    return paginated(page(found, spec.limit, spec.offset), len(found), spec.offset, spec.limit,
                     spec.select)


async def count_assistants(request: Request) -> Response:
    st = server(request)
    spec = await body(request, AssistantSearch, default=True)
    return json_response(len(_search(st, spec)))


async def list_versions(request: Request) -> Response:
    st = server(request)
    assistant = _assistant(st, request)
    spec = await body(request, AssistantVersionsSearch, default=True)
    versions = sorted(st.records.versions.get(assistant.assistant_id, {}).values(),
                      key=lambda a: a.version, reverse=True)
    versions = [v for v in versions if matches(v.metadata, spec.metadata)]
    return json_response(page(versions, spec.limit, spec.offset))


async def set_latest(request: Request) -> Response:
    st = server(request)
    assistant = _assistant(st, request)
    spec = await body(request, _Latest)
    version = st.records.versions.get(assistant.assistant_id, {}).get(spec.version)
    if version is None:
        raise NotFound(f"Version {spec.version} of assistant {assistant.assistant_id} not found")
    return json_response(await st.records.set_assistant(version))


async def get_graph(request: Request) -> Response:
    st = server(request)
    assistant = _assistant(st, request)
    graph = await st.graph(assistant.graph_id)
    xray = request.query_params.get("xray", "false")
    drawable = graph.get_graph(xray=xray not in ("false", "0"))
    return json_response(drawable.to_json())


# -- schemas -----------------------------------------------------------------------------------------


def _json_schema(schema: Any) -> dict[str, Any] | None:
    """JSON schema of a state/context type; reducer annotations are dropped first."""
    if schema is None:
        return None
    try:
        hints = typing.get_type_hints(schema)  # without include_extras: reducers stripped
        plain: Any = typing.TypedDict(getattr(schema, "__name__", "State"),  # type: ignore[operator]
                                      hints)
        return msgspec.json.schema(plain)
    except Exception:  # a type msgspec cannot describe: an open object
        return {"title": getattr(schema, "__name__", "State"), "type": "object"}


def _schemas(graph_id: str, graph: CompiledStateGraph) -> dict[str, Any]:
    builder = graph.builder
    return {
        "graph_id": graph_id,
        "input_schema": _json_schema(builder.input_schema),
        "output_schema": _json_schema(builder.output_schema),
        "state_schema": _json_schema(builder.state_schema),
        "config_schema": None,
        "context_schema": _json_schema(builder.context_schema),
    }


async def get_schemas(request: Request) -> Response:
    st = server(request)
    assistant = _assistant(st, request)
    graph = await st.graph(assistant.graph_id)
    return json_response(_schemas(assistant.graph_id, graph))


def _subgraphs(graph: CompiledStateGraph, prefix: str, recurse: bool
               ) -> list[tuple[str, CompiledStateGraph]]:
    found = []
    for name, spec in graph.builder.nodes.items():
        if isinstance(spec.action, CompiledStateGraph):
            ns = f"{prefix}|{name}" if prefix else name
            found.append((ns, spec.action))
            if recurse:
                found += _subgraphs(spec.action, ns, recurse)
    return found


async def get_subgraphs(request: Request) -> Response:
    st = server(request)
    assistant = _assistant(st, request)
    graph = await st.graph(assistant.graph_id)
    recurse = request.query_params.get("recurse") in ("true", "1")
    namespace = request.query_params.get("namespace")
    out = {
        ns: _schemas(assistant.graph_id, sub)
        for ns, sub in _subgraphs(graph, "", recurse)
        if namespace is None or ns == namespace
    }
    return json_response(out)



routes = [
    Route("/assistants", create_assistant, methods=["POST"]),
    Route("/assistants/search", search_assistants, methods=["POST"]),
    Route("/assistants/count", count_assistants, methods=["POST"]),
    Route("/assistants/{assistant_id}", get_assistant, methods=["GET"]),
    Route("/assistants/{assistant_id}", patch_assistant, methods=["PATCH"]),
    Route("/assistants/{assistant_id}", delete_assistant, methods=["DELETE"]),
    Route("/assistants/{assistant_id}/versions", list_versions, methods=["POST"]),
    Route("/assistants/{assistant_id}/latest", set_latest, methods=["POST"]),
    Route("/assistants/{assistant_id}/graph", get_graph, methods=["GET"]),
    Route("/assistants/{assistant_id}/schemas", get_schemas, methods=["GET"]),
    Route("/assistants/{assistant_id}/subgraphs", get_subgraphs, methods=["GET"]),
]
