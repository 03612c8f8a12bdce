"""langgraph.json beyond graphs (issue 18): `http.app`, `http.configurable_headers`,
`http.disable_*`, `store.index`, `store.ttl`, `checkpointer.ttl`, and the start-up warning for
keys graphrun ignores. Each loads a real project file and serves it on a real server."""

from __future__ import annotations

import contextlib
import http.server as http_server
import json
import os
import sqlite3
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from http_adapter.agent_server.settings import Settings
from http_adapter.config import ConfigError, load_settings

from .conftest import Served

GRAPH = """
from typing import TypedDict

from engine import START, StateGraph


class State(TypedDict, total=False):
    seen: dict


def look(state, config):
    configurable = config["configurable"]
    names = ("user-agent", "authorization", "x-api-key")
    return {"seen": {k: v for k, v in configurable.items() if k.startswith("x-") or k in names}}


graph = StateGraph(State).add_node("look", look).add_edge(START, "look").compile()
"""

CUSTOM_APP = """
import contextlib

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import JSONResponse
from starlette.routing import Route

STARTED = []


class Tag:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        async def tagged(message):
            if message["type"] == "http.response.start":
                message["headers"] = [*message["headers"], (b"x-user-middleware", b"1")]
            await send(message)
        await self.app(scope, receive, tagged)


async def hello(request):
    return JSONResponse({"hello": "custom", "started": STARTED})


async def info(request):
    return JSONResponse({"custom_info": True})


async def ok(request):
    return JSONResponse({"shadowed": True})


@contextlib.asynccontextmanager
async def lifespan(app):
    STARTED.append("up")
    yield


app = Starlette(routes=[Route("/hello", hello), Route("/info", info), Route("/ok", ok),
                        Route("/threads/search", hello, methods=["GET"]),
                        Route("/assistants/search", hello, methods=["POST"])],
                middleware=[Middleware(Tag)], lifespan=lifespan)
"""

