"""Assistants over HTTP: the official langgraph-sdk client against a real server, plus raw httpx
for the wire details observed on the LangGraph Agent Server (shared_notes/server_facts.md)."""

from __future__ import annotations

import operator
import uuid
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

import httpx
import pytest
from langgraph_sdk import get_client, get_sync_client
from langgraph_sdk.errors import ConflictError, NotFoundError

from engine import END, START, StateGraph

from .conftest import Served

# Issue 19 §11: every test here runs on SQLite and on PostgreSQL + Redis (conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgres")

AGENT_ID = "fe096781-5601-53d2-b2f6-0d3403f7e9ca"  # uuid5(NS, "agent"), as the real server
CHAT_ID = "eb6db400-e3c8-5d06-a834-015cb89efe69"
ASSISTANT_KEYS = ["assistant_id", "graph_id", "config", "context", "metadata", "name",
                  "created_at", "updated_at", "version", "description"]
VERSION_KEYS = ["assistant_id", "version", "graph_id", "config", "context", "metadata",
                "created_at", "name", "description"]
BOTH = ("Cannot specify both configurable and context. Prefer setting context alone. Context "
        "was introduced in LangGraph 0.6.0 and is the long term planned replacement for "
        "configurable.")


def _http(server: Served) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=10)


def _count(http: httpx.Client) -> int:
    response = http.post("/assistants/count", json={})
    assert response.status_code == 200
    return int(response.json())


# -- built-in assistants, get, search, count ----------------------------------------------------------


def test_builtin_assistants_are_the_configured_graphs(server: Served) -> None:
    client = get_sync_client(url=server.url)
    found = client.assistants.search()
    assert {a["assistant_id"] for a in found} == {AGENT_ID, CHAT_ID}
    assert [a["graph_id"] for a in found] == ["chat", "agent"]  # newest first
    agent = client.assistants.get(AGENT_ID)
    assert list(agent) == ASSISTANT_KEYS
    assert agent["config"] == {} and agent["context"] == {}
    assert agent["metadata"] == {"created_by": "system"}
    assert (agent["name"], agent["version"], agent["description"]) == ("agent", 1, None)
    assert agent["created_at"] == agent["updated_at"]
    assert agent["created_at"].endswith("+00:00") and "." in agent["created_at"]
    assert client.assistants.count() == 2
    assert client.assistants.count(graph_id="chat") == 1


def test_wire_content_type_and_status_codes(server: Served) -> None:
    with _http(server) as http:
        created = http.post("/assistants", json={"graph_id": "agent"})
        assert created.status_code == 200  # not 201: the real server answers 200
        assert created.headers["content-type"] == "application/json"
        assert b": " not in created.content and b", " not in created.content  # compact
        deleted = http.delete(f"/assistants/{created.json()['assistant_id']}")
        assert deleted.status_code == 204
        assert deleted.content == b"" and "content-type" not in deleted.headers


# -- create ---------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_create_mirrors_configurable_and_context(server: Served) -> None:
    client = get_client(url=server.url)
    mine = await client.assistants.create(
        "agent", config={"configurable": {"k": 1}}, metadata={"m": 1}, name="mine",
        description="d1",
    )
    assert list(mine) == ASSISTANT_KEYS
    assert mine["config"] == {"configurable": {"k": 1}} and mine["context"] == {"k": 1}
    assert (mine["metadata"], mine["name"], mine["description"]) == ({"m": 1}, "mine", "d1")
    assert mine["version"] == 1 and mine["created_at"] == mine["updated_at"]
    assert uuid.UUID(mine["assistant_id"]).version == 4

    by_context = await client.assistants.create("agent", context={"c": 1})
    assert by_context["config"] == {"configurable": {"c": 1}}
    assert by_context["context"] == {"c": 1}
    assert by_context["metadata"] == {} and by_context["name"] == "Untitled"
    assert by_context["description"] is None
    assert await client.assistants.get(by_context["assistant_id"]) == by_context


