"""The answer of `/wait` and `/join`: the run's result as JSON once it ends, newlines until then.

As the reference's, a newline goes out every `interval` seconds while the run goes on (issue 31
item 6: proxies with idle timeouts keep the connection open; JSON parsers skip leading
whitespace, the SDKs' included). A result ready before the first newline is due goes out with
a `Content-Length` instead, its parts written as they are (issue 32: a long thread's state is
megabytes, which chunked framing would copy whole); the reference streams it chunked either way.
A client that leaves before the result stops the wait, and with `on_disconnect="cancel"`
(`?cancel_on_disconnect=true` for a join) the run too, as the reference's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..encode import dumps_parts
from ._parts import JSONParts

__all__ = ["Waited"]


class Waited(Response):
    """`result()` as JSON, waited for when the response is sent; `on_disconnect()` if the
    client leaves first."""

    def __init__(self, result: Callable[[], Awaitable[Any]], interval: float,
                 headers: dict[str, str] | None = None,
                 on_disconnect: Callable[[], Awaitable[None]] | None = None) -> None:
        # as a StreamingResponse: no body yet, so no `Content-Length` among the headers
        self.status_code, self.media_type, self.background = 200, "application/json", None
        self.init_headers(headers)
        self._result, self._interval, self._headers = result, interval, headers
        self._on_disconnect = on_disconnect

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        task = asyncio.ensure_future(self._result())
        left = asyncio.ensure_future(_disconnected(receive))
        try:
            started = False
            while not task.done():
                await asyncio.wait({task, left}, timeout=self._interval,
                                   return_when=asyncio.FIRST_COMPLETED)
                if task.done():
                    break
                if left.done():  # the client left: nobody to answer
                    if self._on_disconnect is not None:
                        await self._on_disconnect()
                    return
                if not started:  # chunked from here: no length is known yet
                    await send({"type": "http.response.start", "status": self.status_code,
                                "headers": self.raw_headers})
                    started = True
                await send({"type": "http.response.body", "body": b"\n", "more_body": True})
            if not started:
                await JSONParts(dumps_parts(task.result()), headers=self._headers)(
                    scope, receive, send)
                return
            body = b"".join(dumps_parts(task.result()))  # one chunk: each part would be its own
            await send({"type": "http.response.body", "body": body, "more_body": False})
        finally:
            task.cancel()  # the run goes on unless `on_disconnect` cancelled it
            left.cancel()


async def _disconnected(receive: Receive) -> None:
    """Return once the client has gone (the request's body was read before the answer)."""
    while (await receive())["type"] != "http.disconnect":
        pass
