"""Custom auth the LangGraph way against a real server: an auth.py loaded through langgraph.json
(`"auth": {"path": "./auth.py:auth"}`) with bearer tokens for two users, an owner filter on every
resource, a deny handler and a store handler that scopes namespaces; driven with langgraph-sdk
clients as alice and bob, who cannot see each other's threads, runs, assistants, crons or store
items (nor reach them through A2A or MCP). Plus the handler signatures, API keys next to custom
auth, and the `Auth` registry rules.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from http_adapter.agent_server import create_app
from http_adapter.agent_server.settings import Settings
from http_adapter.auth import Auth
from http_adapter.config import load_settings

from . import graphs as test_graphs
from .conftest import Served

# Issue 19 §11: every test here runs on SQLite and on PostgreSQL + Redis (conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgres")

AUTH_PY = '''
from http_adapter.auth import Auth

auth = Auth()

TOKENS = {
    "token-alice": {"identity": "alice", "permissions": ["write"], "org": "acme"},
    "token-bob": {"identity": "bob", "permissions": []},
}


@auth.authenticate
async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or token not in TOKENS:
        raise Auth.exceptions.HTTPException(status_code=401, detail="Invalid token")
    return TOKENS[token]


@auth.on
async def owner_only(ctx: Auth.types.AuthContext, value: dict) -> Auth.types.FilterType:
    return {"owner": ctx.user.identity}


@auth.on.assistants.delete
async def no_assistant_deletes(ctx: Auth.types.AuthContext,
                               value: Auth.types.on.assistants.delete.value) -> bool:
    return False


@auth.on.store
async def own_namespace(ctx: Auth.types.AuthContext, value: Auth.types.on.store.value) -> None:
    namespace = tuple(value["namespace"]) if value.get("namespace") else ()
    if not namespace or namespace[0] != ctx.user.identity:
        namespace = (ctx.user.identity, *namespace)
    value["namespace"] = namespace
'''

GRAPH_PY = '''
from typing import Any, TypedDict

from engine import START, StateGraph


class State(TypedDict, total=False):
    x: int
    user: Any


def whoami(state: State, config: dict) -> dict:
    user = config["configurable"].get("langgraph_auth_user")
    seen = None if user is None else {"identity": user.identity, "org": user.get("org")}
    return {"x": state.get("x", 0) + 1, "user": seen}


builder = StateGraph(State)
builder.add_node("whoami", whoami)
builder.add_edge(START, "whoami")
graph = builder.compile()
'''

NEVER = "0 0 1 1 *"  # a cron that will not fire during a test


def _project(root: Path) -> Path:
    (root / "auth.py").write_text(textwrap.dedent(AUTH_PY))
    (root / "graph.py").write_text(textwrap.dedent(GRAPH_PY))
    config = root / "langgraph.json"
    config.write_text(json.dumps({"graphs": {"agent": "./graph.py:graph"},
                                  "auth": {"path": "./auth.py:auth"}}))
    return config


@pytest.fixture
def served(tmp_path: Path, serve_app: Callable[..., Served]) -> Served:
    settings = load_settings(_project(tmp_path), in_memory=True)
    settings.heartbeat = 1.0
    return serve_app(settings)


def _client(served: Served, token: str | None) -> SyncLangGraphClient:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return get_sync_client(url=served.url, api_key=None, headers=headers)


@pytest.fixture
def alice(served: Served) -> Iterator[SyncLangGraphClient]:
    with _client(served, "token-alice") as client:
        yield client


@pytest.fixture
def bob(served: Served) -> Iterator[SyncLangGraphClient]:
    with _client(served, "token-bob") as client:
        yield client


def _status(call: Callable[[], Any]) -> int:
    with pytest.raises(httpx.HTTPStatusError) as caught:
        call()
    return caught.value.response.status_code


# -- authentication -------------------------------------------------------------------------------


def test_missing_or_bad_tokens_are_401_and_public_routes_stay_open(served: Served) -> None:
    with httpx.Client(base_url=served.url, timeout=10) as http:
        for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "token-alice"}):
            answer = http.post("/threads/search", json={}, headers=headers)
            assert answer.status_code == 401
            assert answer.json() == {"detail": "Invalid token"}
        assert http.get("/assistants/search").status_code == 401  # even an unknown route
        assert http.post("/store/namespaces", json={}).status_code == 401
        assert http.post("/runs/crons/search", json={}).status_code == 401
        assert http.get("/ok").json()["ok"] is True  # public; `services` vary by back end
        assert http.get("/info").status_code == 200
        assert http.get("/openapi.json").status_code == 200
        ok = http.post("/threads/search", json={},
                       headers={"authorization": "Bearer token-alice"})
        assert ok.status_code == 200 and ok.json() == []


# -- threads and runs -----------------------------------------------------------------------------


def test_threads_are_private_to_their_owner(alice: SyncLangGraphClient,
                                             bob: SyncLangGraphClient) -> None:
    mine = alice.threads.create(metadata={"topic": "a"})
    assert mine["metadata"] == {"topic": "a", "owner": "alice"}
    theirs = bob.threads.create()
    assert theirs["metadata"] == {"owner": "bob"}
    alice.threads.create(metadata={"topic": "b"})

    assert {t["thread_id"] for t in bob.threads.search()} == {theirs["thread_id"]}
    assert len(alice.threads.search()) == 2
    assert [t["metadata"]["topic"] for t in alice.threads.search(metadata={"topic": "a"})] == ["a"]
    assert bob.threads.search(metadata={"topic": "a"}) == []
    assert alice.threads.count() == 2 and bob.threads.count() == 1
    assert bob.threads.search(ids=[mine["thread_id"]]) == []

    tid = mine["thread_id"]
    assert alice.threads.get(tid)["thread_id"] == tid
    assert _status(lambda: bob.threads.get(tid)) == 404
    assert _status(lambda: bob.threads.update(tid, metadata={"owner": "bob"})) == 404
    assert _status(lambda: bob.threads.get_state(tid)) == 404
    assert _status(lambda: bob.threads.get_history(tid)) == 404
    assert _status(lambda: bob.threads.copy(tid)) == 409  # as for a missing source
    assert _status(lambda: bob.threads.delete(tid)) == 404
    assert _status(lambda: bob.threads.create(thread_id=tid, if_exists="do_nothing")) == 404
    assert bob.http.post("/threads/prune", json={"thread_ids": [tid]}) == {"pruned_count": 0}

    patched = alice.threads.update(tid, metadata={"owner": "bob", "topic": "c"})
    assert patched["metadata"] == {"topic": "c", "owner": "alice"}  # ownership kept
    copy = alice.threads.copy(tid)
    assert alice.threads.get(copy["thread_id"])["metadata"]["owner"] == "alice"
    alice.threads.delete(tid)
    assert _status(lambda: alice.threads.get(tid)) == 404


def test_runs_follow_their_thread(alice: SyncLangGraphClient, bob: SyncLangGraphClient) -> None:
    tid = alice.threads.create()["thread_id"]
    values = alice.runs.wait(tid, "agent", input={"x": 1})
    assert values == {"x": 2, "user": {"identity": "alice", "org": "acme"}}  # the graph's user
    run = alice.runs.list(tid)[0]
    conf = run["kwargs"]["config"]["configurable"]
    assert conf["langgraph_auth_user_id"] == "alice" and conf["user_id"] == "alice"
    assert conf["langgraph_auth_user"]["identity"] == "alice"
    assert conf["langgraph_auth_permissions"] == ["write"]
    assert alice.runs.get(tid, run["run_id"])["run_id"] == run["run_id"]

    assert _status(lambda: bob.runs.create(tid, "agent", input={"x": 1})) == 404
    assert _status(lambda: bob.runs.wait(tid, "agent", input={"x": 1})) == 404
    assert _status(lambda: list(bob.runs.stream(tid, "agent", input={"x": 1}))) == 404
    assert _status(lambda: bob.runs.list(tid)) == 404
    assert _status(lambda: bob.runs.get(tid, run["run_id"])) == 404
    assert _status(lambda: bob.runs.cancel(tid, run["run_id"])) == 404
    assert _status(lambda: bob.runs.delete(tid, run["run_id"])) == 404
    joined = bob.runs.join(tid, run["run_id"])
    assert joined == {"__error__": {"error": "HTTPException", "message": "404: Run not found"}}
    assert len(alice.runs.list(tid)) == 1  # nothing bob did reached alice's thread

    # A run creating its thread (if_not_exists) or a kept stateless run: the thread is bob's.
    fresh = "6f1c3f62-8f0e-4c8e-9d8a-2b0b7c1e0a11"
    bob.runs.wait(fresh, "agent", input={"x": 5}, if_not_exists="create")
    kept = bob.runs.wait(None, "agent", input={"x": 7}, on_completion="keep")
    assert kept["user"]["identity"] == "bob"
    assert {t["metadata"]["owner"] for t in bob.threads.search()} == {"bob"}
    assert bob.threads.count() == 2 and alice.threads.count() == 1
    assert _status(lambda: alice.threads.get(fresh)) == 404


def test_another_users_id_is_answered_as_get_answers_it(served: Served,
                                                         alice: SyncLangGraphClient) -> None:
    """Issue 26: creating a thread or an assistant with another user's id answered 409 "already
    exists", telling the caller it existed. Now it is GET's 404, same status and detail (the id
    stays unusable: ids are global, and the owner's record must not change); a copy of another
    user's thread answers as a copy of a missing one."""
    tid = alice.threads.create(metadata={"topic": "a"})["thread_id"]
    aid = alice.assistants.create("agent", name="a")["assistant_id"]
    missing = "00000000-0000-4000-8000-000000000000"
    with httpx.Client(base_url=served.url, timeout=10,
                      headers={"Authorization": "Bearer token-bob"}) as bob:
        for if_exists in ("raise", "do_nothing"):
            for create, got in (
                (bob.post("/threads", json={"thread_id": tid, "if_exists": if_exists}),
                 bob.get(f"/threads/{tid}")),
                (bob.post("/assistants", json={"assistant_id": aid, "graph_id": "agent",
                                                "if_exists": if_exists}),
                 bob.get(f"/assistants/{aid}")),
            ):
                assert create.status_code == got.status_code == 404
                assert create.json() == got.json()
        theirs, absent = bob.post(f"/threads/{tid}/copy"), bob.post(f"/threads/{missing}/copy")
        assert (theirs.status_code, theirs.json()) == (absent.status_code, absent.json())
    assert alice.threads.get(tid)["metadata"] == {"topic": "a", "owner": "alice"}
    assert alice.assistants.get(aid)["name"] == "a"
    # the owner still gets the usual answers
    assert _status(lambda: alice.threads.create(thread_id=tid)) == 409
    assert alice.threads.create(thread_id=tid, if_exists="do_nothing")["thread_id"] == tid
    assert _status(lambda: alice.assistants.create("agent", assistant_id=aid)) == 409