@pytest.mark.anyio
async def test_create_with_id_conflict_and_if_exists(server: Served) -> None:
    client = get_client(url=server.url)
    assistant_id = str(uuid.uuid4())
    first = await client.assistants.create("agent", assistant_id=assistant_id, name="one")
    with pytest.raises(ConflictError):
        await client.assistants.create("agent", assistant_id=assistant_id, name="two")
    again = await client.assistants.create(
        "chat", assistant_id=assistant_id, if_exists="do_nothing", name="three"
    )
    assert again == first
    with _http(server) as http:
        conflict = http.post("/assistants", json={"graph_id": "agent",
                                                  "assistant_id": assistant_id})
        assert conflict.status_code == 409
        assert conflict.json() == {"detail": f"Assistant {assistant_id} already exists"}
        assert _count(http) == 3


def test_create_bad_input_is_a_4xx_and_creates_nothing(server: Served) -> None:
    with _http(server) as http:
        cases: list[tuple[Any, int, str | None]] = [
            ({"graph_id": "nope"}, 404,
             "Graph 'nope' not found. Expected one of: ['agent', 'chat']"),
            ({"graph_id": "agent", "context": {"a": 1}, "config": {"configurable": {"b": 2}}},
             400, BOTH),
            ({"graph_id": "agent", "assistant_id": "abc"}, 422,
             "Invalid assistant ID: must be a UUID"),
            ({"graph_id": 5}, 422, None),
            ({}, 422, None),
            ({"graph_id": "agent", "metadata": "x"}, 422, None),
            ({"graph_id": "agent", "config": []}, 422, None),
            ({"graph_id": "agent", "if_exists": "bogus"}, 422, None),
            ([1, 2], 422, None),
            (None, 422, None),
        ]
        for payload, status, detail in cases:
            response = http.post("/assistants", json=payload)
            assert response.status_code == status, (payload, response.text)
            assert isinstance(response.json()["detail"], str) and response.json()["detail"]
            if detail is not None:
                assert response.json() == {"detail": detail}
        for raw in (b"{not json", b"", b"{", b"null"):
            response = http.post("/assistants", content=raw,
                                 headers={"content-type": "application/json"})
            assert response.status_code == 422, raw
            assert response.json()["detail"]
        assert _count(http) == 2


# -- patch, versions, latest ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_patch_makes_versions_and_latest_switches(server: Served) -> None:
    client = get_client(url=server.url)
    created = await client.assistants.create(
        "agent", config={"configurable": {"k": 1}}, metadata={"m": 1}, name="mine",
        description="d1",
    )
    aid = created["assistant_id"]

    v2 = await client.assistants.update(aid, metadata={"m2": 2}, name="mine2")
    assert v2["version"] == 2 and v2["name"] == "mine2"
    assert v2["metadata"] == {"m": 1, "m2": 2}  # merged
    assert v2["created_at"] == created["created_at"]
    assert v2["updated_at"] > created["updated_at"]

    v3 = await client.assistants.update(aid, config={"tags": ["t"]})
    assert v3["version"] == 3
    assert v3["config"] == {"tags": ["t"]}  # replaced: configurable gone
    assert v3["context"] == {"k": 1}  # context kept
    assert v3["description"] == "d1"

    versions = await client.assistants.get_versions(aid)
    assert [v["version"] for v in versions] == [3, 2, 1]
    assert all(list(v) == VERSION_KEYS for v in versions)
    assert versions[0]["created_at"] == v3["updated_at"]
    assert versions[2]["created_at"] == created["created_at"]
    assert versions[2]["config"] == {"configurable": {"k": 1}}
    assert [v["version"] for v in await client.assistants.get_versions(aid, limit=1)] == [3]
    assert [v["version"] for v in await client.assistants.get_versions(aid, offset=1)] == [2, 1]
    filtered = await client.assistants.get_versions(aid, metadata={"m2": 2})
    assert [v["version"] for v in filtered] == [3, 2]

    latest = await client.assistants.set_latest(aid, 1)
    assert latest["version"] == 1 and latest["name"] == "mine"
    assert latest["config"] == {"configurable": {"k": 1}} and latest["metadata"] == {"m": 1}
    assert latest["created_at"] == created["created_at"]
    assert latest["updated_at"] > v3["updated_at"]
    assert await client.assistants.get(aid) == latest

    v4 = await client.assistants.update(aid, metadata={"after": True})
    assert v4["version"] == 4 and v4["metadata"] == {"m": 1, "after": True}

    with _http(server) as http:
        raw = http.post(f"/assistants/{aid}/versions", json={})
        assert raw.status_code == 200
        assert "x-pagination-total" not in raw.headers and "x-pagination-next" not in raw.headers
        missing = http.post(f"/assistants/{aid}/latest", json={"version": 99})
        assert missing.status_code == 404
        assert missing.json() == {"detail": f"Version 99 not found for assistant {aid}"}
        bad = http.post(f"/assistants/{aid}/latest", json={"version": "one"})
        assert bad.status_code == 422
        assert http.post(f"/assistants/{aid}/versions", json={"limit": 0}).status_code == 422


