"""The answer of `/wait` and `/join`: the run's result as JSON once it ends, newlines until then.

As the reference's, a newline goes out every `interval` seconds while the run goes on (issue 31
item 6: proxies with idle timeouts keep the connection open; JSON parsers skip leading
whitespace, the SDKs' included). A result ready before the first newline is due goes out with
a `Content-Length` instead, its parts written as they are (issue 32: a long thread's state is
megabytes, which chunked framing would copy whole); the reference streams it chunked either way.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from ..encode import dumps_parts
from ._parts import JSONParts

__all__ = ["Waited"]


class Waited(Response):
    """`result()` as JSON, waited for when the response is sent."""

    def __init__(self, result: Callable[[], Awaitable[Any]], interval: float,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(b"", media_type="application/json", headers=headers)
        self._result, self._interval, self._headers = result, interval, headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        task = asyncio.ensure_future(self._result())
        try:
            if await self._ended(task):
                answer: Response = JSONParts(dumps_parts(task.result()), headers=self._headers)
            else:
                answer = StreamingResponse(self._newlines_then(task),
                                           media_type="application/json", headers=self._headers)
            await answer(scope, receive, send)
        finally:
            task.cancel()  # the client left: stop waiting (the run goes on)

    async def _ended(self, task: asyncio.Future[Any]) -> bool:
        return bool((await asyncio.wait({task}, timeout=self._interval))[0])

    async def _newlines_then(self, task: asyncio.Future[Any]) -> AsyncIterator[bytes]:
        yield b"\n"
        while not await self._ended(task):
            yield b"\n"
        yield b"".join(dumps_parts(task.result()))  # one chunk: each part would be its own
