"""Webhooks: which URLs a run may be given, and sending the finished run to one (issue 26 §4-5).

Sent with urllib, a `file:///dev/zero` webhook read the file into memory (2 GB in 0.8 s) and
any loopback or private address was reached. Now, as the LangGraph server does:

- A run's webhook is checked when the run (or cron) is created; a refused one answers 422
  (`Webhook host blocked: ...`, `Webhook URL too long`, `Webhook must use https`, `Webhook port
  N not allowed`, `Webhook domain not allowed`, `Loopback webhooks are disabled`).
- Only http(s). A host that is, or resolves to, a loopback, private, link-local, unspecified,
  multicast or reserved address is refused (every spelling: `localhost`, `[::ffff:127.0.0.1]`,
  `2130706433`, `0.0.0.0`, ...), unless langgraph.json `webhooks.url.allowed_domains` names it
  (the operator's own hosts, as the reference lets them through).
- A relative URL (`/hooks/done`) is a call into this server's own app (langgraph.json
  `http.app` routes), refused with `webhooks.url.disable_loopback`.
- At send time the URL is checked again and the connection goes to the address just checked
  (a DNS answer that changed since, DNS rebinding, cannot send it elsewhere); redirects are
  followed only to URLs that pass the same checks. The exchange has a time limit and at most
  `_MAX_RESPONSE` bytes of the answer are read.
- `webhooks.headers` are sent with each call; `webhooks.allowed_fields` trims the body.
"""

from __future__ import annotations

import dataclasses
import functools
import ipaddress
import logging
import socket
import ssl
from typing import Any
from urllib.parse import urljoin

import anyio
import httpx

from .encode import dumps
from .errors import UnprocessableEntity

__all__ = ["WebhookRefused", "Webhooks"]

logger = logging.getLogger("http_adapter.webhooks")

