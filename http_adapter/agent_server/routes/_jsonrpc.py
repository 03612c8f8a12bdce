"""JSON-RPC 2.0 framing shared by the A2A and MCP endpoints (SPEC §3 "Other groups").

Decodes one message into a `Call` (or raises `RpcError` with the standard code), builds
result and error objects, and validates a call's `params` against a msgspec Struct. Both
protocols answer protocol errors as JSON-RPC error objects; which HTTP status goes with them
is the caller's choice (A2A: always 200; MCP: 400 for a body that is not JSON-RPC at all).
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "Call",
    "RpcError",
    "call_of",
    "decode",
    "error",
    "params",
    "result",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

T = TypeVar("T")
_decoder = msgspec.json.Decoder()


class RpcError(Exception):
    """A JSON-RPC error: `code`, `message` and optional `data` (the error object's fields)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class Call(msgspec.Struct, frozen=True):
    """One decoded request or notification (`is_notification`: it had no `id` member)."""

    method: str
    params: Any
    id: str | int | None
    is_notification: bool


def decode(raw: bytes) -> Any:
    """The body as JSON, or RpcError(PARSE_ERROR)."""
    try:
        return _decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError) as exc:  # issue 26
        raise RpcError(PARSE_ERROR, f"Parse error: {exc}") from None


def call_of(message: Any) -> Call:
    """A JSON-RPC request object as a Call, or RpcError(INVALID_REQUEST)."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 request object")
    method = message.get("method")
    if not isinstance(method, str):
        raise RpcError(INVALID_REQUEST, "Invalid Request: 'method' must be a string")
    request_id = message.get("id")
    if request_id is not None and (
        isinstance(request_id, bool) or not isinstance(request_id, (str, int))
    ):
        raise RpcError(INVALID_REQUEST, "Invalid Request: 'id' must be a string or a number")
    return Call(method, message.get("params"), request_id, "id" not in message)


def params(call: Call, struct: type[T]) -> T:
    """The call's params validated as `struct`, or RpcError(INVALID_PARAMS) saying why."""
    if not isinstance(call.params, dict):
        raise RpcError(INVALID_PARAMS, f"Invalid params for {call.method}: expected an object")
    try:
        return msgspec.convert(call.params, type=struct)
    except msgspec.ValidationError as exc:
        raise RpcError(INVALID_PARAMS, f"Invalid params for {call.method}: {exc}") from None


def result(request_id: Any, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: Any, exc: RpcError) -> dict[str, Any]:
    body: dict[str, Any] = {"code": exc.code, "message": exc.message}
    if exc.data is not None:
        body["data"] = exc.data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}
