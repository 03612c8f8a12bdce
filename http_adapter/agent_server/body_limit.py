"""The request body size limit (issue 26: a 500 MB JSON body was accepted, 2.6 GB at its peak).

`BodyLimit` answers 413 at once when `Content-Length` says the body is over the limit (a body
within its length needs nothing more: the HTTP parser reads no further than the length), and
counts the bytes of a chunked body (no length) as the app receives them, raising `BodyTooLarge`
once over it: the route's `request.body()` stops there and the error table answers 413.
Counting wraps `receive` only, so the body is not copied again. The 413 closes the connection:
the rest of the body would otherwise still have to be read.
"""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .errors import ServerError

__all__ = ["BodyLimit", "BodyTooLarge"]


class BodyTooLarge(ServerError):
    """A request body over `Settings.max_body_size`."""

    status = 413

    def __init__(self, limit: int) -> None:
        super().__init__(f"Request body is larger than the limit of {limit} bytes")
        self.headers = {"Connection": "close"}


class BodyLimit:
    """ASGI middleware: at most `limit` bytes of request body (None: no limit)."""

    def __init__(self, app: ASGIApp, limit: int | None) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        limit = self.limit
        if scope["type"] != "http" or limit is None:
            await self.app(scope, receive, send)
            return
        declared = _declared(scope)
        if declared is not None:  # the HTTP parser reads no more than the length said
            if declared > limit:
                await _answer(BodyTooLarge(limit), scope, send)
            else:
                await self.app(scope, receive, send)
            return
        await self._counting(scope, receive, send, limit)

    async def _counting(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        """A body without a length (chunked): counted as it arrives."""
        received = 0
        started = False

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > limit:
                raise BodyTooLarge(limit)
            return message

        async def sending(message: Message) -> None:
            nonlocal started
            started = True
            await send(message)

        try:
            await self.app(scope, counted, sending)
        except BodyTooLarge as exc:  # raised outside the routes (custom auth reads the body)
            if started:
                raise
            await _answer(exc, scope, send)


def _declared(scope: Scope) -> int | None:
    """The body's length: its Content-Length, 0 without one (HTTP/1.1: no body), None when it
    comes chunked (Transfer-Encoding wins over a Content-Length, as in the parser)."""
    length = 0
    for name, value in scope["headers"]:
        if name == b"transfer-encoding":
            return None
        if name == b"content-length" and value.isdigit():
            length = int(value)  # (the server refuses a malformed length before the app)
    return length


async def _answer(error: BodyTooLarge, scope: Scope, send: Send) -> None:
    """The error table's answer ({"detail": ...}), from outside the routes."""
    response = JSONResponse({"detail": error.detail}, error.status, error.headers)
    await response(scope, _no_receive, send)


async def _no_receive() -> Message:
    return {"type": "http.disconnect"}
