"""A JSON answer written as the parts `encode.dumps_parts` made (issue 32).

A long thread's state is megabytes, mostly one kept message list: sent as its own part, it goes
to the socket as it is kept, not copied into one body first.
"""

from __future__ import annotations

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

__all__ = ["JSONParts"]


class JSONParts(Response):
    """`application/json` from `parts`, one `Content-Length` for them all."""

    media_type = "application/json"

    def __init__(self, parts: list[bytes], status_code: int = 200,
                 headers: dict[str, str] | None = None) -> None:
        self.parts = parts
        super().__init__(b"", status_code, headers)
        self.headers["content-length"] = str(sum(map(len, parts)))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code,
                    "headers": self.raw_headers})
        last = len(self.parts) - 1
        for at, part in enumerate(self.parts):
            await send({"type": "http.response.body", "body": part, "more_body": at < last})
