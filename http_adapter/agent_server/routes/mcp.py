"""MCP (Model Context Protocol) over streamable HTTP at `POST /mcp` (SPEC §3): stateless, JSON.

Every assistant is one tool: its name is the assistant's name (or graph id) made valid for
MCP tool names (`[A-Za-z0-9._-]{1,128}`; a later assistant with the same name gets its id's
first 8 characters appended), its `inputSchema` the graph's input JSON schema. `tools/call` is
a stateless wait run of that assistant with the arguments as input; the result is the output
state as JSON text content, or `isError: true` with the error for a run that failed. With
custom auth (`http_adapter.auth`) the tools are the assistants the user's `assistants.search`
filter shows, and a call is authorized as a stateless run (`threads.create_run`).

Transport rules as in the MCP spec (revisions 2024-11-05 .. 2025-11-25, the `initialize`
handshake ones): notifications and responses -> 202 with no body; requests -> one
`application/json` JSON-RPC response (errors such as an unknown method or tool travel with
200); a body that is not JSON-RPC -> 400 with a JSON-RPC error; an `MCP-Protocol-Version`
header this server does not speak -> 400. No sessions and no server-initiated messages, so
`GET` (the SSE stream) and `DELETE` (session end) answer 405, as the official SDK's server
does without a session. A `server/discover` probe (2026-07-28 clients) gets -32601, which
makes those clients fall back to `initialize`.
"""

from __future__ import annotations

import re
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import anyio
import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..authz import authorize, visible
from ..encode import dumps
from ..errors import ServerError
from ..executor import Outcome
from ..schemas import Assistant, RunCreate
from ..state import ServerState
from . import _jsonrpc as rpc
from ._common import json_response, server
from .assistants import _json_schema
from .runs import _authorize, _create

__all__ = ["routes"]

# Handshake-era protocol revisions this server speaks, newest first (the counter-offer).
PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
_TOOL_NAME = re.compile(r"[^A-Za-z0-9._-]")
_INSTRUCTIONS = (
    "Each tool runs one assistant of this LangGraph-compatible agent server (graphrun) as a "
    "stateless run and returns the graph's output state as JSON."
)


def _server_version() -> str:
    try:
        return version("graphrun")
    except PackageNotFoundError:
        return "0.0.0"


_SERVER_INFO = {"name": "graphrun", "version": _server_version()}


class _CallParams(msgspec.Struct, kw_only=True):
    name: str
    arguments: dict[str, Any] | None = None


# -- tools ----------------------------------------------------------------------------------------


def _tool_name(name: str) -> str:
    return _TOOL_NAME.sub("_", name)[:128] or "assistant"


async def _tools(request: Request, st: ServerState) -> dict[str, Assistant]:
    """Tool name -> assistant, oldest assistant first (so built-in names stay stable); with
    custom auth, only the assistants the user's `assistants.search` filter lets them see."""
    value: dict[str, Any] = {"graph_id": None, "metadata": {}, "limit": 0, "offset": 0}
    filters = await authorize(request, "assistants", "search", value)
    named: dict[str, Assistant] = {}
    assistants = sorted((a for a in await st.records.search_assistants()
                         if visible(a.metadata, filters)),
                        key=lambda a: (a.created_at, a.assistant_id))
    for assistant in assistants:
        if assistant.graph_id not in st.settings.graphs:  # its graph left the config
            continue
        name = _tool_name(assistant.name or assistant.graph_id)
        if name in named:
            name = f"{name[:119]}-{assistant.assistant_id[:8]}"
        named[name] = assistant
    return named


async def _tool(st: ServerState, name: str, assistant: Assistant) -> dict[str, Any]:
    graph = await st.graph(assistant.graph_id)
    schema = _json_schema(graph.builder.input_schema, f"{assistant.graph_id}_input")
    title = assistant.name or assistant.graph_id
    return {
        "name": name,
        "title": title,
        "description": assistant.description or (
            f"Run the '{assistant.graph_id}' graph (assistant '{title}', "
            f"{assistant.assistant_id}) with the arguments as its input; returns its output "
            "state as JSON."
        ),
        "inputSchema": schema or {"type": "object", "properties": {}},
    }


def _content(text: str, is_error: bool) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def _tool_result(outcome: Outcome | None) -> dict[str, Any]:
    if outcome is None:
        return _content("The run ended without a result", True)
    if outcome.status == "success":
        values = outcome.values
        if outcome.interrupts:  # as `/runs/wait` answers an interrupted run
            values = {**(values if isinstance(values, dict) else {}),
                      "__interrupt__": outcome.interrupts}
        return _content(dumps(values).decode(), False)
    error = outcome.error or {}
    if outcome.status == "interrupted":
        return _content("The run was cancelled", True)
    return _content(f"{error.get('error', 'Error')}: {error.get('message', '')}", True)


# -- methods --------------------------------------------------------------------------------------


