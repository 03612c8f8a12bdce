"""`graphrun dev|serve` flags for the request limits (issue 26); defaults in `_http_protocol.py`
and `Settings.max_body_size`.

    --max-body-size BYTES        larger request bodies are answered 413 (env GRAPHRUN_MAX_BODY_SIZE;
                                 default 64MiB; 0: no limit)
    --max-header-size BYTES      request line + headers, else 431 (GRAPHRUN_MAX_HEADER_SIZE; 32KiB)
    --max-headers N              headers per request, else 431 (GRAPHRUN_MAX_HEADERS; 100)
    --header-timeout SECONDS     a request's head must arrive within it, else 408
                                 (GRAPHRUN_HEADER_TIMEOUT; 60)
    --request-timeout SECONDS    its head and body (GRAPHRUN_REQUEST_TIMEOUT; 300)
    --keep-alive-timeout SECONDS an idle connection is closed after it
                                 (GRAPHRUN_KEEP_ALIVE_TIMEOUT; 5)
    --max-connections N          open connections; the longest idle make room for new ones
                                 (GRAPHRUN_MAX_CONNECTIONS; 10,000 or half the open-files limit)

Sizes take a K, M or G suffix (KiB, MiB, GiB: `64M`). A flag wins over its variable.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from .config import ConfigError

__all__ = ["ConnectionLimits", "add_limit_flags", "limit_options"]


@dataclasses.dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """The per-connection limits `graphrun dev|serve` serves with (`_http_protocol.py`)."""

    max_header_size: int = 32 * 1024  # bytes: request line + header names and values
    max_headers: int = 100  # Apache's LimitRequestFields
    header_timeout: float = 60.0  # seconds (Node's headersTimeout, nginx's client_header_timeout)
    request_timeout: float = 300.0  # seconds for head + body (Node's requestTimeout)
    keep_alive_timeout: float = 5.0  # seconds idle between requests (uvicorn's, Node's default)
    max_connections: int | None = None  # None: `_http_protocol.default_max_connections()`


# flag dest -> (env variable, kind, help)
_FLAGS: dict[str, tuple[str, str, str]] = {
    "max_body_size": ("GRAPHRUN_MAX_BODY_SIZE", "size",
                      "larger request bodies are answered 413 (default: 64M; 0: no limit)"),
    "max_header_size": ("GRAPHRUN_MAX_HEADER_SIZE", "size",
                        "bytes of request line and headers, else 431 (default: 32K)"),
    "max_headers": ("GRAPHRUN_MAX_HEADERS", "count",
                    "headers per request, else 431 (default: 100)"),
    "header_timeout": ("GRAPHRUN_HEADER_TIMEOUT", "seconds",
                       "a request's head must arrive within it, else 408 (default: 60)"),
    "request_timeout": ("GRAPHRUN_REQUEST_TIMEOUT", "seconds",
                        "a request's head and body must arrive within it, else 408 (default: 300)"),
    "keep_alive_timeout": ("GRAPHRUN_KEEP_ALIVE_TIMEOUT", "seconds",
                           "an idle connection is closed after it (default: 5)"),
    "max_connections": ("GRAPHRUN_MAX_CONNECTIONS", "count",
                        "open connections at most; the longest idle make room for new ones "
                        "(default: 10000, or half the open-files limit)"),
}
_METAVARS = {"size": "BYTES", "count": "N", "seconds": "SECONDS"}
_SIZE = re.compile(r"(\d+)\s*([kmg]?)i?b?", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def add_limit_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("request limits (issue 26)")
    for dest, (env, kind, help_) in _FLAGS.items():
        group.add_argument("--" + dest.replace("_", "-"), dest=dest, default=None,
                           metavar=_METAVARS[kind], help=f"{help_} (env {env})")


def limit_options(args: argparse.Namespace, environ: Mapping[str, str]
                  ) -> tuple[ConnectionLimits, dict[str, Any]]:
    """The connection limits and the Settings fields (`max_body_size`) the flags and
    environment give; `ConfigError` names a value that is wrong."""
    found: dict[str, Any] = {}
    for dest, (env, kind, _) in _FLAGS.items():
        given = getattr(args, dest, None)
        raw, name = (given, "--" + dest.replace("_", "-")) if given is not None else (
            environ.get(env, "").strip() or None, env)
        if raw is not None:
            found[dest] = _parse(raw, kind, name)
    body = found.pop("max_body_size", None)
    settings = {} if body is None else {"max_body_size": body or None}
    return ConnectionLimits(**found), settings


def _parse(raw: str, kind: str, name: str) -> Any:
    try:
        if kind == "seconds":
            value: float = float(raw)
            if value > 0:
                return value
        elif kind == "count":
            value = int(raw)
            if value > 0:
                return value
        elif (match := _SIZE.fullmatch(raw.strip())) is not None:
            size = int(match.group(1)) * _UNITS[match.group(2).lower()]
            if size > 0 or name.endswith(("-body-size", "BODY_SIZE")):
                return size
    except ValueError:
        pass
    expected = {"seconds": "more than 0 seconds", "count": "a whole number above 0",
                "size": "a size in bytes, such as 65536 or 64K"}[kind]
    raise ConfigError(f"{name}={raw!r}: expected {expected}")