def test_patch_context_mirrors_into_config_and_bad_patches(server: Served) -> None:
    client = get_sync_client(url=server.url)
    created = client.assistants.create("agent", config={"tags": ["x"]})
    aid = created["assistant_id"]
    patched = client.assistants.update(aid, context={"model": "m"})
    assert patched["context"] == {"model": "m"}
    assert patched["config"] == {"tags": ["x"], "configurable": {"model": "m"}}
    by_config = client.assistants.update(aid, config={"configurable": {"model": "n"}})
    assert by_config["context"] == {"model": "n"}
    with _http(server) as http:
        both = http.patch(f"/assistants/{aid}", json={"context": {"a": 1},
                                                       "config": {"configurable": {"b": 2}}})
        assert both.status_code == 400 and both.json() == {"detail": BOTH}
        assert http.patch(f"/assistants/{aid}", json={"metadata": 5}).status_code == 422
        graph = http.patch(f"/assistants/{aid}", json={"graph_id": "nope"})
        assert graph.status_code == 404
        assert graph.json()["detail"].startswith("Graph 'nope' not found")
        versions = http.post(f"/assistants/{aid}/versions", json={}).json()
        assert [v["version"] for v in versions] == [3, 2, 1]  # failed patches made none


# -- delete and unknown ids -----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_delete(server: Served) -> None:
    client = get_client(url=server.url)
    created = await client.assistants.create("agent", name="gone")
    aid = created["assistant_id"]
    await client.assistants.update(aid, name="gone2")
    assert await client.assistants.delete(aid) is None
    with pytest.raises(NotFoundError):
        await client.assistants.get(aid)
    with _http(server) as http:
        assert http.get(f"/assistants/{aid}").json() == {"detail": "Not Found"}
        again = http.delete(f"/assistants/{aid}")
        assert again.status_code == 404
        assert again.json() == {"detail": f"Assistant with ID {aid} not found"}
        versions = http.post(f"/assistants/{aid}/versions", json={})
        assert versions.status_code == 404
        # built-in assistants can be deleted too (the next start re-creates them)
        assert http.delete(f"/assistants/{CHAT_ID}").status_code == 204
        assert _count(http) == 1


def test_unknown_ids_get_the_real_servers_404_texts(server: Served) -> None:
    aid = str(uuid.uuid4())
    with _http(server) as http:
        generic = [http.get(f"/assistants/{aid}"), http.get(f"/assistants/{aid}/graph"),
                   http.get(f"/assistants/{aid}/schemas"),
                   http.get(f"/assistants/{aid}/subgraphs"),
                   http.get(f"/assistants/{aid}/subgraphs/sub")]
        for response in generic:
            assert response.status_code == 404
            assert response.json() == {"detail": "Not Found"}
        named = [http.patch(f"/assistants/{aid}", json={"metadata": {}}),
                 http.post(f"/assistants/{aid}/versions", json={}),
                 http.post(f"/assistants/{aid}/latest", json={"version": 1})]
        for response in named:
            assert response.status_code == 404
            assert response.json() == {"detail": f"Assistant {aid} not found"}
        deleted = http.delete(f"/assistants/{aid}")
        assert deleted.json() == {"detail": f"Assistant with ID {aid} not found"}


