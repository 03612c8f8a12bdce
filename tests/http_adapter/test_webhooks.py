"""Webhooks (issue 26 §4-5): which URLs a run may be given (422 at creation otherwise), the
`webhooks` section of langgraph.json, and a sender that reads no file, reaches no blocked host
(redirects and DNS answers included) and gives up on receivers that stream or stall forever."""

from __future__ import annotations

import http.server as http_server
import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from http_adapter.agent_server import webhooks as webhooks_module
from http_adapter.agent_server.settings import Settings
from http_adapter.agent_server.webhooks import Webhooks
from http_adapter.config import ConfigError, load_settings

from .conftest import Served, wait_for

GRAPHS = Path(__file__).with_name("graphs.py")
LOOPBACK_ALLOWED = {"url": {"allowed_domains": ["127.0.0.1"]}}  # the hook server's host


class Hook:
    """A receiver on 127.0.0.1: records each request; `/hop*` redirect, `/forever` streams
    without end, `/silent` never answers (until the test ends)."""

    def __init__(self) -> None:
        self.received: list[tuple[str, dict[str, str], bytes]] = []
        self.closed: list[str] = []  # paths whose answer the client stopped reading
        self.release = threading.Event()
        owner = self

        class Handler(http_server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.received.append((self.path, dict(self.headers), body))
                owner.answer(self)

            do_GET = do_POST  # noqa: N815 (a redirect may turn into a GET)

            def log_message(self, *args: Any) -> None:
                return None

        self.server = http_server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def answer(self, handler: http_server.BaseHTTPRequestHandler) -> None:
        path = handler.path
        if path.startswith("/hop-to/"):
            handler.send_response(307)
            handler.send_header("Location", self.url(*_target(path)))
            handler.send_header("Content-Length", "0")
            handler.end_headers()
        elif path == "/forever":
            self._stream(handler)
        elif path == "/silent":
            self.release.wait(30)
        else:
            handler.send_response(200)
            handler.send_header("Content-Length", "0")
            handler.end_headers()

    def _stream(self, handler: http_server.BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.end_headers()  # no length: the body ends when the connection does
        handler.close_connection = True
        chunk = b"x" * 65536
        try:
            while not self.release.is_set():
                handler.wfile.write(chunk)
        except OSError:  # the client hung up
            self.closed.append(handler.path)

    def paths(self) -> list[str]:
        return [path for path, _, _ in self.received]

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def _target(path: str) -> tuple[str, str]:
    """`/hop-to/<host>/<path>` -> (`/<path>`, host)."""
    host, _, rest = path.removeprefix("/hop-to/").partition("/")
    return f"/{rest}", host


@pytest.fixture
def hook() -> Iterator[Hook]:
    receiver = Hook()
    yield receiver
    receiver.stop()


@pytest.fixture
def project(tmp_path: Path) -> Callable[..., Settings]:
    """`project(webhooks)`: the test graphs behind a langgraph.json with that section."""
    def load(webhooks: Any = None, **config: Any) -> Settings:
        root = tmp_path / "project"
        root.mkdir(exist_ok=True)
        raw = {"graphs": {"agent": f"{GRAPHS}:agent"}, **config}
        if webhooks is not None:
            raw["webhooks"] = webhooks
        (root / "langgraph.json").write_text(json.dumps(raw))
        return load_settings(root / "langgraph.json", data_dir=tmp_path / "data")
    return load




def _thread(http: httpx.Client) -> str:
    return str(http.post("/threads", json={}).json()["thread_id"])


def _create(http: httpx.Client, endpoint: str, webhook: str, thread: str) -> httpx.Response:
    run = {"assistant_id": "agent", "input": {"x": 1}, "webhook": webhook}
    path = endpoint.format(thread=thread)
    if endpoint.endswith("/crons"):
        return http.post(path, json={**run, "schedule": "0 0 1 1 *"})
    if endpoint == "/runs/batch":
        return http.post(path, json=[{"assistant_id": "agent", "input": {}}, run])
    return http.post(path, json=run)


# -- refused at creation --------------------------------------------------------------------------

BLOCKED = [
    "file:///dev/zero", "ftp://example.com/x", "gopher://127.0.0.1:70/x",
    "http://127.0.0.1:{port}/h", "http://localhost:{port}/h", "http://sub.localhost/h",
    "http://[::ffff:127.0.0.1]:{port}/h", "http://2130706433:{port}/h", "http://0x7f.1/h",
    "http://127.1/h", "http://0.0.0.0:{port}/h", "http://[::1]/h", "http://[::]/h",
    "http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/h", "http://172.16.5.4/h",
    "http://192.168.1.1/h", "http://100.64.0.1/h", "http://[fd00::1]/h", "http://[fe80::1]/h",
    "http://224.0.0.1/h", "http://[64:ff9b::7f00:1]/h",
]
ENDPOINTS = [
    "/threads/{thread}/runs", "/threads/{thread}/runs/wait", "/threads/{thread}/runs/stream",
    "/runs", "/runs/wait", "/runs/stream", "/runs/batch", "/runs/crons",
    "/threads/{thread}/runs/crons",
]


def test_blocked_hosts_are_refused_at_creation(server: Served, hook: Hook) -> None:
    """Every spelling of a loopback, private, link-local... host, and every scheme but
    http(s), on every endpoint that takes a webhook: 422 and nothing created or sent."""
    with httpx.Client(base_url=server.url, timeout=20) as http:
        thread = _thread(http)
        for template in BLOCKED:
            url = template.format(port=hook.port)
            for endpoint in ENDPOINTS:
                response = _create(http, endpoint, url, thread)
                assert response.status_code == 422, (url, endpoint, response.text)
                assert response.json()["detail"].startswith("Webhook host blocked: "), url
        assert http.get(f"/threads/{thread}/runs").json() == []
        assert http.post("/runs/crons/search", json={}).json() == []
        assert http.post("/runs/batch", json=[{"assistant_id": "agent", "input": {}}]).is_success
    assert hook.received == []


def test_malformed_urls_are_422(server: Served) -> None:
    with httpx.Client(base_url=server.url, timeout=20) as http:
        thread = _thread(http)
        for url in ("http://[::1", "http://ex\nample.com/", "http://example.com:abc/",
                    "http:///x", "http://example.com:70000/", "https://\u2603.com/"):
            response = _create(http, "/threads/{thread}/runs", url, thread)
            assert response.status_code == 422, (url, response.text)
            assert response.json()["detail"] in ("Invalid webhook URL",
                                                 "Invalid webhook hostname ''"), url


def test_policy_keys_of_langgraph_json(project: Callable[..., Settings],
                                       serve_app: Callable[..., Served]) -> None:
    policy = {"url": {"require_https": True, "allowed_domains": ["hooks.example.com",
                                                                 "*.corp.example"],
                      "allowed_ports": [443, 8443], "max_url_length": 80,
                      "disable_loopback": True}}
    server = serve_app(project(policy))
    refused = {
        "http://hooks.example.com/done": "Webhook must use https",
        "https://other.example.org/done": "Webhook domain not allowed",
        "https://corp.example/done": "Webhook domain not allowed",  # the wildcard: subdomains
        "https://hooks.example.com:444/done": "Webhook port 444 not allowed",
        "https://hooks.example.com/" + "x" * 80: "Webhook URL too long",
        "/hooks/done": "Loopback webhooks are disabled",
    }
    accepted = ["https://hooks.example.com/done", "https://a.corp.example:8443/done"]
    with httpx.Client(base_url=server.url, timeout=20) as http:
        thread = _thread(http)
        for url, detail in refused.items():
            response = _create(http, "/threads/{thread}/runs", url, thread)
            assert (response.status_code, response.json()["detail"]) == (422, detail), url
        for url in accepted:  # they do not resolve here: judged again when sent
            response = _create(http, "/threads/{thread}/runs/wait", url, thread)
            assert response.status_code == 200, (url, response.text)


# -- delivery -------------------------------------------------------------------------------------


@pytest.mark.backends("sqlite", "postgres")
def test_allowlisted_host_gets_the_run_with_configured_headers(
        project: Callable[..., Settings], serve_app: Callable[..., Served], hook: Hook,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LG_WEBHOOK_TOKEN", "s3cret")
    section = {**LOOPBACK_ALLOWED, "headers": {
        "Authorization": "Bearer ${{ env.LG_WEBHOOK_TOKEN }}", "X-Static": "fixed"}}
    server = serve_app(project(section))
    with httpx.Client(base_url=server.url, timeout=20) as http:
        thread = _thread(http)
        run = _create(http, "/threads/{thread}/runs", hook.url("/done"), thread).json()
        wait_for(lambda: hook.received)
    path, headers, body = hook.received[0]
    assert path == "/done"
    assert headers["Authorization"] == "Bearer s3cret" and headers["X-Static"] == "fixed"
    sent = json.loads(body)
    assert sent["run_id"] == run["run_id"] and sent["status"] == "success"


def test_redirects_are_followed_only_to_allowed_hosts(
        project: Callable[..., Settings], serve_app: Callable[..., Served], hook: Hook,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="http_adapter.webhooks")
    server = serve_app(project(LOOPBACK_ALLOWED))
    with httpx.Client(base_url=server.url, timeout=20) as http:
        for host in ("localhost", "127.0.0.1"):
            webhook = hook.url(f"/hop-to/{host}/landed-{host}")
            http.post(f"/threads/{_thread(http)}/runs/wait",
                      json={"assistant_id": "agent", "input": {}, "webhook": webhook})
        wait_for(lambda: "/landed-127.0.0.1" in hook.paths())  # an allowed target: followed
        wait_for(lambda: "landed-localhost for run" in caplog.text)
    assert "/landed-localhost" not in hook.paths()
    assert "not sent: Webhook domain not allowed" in caplog.text  # not in allowed_domains


@pytest.mark.anyio
async def test_redirects_to_blocked_addresses_are_not_followed(
        hook: Hook, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Without an allowlist: the hook's own address passes as public here, the one it
    redirects to (another loopback address) is refused, whatever it is called."""
    blocked = webhooks_module._blocked
    monkeypatch.setattr(webhooks_module, "_blocked",
                        lambda ip: None if str(ip) == "127.0.0.1" else blocked(ip))
    caplog.set_level(logging.WARNING, logger="http_adapter.webhooks")
    webhooks = Webhooks(None)
    for host in ("127.0.0.2", "localhost", "2130706434", "[::1]", "169.254.169.254"):
        await webhooks.send(hook.url(f"/hop-to/{host}/stolen"), {"run_id": "r"}, "r")
    await webhooks.send(hook.url("/hop-to/127.0.0.1/landed"), {"run_id": "r"}, "r")
    assert hook.paths().count("/landed") == 1 and "/stolen" not in hook.paths()
    assert caplog.text.count("not sent: Webhook host blocked") == 5


def test_endless_and_silent_receivers_are_given_up(
        project: Callable[..., Settings], serve_app: Callable[..., Served], hook: Hook,
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """A receiver streaming without end is cut off after `_MAX_RESPONSE` bytes (urllib read
    `file:///dev/zero`-like answers into memory); one that never answers is given up after the
    time limit; meanwhile the server serves and runs runs."""
    monkeypatch.setattr(webhooks_module, "_TIME_LIMIT", 1.0)
    caplog.set_level(logging.WARNING, logger="http_adapter.webhooks")
    server = serve_app(project(LOOPBACK_ALLOWED))
    with httpx.Client(base_url=server.url, timeout=20) as http:
        for path in ("/forever", "/silent"):
            http.post(f"/threads/{_thread(http)}/runs",
                      json={"assistant_id": "agent", "input": {}, "webhook": hook.url(path)})
        wait_for(lambda: hook.closed == ["/forever"])
        assert http.get("/ok").status_code == 200
        answer = http.post("/runs/wait", json={"assistant_id": "agent", "input": {"x": 1}})
        assert answer.json()["x"] == 2
        wait_for(lambda: "/silent" in caplog.text and "no answer" in caplog.text)


CUSTOM_APP = """
import os
from pathlib import Path

from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route


async def done(request):
    Path(os.environ["HOOK_OUT"]).write_bytes(await request.body())
    return Response(status_code=204)


app = Starlette(routes=[Route("/hooks/done", done, methods=["POST"])])
"""


def test_relative_url_calls_the_projects_own_app(
        project: Callable[..., Settings], serve_app: Callable[..., Served], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """As the reference's loopback webhooks: `/hooks/done` is a route of `http.app`."""
    out = tmp_path / "hook.json"
    monkeypatch.setenv("HOOK_OUT", str(out))
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "hooks_app.py").write_text(CUSTOM_APP)
    server = serve_app(project(http={"app": "./hooks_app.py:app"}))
    with httpx.Client(base_url=server.url, timeout=20) as http:
        run = _create(http, "/threads/{thread}/runs", "/hooks/done", _thread(http)).json()
        wait_for(out.exists)
    assert json.loads(wait_for(out.read_bytes))["run_id"] == run["run_id"]


# -- the sender on its own ------------------------------------------------------------------------


@pytest.mark.anyio
async def test_file_urls_are_never_opened(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="http_adapter.webhooks")
    with anyio.fail_after(5):
        await Webhooks(None).send("file:///dev/zero", {"run_id": "r"}, "r")
    assert "scheme 'file' is not http or https" in caplog.text


@pytest.mark.anyio
async def test_the_address_checked_is_the_one_connected_to(
        hook: Hook, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """DNS rebinding: the name is resolved once per send, checked, and that address dialled.
    Here `hooks.test` resolves to a public address at creation, then to loopback."""
    answers = iter([["93.184.215.14"], ["127.0.0.1"]])

    async def resolve(host: str, port: int, **_: Any) -> list[Any]:
        assert host == "hooks.test"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in next(answers)]

    monkeypatch.setattr(webhooks_module.anyio, "getaddrinfo", resolve)
    caplog.set_level(logging.WARNING, logger="http_adapter.webhooks")
    webhooks = Webhooks(None)
    url = f"http://hooks.test:{hook.port}/done"
    await webhooks.admit(url)
    await webhooks.send(url, {"run_id": "r"}, "r")
    assert hook.received == [] and "hooks.test (127.0.0.1) is a loopback address" in caplog.text
    # Allowed (here by pretending loopback is public), the request goes to the address
    # resolved, naming the host: `hooks.test` itself resolves nowhere.
    monkeypatch.setattr(webhooks_module, "_blocked", lambda ip: None)
    answers = iter([["127.0.0.1"]])
    await webhooks.send(url, {"run_id": "r"}, "r")
    assert [(p, h["Host"]) for p, h, _ in hook.received] == [("/done", f"hooks.test:{hook.port}")]


# -- config ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("section", "message"), [
    ([], "webhooks: must be an object"),
    ({"urls": {}}, "webhooks: unknown key(s) urls"),
    ({"url": {"disable_loopbacks": True}}, "webhooks.url: unknown key(s) disable_loopbacks"),
    ({"url": {"require_https": "yes"}}, "webhooks.url.require_https: must be true or false"),
    ({"url": {"allowed_ports": [0]}}, "webhooks.url.allowed_ports: must be a list of port"),
    ({"url": {"max_url_length": -1}}, "webhooks.url.max_url_length: must be a positive"),
    ({"url": {"allowed_domains": "example.com"}}, "webhooks.url.allowed_domains: must be a list"),
    ({"headers": {"X-Key": "${{ env.HOME }}"}},
     "webhooks.headers.X-Key: env.HOME does not start with env_prefix 'LG_WEBHOOK_'"),
    ({"headers": {"X-Key": "${{ env.LG_WEBHOOK_MISSING }}"}},
     "webhooks.headers.X-Key: environment variable LG_WEBHOOK_MISSING is not set"),
    ({"headers": {"X-Key": "${{ secrets.X }}"}}, "webhooks.headers.X-Key: unsupported template"),
    ({"headers": {"Bad Name": "v"}}, "webhooks.headers.Bad Name: is not a valid header name"),
])
def test_bad_webhooks_sections_name_their_key(project: Callable[..., Settings], section: Any,
                                              message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        project(section)
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_header_templates_use_the_env_prefix(project: Callable[..., Settings],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOK_A", "1")
    settings = project({"env_prefix": "HOOK_", "headers": {
        "X-Mixed": "a=${{env.HOOK_A}}, b=${{ env.HOOK_B }}"}}, env={"HOOK_B": "2"})
    assert settings.extra["webhooks"]["headers"] == {"X-Mixed": "a=1, b=2"}
    assert "webhooks" not in settings.extra["config_warnings"]
