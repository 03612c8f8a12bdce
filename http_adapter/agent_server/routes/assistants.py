"""Assistants (SPEC §3): CRUD, search, count, versions, latest, graph, schemas, subgraphs.

Records, status codes and `detail` texts follow what the LangGraph Agent Server
(langgraph-api 0.16.7) answers, see shared_notes/server_facts.md: creates answer 200;
`config.configurable` and `context` mirror each other on create; PATCH replaces `config` and
merges `metadata`; a version item has no `updated_at`; an assistant path id must be a UUID (the
graph name is accepted by the run endpoints only); unknown ids give the real server's
per-endpoint 404 texts.
"""

from __future__ import annotations

import dataclasses
import sys
import typing
import uuid
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from engine import CompiledStateGraph, add_messages
from engine.managed import IsLastStep, RemainingSteps

from ..authz import authorize, owned, visible
from ..errors import BadRequest, Conflict, NotFound, UnprocessableEntity
from ..records import matches, now, page, sort_records
from ..schemas import (
    Assistant,
    AssistantCreate,
    AssistantPatch,
    AssistantSearch,
    AssistantVersionsSearch,
)
from ..langgraph_graph import LangGraphGraph
from ..langgraph_schemas import entrypoint_schemas, langgraph_schemas
from ..state import ServerState
from ._common import as_uuid, authorized_record, body, json_response, paginated, server

__all__ = ["routes"]

_BOTH_CONTEXT_AND_CONFIGURABLE = (
    "Cannot specify both configurable and context. Prefer setting context alone. Context was "
    "introduced in LangGraph 0.6.0 and is the long term planned replacement for configurable."
)
_SORT_FIELDS = ("assistant_id", "graph_id", "name", "created_at", "updated_at")
_SELECT_FIELDS = ("assistant_id", "graph_id", "name", "description", "config", "context",
                  "created_at", "updated_at", "metadata", "version")
_MAX_LIMIT = 1000


class _Latest(msgspec.Struct, kw_only=True):
    version: int


# -- wire shapes -----------------------------------------------------------------------------------


def assistant_json(a: Assistant) -> dict[str, Any]:
    """An Assistant with the real server's keys, in its order."""
    return {
        "assistant_id": a.assistant_id, "graph_id": a.graph_id, "config": a.config,
        "context": a.context, "metadata": a.metadata, "name": a.name,
        "created_at": a.created_at, "updated_at": a.updated_at, "version": a.version,
        "description": a.description,
    }


def _version_json(a: Assistant) -> dict[str, Any]:
    """A version item: no `updated_at`; its `created_at` is when that version was made (a
    version record's `updated_at`, since every version is saved when it is made)."""
    return {
        "assistant_id": a.assistant_id, "version": a.version, "graph_id": a.graph_id,
        "config": a.config, "context": a.context, "metadata": a.metadata,
        "created_at": a.updated_at, "name": a.name, "description": a.description,
    }


# -- lookups and checks ------------------------------------------------------------------------------



async def _assistant(st: ServerState, request: Request, action: str,
                     missing: str = "Not Found") -> Assistant:
    """The path's assistant, authorized for `action` (custom auth); 422 for a non-UUID id,
    404 `missing` (formatted with the id) when absent or outside the user's filter."""
    return (await _authorized(st, request, action, missing, {}))[0]


async def _authorized(st: ServerState, request: Request, action: str, missing: str,
                      value: dict[str, Any]) -> tuple[Assistant, dict[str, Any] | None]:
    """`_assistant` with the handler's `value` (the path's id added) and filter."""
    return await authorized_record(request, "assistant", st.records.get_assistant, action,
                                   missing, value)


def _check_graph(st: ServerState, graph_id: str) -> None:
    if graph_id not in st.settings.graphs:
        raise NotFound(
            f"Graph '{graph_id}' not found. Expected one of: {sorted(st.settings.graphs)}"
        )


def _check_page(limit: int, offset: int) -> None:
    if limit < 1:
        raise UnprocessableEntity(f"limit: {limit} is less than the minimum of 1")
    if limit > _MAX_LIMIT:
        raise UnprocessableEntity(f"limit: {limit} is greater than the maximum of {_MAX_LIMIT}")
    if offset < 0:
        raise UnprocessableEntity(f"offset: {offset} is less than the minimum of 0")