# -- assistants -----------------------------------------------------------------------------------


def test_assistants_are_private_and_deletes_are_denied(alice: SyncLangGraphClient,
                                                       bob: SyncLangGraphClient) -> None:
    mine = alice.assistants.create("agent", name="alice's", metadata={"team": "x"})
    assert mine["metadata"] == {"team": "x", "owner": "alice"}
    theirs = bob.assistants.create("agent", name="bob's")
    # Only their own: the built-in assistant (no owner) is hidden too, as with LangGraph.
    assert [a["assistant_id"] for a in alice.assistants.search()] == [mine["assistant_id"]]
    assert [a["assistant_id"] for a in bob.assistants.search()] == [theirs["assistant_id"]]
    assert alice.assistants.count() == 1 and bob.assistants.count() == 1

    aid = mine["assistant_id"]
    assert _status(lambda: bob.assistants.get(aid)) == 404
    assert _status(lambda: bob.assistants.get_graph(aid)) == 404
    assert _status(lambda: bob.assistants.get_schemas(aid)) == 404
    assert _status(lambda: bob.assistants.update(aid, name="mine now")) == 404
    assert _status(lambda: bob.assistants.get_versions(aid)) == 404
    assert _status(lambda: bob.assistants.set_latest(aid, 1)) == 404
    assert _status(lambda: bob.assistants.create("agent", assistant_id=aid,
                                                 if_exists="do_nothing")) == 404
    updated = alice.assistants.update(aid, name="renamed", metadata={"owner": "bob"})
    assert updated["name"] == "renamed" and updated["metadata"]["owner"] == "alice"

    with pytest.raises(httpx.HTTPStatusError) as caught:
        alice.assistants.delete(aid)  # @auth.on.assistants.delete wins over @auth.on
    assert caught.value.response.status_code == 403
    assert caught.value.response.json() == {"detail": "Forbidden"}
    assert alice.assistants.get(aid)["name"] == "renamed"
    # Runs may name an assistant by graph (LangGraph does not authorize the assistant).
    tid = alice.threads.create()["thread_id"]
    assert alice.runs.wait(tid, aid, input={"x": 0})["x"] == 1


