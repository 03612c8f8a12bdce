"""One scenario's conversation with a server, written down so two servers can be compared.

A `Session` sends requests through `langgraph-sdk` (what users call) or raw httpx (where the SDK
hides the wire: status codes, headers, SSE framing) and appends each exchange to `log`.
`normalize` then replaces what differs from run to run: ids (in order of first appearance),
timestamps, checkpoint channel versions. Issue 18.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import httpx
from langgraph_sdk import get_sync_client
from langgraph_sdk.errors import APIStatusError

__all__ = ["GRAPHS", "Session", "normalize", "parse_sse"]

GRAPHS = ("agent", "router", "chat", "chat_bound", "chat_bound_config", "chat_bound_async",
          "nested", "answer")
_NS = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")  # built-in assistant ids (spec §3)
_BUILTIN = {str(uuid.uuid5(_NS, graph)): f"<assistant:{graph}>" for graph in GRAPHS}
_HEADERS = ("content-type", "location", "content-location", "x-pagination-total",
            "x-pagination-next")
_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}:\d{2}|Z)?$")
_TIME_KEYS = frozenset({"__request_start_time_ms__"})  # wall-clock numbers
_PORT_RE = re.compile(r"(//(?:127\.0\.0\.1|localhost)):\d+")
_HEX_ID_RE = re.compile(r"^[0-9a-f]{32}$")  # interrupt ids
_EVENT_ID_RE = re.compile(r"^\d{13}-(\d+)$")  # resumable stream event ids: ms-seq
_VERSION_RE = re.compile(r"^\d{32}\.\d+\.\d+$")  # LangGraph's channel versions: counter.random


class Session:
    """A client of one server for one scenario; every exchange lands in `log`."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx.Client(base_url=url, timeout=30)
        self.sdk = get_sync_client(url=url, api_key=None, timeout=30)
        self.log: list[Any] = []

    def close(self) -> None:
        self.http.close()

    def note(self, label: str, value: Any) -> Any:
        """Record a value the scenario derived itself (a status, a count)."""
        self.log.append({"note": label, "value": value})
        return value

    def call(self, label: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call the SDK; record its result (a stream as its parts) or its HTTP error."""
        try:
            result = fn(*args, **kwargs)
            if not isinstance(result, dict | list | str | int | float | bool | None):
                result = [_part(part) for part in result]
        except APIStatusError as error:
            self.log.append({"sdk": label, "status": error.response.status_code,
                             "body": _body(error.response)})
            return None
        self.log.append({"sdk": label, "result": result})
        return result

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """A raw request: status, the headers that matter to clients, and the decoded body."""
        response = self.http.request(method, path, **kwargs)
        self.log.append({"request": f"{method} {path}", "status": response.status_code,
                         "headers": _headers(response), "body": _body(response)})
        return response

    def stream(self, method: str, path: str, **kwargs: Any) -> list[dict[str, Any]]:
        """A raw SSE request: status, headers, the frame terminator, and the events in order."""
        with self.http.stream(method, path, **kwargs) as response:
            raw = response.read().decode()
        events = parse_sse(raw)
        self.log.append({"stream": f"{method} {path}", "status": response.status_code,
                         "headers": _headers(response), "crlf": "\r\n" in raw, "events": events})
        return events


def _part(part: Any) -> Any:
    if hasattr(part, "event"):
        entry = {"event": part.event, "data": part.data}
        if getattr(part, "id", None) is not None:
            entry["id"] = part.id
        return entry
    return part


def _headers(response: httpx.Response) -> dict[str, str]:
    return {name: response.headers[name] for name in _HEADERS if name in response.headers}


def _body(response: httpx.Response) -> Any:
    text = response.text
    if not text:
        return ""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return {"text": text}


def parse_sse(raw: str) -> list[dict[str, Any]]:
    """SSE frames to `{event, data[, id]}`; heartbeat comments dropped (they depend on timing)."""
    events = []
    for frame in re.split(r"\r\n\r\n|\n\n", raw):
        event: dict[str, Any] = {}
        for line in re.split(r"\r\n|\n", frame):
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            event[name] = value[1:] if value.startswith(" ") else value
        if event:
            if "data" in event:
                event["data"] = json.loads(event["data"]) if event["data"] else event["data"]
            events.append(event)
    return events


class _Ids:
    """Ids to "<id:N>" in order of first appearance; built-in assistants keep their graph."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = dict(_BUILTIN)

    def __call__(self, match: re.Match[str]) -> str:
        text = match.group(0).lower()
        if text not in self.seen:
            self.seen[text] = f"<id:{len(self.seen) - len(_BUILTIN) + 1}>"
        return self.seen[text]


def normalize(value: Any, ids: _Ids | None = None) -> Any:
    """A transcript with every run-specific value replaced by a stable placeholder."""
    ids = ids if ids is not None else _Ids()
    if isinstance(value, dict):
        if isinstance(value.get("lc_versions"), dict):
            value = {**value, "lc_versions": _lc_versions(value["lc_versions"])}
        # sorted: ids are numbered the same whatever order a server writes keys in
        return {_scalar(key, ids): "<time>" if key in _TIME_KEYS else normalize(value[key], ids)
                for key in sorted(value)}
    if isinstance(value, list | tuple):
        return [normalize(item, ids) for item in value]
    return _scalar(value, ids)


def _lc_versions(versions: dict[str, Any]) -> dict[str, Any]:
    """A chat model's `lc_versions` names every LangChain package of the environment that
    registered itself (`langchain` once it is imported): the recording's had langchain-core
    only; the test extra also has `langchain` (issue 28's create_agent project)."""
    return {k: v for k, v in versions.items() if k == "langchain-core"}


def _scalar(value: Any, ids: _Ids) -> Any:
    if not isinstance(value, str):
        return value
    if _TS_RE.match(value):
        return "<ts>"
    if _VERSION_RE.match(value):
        return "<version>"
    if _HEX_ID_RE.match(value):
        return _UUID_RE.sub(ids, str(uuid.UUID(value)))
    if _EVENT_ID_RE.match(value):
        return _EVENT_ID_RE.sub(r"<ms>-\1", value)
    return _PORT_RE.sub(r"\1:<port>", _UUID_RE.sub(ids, value))


def unordered(events: Iterable[Any]) -> list[Any]:
    """Events whose order the reference itself does not fix, in a canonical order."""
    return sorted(events, key=lambda event: json.dumps(event, sort_keys=True))
