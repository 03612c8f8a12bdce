"""The server's OpenAPI 3.1 document and its offline interactive reference (`/docs`).

The document is derived from the app's own routes, so a route added anywhere appears here
without a second list to keep: paths and methods from `app.routes`, path parameters from the
route patterns, request bodies from the msgspec Struct each handler decodes (`body(request,
Struct)`, found in the handler's source and resolved in its module), query parameters from the
names the handler reads. Summaries, tags and response shapes follow LangGraph's reference where
we know them (a table below); anything else gets its handler's docstring or name.

`/docs` is Swagger UI from the `swagger-ui-bundle-v2` package, served from local files under
`/docs/...`, so the page works with no network (SPEC §3 "System").
"""

from __future__ import annotations

import importlib.util
import inspect
import re
from collections.abc import Iterator
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import msgspec
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from . import schemas
from .auth import PUBLIC_PATHS

__all__ = [
    "DOCS_ASSETS", "docs_asset_path", "docs_asset_response", "docs_html", "openapi_document",
    "package_version",
]

_ASSET_CACHE = "public, max-age=86400"

_METHODS = ("get", "put", "post", "patch", "delete")

TAGS = {
    "Assistants": "An assistant is a graph with its configuration; each graph of the config "
                  "is a built-in assistant.",
    "Threads": "A thread holds the accumulated state (checkpoints) of a sequence of runs.",
    "Thread Runs": "A run invokes an assistant on a thread and updates the thread's state.",
    "Stateless Runs": "A run invokes an assistant on a temporary thread: nothing persists.",
    "Crons": "Runs on a schedule, on a new thread each time or on one shared thread.",
    "Store": "The long-term key-value store shared by every thread.",
    "A2A": "Assistants as Agent-to-Agent protocol agents (JSON-RPC 2.0).",
    "MCP": "Assistants as Model Context Protocol tools.",
    "System": "Health, server information, metrics and this reference.",
}

# (METHOD, path) -> summary, as in LangGraph's reference.
_SUMMARIES = {
    ("POST", "/assistants"): "Create Assistant",
    ("POST", "/assistants/search"): "Search Assistants",
    ("POST", "/assistants/count"): "Count Assistants",
    ("GET", "/assistants/{assistant_id}"): "Get Assistant",
    ("PATCH", "/assistants/{assistant_id}"): "Patch Assistant",
    ("DELETE", "/assistants/{assistant_id}"): "Delete Assistant",
    ("POST", "/assistants/{assistant_id}/versions"): "Get Assistant Versions",
    ("POST", "/assistants/{assistant_id}/latest"): "Set Latest Assistant Version",
    ("GET", "/assistants/{assistant_id}/graph"): "Get Assistant Graph",
    ("GET", "/assistants/{assistant_id}/schemas"): "Get Assistant Schemas",
    ("GET", "/assistants/{assistant_id}/subgraphs"): "Get Assistant Subgraphs",
    ("GET", "/assistants/{assistant_id}/subgraphs/{namespace}"):
        "Get Assistant Subgraphs by Namespace",
    ("POST", "/threads"): "Create Thread",
    ("POST", "/threads/search"): "Search Threads",
    ("POST", "/threads/count"): "Count Threads",
    ("POST", "/threads/prune"): "Prune Threads",
    ("GET", "/threads/{thread_id}"): "Get Thread",
    ("PATCH", "/threads/{thread_id}"): "Patch Thread",
    ("DELETE", "/threads/{thread_id}"): "Delete Thread",
    ("POST", "/threads/{thread_id}/copy"): "Copy Thread",
    ("GET", "/threads/{thread_id}/state"): "Get Thread State",
    ("POST", "/threads/{thread_id}/state"): "Update Thread State",
    ("GET", "/threads/{thread_id}/state/{checkpoint_id}"): "Get Thread State At Checkpoint",
    ("POST", "/threads/{thread_id}/state/checkpoint"): "Get Thread State At Checkpoint",
    ("GET", "/threads/{thread_id}/history"): "Get Thread History",
    ("POST", "/threads/{thread_id}/history"): "Get Thread History Post",
    ("GET", "/threads/{thread_id}/runs"): "List Runs",
    ("POST", "/threads/{thread_id}/runs"): "Create Background Run",
    ("POST", "/threads/{thread_id}/runs/stream"): "Create Run, Stream Output",
    ("POST", "/threads/{thread_id}/runs/wait"): "Create Run, Wait for Output",
    ("GET", "/threads/{thread_id}/runs/{run_id}"): "Get Run",
    ("DELETE", "/threads/{thread_id}/runs/{run_id}"): "Delete Run",
    ("GET", "/threads/{thread_id}/runs/{run_id}/join"): "Join Run",
    ("GET", "/threads/{thread_id}/runs/{run_id}/stream"): "Join Run Stream",
    ("POST", "/threads/{thread_id}/runs/{run_id}/cancel"): "Cancel Run",
    ("POST", "/runs"): "Create Background Run",
    ("POST", "/runs/stream"): "Create Run, Stream Output",
    ("POST", "/runs/wait"): "Create Run, Wait for Output",
    ("POST", "/runs/batch"): "Create Run Batch",
    ("POST", "/runs/cancel"): "Cancel Runs",
    ("POST", "/runs/crons"): "Create Cron",
    ("POST", "/threads/{thread_id}/runs/crons"): "Create Thread Cron",
    ("POST", "/runs/crons/search"): "Search Crons",
    ("POST", "/runs/crons/count"): "Count Crons",
    ("GET", "/runs/crons/{cron_id}"): "Get Cron",
    ("PATCH", "/runs/crons/{cron_id}"): "Update Cron",
    ("DELETE", "/runs/crons/{cron_id}"): "Delete Cron",
    ("PUT", "/store/items"): "Store or Update an Item",
    ("GET", "/store/items"): "Get an Item",
    ("DELETE", "/store/items"): "Delete an Item",
    ("POST", "/store/items/search"): "Search Items",
    ("POST", "/store/namespaces"): "List Namespaces",
    ("GET", "/ok"): "Health Check",
    ("GET", "/info"): "Server Information",
    ("GET", "/metrics"): "System Metrics",
    ("GET", "/openapi.json"): "OpenAPI Document",
    ("GET", "/docs"): "API Documentation",
}

