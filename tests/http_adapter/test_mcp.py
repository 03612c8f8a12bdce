"""MCP at `/mcp` (SPEC §3) through the official `mcp` Python SDK client, plus the raw wire.

The SDK's streamable-HTTP transport and `ClientSession` (initialize handshake), and its
high-level `Client` (which probes `server/discover` first and falls back to `initialize`);
raw httpx pins the transport rules: 202 for notifications, 405 for GET/DELETE, 400/406/415.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from .conftest import Served
from .graphs import GRAPHS, shout_graph

# Issue 19 §11: every test here runs on SQLite and on PostgreSQL + Redis (conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgres")


@pytest.fixture
def served(serve_app: Callable[..., Served]) -> Served:
    return serve_app(graphs={**GRAPHS, "shout": shout_graph})


@pytest.fixture
async def session(served: Served) -> AsyncIterator[ClientSession]:
    async with (
        streamable_http_client(f"{served.url}/mcp") as (read, write),
        ClientSession(read, write) as opened,
    ):
        yield opened


@pytest.fixture
def http(served: Served) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served.url, timeout=10) as client:
        yield client


def _json(result: Any) -> Any:
    (content,) = result.content
    assert content.type == "text"
    return json.loads(content.text)


# -- the official client --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_initialize_ping_and_list_tools(session: ClientSession) -> None:
    result = await session.initialize()
    assert result.protocol_version == "2025-11-25"
    assert result.capabilities.tools is not None
    assert result.server_info.name == "graphrun" and result.server_info.version
    await session.send_ping()

    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(tools) == {"agent", "chat", "shout"}
    for tool in tools.values():
        assert tool.input_schema["type"] == "object" and tool.description
    assert set(tools["agent"].input_schema["properties"]) == {
        "x", "log", "ask", "fail", "sleep", "answer"}
    assert tools["agent"].input_schema["properties"]["x"]["type"] == "integer"
    assert set(tools["shout"].input_schema["properties"]) == {"messages"}


@pytest.mark.anyio
async def test_call_tool_runs_a_stateless_wait_run(session: ClientSession,
                                                   http: httpx.Client) -> None:
    await session.initialize()
    result = await session.call_tool("agent", {"x": 1})
    assert result.is_error is False
    output = _json(result)
    assert output["x"] == 2 and output["log"][:3] == ["a", "b", "c"]

    chat = await session.call_tool("shout", {"messages": [{"role": "user", "content": "hi"}]})
    assert _json(chat)["messages"][-1]["content"] == "HI (#1)"
    asked = _json(await session.call_tool("agent", {"ask": True}))
    assert asked["__interrupt__"][0]["value"] == {"question": "continue?"}
    assert http.post("/threads/search", json={}).json() == []  # stateless: no threads kept


@pytest.mark.anyio
async def test_call_tool_errors(session: ClientSession) -> None:
    await session.initialize()
    failed = await session.call_tool("agent", {"fail": True})
    assert failed.is_error is True
    (content,) = failed.content
    assert content.text == "ValueError: boom from c"
    with pytest.raises(MCPError) as unknown:
        await session.call_tool("nope", {})
    assert unknown.value.error.code == -32602 and "Unknown tool: nope" in unknown.value.error.message


@pytest.mark.anyio
async def test_tool_names_follow_mcp_rules_and_stay_unique(served: Served,
                                                           http: httpx.Client) -> None:
    named = http.post("/assistants", json={"graph_id": "agent", "name": "my agent/v2!"}).json()
    twin = http.post("/assistants", json={"graph_id": "shout", "name": "agent",
                                          "description": "Shouts back."}).json()
    async with Client(f"{served.url}/mcp") as client:  # probes server/discover, then initialize
        assert client.session.initialize_result is not None
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        twin_name = f"agent-{twin['assistant_id'][:8]}"
        assert set(tools) == {"agent", "chat", "shout", "my_agent_v2_", twin_name}
        assert tools["my_agent_v2_"].title == "my agent/v2!"
        assert tools[twin_name].description == "Shouts back."
        assert _json(await client.call_tool("my_agent_v2_", {"x": 5}))["x"] == 6
        shouted = await client.call_tool(twin_name, {"messages": ["yo"]})
        assert _json(shouted)["messages"][-1]["content"] == "YO (#1)"
    assert named["assistant_id"]


@pytest.mark.anyio
async def test_api_key_applies_to_mcp(serve_app: Callable[..., Served]) -> None:
    served = serve_app(graphs={"shout": shout_graph}, api_keys=frozenset({"k"}))
    async with httpx2.AsyncClient(headers={"X-Api-Key": "k"}, timeout=10) as keyed:
        assert (await keyed.post(f"{served.url}/mcp", json={}, headers={"X-Api-Key": ""})
                ).status_code == 401
        async with (
            streamable_http_client(f"{served.url}/mcp", http_client=keyed) as streams,
            ClientSession(*streams) as session,
        ):
            await session.initialize()
            assert [t.name for t in (await session.list_tools()).tools] == ["shout"]


# -- the raw wire ---------------------------------------------------------------------------------


def _rpc(method: str, params: Any = None, request_id: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if request_id is not None:
        message["id"] = request_id
    return message


def test_notifications_and_responses_get_202(http: httpx.Client) -> None:
    for message in (_rpc("notifications/initialized", request_id=None),
                    _rpc("notifications/cancelled", {"requestId": 7}, request_id=None),
                    {"jsonrpc": "2.0", "id": 3, "result": {}}):
        response = http.post("/mcp", json=message)
        assert (response.status_code, response.content) == (202, b"")


def test_initialize_echoes_a_supported_version(http: httpx.Client) -> None:
    for asked, answered in (("2025-03-26", "2025-03-26"), ("2024-11-05", "2024-11-05"),
                            ("1999-01-01", "2025-11-25")):
        response = http.post("/mcp", json=_rpc("initialize", {
            "protocolVersion": asked, "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}))
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        result = response.json()["result"]
        assert result["protocolVersion"] == answered
        assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert http.post("/mcp/", json=_rpc("ping", request_id="p")).json() == {
        "jsonrpc": "2.0", "id": "p", "result": {}}  # the LangGraph server's `/mcp/` path


def test_get_and_delete_are_not_allowed(http: httpx.Client) -> None:
    for method in ("GET", "DELETE"):
        response = http.request(method, "/mcp", headers={"Accept": "text/event-stream"})
        assert response.status_code == 405 and response.headers["allow"] == "POST"
        assert response.json()["error"]["message"] == "Method Not Allowed"


@pytest.mark.parametrize(("kwargs", "status", "code"), [
    ({"content": b"{oops", "headers": {"Content-Type": "application/json"}}, 400, -32700),
    ({"json": {"id": 1, "method": "ping"}}, 400, -32600),
    ({"json": []}, 400, -32600),
    ({"json": _rpc("resources/list")}, 200, -32601),
    ({"json": _rpc("server/discover", {})}, 200, -32601),
    ({"json": _rpc("tools/call", {"arguments": {}})}, 200, -32602),
    ({"json": _rpc("ping"), "headers": {"MCP-Protocol-Version": "2099-01-01"}}, 400, -32600),
    ({"content": b"{}", "headers": {"Content-Type": "text/plain"}}, 415, -32600),
    ({"json": _rpc("ping"), "headers": {"Accept": "text/html"}}, 406, -32600),
])
def test_errors(http: httpx.Client, kwargs: dict[str, Any], status: int, code: int) -> None:
    response = http.post("/mcp", **kwargs)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code


def test_batch_answers_its_requests(http: httpx.Client) -> None:
    response = http.post("/mcp", json=[_rpc("ping", request_id=1),
                                       _rpc("notifications/initialized", request_id=None),
                                       _rpc("nope", request_id=2)])
    assert [(r["id"], "result" in r) for r in response.json()] == [(1, True), (2, False)]
    only_notes = http.post("/mcp", json=[_rpc("notifications/initialized", request_id=None)])
    assert only_notes.status_code == 202