EMBED = """
import hashlib

DIMS = 64


def embed(texts):
    # A bag of words hashed into DIMS buckets: texts sharing words are close.
    vectors = []
    for text in texts:
        vector = [0.0] * DIMS
        for word in text.lower().replace('"', " ").split():
            vector[int(hashlib.sha1(word.encode()).hexdigest(), 16) % DIMS] += 1.0
        vectors.append(vector)
    return vectors
"""


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Loading a config edits os.environ, sys.path and sys.modules: undo all three."""
    environ = dict(os.environ)
    monkeypatch.setattr(sys, "path", list(sys.path))
    modules = set(sys.modules)
    yield
    os.environ.clear()
    os.environ.update(environ)
    for name in set(sys.modules) - modules:
        if name.startswith("_graphrun_user_"):
            del sys.modules[name]


@pytest.fixture
def load(tmp_path: Path) -> Callable[..., Settings]:
    """`load(config_extra, files)`: a project with GRAPH as `agent`, loaded as graphrun does."""
    def make(extra: dict[str, Any] | None = None, files: dict[str, str] | None = None,
             **kwargs: Any) -> Settings:
        root = tmp_path / "project"
        root.mkdir(exist_ok=True)
        for name, text in {"agent.py": GRAPH, **(files or {})}.items():
            (root / name).write_text(textwrap.dedent(text))
        config = {"graphs": {"agent": "./agent.py:graph"}, **(extra or {})}
        (root / "langgraph.json").write_text(json.dumps(config))
        return load_settings(root / "langgraph.json", data_dir=tmp_path / "data", **kwargs)
    return make


# -- http.configurable_headers ------------------------------------------------------------------


def test_configurable_headers_reach_the_run(load: Callable[..., Settings],
                                            serve_app: Callable[..., Served]) -> None:
    section = {"includes": ["x-user-*", "user-agent", "authorization"], "excludes": ["x-user-secret"]}
    server = serve_app(load({"http": {"configurable_headers": section}}))
    headers = {"X-User-Id": "u-1", "X-User-Secret": "s", "X-Other": "o", "User-Agent": "tester/1",
               "Authorization": "Bearer t"}
    body = {"assistant_id": "agent", "input": {},
            "config": {"configurable": {"x-user-id": "from-body", "x-keep": "kept"}}}
    seen = httpx.post(f"{server.url}/runs/wait", json=body, headers=headers).json()["seen"]
    # included and not excluded; `authorization` never; the header wins over the body's value
    assert seen == {"x-user-id": "u-1", "user-agent": "tester/1", "x-keep": "kept"}
    thread = httpx.post(f"{server.url}/threads", json={}).json()["thread_id"]
    stateful = httpx.post(f"{server.url}/threads/{thread}/runs/wait", headers=headers,
                          json={"assistant_id": "agent", "input": {}}).json()
    assert stateful["seen"] == {"x-user-id": "u-1", "user-agent": "tester/1"}


def test_configurable_headers_with_context_and_state_updates(
        load: Callable[..., Settings], serve_app: Callable[..., Served]) -> None:
    """As langgraph-api: a run created with `context` gets them in `configurable` too, and a
    state update's config carries them (so its checkpoint's metadata names them)."""
    server = serve_app(load({"http": {"configurable_headers": {"includes": ["x-user-*"]}}}))
    headers = {"X-User-Id": "u-1", "X-Other": "o"}
    body = {"assistant_id": "agent", "input": {}, "context": {"c": 1}}
    seen = httpx.post(f"{server.url}/runs/wait", json=body, headers=headers).json()["seen"]
    assert seen == {"x-user-id": "u-1"}
    thread = httpx.post(f"{server.url}/threads", json={}).json()["thread_id"]
    httpx.post(f"{server.url}/threads/{thread}/runs/wait",
               json={"assistant_id": "agent", "input": {}})
    updated = httpx.post(f"{server.url}/threads/{thread}/state", headers=headers,
                         json={"values": {"seen": {}}})
    assert updated.status_code == 200, updated.text
    state = httpx.get(f"{server.url}/threads/{thread}/state").json()
    assert state["metadata"]["source"] == "update"
    assert state["metadata"]["x-user-id"] == "u-1" and "x-other" not in state["metadata"]


def test_without_the_section_no_header_reaches_the_run(load: Callable[..., Settings],
                                                       serve_app: Callable[..., Served]) -> None:
    server = serve_app(load())
    seen = httpx.post(f"{server.url}/runs/wait", headers={"X-User-Id": "u-1"},
                      json={"assistant_id": "agent", "input": {}}).json()["seen"]
    assert seen == {}


# -- http.disable_* -------------------------------------------------------------------------------


def test_disable_flags_remove_their_routes(load: Callable[..., Settings],
                                           serve_app: Callable[..., Served]) -> None:
    flags = {f"disable_{name}": True for name in ("store", "meta", "runs", "mcp", "a2a")}
    server = serve_app(load({"http": flags}))
    for method, path in (("PUT", "/store/items"), ("GET", "/info"), ("GET", "/docs"),
                         ("GET", "/openapi.json"), ("POST", "/runs/wait"),
                         ("POST", "/runs/crons/search"), ("POST", "/mcp"), ("GET", "/metrics")):
        assert httpx.request(method, f"{server.url}{path}", json={}).status_code == 404, path
    assert httpx.get(f"{server.url}/ok").json()["ok"] is True  # kept, as LangGraph keeps it
    assert httpx.post(f"{server.url}/threads", json={}).status_code == 200
    assert httpx.post(f"{server.url}/assistants/search", json={}).status_code == 200


def test_disable_assistants_and_threads(load: Callable[..., Settings],
                                        serve_app: Callable[..., Served]) -> None:
    server = serve_app(load({"http": {"disable_assistants": True, "disable_threads": True}}))
    assert httpx.post(f"{server.url}/assistants/search", json={}).status_code == 404
    assert httpx.post(f"{server.url}/threads", json={}).status_code == 404
    ran = httpx.post(f"{server.url}/runs/wait", json={"assistant_id": "agent", "input": {}})
    assert ran.status_code == 200


# -- http.app -------------------------------------------------------------------------------------


def test_custom_app_is_served_beside_the_api(load: Callable[..., Settings],
                                             serve_app: Callable[..., Served]) -> None:
    settings = load({"http": {"app": "./custom.py:app"}, "api_keys": ["k"]},
                    files={"custom.py": CUSTOM_APP})
    server = serve_app(settings)
    hello = httpx.get(f"{server.url}/hello", headers={"Origin": "https://app.test"})
    # its lifespan ran; its routes are outside the API key, and CORS covers them too
    assert hello.json() == {"hello": "custom", "started": ["up"]}
    assert hello.headers["access-control-allow-origin"] == "*"
    assert httpx.get(f"{server.url}/info").json() == {"custom_info": True}  # it may replace /info
    assert httpx.get(f"{server.url}/ok").json()["ok"] is True  # but never /ok
    # a route of its own replaces the API's of the same path and method (as LangGraph's does),
    # and only that one: POST /threads/search is still the API's, behind the key
    assert httpx.post(f"{server.url}/assistants/search", json={}).json()["hello"] == "custom"
    assert httpx.get(f"{server.url}/threads/search").json()["hello"] == "custom"
    assert httpx.post(f"{server.url}/threads/search", json={}).status_code == 401
    api = httpx.post(f"{server.url}/runs/wait", headers={"X-Api-Key": "k"},
                     json={"assistant_id": "agent", "input": {}})
    assert api.status_code == 200 and api.json() == {"seen": {}}
    assert api.headers["x-user-middleware"] == "1"  # its middleware wraps the API too
    assert hello.headers["x-user-middleware"] == "1"
    assert httpx.options(f"{server.url}/threads", headers={
        "Origin": "https://app.test", "Access-Control-Request-Method": "POST"}).status_code == 200


def test_custom_route_auth_puts_the_routes_behind_the_key(load: Callable[..., Settings],
                                                          serve_app: Callable[..., Served]) -> None:
    settings = load({"http": {"app": "./custom.py:app", "enable_custom_route_auth": True},
                     "api_keys": ["k"]}, files={"custom.py": CUSTOM_APP})
    server = serve_app(settings)
    assert httpx.get(f"{server.url}/hello").status_code == 401
    assert httpx.get(f"{server.url}/hello", headers={"X-Api-Key": "k"}).json()["hello"] == "custom"


def test_custom_app_must_be_a_starlette_app(load: Callable[..., Settings]) -> None:
    with pytest.raises(ConfigError, match=r"http\.app.*int is not a Starlette or FastAPI app"):
        load({"http": {"app": "./custom.py:app"}}, files={"custom.py": "app = 3\n"})


# -- store.index and store.ttl --------------------------------------------------------------------


def test_store_index_searches_by_meaning(load: Callable[..., Settings],
                                         serve_app: Callable[..., Served]) -> None:
    index = {"dims": 64, "embed": "./embed.py:embed", "fields": ["text"]}
    server = serve_app(load({"store": {"index": index}}, files={"embed.py": EMBED}))
    for key, text in (("a", "cat mat hat"), ("b", "stock prices fell sharply"),
                      ("c", "cat dog bird fish")):
        put = httpx.put(f"{server.url}/store/items",
                        json={"namespace": ["docs"], "key": key, "value": {"text": text}})
        assert put.status_code == 204
    found = httpx.post(f"{server.url}/store/items/search",
                       json={"namespace_prefix": ["docs"], "query": "cat mat", "limit": 3}).json()
    items = found["items"]
    assert [i["key"] for i in items][:2] == ["a", "c"]
    assert all(isinstance(i["score"], float) for i in items)
    assert items[0]["score"] > items[-1]["score"]


class _NoLangChain:
    """`langchain` as where it is not installed (the test extra has it since issue 28)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name.split(".")[0] == "langchain":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def test_store_index_provider_string_needs_langchain(load: Callable[..., Settings]) -> None:
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "langchain"}
    for name in saved:
        del sys.modules[name]
    blocker = _NoLangChain()
    sys.meta_path.insert(0, blocker)
    try:
        with pytest.raises(ConfigError, match=r"store\.index\.embed: 'openai:text-embedding-3-"
                                              r"small' names a provider model, which needs the "
                                              r"`langchain`"):
            load({"store": {"index": {"dims": 8, "embed": "openai:text-embedding-3-small"}}})
    finally:
        sys.meta_path.remove(blocker)
        sys.modules.update(saved)