# -- crons ----------------------------------------------------------------------------------------


def test_crons_are_private_to_their_owner(alice: SyncLangGraphClient,
                                           bob: SyncLangGraphClient) -> None:
    tid = alice.threads.create()["thread_id"]
    stateless = alice.crons.create("agent", schedule=NEVER, input={"x": 1})
    on_thread = alice.crons.create_for_thread(tid, "agent", schedule=NEVER, input={"x": 1})
    assert stateless["metadata"] == {"owner": "alice"} and stateless["user_id"] == "alice"
    assert on_thread["thread_id"] == tid
    theirs = bob.crons.create("agent", schedule=NEVER, metadata={"k": "v"})
    assert theirs["metadata"] == {"k": "v", "owner": "bob"}

    assert {c["cron_id"] for c in alice.crons.search()} == {stateless["cron_id"],
                                                           on_thread["cron_id"]}
    assert [c["cron_id"] for c in bob.crons.search()] == [theirs["cron_id"]]
    assert alice.crons.count() == 2 and bob.crons.count() == 1
    assert bob.crons.search(thread_id=tid) == []

    cid = stateless["cron_id"]
    assert _status(lambda: bob.http.get(f"/runs/crons/{cid}")) == 404
    assert _status(lambda: bob.crons.update(cid, schedule="* * * * *")) == 404
    assert _status(lambda: bob.crons.delete(cid)) == 404
    assert _status(lambda: bob.crons.create_for_thread(tid, "agent", schedule=NEVER)) == 404
    assert alice.http.get(f"/runs/crons/{cid}")["schedule"] == NEVER

    replaced = alice.crons.update(cid, metadata={"k": 1})
    assert replaced["metadata"] == {"k": 1, "owner": "alice"}  # still hers
    alice.crons.delete(cid)
    assert alice.crons.count() == 1


