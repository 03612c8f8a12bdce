"""Which Redis servers graphrun runs on: Redis 6.2 or newer, or any Valkey (issue 19 §9).

`graphrun serve --redis-url` asks the server once at start-up (INFO server) and refuses an older
one with a one-line error rather than warn: the streams and scripts the broker relies on are
tested on 6.2+ only, and a cluster that starts on an unsupported Redis fails later, mid-run, in
ways far harder to read than a refusal (6.0 and older are also out of upstream support).
A Redis that does not answer at start-up is no reason to refuse: Redis holds nothing durable
and the cluster runs without it (§1, §7), so the check is skipped with a warning.
Valkey reports `server_name:valkey` and `valkey_version` (and a frozen `redis_version` of
7.2.x); every Valkey release descends from Redis 7.2, so every one is accepted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MIN_REDIS", "RedisVersionError", "check_redis", "check_server", "describe"]

MIN_REDIS = (6, 2)


class RedisVersionError(RuntimeError):
    """The server is older than `MIN_REDIS`; the message is one line, fit for the CLI."""


def _numbers(raw: Any) -> tuple[int, ...] | None:
    """`"6.2.14"` -> (6, 2, 14); None when there is no leading version number."""
    found = re.match(r"\s*(\d+(?:\.\d+)*)", str(raw))
    return tuple(int(part) for part in found.group(1).split(".")) if found else None


def describe(info: Mapping[str, Any]) -> tuple[str, tuple[int, ...] | None]:
    """The server's product ("redis" | "valkey") and version from INFO server's fields."""
    if str(info.get("server_name", "")).lower() == "valkey" or "valkey_version" in info:
        return "valkey", _numbers(info.get("valkey_version", info.get("redis_version", "")))
    return "redis", _numbers(info.get("redis_version", ""))


def check_server(info: Mapping[str, Any]) -> str:
    """Raise `RedisVersionError` for a Redis older than 6.2 (or no version at all); returns
    e.g. "redis 7.0.15" for the log."""
    product, version = describe(info)
    shown = ".".join(map(str, version)) if version else "an unknown version"
    if product == "redis" and (version is None or version[:2] < MIN_REDIS):
        raise RedisVersionError(
            f"graphrun needs Redis {MIN_REDIS[0]}.{MIN_REDIS[1]} or newer (or Valkey); "
            f"the server runs {shown}"
        )
    return f"{product} {shown}"


async def check_redis(url: str, timeout: float = 5.0) -> str | None:
    """Ask the server at `url`: its description, None when it does not answer (not an
    error: the cluster runs without Redis), `RedisVersionError` when it is too old."""
    from redis.asyncio import Redis
    from redis.exceptions import RedisError

    client = Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        info = await client.info("server")
    except (RedisError, OSError):
        return None
    finally:
        await client.aclose()
    return check_server(info)