async def initialize(request: Request, st: ServerState, call: rpc.Call) -> Any:
    requested = call.params.get("protocolVersion") if isinstance(call.params, dict) else None
    return {
        "protocolVersion": requested if requested in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0],
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": _SERVER_INFO,
        "instructions": _INSTRUCTIONS,
    }


async def ping(request: Request, st: ServerState, call: rpc.Call) -> Any:
    return {}


async def tools_list(request: Request, st: ServerState, call: rpc.Call) -> Any:
    tools = await _tools(request, st)
    return {"tools": [await _tool(st, name, a) for name, a in tools.items()]}


async def tools_call(request: Request, st: ServerState, call: rpc.Call) -> Any:
    params = rpc.params(call, _CallParams)
    assistant = (await _tools(request, st)).get(params.name)
    if assistant is None:
        raise rpc.RpcError(rpc.INVALID_PARAMS, f"Unknown tool: {params.name}")
    payload = RunCreate(assistant_id=assistant.assistant_id, input=params.arguments or {})
    try:  # custom auth: the threads.create_run handler, as for a stateless run
        payload, auth = await _authorize(request, payload, None)
        run = await _create(st, payload, None, auth=auth)
    except ServerError as exc:
        return _content(str(exc.detail), True)
    try:
        outcome = await st.queue.wait(run.run_id)
    except anyio.get_cancelled_exc_class():  # the client went away: stop its run too
        with anyio.CancelScope(shield=True):
            await st.queue.cancel(run.run_id, "interrupt")
        raise
    return _tool_result(outcome)


_METHODS = {
    "initialize": initialize,
    "ping": ping,
    "tools/list": tools_list,
    "tools/call": tools_call,
}


# -- transport ------------------------------------------------------------------------------------


def _error(status: int, exc: rpc.RpcError, headers: dict[str, str] | None = None) -> Response:
    return json_response(rpc.error(None, exc), status=status, headers=headers)


def _bad_headers(request: Request) -> Response | None:
    """The streamable-HTTP header rules (415, 406, 400 for an unknown protocol revision)."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":
        return _error(415, rpc.RpcError(
            rpc.INVALID_REQUEST, "Unsupported Media Type: Content-Type must be application/json"))
    accept = request.headers.get("accept", "*/*").lower()
    if not any(t in accept for t in ("application/json", "*/*", "application/*")):
        return _error(406, rpc.RpcError(
            rpc.INVALID_REQUEST, "Not Acceptable: Client must accept application/json"))
    revision = request.headers.get("mcp-protocol-version")
    if revision is not None and revision not in PROTOCOL_VERSIONS:
        return _error(400, rpc.RpcError(
            rpc.INVALID_REQUEST,
            f"Bad Request: Unsupported protocol version: {revision} "
            f"(supported: {', '.join(PROTOCOL_VERSIONS)})"))
    return None


async def _answer(request: Request, st: ServerState, message: Any) -> dict[str, Any] | None:
    """The response to one message; None for a notification or a client's response.
    Raises RpcError(INVALID_REQUEST) for a message that is not JSON-RPC."""
    if isinstance(message, dict) and "method" not in message and (
        "result" in message or "error" in message
    ):
        return None  # this server sends no requests, so there is nothing to match it with
    call = rpc.call_of(message)
    if call.is_notification:
        return None
    try:
        handler = _METHODS.get(call.method)
        if handler is None:
            raise rpc.RpcError(rpc.METHOD_NOT_FOUND, f"Method not found: {call.method}")
        return rpc.result(call.id, await handler(request, st, call))
    except rpc.RpcError as exc:
        return rpc.error(call.id, exc)


async def post_mcp(request: Request) -> Response:
    problem = _bad_headers(request)
    if problem is not None:
        return problem
    st = server(request)
    try:
        message = rpc.decode(await request.body())
        if not isinstance(message, list):
            reply = await _answer(request, st, message)
            return Response(status_code=202) if reply is None else json_response(reply)
        if not message:
            raise rpc.RpcError(rpc.INVALID_REQUEST, "Invalid Request: empty batch")
    except rpc.RpcError as exc:
        return _error(400, exc)
    replies = []  # a batch (revisions up to 2025-03-26)
    for item in message:
        try:
            reply = await _answer(request, st, item)
        except rpc.RpcError as exc:
            reply = rpc.error(None, exc)
        if reply is not None:
            replies.append(reply)
    return json_response(replies) if replies else Response(status_code=202)


async def not_allowed(request: Request) -> Response:
    """No SSE stream (GET) and no sessions to end (DELETE): 405, as the MCP spec allows."""
    return _error(405, rpc.RpcError(rpc.INVALID_REQUEST, "Method Not Allowed"),
                  headers={"Allow": "POST"})


routes = [
    Route(path, endpoint, methods=methods)
    for path in ("/mcp", "/mcp/")  # the LangGraph server serves `/mcp/`
    for endpoint, methods in ((post_mcp, ["POST"]), (not_allowed, ["GET", "DELETE"]))
]
