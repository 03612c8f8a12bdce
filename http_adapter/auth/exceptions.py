"""The error an auth handler raises to answer a request itself (langgraph-sdk's
`Auth.exceptions.HTTPException`, same constructor, so auth files keep working unchanged)."""

from __future__ import annotations

import http
from collections.abc import Mapping

__all__ = ["HTTPException"]


class HTTPException(Exception):
    """Answer the request with `status_code` and `{"detail": detail}` (plus `headers`).

    Defaults to 401 (it is raised from auth code); `detail` defaults to the status phrase.
    """

    def __init__(
        self,
        status_code: int = 401,
        detail: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if detail is None:
            detail = http.HTTPStatus(status_code).phrase
        super().__init__(status_code, detail)
        self.status_code = status_code
        self.detail = detail
        self.headers = headers

    def __str__(self) -> str:
        return f"{self.status_code}: {self.detail}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status_code={self.status_code!r}, detail={self.detail!r})"