def test_store_ttl_expires_items(load: Callable[..., Settings],
                                 serve_app: Callable[..., Served]) -> None:
    ttl = {"default_ttl": 0.01, "refresh_on_read": False, "sweep_interval_minutes": 0.005}
    server = serve_app(load({"store": {"ttl": ttl}}))  # 0.6 s; a sweep every 0.3 s
    put = httpx.put(f"{server.url}/store/items",
                    json={"namespace": ["t"], "key": "k", "value": {"v": 1}})
    assert put.status_code == 204
    item = httpx.get(f"{server.url}/store/items", params={"namespace": "t", "key": "k"})
    assert item.json()["value"] == {"v": 1}
    deadline = time.monotonic() + 10
    while _rows(server) and time.monotonic() < deadline:  # the sweeper deletes the row itself
        time.sleep(0.1)
    assert _rows(server) == 0
    gone = httpx.get(f"{server.url}/store/items", params={"namespace": "t", "key": "k"})
    assert gone.status_code == 200 and gone.json() is None


def _checkpoints(server: Served, thread_id: str) -> int:
    assert server.settings.db_path is not None
    with contextlib.closing(sqlite3.connect(server.settings.db_path)) as db:
        query = "SELECT count(*) FROM checkpoints WHERE thread_id = ?"
        return int(db.execute(query, (thread_id,)).fetchone()[0])