# -- store ----------------------------------------------------------------------------------------


def test_store_items_are_scoped_to_the_users_namespace(alice: SyncLangGraphClient,
                                                       bob: SyncLangGraphClient) -> None:
    alice.store.put_item(["notes"], "k", {"text": "alice's"})
    bob.store.put_item(["notes"], "k", {"text": "bob's"})

    mine = alice.store.get_item(["notes"], key="k")
    assert mine["namespace"] == ["alice", "notes"] and mine["value"] == {"text": "alice's"}
    assert bob.store.get_item(["notes"], key="k")["value"] == {"text": "bob's"}
    assert bob.store.get_item(["alice", "notes"], key="k") is None  # -> bob.alice.notes

    assert [i["value"]["text"] for i in bob.store.search_items(["notes"])["items"]] == ["bob's"]
    assert bob.store.search_items(["alice"])["items"] == []
    assert [i["namespace"] for i in bob.store.search_items([])["items"]] == [["bob", "notes"]]
    assert bob.store.list_namespaces()["namespaces"] == [["bob", "notes"]]
    assert alice.store.list_namespaces(prefix=["notes"])["namespaces"] == [["alice", "notes"]]

    bob.store.delete_item(["alice", "notes"], key="k")  # bob's own (empty) namespace
    assert alice.store.get_item(["notes"], key="k")["value"] == {"text": "alice's"}
    alice.store.delete_item(["notes"], key="k")
    assert alice.store.get_item(["notes"], key="k") is None
    assert bob.store.get_item(["notes"], key="k") is not None


