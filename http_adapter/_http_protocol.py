"""uvicorn's HTTP/1.1 protocol (httptools) with the limits a server open to the network needs
(issue 26: an 8 MB header and 100k headers were accepted, requests never finished stayed open
forever, and ~20,000 idle connections used up the open files, locking every client out).

- The request head (request line and headers) may hold at most `max_header_size` bytes and
  `max_headers` headers: beyond either, 431 and the connection is closed (httptools has no limit
  of its own; h11's 16 KiB and Node's 16 KiB are the usual ones).
- Time limits, as Node's HTTP server has them: a request's head must have arrived within
  `header_timeout` seconds of the connection being opened (or of its first byte, on a reused
  connection), and the whole request, body included, within `request_timeout` seconds of its
  first byte; else 408 (if nothing was answered yet) and the connection is closed. A connection
  idle between requests is closed after `keep_alive_timeout` seconds (uvicorn's own timer).
- At most `max_connections` connections: past it, the connections idle longest (no request in
  progress) are closed to make room, as nginx reuses its keep-alive connections; a connection
  that finds only busy ones is answered 503. The default keeps below the open-files limit, so a
  flood of idle sockets can no longer stop the server from accepting.

The body size is limited by the app itself (`agent_server/body_limit.py`), where a 413 can carry
a JSON `detail` and CORS headers.
"""

from __future__ import annotations

import heapq
import json
import logging
import time
from asyncio import TimerHandle
from typing import Any

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from ._limit_options import ConnectionLimits

__all__ = ["ConnectionLimits", "default_max_connections", "limited_protocol"]

logger = logging.getLogger("http_adapter")

_MAX_CONNECTIONS = 10_000
_EVICT_BATCH = 16  # idle connections closed at once when full (nginx drains 32)


def default_max_connections() -> int:
    """10,000, or half the open-files limit when that is lower: each connection is a file, and
    the other half stays for database connections, Redis and the files a graph opens."""
    try:
        import resource
    except ImportError:  # not on this platform (Windows)
        return _MAX_CONNECTIONS
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        return _MAX_CONNECTIONS
    return max(1, min(_MAX_CONNECTIONS, soft // 2))


class _Refused(Exception):
    """Raised inside a parser callback to stop parsing a request that is over a limit."""


def limited_protocol(limits: ConnectionLimits) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol class bound to `limits` (for `uvicorn.Config(http=...)`)."""
    return type("LimitedHttpProtocol", (LimitedHttpProtocol,),
                {"limits": limits, "max_connections": limits.max_connections})


class LimitedHttpProtocol(HttpToolsProtocol):
    """One connection; see the module docstring. Subclasses set `limits` (`limited_protocol`)."""

    limits = ConnectionLimits()
    max_connections: int | None = None  # None: the default, found at the first connection

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_bytes = 0
        self._head_count = 0
        self._head_timer: TimerHandle | None = None
        self._request_timer: TimerHandle | None = None
        self._refusal: tuple[int, str] | None = None
        self._idle_since = time.monotonic()

    # -- connections --------------------------------------------------------------------------

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_timer = self.loop.call_later(self.limits.header_timeout, self._timed_out)
        most = self.max_connections
        if most is None:  # once the server runs (the CLI raises the open-files limit first)
            most = type(self).max_connections = default_max_connections()
        if len(self.connections) > most:
            self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timers()
        super().connection_lost(exc)

    def _idle(self) -> bool:
        """No request in progress: nothing is lost by closing it (a client retries)."""
        return self.cycle is None or self.cycle.response_complete

    def _make_room(self) -> None:
        idle = [c for c in self.connections if c is not self and isinstance(c, LimitedHttpProtocol)
                and c._idle() and not c.transport.is_closing()]
        if not idle:
            logger.warning("%d connections, all busy: refusing a new one", len(self.connections))
            self._refuse(503, "Too many connections")
            return
        for conn in heapq.nsmallest(_EVICT_BATCH, idle, key=lambda c: c._idle_since):
            conn.transport.close()

    # -- the request head ---------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        if self._head_timer is None and self._idle():  # bytes of a next request (even blank
            self._head_timer = self.loop.call_later(  # lines, which start no message) on a
                self.limits.header_timeout, self._timed_out)  # reused connection
        super().data_received(data)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_bytes = self._head_count = 0
        if self._head_timer is None:  # a reused connection: the head's time starts now
            self._head_timer = self.loop.call_later(self.limits.header_timeout, self._timed_out)
        self._request_timer = self.loop.call_later(self.limits.request_timeout, self._timed_out)

    def on_url(self, url: bytes) -> None:
        self._head_bytes += len(url)
        if self._head_bytes > self.limits.max_header_size:
            self._over_limit()
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._head_bytes += len(name) + len(value) + 4  # ": " and CRLF
        self._head_count += 1
        limits = self.limits
        if self._head_bytes > limits.max_header_size or self._head_count > limits.max_headers:
            self._over_limit()
        super().on_header(name, value)

    def _over_limit(self) -> None:
        limits = self.limits
        self._refusal = (431, f"Request headers are larger than {limits.max_header_size} bytes"
                         if self._head_bytes > limits.max_header_size
                         else f"More than {limits.max_headers} request headers")
        raise _Refused  # httptools stops parsing; uvicorn calls `send_400_response`

    def on_headers_complete(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        if self._request_timer is not None:
            self._request_timer.cancel()
            self._request_timer = None
        super().on_message_complete()

    def on_response_complete(self) -> None:
        self._idle_since = time.monotonic()
        super().on_response_complete()

    def send_400_response(self, msg: str) -> None:
        if self._refusal is None:
            super().send_400_response(msg)
        else:
            self._refuse(*self._refusal)

    # -- ending a connection ------------------------------------------------------------------

    def _timed_out(self) -> None:
        """The head or the request did not arrive in time: 408 unless an answer has begun."""
        self._cancel_timers()
        if self.transport.is_closing():
            return
        cycle = self.cycle  # None, the request in progress, or the last one answered
        if cycle is not None and not cycle.response_complete:
            cycle.disconnected = True  # the app's receive() says so, its answer goes nowhere
            cycle.message_event.set()
            if cycle.response_started:  # an answer has begun: it can only be cut short
                self.transport.close()
                return
        self._refuse(408, "The request did not arrive in time")

    def _refuse(self, status: int, detail: str) -> None:
        """Answer `status` with a JSON `detail` and close (only close while a response is
        being sent: a pipelined request's refusal must not land inside it)."""
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if cycle is not None and cycle.response_started and not cycle.response_complete:
            self.transport.close()
            return
        body = json.dumps({"detail": detail}).encode()
        head = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            head += [name, b": ", value, b"\r\n"]
        head += [b"content-type: application/json\r\ncontent-length: ",
                 str(len(body)).encode(), b"\r\nconnection: close\r\n\r\n", body]
        self.transport.write(b"".join(head))
        self.transport.close()

    def _cancel_timers(self) -> None:
        for timer in (self._head_timer, self._request_timer):
            if timer is not None:
                timer.cancel()
        self._head_timer = self._request_timer = None