# (METHOD, path) -> the success response: a record name, [record name] for a list, int, None
# for 204, or "sse".
_RESPONSES: dict[tuple[str, str], Any] = {
    ("POST", "/assistants"): "Assistant",
    ("POST", "/assistants/search"): ["Assistant"],
    ("POST", "/assistants/count"): int,
    ("GET", "/assistants/{assistant_id}"): "Assistant",
    ("PATCH", "/assistants/{assistant_id}"): "Assistant",
    ("DELETE", "/assistants/{assistant_id}"): None,
    ("POST", "/assistants/{assistant_id}/versions"): ["Assistant"],
    ("POST", "/assistants/{assistant_id}/latest"): "Assistant",
    ("POST", "/threads"): "Thread",
    ("POST", "/threads/search"): ["Thread"],
    ("POST", "/threads/count"): int,
    ("GET", "/threads/{thread_id}"): "Thread",
    ("PATCH", "/threads/{thread_id}"): "Thread",
    ("DELETE", "/threads/{thread_id}"): None,
    ("POST", "/threads/{thread_id}/copy"): "Thread",
    ("GET", "/threads/{thread_id}/runs"): ["Run"],
    ("POST", "/threads/{thread_id}/runs"): "Run",
    ("GET", "/threads/{thread_id}/runs/{run_id}"): "Run",
    ("DELETE", "/threads/{thread_id}/runs/{run_id}"): None,
    ("POST", "/runs"): "Run",
    ("POST", "/runs/batch"): ["Run"],
    ("POST", "/runs/cancel"): None,
    ("PUT", "/store/items"): None,
    ("DELETE", "/store/items"): None,
    ("GET", "/ok"): {"type": "object", "properties": {"ok": {"type": "boolean"}}},
}

_ERROR = {
    "type": "object",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
    "title": "ErrorResponse",
}


def package_version() -> str:
    try:
        return version("graphrun")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0"


# -- the document ------------------------------------------------------------------------------


def openapi_document(routes: list[BaseRoute], *, api_keys: bool = False) -> dict[str, Any]:
    """An OpenAPI 3.1 document for `routes`; `api_keys` marks the non-public operations as
    needing `X-Api-Key`."""
    paths: dict[str, dict[str, Any]] = {}
    structs: dict[str, type[msgspec.Struct]] = {}
    tags: set[str] = set()
    for path, method, endpoint in _operations(routes):
        operation = _operation(path, method, endpoint, structs)
        if api_keys and not _public(path):
            operation["security"] = [{"ApiKeyHeader": []}]
        tags.update(operation["tags"])
        paths.setdefault(path, {})[method.lower()] = operation
    for name in _response_records():
        record = getattr(schemas, name, None)
        if isinstance(record, type) and issubclass(record, msgspec.Struct):
            structs.setdefault(name, record)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "graphrun Agent Server",
            "version": package_version(),
            "description": "The LangGraph Agent Server API over graphrun's engine.",
        },
        "tags": [{"name": t, "description": d} for t, d in TAGS.items() if t in tags],
        "paths": paths,
        "components": {
            "schemas": {**_components(structs), "ErrorResponse": _ERROR},
            "securitySchemes": {
                "ApiKeyHeader": {"type": "apiKey", "in": "header", "name": "X-Api-Key"}
            },
        },
    }