def test_non_uuid_path_ids_are_422(server: Served) -> None:
    expected = {"detail": "Invalid assistant ID: must be a UUID"}
    with _http(server) as http:
        for method, path in [("GET", "/assistants/agent"), ("GET", "/assistants/abc/graph"),
                             ("GET", "/assistants/abc/schemas"),
                             ("GET", "/assistants/abc/subgraphs"),
                             ("DELETE", "/assistants/abc"), ("PATCH", "/assistants/abc"),
                             ("POST", "/assistants/abc/versions"),
                             ("POST", "/assistants/abc/latest"),
                             ("GET", "/assistants/search"), ("DELETE", "/assistants/search")]:
            response = http.request(method, path, json={} if method != "GET" else None)
            assert response.status_code == 422, (method, path)
            assert response.json() == expected
        assert http.get("/assistants").status_code == 405


# -- search ----------------------------------------------------------------------------------------


def _seed(client: Any) -> list[dict[str, Any]]:
    return [
        client.assistants.create("agent", name="alpha", metadata={"team": "a", "n": 1}),
        client.assistants.create("chat", name="Beta", metadata={"team": "b", "n": 2}),
        client.assistants.create("agent", name="gamma", metadata={"team": "a", "n": 3}),
    ]


def test_search_filters_sort_and_select(server: Served) -> None:
    client = get_sync_client(url=server.url)
    alpha, beta, gamma = _seed(client)
    ids = lambda found: [a["assistant_id"] for a in found]
    assert ids(client.assistants.search(limit=3)) == [
        gamma["assistant_id"], beta["assistant_id"], alpha["assistant_id"]
    ]
    assert ids(client.assistants.search(graph_id="chat")) == [beta["assistant_id"], CHAT_ID]
    assert ids(client.assistants.search(metadata={"team": "a"})) == [
        gamma["assistant_id"], alpha["assistant_id"]
    ]
    assert ids(client.assistants.search(name="BET")) == [beta["assistant_id"]]  # substring
    assert ids(client.assistants.search(name="a", graph_id="agent", metadata={"n": 1})) == [
        alpha["assistant_id"]
    ]
    by_name = client.assistants.search(sort_by="name", sort_order="asc")
    assert [a["name"] for a in by_name] == ["Beta", "agent", "alpha", "chat", "gamma"]
    oldest = client.assistants.search(sort_by="created_at", sort_order="asc", limit=2)
    assert ids(oldest) == [AGENT_ID, CHAT_ID]
    selected = client.assistants.search(select=["assistant_id", "name"], limit=2)
    assert [list(a) for a in selected] == [["assistant_id", "name"]] * 2
    assert client.assistants.count(metadata={"team": "a"}) == 2
    assert client.assistants.count(name="amm") == 1


def test_search_pagination_headers_as_observed(server: Served) -> None:
    """`X-Pagination-Total` is offset + page size on the last page, offset + limit + 1 while
    more remain; `X-Pagination-Next` is offset + limit when more remain."""
    client = get_sync_client(url=server.url)
    _seed(client)  # 5 assistants in all
    with _http(server) as http:

        def headers(**payload: Any) -> tuple[str | None, str | None, int]:
            response = http.post("/assistants/search", json=payload)
            assert response.status_code == 200
            return (response.headers.get("x-pagination-total"),
                    response.headers.get("x-pagination-next"), len(response.json()))

        assert headers() == ("5", None, 5)
        assert headers(limit=1) == ("2", "1", 1)
        assert headers(limit=2, offset=1) == ("4", "3", 2)
        assert headers(limit=2, offset=3) == ("5", None, 2)
        assert headers(limit=5) == ("5", None, 5)
        assert headers(limit=1, offset=4) == ("5", None, 1)
        assert headers(limit=2, offset=9) == ("9", None, 0)
        assert headers(graph_id="chat", limit=1) == ("2", "1", 1)
    paged = client.assistants.search(limit=2, offset=1, response_format="object")
    assert paged["next"] == "3" and len(paged["assistants"]) == 2