_MAX_URL_LENGTH = 4096  # the reference's default `max_url_length`
_TIME_LIMIT = 10.0  # seconds for one call, redirects included
_MAX_RESPONSE = 64 * 1024  # bytes of the answer read (for the log); the rest is not
_MAX_REDIRECTS = 5
_REDIRECTS = frozenset((301, 302, 303, 307, 308))
_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: not public either
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class WebhookRefused(Exception):
    """A webhook URL the policy refuses; `detail` is what the client is told."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


@dataclasses.dataclass(frozen=True, slots=True)
class _Target:
    """Where one request goes: the URL, and the checked address to connect to (None for a
    relative URL into our own app, or an allowlisted host, which connects as named)."""

    url: str
    address: str | None


class Webhooks:
    """The webhook policy of one server (langgraph.json `webhooks`) and its sender."""

    def __init__(self, section: dict[str, Any] | None, enabled: bool = True) -> None:
        section = section or {}
        url = section.get("url") or {}
        self.enabled = enabled  # `http.disable_webhooks`: nothing checked, nothing sent
        self.require_https = bool(url.get("require_https", False))
        self.disable_loopback = bool(url.get("disable_loopback", False))
        self.max_url_length = int(url.get("max_url_length") or _MAX_URL_LENGTH)
        self.allowed_ports = frozenset(url.get("allowed_ports") or ())
        domains = [d.strip().lower().rstrip(".") for d in url.get("allowed_domains") or ()]
        self.exact = frozenset(d for d in domains if not d.startswith("*."))
        self.wildcards = tuple(d[1:] for d in domains if d.startswith("*."))  # ".corp.com"
        self.headers: dict[str, str] = dict(section.get("headers") or {})
        self.fields = frozenset(section.get("allowed_fields") or ())
        self.app: Any = None  # this server's ASGI app, for relative URLs (set by the lifespan)

    @classmethod
    def from_settings(cls, settings: Any) -> Webhooks:
        """langgraph.json `webhooks`, and `http.disable_webhooks`."""
        disabled = (settings.extra.get("http") or {}).get("disable_webhooks")
        return cls(settings.extra.get("webhooks"), enabled=not disabled)

    # -- the policy -----------------------------------------------------------------------------

    async def admit(self, url: str | None) -> None:
        """At creation: 422 for a webhook the policy refuses. A host that does not resolve
        now is let through (the send re-checks it); every literal address is judged here."""
        if not url or not self.enabled:
            return
        try:
            await self.check(url, strict=False)
        except WebhookRefused as refused:
            raise UnprocessableEntity(refused.detail) from None

    async def check(self, url: str, *, strict: bool = True) -> _Target:
        """Where `url` may be sent, or `WebhookRefused`. `strict`: a host that does not
        resolve is refused (at send time) rather than let through (at creation)."""
        if len(url) > self.max_url_length:
            raise WebhookRefused("Webhook URL too long")
        if url.startswith("/") and not url.startswith("//"):
            if self.disable_loopback:
                raise WebhookRefused("Loopback webhooks are disabled")
            return _Target(url, None)
        parts = _parse(url)  # httpx's own parse: the host checked is the host dialled
        scheme = parts.scheme
        if scheme not in ("http", "https"):
            raise WebhookRefused(f"Webhook host blocked: scheme {scheme or '(none)'!r} is not "
                                 "http or https")
        if self.require_https and scheme != "https":
            raise WebhookRefused("Webhook must use https")
        port = parts.port or (443 if scheme == "https" else 80)
        if not 0 < port < 65536:
            raise WebhookRefused("Invalid webhook URL")
        if self.allowed_ports and port not in self.allowed_ports:
            raise WebhookRefused(f"Webhook port {port} not allowed")
        host = parts.host.rstrip(".")
        if not host:
            raise WebhookRefused(f"Invalid webhook hostname '{host}'")
        if (self.exact or self.wildcards) and not self._listed(host):
            raise WebhookRefused("Webhook domain not allowed")
        if self._listed(host):
            return _Target(url, None)
        return _Target(url, await _public_address(host, port, strict))

    def _listed(self, host: str) -> bool:
        """Named by `allowed_domains` (a `*.corp.com` entry: its subdomains, not corp.com)."""
        return host in self.exact or any(host.endswith(w) for w in self.wildcards)

    # -- sending --------------------------------------------------------------------------------

    async def send(self, url: str, payload: dict[str, Any], run_id: str) -> None:
        """POST `payload` (JSON) to `url`; a failure or a refusal is logged, never raised."""
        if self.fields:
            payload = {k: v for k, v in payload.items() if k in self.fields}
        try:
            with anyio.fail_after(_TIME_LIMIT):
                status = await self._deliver(url, dumps(payload))
        except WebhookRefused as refused:
            logger.warning("Webhook %s for run %s not sent: %s", url, run_id, refused.detail)
        except TimeoutError:
            logger.warning("Webhook %s for run %s: no answer in %.0f s", url, run_id, _TIME_LIMIT)
        except Exception as error:  # the receiver's problem, never the run's
            logger.warning("Webhook %s for run %s failed: %s", url, run_id, error)
        else:
            if status >= 400:
                logger.warning("Webhook %s for run %s answered %d", url, run_id, status)

    async def _deliver(self, url: str, payload: bytes) -> int:
        """The POST, following redirects that pass the checks; the last status."""
        method, body = "POST", payload
        for _ in range(_MAX_REDIRECTS + 1):
            target = await self.check(url)
            status, location = await self._request(method, target, body)
            if status not in _REDIRECTS or not location:
                return status
            url = urljoin(url, location)
            if status == 303 or status in (301, 302):  # as browsers and httpx: a GET now
                method, body = "GET", None
        raise WebhookRefused(f"more than {_MAX_REDIRECTS} redirects")

    async def _request(self, method: str, target: _Target, body: bytes | None
                       ) -> tuple[int, str | None]:
        url, headers, extensions = httpx.URL(target.url), dict(self.headers), {}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if target.address is not None:  # connect to the address checked, not a new DNS answer
            headers["Host"] = url.netloc.decode("ascii")
            extensions["sni_hostname"] = url.host
            url = url.copy_with(host=target.address)
        async with self._client(target) as client:
            request = client.build_request(method, url, content=body, headers=headers,
                                           extensions=extensions)
            response = await client.send(request, stream=True)
            try:
                read = 0
                async for chunk in response.aiter_raw():
                    read += len(chunk)
                    if read >= _MAX_RESPONSE:
                        break
            finally:
                await response.aclose()
            return response.status_code, response.headers.get("location")

    def _client(self, target: _Target) -> httpx.AsyncClient:
        common: dict[str, Any] = {"follow_redirects": False, "timeout": _TIME_LIMIT}
        if target.address is None and target.url.startswith("/"):
            if self.app is None:
                raise WebhookRefused("no app to call for a relative URL")
            return httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app),
                                     base_url="http://localhost", **common)
        # No proxy from the environment: it would connect on its own, past these checks.
        return httpx.AsyncClient(verify=_tls(), trust_env=False, **common)


def _parse(url: str) -> httpx.URL:
    try:
        return httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError):
        raise WebhookRefused("Invalid webhook URL") from None


async def _public_address(host: str, port: int, strict: bool) -> str | None:
    """The first address `host` resolves to, all of them public; None when it does not
    resolve and not `strict`."""
    if host.lower() == "localhost" or host.lower().endswith(".localhost"):
        raise WebhookRefused(f"Webhook host blocked: {host} is a loopback host")
    try:
        found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        if strict:
            raise WebhookRefused(f"Webhook host blocked: {host} does not resolve") from None
        return None
    addresses = [str(info[4][0]).partition("%")[0] for info in found]
    for address in addresses:
        reason = _blocked(ipaddress.ip_address(address))
        if reason is not None:
            shown = host if host == address else f"{host} ({address})"
            raise WebhookRefused(f"Webhook host blocked: {shown} is {reason} address")
    return addresses[0]


def _blocked(ip: _Address) -> str | None:
    """Why `ip` may not receive a webhook, None for a public address."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        elif ip in _NAT64:
            ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    for reason, test in (("a loopback", ip.is_loopback), ("a link-local", ip.is_link_local),
                         ("an unspecified", ip.is_unspecified), ("a multicast", ip.is_multicast)):
        if test:
            return reason
    if ip.is_private or ip.is_reserved or ip in _SHARED or not ip.is_global:
        return "a private"
    return None


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every call (building one loads the CA bundle: ~20 ms)."""
    return httpx.create_ssl_context()