# -- A2A and MCP ----------------------------------------------------------------------------------


def _rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def _say(text: str, context_id: str | None = None) -> dict[str, Any]:
    message = {"kind": "message", "messageId": text, "role": "user",
               "parts": [{"kind": "text", "text": text}]}
    if context_id is not None:
        message["contextId"] = context_id
    return _rpc("message/send", {"message": message})


def test_a2a_and_mcp_follow_the_same_rules(tmp_path: Path,
                                           serve_app: Callable[..., Served]) -> None:
    settings = load_settings(_project(tmp_path), in_memory=True)
    settings.graphs["shout"] = test_graphs.shout_graph
    served = serve_app(settings)
    as_alice = {"Authorization": "Bearer token-alice"}
    as_bob = {"Authorization": "Bearer token-bob"}
    context = "0b9c2f52-7e1a-4a57-9a39-4c6f0f0e2d11"
    with httpx.Client(base_url=served.url, timeout=10) as http:
        assert http.post("/a2a/shout", json=_say("hi")).status_code == 401
        task = http.post("/a2a/shout", json=_say("hi", context), headers=as_alice).json()
        assert task["result"]["contextId"] == context
        thread = http.get(f"/threads/{context}", headers=as_alice).json()
        assert thread["metadata"]["owner"] == "alice"

        intruder = http.post("/a2a/shout", json=_say("me too", context), headers=as_bob).json()
        assert intruder["error"]["code"] == -32603  # as for a thread that does not exist
        peek = _rpc("tasks/get", {"id": task["result"]["id"]})
        assert http.post("/a2a/shout", json=peek, headers=as_bob).json()["error"]["code"] == -32001
        assert "result" in http.post("/a2a/shout", json=peek, headers=as_alice).json()
        assert len(http.get(f"/threads/{context}/runs", headers=as_alice).json()) == 1

        # MCP: the tools are the caller's assistants; a call runs as the caller.
        assert http.post("/mcp", json=_rpc("tools/list", {})).status_code == 401
        created = http.post("/assistants", json={"graph_id": "agent", "name": "whoami"},
                            headers=as_alice)
        assert created.status_code == 200
        listed = http.post("/mcp", json=_rpc("tools/list", {}), headers=as_alice).json()
        assert [t["name"] for t in listed["result"]["tools"]] == ["whoami"]
        bobs = http.post("/mcp", json=_rpc("tools/list", {}), headers=as_bob).json()
        assert bobs["result"]["tools"] == []
        call = _rpc("tools/call", {"name": "whoami", "arguments": {"x": 1}})
        result = http.post("/mcp", json=call, headers=as_alice).json()["result"]
        assert json.loads(result["content"][0]["text"])["user"]["identity"] == "alice"
        assert http.post("/mcp", json=call, headers=as_bob).json()["error"]["code"] == -32602


# -- handler signatures ---------------------------------------------------------------------------


class _Principal:
    """An `authenticate` result that is an object, not a dict."""

    def __init__(self, identity: str, permissions: list[str]) -> None:
        self.identity = identity
        self.permissions = permissions
        self.team = "blue"