def _operations(routes: list[BaseRoute], prefix: str = "") -> Iterator[tuple[str, str, Any]]:
    """(path, METHOD, endpoint) for every HTTP route, mounted ones included."""
    for route in routes:
        if isinstance(route, Route):
            if not route.include_in_schema:  # e.g. the studio's page (issue 20)
                continue
            path = _openapi_path(prefix + route.path)
            for method in sorted(route.methods or ("GET",)):
                if method != "HEAD" and method.lower() in _METHODS:
                    yield path, method, route.endpoint
        elif isinstance(route, Mount):
            inner = getattr(route, "routes", None) or []
            if inner:
                yield from _operations(list(inner), prefix + route.path)
            else:  # a plain ASGI app mounted under a prefix
                yield _openapi_path(prefix + route.path + "/{path}"), "GET", route.app


def _openapi_path(path: str) -> str:
    return re.sub(r"{(\w+)(?::\w+)?}", r"{\1}", path)


def _public(path: str) -> bool:
    return path in PUBLIC_PATHS or path.startswith("/docs/")


def _operation(
    path: str, method: str, endpoint: Any, structs: dict[str, type[msgspec.Struct]]
) -> dict[str, Any]:
    source = _source(endpoint)
    operation: dict[str, Any] = {
        "tags": [_tag(path)],
        "summary": _SUMMARIES.get((method, path)) or _summary(endpoint),
        "operationId": _operation_id(method, path),
    }
    doc = inspect.getdoc(endpoint) if callable(endpoint) else None
    if doc:
        operation["description"] = doc
    parameters = _path_parameters(path) + _query_parameters(source)
    if parameters:
        operation["parameters"] = parameters
    request = _request_body(endpoint, source, structs)
    if request is not None and method != "GET":
        operation["requestBody"] = request
    operation["responses"] = _responses(method, path)
    return operation


def _tag(path: str) -> str:
    parts = path.strip("/").split("/")
    if "crons" in parts:
        return "Crons"
    head = parts[0]
    if head == "threads":
        return "Thread Runs" if len(parts) > 2 and parts[2] == "runs" else "Threads"
    return {
        "assistants": "Assistants", "runs": "Stateless Runs", "store": "Store",
        "a2a": "A2A", ".well-known": "A2A", "mcp": "MCP",
    }.get(head, "System")


def _summary(endpoint: Any) -> str:
    doc = inspect.getdoc(endpoint) if callable(endpoint) else None
    if doc:
        return doc.splitlines()[0].rstrip(".")
    name = getattr(endpoint, "__name__", type(endpoint).__name__)
    return name.strip("_").replace("_", " ").title()


def _operation_id(method: str, path: str) -> str:
    slug = re.sub(r"[^0-9a-zA-Z]+", "_", path).strip("_") or "root"
    return f"{method.lower()}_{slug}"


def _source(endpoint: Any) -> str:
    try:
        return inspect.getsource(endpoint)
    except (OSError, TypeError):
        return ""


def _path_parameters(path: str) -> list[dict[str, Any]]:
    return [
        {"name": name, "in": "path", "required": True, "schema": _param_schema(name)}
        for name in re.findall(r"{(\w+)}", path)
    ]


def _param_schema(name: str) -> dict[str, Any]:
    if name in ("thread_id", "run_id", "cron_id"):
        return {"type": "string", "format": "uuid"}
    return {"type": "string"}


_QUERY = re.compile(
    r"query_params(?:\.get)?[\[(]\s*['\"](\w+)['\"]|query_\w+\(\s*request\s*,\s*['\"](\w+)['\"]"
)


def _query_parameters(source: str) -> list[dict[str, Any]]:
    names = dict.fromkeys(a or b for a, b in _QUERY.findall(source))
    return [{"name": n, "in": "query", "required": False, "schema": {"type": "string"}}
            for n in names]


_BODY = re.compile(r"\bbody\(\s*request\s*,\s*(list\[\s*)?([A-Za-z_]\w*)\s*\]?\s*(,\s*default\s*=\s*True)?")


def _request_body(
    endpoint: Any, source: str, structs: dict[str, type[msgspec.Struct]]
) -> dict[str, Any] | None:
    match = _BODY.search(source)
    namespace = getattr(endpoint, "__globals__", None)
    if match is None or namespace is None:
        return None
    struct = namespace.get(match.group(2))
    if not (isinstance(struct, type) and issubclass(struct, msgspec.Struct)):
        return None
    name = struct.__name__
    structs.setdefault(name, struct)
    schema: dict[str, Any] = {"$ref": f"#/components/schemas/{name}"}
    if match.group(1):
        schema = {"type": "array", "items": schema}
    return {"required": not match.group(3), "content": {"application/json": {"schema": schema}}}