def test_search_bad_input_is_422(server: Served) -> None:
    with _http(server) as http:
        for payload in [{"limit": "x"}, {"limit": -1}, {"limit": 0}, {"limit": 100000},
                        {"offset": -1}, {"sort_by": "bogus"}, {"sort_order": "sideways"},
                        {"select": ["bogus"]}, {"metadata": 5}, [1, 2]]:
            response = http.post("/assistants/search", json=payload)
            assert response.status_code == 422, payload
            assert response.json()["detail"]
        bad = http.post("/assistants/search", content=b"{nope",
                        headers={"content-type": "application/json"})
        assert bad.status_code == 422
        assert http.post("/assistants/count", json={"graph_id": 5}).status_code == 422


# -- graph, schemas, subgraphs -----------------------------------------------------------------------


class _Flow(TypedDict, total=False):
    x: int
    log: Annotated[list, operator.add]


def _ended_agent() -> Any:
    """The observed project's `agent` shape, with explicit END edges (as it was written)."""
    sub = StateGraph(_Flow)
    sub.add_node("sub1", lambda s: {"log": ["sub1"]})
    sub.add_node("sub2", lambda s: {"log": ["sub2"]})
    sub.add_edge(START, "sub1")
    sub.add_edge("sub1", "sub2")
    sub.add_edge("sub2", END)
    outer = StateGraph(_Flow)
    for name in ("a", "b", "c"):
        outer.add_node(name, lambda s, n=name: {"log": [n]})
    outer.add_node("sub", sub.compile())
    outer.add_edge(START, "a")
    outer.add_edge("a", "b")
    outer.add_edge("b", "c")
    outer.add_edge("c", "sub")
    outer.add_edge("sub", END)
    return outer.compile()


class _In(TypedDict):
    question: str


class _Out(TypedDict):
    answer: str


class _Both(_In, _Out):
    pass


class _Ctx(TypedDict, total=False):
    model_name: str


def _routed() -> Any:
    graph = StateGraph(_Both, context_schema=_Ctx, input_schema=_In, output_schema=_Out)
    graph.add_node("think", lambda s: {"answer": s["question"]})
    graph.add_node("retry", lambda s: {})
    graph.add_edge(START, "think")
    graph.add_conditional_edges("think", lambda s: END, {"again": "retry", "done": END})
    graph.add_edge("retry", "think")
    return graph.compile()


@pytest.fixture
def shaped(serve_app: Callable[..., Served], tmp_path: Any) -> Served:
    return serve_app(graphs={"ended": _ended_agent(), "routed": _routed()},
                     data_dir=tmp_path / "shaped")