def _signature_auth(seen: list[dict[str, Any]]) -> Auth:
    auth = Auth()

    @auth.authenticate
    def authenticate(request: Any, body: Any, path: str, method: str, path_params: dict,
                     query_params: dict, headers: dict, authorization: str | None,
                     scopes: list) -> _Principal:  # sync, every parameter
        seen.append({"body": body, "path": path, "method": method, "path_params": path_params,
                     "query_params": query_params, "key": headers.get(b"x-user"),
                     "request_path": request.url.path, "authorization": authorization})
        user = (headers.get(b"x-user") or b"").decode()
        if not user:  # (a plain assert would carry pytest's rewritten message)
            raise AssertionError("who are you?")
        return _Principal(user, ["admin"] if user == "root" else [])

    @auth.on.threads.create
    def writers_only(ctx: Auth.types.AuthContext, value: dict) -> None:  # sync handler
        if "admin" not in ctx.permissions:
            raise Auth.exceptions.HTTPException(status_code=418, detail="admins create threads",
                                                headers={"X-Why": "role"})
        value["metadata"]["members"] = [ctx.user.identity, "guest"]  # the create sees this
        assert ctx.resource == "threads" and ctx.action == "create"
        assert ctx.user.team == "blue" and ctx.user["identity"] == ctx.user.identity

    @auth.on.threads
    async def members(ctx: Auth.types.AuthContext, value: dict) -> dict:
        return {"members": {"$contains": ctx.user.identity}}

    @auth.on.store.put
    async def read_only_store(ctx: Auth.types.AuthContext, value: dict) -> bool:
        return False

    return auth


def test_handler_signatures_and_results(serve_app: Callable[..., Served]) -> None:
    seen: list[dict[str, Any]] = []
    served = serve_app(graphs=test_graphs.GRAPHS, data_dir=None, auth=_signature_auth(seen))
    with httpx.Client(base_url=served.url, timeout=10) as http:
        nobody = http.post("/threads", json={})
        assert nobody.status_code == 401 and nobody.json() == {"detail": "who are you?"}
        guest = http.post("/threads", json={}, headers={"x-user": "guest"})
        assert guest.status_code == 418 and guest.json() == {"detail": "admins create threads"}
        assert guest.headers["x-why"] == "role"

        root = {"x-user": "root", "authorization": "Basic abc"}
        made = http.post("/threads?x=1", json={"metadata": {"a": 1}}, headers=root).json()
        assert made["metadata"] == {"a": 1, "members": ["root", "guest"]}
        assert seen[-1]["body"] == {"metadata": {"a": 1}} and seen[-1]["method"] == "POST"
        assert seen[-1]["path"] == seen[-1]["request_path"] == "/threads"
        assert seen[-1]["query_params"] == {"x": "1"}
        assert seen[-1]["authorization"] == "Basic abc"

        tid = made["thread_id"]
        for user, status in (("root", 200), ("guest", 200), ("eve", 404)):  # $contains
            assert http.get(f"/threads/{tid}", headers={"x-user": user}).status_code == status
        assert seen[-1]["path_params"] == {"thread_id": tid} and seen[-1]["body"] is None
        count = http.post("/threads/count", json={}, headers={"x-user": "eve"})
        assert count.json() == 0

        put = http.put("/store/items", json={"namespace": ["a"], "key": "k", "value": {}},
                       headers=root)
        assert put.status_code == 403 and put.json() == {"detail": "Forbidden"}
        assert http.get("/ok").status_code == 200


# -- API keys with custom auth, and langgraph-sdk's own Auth object ---------------------------------


def test_api_keys_and_custom_auth_both_apply(tmp_path: Path,
                                             serve_app: Callable[..., Served]) -> None:
    settings = load_settings(_project(tmp_path), in_memory=True, api_keys=["k1"])
    served = serve_app(settings)
    with httpx.Client(base_url=served.url, timeout=10) as http:
        bearer = {"Authorization": "Bearer token-bob"}
        assert http.post("/threads", json={}, headers=bearer).json() == {
            "detail": "Missing API key"}
        no_token = http.post("/threads", json={}, headers={"X-Api-Key": "k1"})
        assert no_token.status_code == 401 and no_token.json() == {"detail": "Invalid token"}
        made = http.post("/threads", json={}, headers={**bearer, "X-Api-Key": "k1"})
        assert made.status_code == 200 and made.json()["metadata"] == {"owner": "bob"}