def _one_of(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise UnprocessableEntity(
            f"{name}: {value!r} is not one of " + ", ".join(repr(a) for a in allowed)
        )


def _mirrored(config: dict[str, Any] | None, context: dict[str, Any] | None
              ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """`config.configurable` and `context` mirror each other (both at once -> 400)."""
    configurable = (config or {}).get("configurable")
    if configurable and context:
        raise BadRequest(_BOTH_CONTEXT_AND_CONFIGURABLE)
    if configurable:
        context = dict(configurable)
    elif context:
        config = {**(config or {}), "configurable": dict(context)}
    return config, context


# -- CRUD --------------------------------------------------------------------------------------------


async def create_assistant(request: Request) -> Response:
    st = server(request)
    spec = await body(request, AssistantCreate)
    assistant_id = (
        as_uuid(spec.assistant_id, "assistant") if spec.assistant_id is not None
        else str(uuid.uuid4())
    )
    config, context = _mirrored(spec.config, spec.context)
    _check_graph(st, spec.graph_id)
    value: dict[str, Any] = {
        "assistant_id": assistant_id, "graph_id": spec.graph_id, "config": config or {},
        "context": context or {}, "metadata": dict(spec.metadata or {}),
        "if_exists": spec.if_exists, "name": spec.name or "Untitled",
    }
    filters = await authorize(request, "assistants", "create", value)
    existing = await st.records.get_assistant(assistant_id)
    if existing is not None:
        if not visible(existing.metadata, filters):  # another user's: as GET answers (issue 26)
            raise NotFound("Not Found")
        if spec.if_exists == "do_nothing":
            return json_response(assistant_json(existing))
        raise Conflict(f"Assistant {assistant_id} already exists")
    stamp = now()
    assistant = Assistant(
        assistant_id=assistant_id, graph_id=spec.graph_id, config=config or {},
        context=context or {}, metadata=owned(value["metadata"], filters),
        name=spec.name or "Untitled", description=spec.description, version=1,
        created_at=stamp, updated_at=stamp,
    )
    return json_response(assistant_json(await st.records.put_assistant(assistant)))


async def get_assistant(request: Request) -> Response:
    return json_response(assistant_json(await _assistant(server(request), request, "read")))


async def patch_assistant(request: Request) -> Response:
    st = server(request)
    missing = "Assistant {id} not found"
    assistant_id = as_uuid(request.path_params["assistant_id"], "assistant")
    if await st.records.get_assistant(assistant_id) is None:  # 404 before the body is read
        raise NotFound(missing.format(id=assistant_id))
    spec = await body(request, AssistantPatch, default=True)
    if spec.graph_id is not None:
        _check_graph(st, spec.graph_id)
    config, context = _mirrored(spec.config, spec.context)
    value: dict[str, Any] = {"graph_id": spec.graph_id, "config": config, "context": context,
             "metadata": dict(spec.metadata or {}), "name": spec.name, "version": None}
    current, filters = await _authorized(st, request, "update", missing, value)
    if spec.config is None and config is not None:  # context alone: keep the rest of config
        config = {**current.config, **config}
    versions = await st.records.assistant_versions(current.assistant_id)
    updated = msgspec.structs.replace(
        current,
        graph_id=spec.graph_id or current.graph_id,
        config=config if config is not None else current.config,
        context=context if context is not None else current.context,
        metadata={**current.metadata, **owned(value["metadata"], filters)},
        name=spec.name if spec.name is not None else current.name,
        description=spec.description if spec.description is not None else current.description,
        version=max(versions, default=current.version) + 1,
        updated_at=now(),
    )
    return json_response(assistant_json(await st.records.put_assistant(updated)))


async def delete_assistant(request: Request) -> Response:
    st = server(request)
    assistant = await _assistant(st, request, "delete", "Assistant with ID {id} not found")
    await st.records.delete_assistant(assistant.assistant_id)
    return Response(status_code=204)


# -- search --------------------------------------------------------------------------------------------


async def _search(request: Request, st: ServerState, spec: AssistantSearch) -> list[Assistant]:
    """The assistants `spec` asks for that the user may see (custom auth's search filter;
    the handler may also change the query's `metadata`)."""
    value: dict[str, Any] = {"graph_id": spec.graph_id, "metadata": dict(spec.metadata or {}),
             "limit": spec.limit, "offset": spec.offset}
    filters = await authorize(request, "assistants", "search", value)
    found = await st.records.search_assistants(metadata=value["metadata"] or None,
                                               graph_id=spec.graph_id, name=spec.name)
    return [a for a in found if visible(a.metadata, filters)] if filters else found


async def search_assistants(request: Request) -> Response:
    st = server(request)
    spec = await body(request, AssistantSearch, default=True)
    _check_page(spec.limit, spec.offset)
    if spec.sort_by is not None:
        _one_of("sort_by", spec.sort_by, _SORT_FIELDS)
    for field in spec.select or ():
        _one_of("select", field, _SELECT_FIELDS)
    found = sort_records(await _search(request, st, spec), spec.sort_by, spec.sort_order, "created_at")
    items = [assistant_json(a) for a in page(found, spec.limit, spec.offset)]
    return paginated(items, len(found), spec.offset, spec.limit, spec.select)


async def count_assistants(request: Request) -> Response:
    st = server(request)
    spec = await body(request, AssistantSearch, default=True)
    return json_response(len(await _search(request, st, spec)))


async def list_versions(request: Request) -> Response:
    st = server(request)
    assistant = await _assistant(st, request, "read", "Assistant {id} not found")
    spec = await body(request, AssistantVersionsSearch, default=True)
    _check_page(spec.limit, spec.offset)
    versions = sorted((await st.records.assistant_versions(assistant.assistant_id)).values(),
                      key=lambda a: a.version, reverse=True)
    versions = [v for v in versions if matches(v.metadata, spec.metadata)]
    return json_response([_version_json(v) for v in page(versions, spec.limit, spec.offset)])


async def set_latest(request: Request) -> Response:
    st = server(request)
    assistant = await _assistant(st, request, "update", "Assistant {id} not found")
    spec = await body(request, _Latest)
    version = (await st.records.assistant_versions(assistant.assistant_id)).get(spec.version)
    if version is None:
        raise NotFound(f"Version {spec.version} not found for assistant {assistant.assistant_id}")
    latest = msgspec.structs.replace(version, created_at=assistant.created_at, updated_at=now())
    return json_response(assistant_json(await st.records.set_assistant(latest)))


# -- graph ----------------------------------------------------------------------------------------------


def _xray(request: Request) -> int:
    raw = (request.query_params.get("xray") or "false").strip().lower()
    if raw in ("true", "yes"):
        return 1_000
    if raw in ("false", "no", ""):
        return 0
    try:
        return max(int(raw), 0)
    except ValueError:
        raise UnprocessableEntity(f"Invalid xray value: {raw!r}") from None


async def get_graph(request: Request) -> Response:
    st = server(request)
    assistant = await _assistant(st, request, "read")
    xray = _xray(request)
    graph = await st.graph(assistant.graph_id)
    # LangGraph's drawing (subgraph nodes inlined to `xray` depth), in its JSON shape
    return json_response(_wire_drawing(graph.get_graph(xray=xray).to_json()))


def _wire_drawing(drawn: dict[str, Any]) -> dict[str, Any]:
    """The drawing as `langgraph dev` sends it: a node's data keeps its name, not the class
    path `to_json` gives (recorded, tests/http_adapter/parity; issue 27)."""
    for node in drawn.get("nodes", ()):
        if isinstance(node.get("data"), dict):
            node["data"].pop("id", None)
    return drawn


# -- schemas --------------------------------------------------------------------------------------------


def _field_schema(hint: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """One field's JSON schema and the `$defs` it refers to (reducers stripped); a type made
    of pydantic models (LangChain's messages) as pydantic describes it, as the reference does."""
    if _mentions_pydantic(hint):
        from pydantic import TypeAdapter

        try:
            schema = TypeAdapter(hint).json_schema()
            return schema, schema.pop("$defs", {})
        except Exception:  # noqa: BLE001 - a type pydantic cannot describe: try msgspec
            pass
    try:
        schema = msgspec.json.schema(hint)
    except (TypeError, ValueError):  # a type msgspec cannot describe: anything
        return {}, {}
    defs = schema.pop("$defs", {})
    if schema.get("type") == "array" and "items" not in schema:
        schema["items"] = {}
    return schema, defs


def _mentions_pydantic(hint: Any, depth: int = 0) -> bool:
    """Whether a pydantic model class appears in `hint` (its arguments searched a few deep)."""
    if isinstance(hint, type) and hasattr(hint, "model_json_schema"):
        return True
    return depth < 4 and any(_mentions_pydantic(a, depth + 1) for a in typing.get_args(hint))


def _hints(schema: Any) -> dict[str, Any]:
    fields = getattr(schema, "model_fields", None)
    if isinstance(fields, dict):  # pydantic
        return {name: f.annotation for name, f in fields.items()}
    try:
        hints = typing.get_type_hints(schema, include_extras=True)
    except (NameError, TypeError, AttributeError):  # unresolvable forward references
        return {name: Any for name in getattr(schema, "__annotations__", {})}
    # managed values (`is_last_step`...) are no channels: LangGraph's schemas leave them out
    return {name: _without_reducer(hint) for name, hint in hints.items()
            if hint not in _MANAGED}


_MANAGED = (IsLastStep, RemainingSteps)


def _without_reducer(hint: Any) -> Any:
    """A field's type without its reducer; `list[Any]` reduced by `add_messages` (engine's
    MessagesState) is a list of LangChain messages when LangChain is installed, described so
    as LangGraph's MessagesState is (issue 18: /assistants/{id}/schemas)."""
    if typing.get_origin(hint) is not typing.Annotated:
        return hint
    inner = typing.get_args(hint)[0]
    if add_messages in hint.__metadata__ and typing.get_args(inner) in ((Any,), ()):
        try:
            from langchain_core.messages import AnyMessage
        except ImportError:
            return inner
        return list[AnyMessage]  # type: ignore[valid-type]
    return inner


def _json_schema(schema: Any, title: str, *, strict: bool = False, defaults: bool = True
                 ) -> dict[str, Any] | None:
    """A state/input/output/context type in the real server's style: an object titled
    `title` whose properties carry a `title` and `"default": null` (every key optional);
    `strict` keeps a TypedDict's required keys required (how its input is described); without
    `defaults`, optional keys have no default either: a type described by itself, as pydantic's
    TypeAdapter does (input, output and context types, issue 31 item 12)."""
    if schema is None:
        return None
    required = set(getattr(schema, "__required_keys__", ())) if strict else set()
    properties: dict[str, Any] = {}
    all_defs: dict[str, Any] = {}
    for name, hint in _hints(schema).items():
        field, defs = _field_schema(hint)
        all_defs.update(defs)
        field = {**field, "title": name.replace("_", " ").title()}
        if name not in required and defaults:
            field["default"] = None
        properties[name] = dict(sorted(field.items()))
    out: dict[str, Any] = {"properties": properties, "title": title, "type": "object"}
    if required:
        out["required"] = [name for name in properties if name in required]
    if all_defs:
        out["$defs"] = all_defs
    return out


def _dataclass_io(schema: Any, title: str) -> dict[str, Any] | None:
    """A dataclass as LangGraph describes a graph's input or output made of it (issue 31, the
    templates' `InputState`/`State`): titled after the graph, each field with its own default
    (a factory's value), fields without one required."""
    out = _json_schema(schema, title, defaults=False)
    assert out is not None
    required = []
    for field in dataclasses.fields(schema):
        if field.name not in out["properties"]:
            continue
        if field.default is not dataclasses.MISSING:
            default = field.default
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            required.append(field.name)
            continue
        try:
            out["properties"][field.name]["default"] = msgspec.to_builtins(default)
        except TypeError:  # a default JSON cannot carry: described without it
            pass
    if required:
        out["required"] = required
    return out


def _context_schema(context: Any) -> dict[str, Any] | None:
    """The context type as the reference's pydantic describes it: its docstring, each field's
    default and `metadata["description"]` (issue 31: the templates' `Context` dataclass)."""
    if context is None:
        return None
    if dataclasses.is_dataclass(context) or _adapted(context):
        try:
            from pydantic import TypeAdapter

            return TypeAdapter(context).json_schema()
        except Exception:  # noqa: BLE001 - pydantic absent or refusing the type: ours below
            pass
    return _json_schema(context, getattr(context, "__name__", "Context"), strict=True,
                        defaults=False)


def _schemas(graph: CompiledStateGraph, state_title: str, prefix: str) -> dict[str, Any]:
    """`input_schema`/`output_schema` are null unless they differ from the state schema (the
    real server answers null for a graph built from one TypedDict). A LangGraph-built graph
    describes itself, as there (issue 28)."""
    if isinstance(graph, LangGraphGraph):
        return langgraph_schemas(graph.inner)
    builder = graph.builder
    state = builder.state_schema

    state_json = _json_schema(state, state_title)

    def other(schema: Any, suffix: str) -> dict[str, Any] | None:
        if schema is None:
            return None
        if dataclasses.is_dataclass(schema):
            own = _dataclass_io(schema, _titled(graph.name, suffix.title()))
            assert own is not None and state_json is not None
            return None if {**own, "title": state_title} == state_json else own
        if schema is not state:  # titled by its class, as LangGraph's (issue 31 item 12)
            return _json_schema(schema, getattr(schema, "__name__", f"{prefix}_{suffix}"),
                                strict=True, defaults=False)
        if _adapted(state):  # the reference's pydantic describes it by itself (issue 31)
            return _json_schema(state, state.__name__, strict=True, defaults=False)
        # as observed: the state type as input/output shows only where it says more than the
        # state schema does (required keys, e.g. MessagesState's `messages`)
        own = _json_schema(state, getattr(state, "__name__", state_title), strict=True)
        assert own is not None and state_json is not None
        return None if {**own, "title": state_title} == state_json else own

    context_json = _context_schema(builder.context_schema)
    # as the reference: a graph with a context schema describes it as its config too
    # (issue 31 item 12: it came back empty)
    contexts = {"config_schema": context_json or {}, "context_schema": context_json}
    if hasattr(builder, "input_type"):  # functional API: as LangGraph describes it (issue 28)
        described = entrypoint_schemas(graph.name, builder.input_type, builder.output_type)
        if described is not None:
            return {**described, **contexts}
    return {
        "input_schema": other(builder.input_schema, "input"),
        "output_schema": other(builder.output_schema, "output"),
        "state_schema": state_json,
        **contexts,
    }


def _adapted(schema: Any) -> bool:
    """Whether LangGraph describes this state type as input/output by itself (pydantic's
    TypeAdapter): a TypedDict but `typing`'s before Python 3.12, which pydantic refuses (the
    reference then answers null, or the heuristic above)."""
    return (isinstance(schema, type) and hasattr(schema, "__required_keys__")  # a TypedDict
            and (sys.version_info >= (3, 12) or type(schema).__module__ != "typing"))


def _titled(name: str, suffix: str) -> str:
    """LangGraph's `get_name(suffix)`: "Answer Agent" -> "Answer AgentState", "agent" ->
    "agent_state"."""
    return f"{name}{suffix}" if name[:1].isupper() else f"{name}_{suffix.lower()}"


async def get_schemas(request: Request) -> Response:
    st = server(request)
    assistant = await _assistant(st, request, "read")
    graph = await st.graph(assistant.graph_id)
    gid = assistant.graph_id
    return json_response({"graph_id": gid, **_schemas(graph, _titled(graph.name, "State"), gid)})


def _subgraphs(graph: CompiledStateGraph, prefix: str, recurse: bool
               ) -> list[tuple[str, CompiledStateGraph]]:
    found = []
    for name, spec in graph.builder.nodes.items():
        if isinstance(spec.action, (CompiledStateGraph, LangGraphGraph)):  # issue 28: either
            ns = f"{prefix}|{name}" if prefix else name
            found.append((ns, spec.action))
            if recurse:
                found += _subgraphs(spec.action, ns, recurse)
    return found


async def get_subgraphs(request: Request) -> Response:
    st = server(request)
    assistant = await _assistant(st, request, "read")
    recurse = request.query_params.get("recurse", "false").lower() in ("true", "1", "yes")
    namespace = request.path_params.get("namespace") or request.query_params.get("namespace")
    graph = await st.graph(assistant.graph_id)
    found = _subgraphs(graph, "", recurse or namespace is not None)
    out = {
        ns: _schemas(sub, f"{sub.name}State", sub.name)
        for ns, sub in found
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
    Route("/assistants/{assistant_id}/subgraphs/{namespace:path}", get_subgraphs,
          methods=["GET"]),
]