def _builtin(graph_id: str) -> str:
    return str(uuid.uuid5(uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8"), graph_id))


@pytest.mark.anyio
async def test_graph_json_matches_the_real_server(shaped: Served) -> None:
    client = get_client(url=shaped.url)
    drawn = await client.assistants.get_graph(_builtin("ended"))
    assert drawn == {
        "nodes": [
            {"id": "__start__", "type": "runnable", "data": {"name": "__start__"}},
            {"id": "a", "type": "runnable", "data": {"name": "a"}},
            {"id": "b", "type": "runnable", "data": {"name": "b"}},
            {"id": "c", "type": "runnable", "data": {"name": "c"}},
            {"id": "sub", "type": "runnable", "data": {"name": "sub"}},
            {"id": "__end__"},
        ],
        "edges": [
            {"source": "__start__", "target": "a"}, {"source": "a", "target": "b"},
            {"source": "b", "target": "c"}, {"source": "c", "target": "sub"},
            {"source": "sub", "target": "__end__"},
        ],
    }
    xray = await client.assistants.get_graph(_builtin("ended"), xray=True)
    assert xray == {
        "nodes": [
            {"id": "__start__", "type": "runnable", "data": {"name": "__start__"}},
            {"id": "a", "type": "runnable", "data": {"name": "a"}},
            {"id": "b", "type": "runnable", "data": {"name": "b"}},
            {"id": "c", "type": "runnable", "data": {"name": "c"}},
            {"id": "__end__"},
            {"id": "sub:sub1", "type": "runnable", "data": {"name": "sub:sub1"}},
            {"id": "sub:sub2", "type": "runnable", "data": {"name": "sub:sub2"}},
        ],
        "edges": [
            {"source": "__start__", "target": "a"}, {"source": "a", "target": "b"},
            {"source": "b", "target": "c"}, {"source": "c", "target": "sub:sub1"},
            {"source": "sub:sub2", "target": "__end__"},
            {"source": "sub:sub1", "target": "sub:sub2"},
        ],
    }
    assert await client.assistants.get_graph(_builtin("ended"), xray=1) == xray
    routed = await client.assistants.get_graph(_builtin("routed"))
    conditional = [e for e in routed["edges"] if e.get("conditional")]
    assert {(e["source"], e["target"]) for e in conditional} == {("think", "retry"),
                                                                ("think", "__end__")}
    assert all(e["conditional"] is True for e in conditional)
    assert {"source": "retry", "target": "think"} in routed["edges"]
    with httpx.Client(base_url=shaped.url) as http:
        bad = http.get(f"/assistants/{_builtin('ended')}/graph", params={"xray": "lots"})
        assert bad.status_code == 422


_AGENT_STATE_SCHEMA = {
    "properties": {
        "x": {"default": None, "title": "X", "type": "integer"},
        "log": {"default": None, "items": {}, "title": "Log", "type": "array"},
        "ask": {"default": None, "title": "Ask", "type": "boolean"},
        "fail": {"default": None, "title": "Fail", "type": "boolean"},
        "sleep": {"default": None, "title": "Sleep", "type": "number"},
        "answer": {"default": None, "title": "Answer", "type": "string"},
    },
    "title": "agent_state",
    "type": "object",
}
_SUB_STATE_SCHEMA = {
    "properties": {
        "x": {"default": None, "title": "X", "type": "integer"},
        "log": {"default": None, "items": {}, "title": "Log", "type": "array"},
    },
    "title": "LangGraphState",
    "type": "object",
}


@pytest.mark.anyio
async def test_schemas_and_subgraphs_as_observed(server: Served) -> None:
    client = get_client(url=server.url)
    schemas = await client.assistants.get_schemas(AGENT_ID)
    assert schemas == {
        "graph_id": "agent", "input_schema": None, "output_schema": None,
        "state_schema": _AGENT_STATE_SCHEMA, "config_schema": {}, "context_schema": None,
    }
    assert list(schemas["state_schema"]["properties"]["log"]) == [
        "default", "items", "title", "type"
    ]
    chat = await client.assistants.get_schemas(CHAT_ID)
    assert chat["state_schema"]["title"] == "chat_state"
    assert chat["state_schema"]["properties"]["messages"]["type"] == "array"

    expected = {"sub": {"input_schema": None, "output_schema": None,
                        "state_schema": _SUB_STATE_SCHEMA, "config_schema": {},
                        "context_schema": None}}
    assert await client.assistants.get_subgraphs(AGENT_ID) == expected
    assert await client.assistants.get_subgraphs(AGENT_ID, recurse=True) == expected
    assert await client.assistants.get_subgraphs(AGENT_ID, namespace="sub") == expected
    assert await client.assistants.get_subgraphs(AGENT_ID, namespace="nope") == {}
    assert await client.assistants.get_subgraphs(CHAT_ID) == {}


@pytest.mark.anyio
async def test_schemas_of_distinct_input_output_and_context(shaped: Served) -> None:
    client = get_client(url=shaped.url)
    schemas = await client.assistants.get_schemas(_builtin("routed"))
    assert schemas["graph_id"] == "routed"
    # issue 31 item 12, as recorded from `langgraph dev` (parity `wire_output_schema_assistant`):
    # a TypedDict is described by itself (pydantic's TypeAdapter): titled by its class, its
    # required keys required, no defaults; the context schema is the config schema too
    assert schemas["input_schema"]["title"] == "_In"
    assert list(schemas["input_schema"]["properties"]) == ["question"]
    assert schemas["input_schema"]["required"] == ["question"]
    assert schemas["output_schema"]["title"] == "_Out"
    assert list(schemas["output_schema"]["properties"]) == ["answer"]
    assert set(schemas["state_schema"]["properties"]) == {"question", "answer"}
    assert schemas["context_schema"]["properties"] == {
        "model_name": {"title": "Model Name", "type": "string"}
    }
    assert schemas["config_schema"] == schemas["context_schema"]