def test_an_unchanged_langgraph_sdk_auth_object_also_works(
        serve_app: Callable[..., Served]) -> None:
    from langgraph_sdk import Auth as SdkAuth

    auth = SdkAuth()

    @auth.authenticate
    async def authenticate(headers: dict) -> str:
        if b"x-user" not in headers:
            raise SdkAuth.exceptions.HTTPException(status_code=401, detail="no user")
        return headers[b"x-user"].decode()

    @auth.on
    async def owner(ctx: SdkAuth.types.AuthContext, value: dict) -> dict:
        value.setdefault("metadata", {}).update({"owner": ctx.user.identity})
        return {"owner": ctx.user.identity}

    served = serve_app(graphs=test_graphs.GRAPHS, data_dir=None, auth=auth)
    with httpx.Client(base_url=served.url, timeout=10) as http:
        assert http.post("/threads", json={}).json() == {"detail": "no user"}
        made = http.post("/threads", json={}, headers={"x-user": "ann"}).json()
        assert made["metadata"] == {"owner": "ann"}
        assert http.get(f"/threads/{made['thread_id']}", headers={"x-user": "ben"}
                        ).status_code == 404
        assert http.post("/threads/count", json={}, headers={"x-user": "ann"}).json() == 1


def test_settings_auth_must_be_an_auth_object() -> None:
    settings = Settings(graphs=test_graphs.GRAPHS, data_dir=None, auth={"path": "./x.py:auth"})
    with pytest.raises(TypeError, match="not an http_adapter.auth.Auth"):
        create_app(settings)


# -- the Auth registry ------------------------------------------------------------------------------


async def _handler(ctx: Any, value: Any) -> None:
    return None


async def _other(ctx: Any, value: Any) -> None:
    return None


def test_registration_rules_match_langgraph_sdk() -> None:
    auth = Auth()
    auth.on(_handler)
    with pytest.raises(ValueError, match="Global handler already set"):
        auth.on(_other)
    auth.on.threads.create(_handler)
    with pytest.raises(ValueError, match="already set for threads, create"):
        auth.on.threads.create(_other)
    auth.on.threads(actions=["read", "search"])(_handler)
    auth.on(resources=["crons", "assistants"], actions="update")(_handler)
    auth.on.store(_handler)
    auth.on.store.put(_other)
    auth.on.threads.create_run(_other)
    assert set(auth._handlers) == {
        ("threads", "create"), ("threads", "read"), ("threads", "search"), ("crons", "update"),
        ("assistants", "update"), ("store", "*"), ("store", "put"), ("threads", "create_run"),
    }
    with pytest.raises(ValueError, match="Invalid action"):
        auth.on.crons(actions=["create_run"])(_other)
    with pytest.raises(ValueError, match="cannot register handlers"):
        auth.on.crons(resources="threads")(_other)
    with pytest.raises(ValueError, match="'value' parameter"):
        auth.on.assistants.read(lambda ctx: None)

    auth.authenticate(lambda authorization: "me")
    with pytest.raises(ValueError, match="already set"):
        auth.authenticate(lambda authorization: "me")
    with pytest.raises(ValueError, match="unsupported parameter 'token'"):
        Auth().authenticate(lambda token: "me")
    assert Auth.types.on.threads.create.value is Auth.types.ThreadsCreate
    assert str(Auth.exceptions.HTTPException()) == "401: Unauthorized"


def test_filters_match_and_own_like_langgraph() -> None:
    from http_adapter.agent_server.authz import owned, visible

    assert visible({"owner": "a", "x": 1}, {"owner": "a"})
    assert not visible({"owner": "b"}, {"owner": "a"}) and not visible({}, {"owner": "a"})
    assert visible({"owner": "a"}, {"owner": {"$eq": "a"}})
    assert visible({"m": ["a", "b"]}, {"m": {"$contains": "a"}})
    assert visible({"m": ["a", "b"]}, {"m": {"$contains": ["a", "b"]}})
    assert not visible({"m": "ab"}, {"m": {"$contains": "a"}})
    assert visible(None, None) and visible({"k": 1}, {})
    assert owned({"x": 1}, {"owner": "a", "e": {"$eq": 2}, "m": {"$contains": "a"}}) == {
        "x": 1, "owner": "a", "e": 2, "m": ["a"]}
    assert owned({"m": ["b"]}, {"m": {"$contains": ["a", "b"]}}) == {"m": ["b", "a"]}