def _responses(method: str, path: str) -> dict[str, Any]:
    errors = {"4XX": {"description": "Client error", "content": {
        "application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}}}}
    key = (method, path)
    if key not in _RESPONSES:
        if path.endswith("/stream"):
            return {"200": _sse(), **errors}
        if method == "DELETE":
            return {"204": {"description": "Deleted"}, **errors}
        return {"200": _special(path) or {"description": "Success"}, **errors}
    shape = _RESPONSES[key]
    if shape is None:
        return {"204": {"description": "Success, no content"}, **errors}
    return {"200": {"description": "Success", "content": {
        "application/json": {"schema": _shape_schema(shape)}}}, **errors}


def _shape_schema(shape: Any) -> dict[str, Any]:
    if shape is int:
        return {"type": "integer"}
    if isinstance(shape, list):
        return {"type": "array", "items": _shape_schema(shape[0])}
    if isinstance(shape, str):
        return {"$ref": f"#/components/schemas/{shape}"}
    return dict(shape)


def _sse() -> dict[str, Any]:
    return {"description": "Server-Sent Events: `metadata` first, then one event per stream "
                           "mode chunk", "content": {"text/event-stream": {"schema": {"type": "string"}}}}


def _special(path: str) -> dict[str, Any] | None:
    if path == "/metrics":
        return {"description": "Prometheus text; JSON with ?format=json", "content": {
            "text/plain": {"schema": {"type": "string"}},
            "application/json": {"schema": {"type": "object"}}}}
    if path == "/docs":
        return {"description": "The interactive reference", "content": {
            "text/html": {"schema": {"type": "string"}}}}
    return None


def _response_records() -> set[str]:
    found: set[str] = set()
    for shape in _RESPONSES.values():
        inner = shape[0] if isinstance(shape, list) else shape
        if isinstance(inner, str):
            found.add(inner)
    return found


def _components(structs: dict[str, type[msgspec.Struct]]) -> dict[str, Any]:
    if not structs:
        return {}
    ordered = [structs[k] for k in sorted(structs)]
    _, components = msgspec.json.schema_components(
        ordered, ref_template="#/components/schemas/{name}"
    )
    return dict(sorted(components.items()))


# -- the reference page ------------------------------------------------------------------------

# Files of the bundled Swagger UI served under /docs/, with their content types. Only these:
# the package's own index.html would point at a demo document on the internet.
DOCS_ASSETS = {
    "swagger-ui.css": "text/css; charset=utf-8",
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "favicon-32x32.png": "image/png",
    "favicon-16x16.png": "image/png",
}
INIT_JS = """\
window.addEventListener("load", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.spec,
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: true,
    persistAuthorization: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout"
  });
});
"""

_PAGE = """\
<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>graphrun Agent Server API</title>
  <link rel="stylesheet" href="{root}/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="{root}/docs/favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="{root}/docs/favicon-16x16.png" sizes="16x16">
  <style>body {{ margin: 0; background: #fafafa; }}</style>
</head>
<body>
  <div id="swagger-ui" data-spec="{root}/openapi.json"></div>
  <script src="{root}/docs/swagger-ui-bundle.js"></script>
  <script src="{root}/docs/init.js"></script>
</body>
</html>
"""


def docs_html(root_path: str = "") -> str:
    """The `/docs` page; every URL in it is on this server (under `root_path` when proxied)."""
    return _PAGE.format(root=_html_attr(root_path.rstrip("/")))


def _html_attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def docs_asset_response(name: str) -> Response | None:
    """The response for `/docs/<name>` (both apps serve the same files), or None if unknown."""
    if name == "init.js":
        return Response(INIT_JS, media_type="text/javascript; charset=utf-8",
                        headers={"Cache-Control": _ASSET_CACHE})
    path = docs_asset_path(name)
    if path is None:
        return None
    return FileResponse(path, media_type=DOCS_ASSETS[name], headers={"Cache-Control": _ASSET_CACHE})


def docs_asset_path(name: str) -> Path | None:
    """The local file of a `/docs/<name>` asset, or None for names we do not serve."""
    if name not in DOCS_ASSETS:
        return None
    directory = _swagger_dir()
    path = directory / name if directory is not None else None
    return path if path is not None and path.is_file() else None


def _swagger_dir() -> Path | None:
    # swagger-ui-bundle-v2 installs the `swagger_ui_bundle` module; the newest vendored
    # Swagger UI it holds is the one we serve (5.x reads OpenAPI 3.1).
    spec = importlib.util.find_spec("swagger_ui_bundle")
    if spec is None or not spec.submodule_search_locations:
        return None
    vendor = Path(next(iter(spec.submodule_search_locations))) / "vendor"
    found = sorted(vendor.glob("swagger-ui-*"), key=lambda p: _version_key(p.name))
    return found[-1] if found else None


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", name))