def _until(check: Callable[[], bool], seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        time.sleep(0.1)
    return check()


def test_checkpointer_ttl_deletes_idle_threads(load: Callable[..., Settings],
                                              serve_app: Callable[..., Served]) -> None:
    """checkpointer.ttl strategy delete: a thread idle past `default_ttl` goes with its runs
    and checkpoints (from the SQLite file); one still fresh stays."""
    ttl = {"strategy": "delete", "default_ttl": 0.05, "sweep_interval_minutes": 0.005}
    settings = load({"checkpointer": {"ttl": ttl}})  # 3 s; a sweep every 0.3 s
    assert "checkpointer.ttl" not in settings.extra["config_warnings"]
    server = serve_app(settings)
    old = httpx.post(f"{server.url}/threads", json={}).json()["thread_id"]
    httpx.post(f"{server.url}/threads/{old}/runs/wait",
               json={"assistant_id": "agent", "input": {}})
    assert _until(lambda: _checkpoints(server, old) > 0)  # the saver writes in the background
    assert httpx.get(f"{server.url}/threads/{old}").status_code == 200  # not expired yet
    time.sleep(1.5)
    fresh = httpx.post(f"{server.url}/threads", json={}).json()["thread_id"]
    assert _until(lambda: httpx.get(f"{server.url}/threads/{old}").status_code == 404)
    assert _checkpoints(server, old) == 0
    assert httpx.get(f"{server.url}/threads/{old}/runs").status_code == 404
    assert httpx.get(f"{server.url}/threads/{fresh}").status_code == 200  # < 3 s old


def test_checkpointer_ttl_keep_latest(load: Callable[..., Settings],
                                      serve_app: Callable[..., Served]) -> None:
    """Strategy keep_latest: the expired thread stays with its latest checkpoint only."""
    ttl = {"strategy": "keep_latest", "default_ttl": 0.01, "sweep_interval_minutes": 0.005}
    server = serve_app(load({"checkpointer": {"ttl": ttl}}))
    thread = httpx.post(f"{server.url}/threads", json={}).json()["thread_id"]
    httpx.post(f"{server.url}/threads/{thread}/runs/wait",
               json={"assistant_id": "agent", "input": {}})
    before = httpx.get(f"{server.url}/threads/{thread}/state").json()
    assert _until(lambda: _checkpoints(server, thread) > 1)
    assert _until(lambda: _checkpoints(server, thread) == 1)
    assert httpx.get(f"{server.url}/threads/{thread}").status_code == 200
    after = httpx.get(f"{server.url}/threads/{thread}/state").json()
    assert after["checkpoint"] == before["checkpoint"] and after["values"] == before["values"]


def _rows(server: Served) -> int:
    assert server.settings.db_path is not None
    with contextlib.closing(sqlite3.connect(server.settings.db_path)) as db:
        return int(db.execute("SELECT count(*) FROM store_items").fetchone()[0])


# -- validation and the warning for ignored keys ---------------------------------------------------


@pytest.mark.parametrize(("extra", "key"), [
    ({"http": {"cors": {"allow_origins": "*"}}}, "http.cors.allow_origins"),
    ({"http": {"cors": {"allow_origin": ["*"]}}}, "http.cors"),
    ({"http": {"disable_store": "yes"}}, "http.disable_store"),
    ({"http": {"configurable_headers": {"includes": "x-*"}}}, "http.configurable_headers.includes"),
    ({"store": {"index": {"embed": "./embed.py:embed"}}}, "store.index.dims"),
    ({"store": {"index": {"dims": 4, "embed": "./missing.py:embed"}}}, "store.index.embed"),
    ({"store": {"ttl": {"default_ttl": -1}}}, "store.ttl.default_ttl"),
    ({"checkpointer": {"ttl": {"strategy": "shred"}}}, "checkpointer.ttl.strategy"),
])
def test_bad_sections_name_their_key(load: Callable[..., Settings], extra: dict[str, Any],
                                     key: str) -> None:
    with pytest.raises(ConfigError, match=f": {key.replace('.', '[.]')}: "):
        load(extra, files={"embed.py": EMBED})


def test_disable_webhooks_calls_no_webhook(load: Callable[..., Settings],
                                           serve_app: Callable[..., Served]) -> None:
    """As langgraph-api: the run is accepted and keeps its `webhook`; none is called."""
    received: list[bytes] = []

    class Hook(http_server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            received.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return None

    settings = load({"http": {"disable_webhooks": True}})
    assert "http.disable_webhooks" not in settings.extra["config_warnings"]
    server = serve_app(settings)
    schemas = httpx.get(f"{server.url}/openapi.json").json()["components"]["schemas"]
    assert "RunCreate" in schemas  # its `webhook` is gone from every schema
    assert not [n for n, s in schemas.items() if "webhook" in (s.get("properties") or {})]
    hook = http_server.HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{hook.server_address[1]}/done"
        thread = httpx.post(f"{server.url}/threads", json={}).json()["thread_id"]
        run = httpx.post(f"{server.url}/threads/{thread}/runs", json={
            "assistant_id": "agent", "input": {}, "webhook": url}).json()
        assert run["kwargs"]["webhook"] == url
        httpx.get(f"{server.url}/threads/{thread}/runs/{run['run_id']}/join", timeout=10)
        time.sleep(0.5)
        assert received == []
    finally:
        hook.shutdown()
        hook.server_close()


def test_ignored_keys_are_listed(load: Callable[..., Settings]) -> None:
    settings = load({
        "python_version": "3.12", "dockerfile_lines": [],  # image-only: not warned about
        "webhooks": {"env_prefix": "X"}, "ui": {"a": "./ui.tsx"},  # webhooks: read (issue 26)
        "http": {"mount_prefix": "/api", "logging_headers": {}, "disable_ui": True},
        "store": {"path": "./store.py:store"},
        "checkpointer": {"backend": "mongo", "ttl": {"strategy": "delete", "default_ttl": 60}},
        "auth": {"openapi": {}},
    })
    assert settings.extra["config_warnings"] == [
        "ui", "http.mount_prefix", "http.logging_headers", "store.path",
        "checkpointer.backend", "auth.openapi",
    ]
