"""`graphrun dev|serve` flags that choose the server's back end (issue 19 §5, "What a user does").

    --database-url URL   PostgreSQL for every record (env DATABASE_URI, LangGraph's name)
    --redis-url URL      Redis for wake-ups, cancels and run streams (env REDIS_URI)
    --pool-min N / --pool-max N     connections per PostgreSQL pool (env GRAPHRUN_POOL_MIN/MAX)
    --no-prepared-statements        for PgBouncer in transaction mode (env GRAPHRUN_PREPARED_STATEMENTS=0)
    --drain-grace SECONDS           SIGTERM: how long running runs get to finish
                                    (env BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS, LangGraph's name)
    --lease-seconds / --heartbeat-seconds / --reaper-seconds
                                    how long a host owns a claimed run without renewing it, how
                                    often it renews (default: a third of the lease), how often
                                    every host looks for lapsed leases (cluster mode)

A flag wins over its environment variable. The environment is read after the project's `env`
was applied, so a `.env` named in langgraph.json may set them, as in a LangGraph deployment.
"""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Mapping
from typing import Any

from .agent_server.settings import Settings
from .config import ConfigError

__all__ = ["add_backend_flags", "backend_options"]

_DATABASE_SCHEMES = ("postgresql://", "postgres://")
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def add_backend_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("scale-out (PostgreSQL + Redis)")
    group.add_argument("--database-url", default=None, metavar="URL",
                       help="PostgreSQL for every record, shared by many processes "
                            "(env DATABASE_URI; default: the SQLite file)")
    group.add_argument("--redis-url", default=None, metavar="URL",
                       help="Redis for wake-ups, cancels and run streams across processes "
                            "(env REDIS_URI; needs --database-url)")
    group.add_argument("--pool-min", type=int, default=None, metavar="N",
                       help="connections each PostgreSQL pool keeps open (env GRAPHRUN_POOL_MIN; "
                            "default: 1)")
    group.add_argument("--pool-max", type=int, default=None, metavar="N",
                       help="connections each PostgreSQL pool opens at most (env GRAPHRUN_POOL_MAX; "
                            "default: 10)")
    group.add_argument("--no-prepared-statements", dest="prepared_statements",
                       action="store_false", default=None,
                       help="for PgBouncer in transaction mode (env GRAPHRUN_PREPARED_STATEMENTS=0)")
    group.add_argument("--drain-grace", type=float, default=None, metavar="SECONDS",
                       help="on SIGTERM, how long running runs get to finish before they are "
                            "handed back to the queue (env BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS; "
                            "default: 20; 5 for graphrun dev, as langgraph dev)")
    group.add_argument("--lease-seconds", type=float, default=None, metavar="SECONDS",
                       help="how long a host owns a claimed run without renewing its lease "
                            "(default: 30)")
    group.add_argument("--heartbeat-seconds", type=float, default=None, metavar="SECONDS",
                       help="how often a host renews its leases (default: a third of the lease)")
    group.add_argument("--reaper-seconds", type=float, default=None, metavar="SECONDS",
                       help="how often each host re-queues runs whose lease lapsed (default: 5)")


def backend_options(args: argparse.Namespace, environ: Mapping[str, str]) -> dict[str, Any]:
    """The Settings fields the flags and environment give; `ConfigError` names what is wrong."""
    found: dict[str, Any] = {}
    database = args.database_url or environ.get("DATABASE_URI") or None
    redis = args.redis_url or environ.get("REDIS_URI") or None
    if redis and not database:
        raise ConfigError("--redis-url (REDIS_URI) needs --database-url (DATABASE_URI): Redis "
                          "only carries signals and streams, PostgreSQL holds the records")
    if database:
        _check_url(database, _DATABASE_SCHEMES, "--database-url")
        _need_module("asyncpg", "--database-url")
        if getattr(args, "in_memory", False):
            raise ConfigError("--in-memory and --database-url exclude each other")
        found["database_url"] = database
    if redis:
        _check_url(redis, _REDIS_SCHEMES, "--redis-url")
        _need_module("redis", "--redis-url")
        found["redis_url"] = redis
    found.update(_pool(args, environ))
    prepared = args.prepared_statements
    if prepared is None and "GRAPHRUN_PREPARED_STATEMENTS" in environ:
        prepared = _boolean(environ["GRAPHRUN_PREPARED_STATEMENTS"], "GRAPHRUN_PREPARED_STATEMENTS")
    if prepared is not None:
        found["prepared_statements"] = prepared
    grace = _number(args.drain_grace, environ, "BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS", float,
                    "--drain-grace")
    if grace is not None:
        if grace < 0:
            raise ConfigError("--drain-grace must be 0 or more seconds")
        found["drain_grace"] = grace
    found.update(_leases(args))
    return found


def _leases(args: argparse.Namespace) -> dict[str, float]:
    found = {name: value for name, value in (
        ("lease", args.lease_seconds), ("lease_heartbeat", args.heartbeat_seconds),
        ("reaper_interval", args.reaper_seconds)) if value is not None}
    if any(value <= 0 for value in found.values()):
        raise ConfigError("--lease-seconds, --heartbeat-seconds and --reaper-seconds must be "
                          "more than 0")
    lease = found.get("lease", Settings(graphs={}).lease)
    if found.get("lease_heartbeat", 0) >= lease:
        raise ConfigError("--heartbeat-seconds must be shorter than --lease-seconds")
    return found


def _pool(args: argparse.Namespace, environ: Mapping[str, str]) -> dict[str, int]:
    low = _number(args.pool_min, environ, "GRAPHRUN_POOL_MIN", int, "--pool-min")
    high = _number(args.pool_max, environ, "GRAPHRUN_POOL_MAX", int, "--pool-max")
    defaults = Settings(graphs={})
    if low is not None and low < 0:
        raise ConfigError("--pool-min must be 0 or more")
    if high is not None and high < 1:
        raise ConfigError("--pool-max must be at least 1")
    if (low if low is not None else defaults.pool_min) > (
        high if high is not None else defaults.pool_max
    ):
        raise ConfigError("--pool-min must not exceed --pool-max")
    return {k: v for k, v in (("pool_min", low), ("pool_max", high)) if v is not None}


def _number(given: Any, environ: Mapping[str, str], name: str, kind: type, flag: str) -> Any:
    if given is not None:
        return given
    raw = environ.get(name, "").strip()
    if not raw:
        return None
    try:
        return kind(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a number (it stands for {flag})") from None


def _boolean(raw: str, name: str) -> bool:
    value = raw.strip().lower()
    if value in _TRUE | _FALSE:
        return value in _TRUE
    raise ConfigError(f"{name}={raw!r}: expected true or false")


def _check_url(url: str, schemes: tuple[str, ...], flag: str) -> None:
    if not url.startswith(schemes):
        raise ConfigError(f"{flag}: expected a URL starting with {' or '.join(schemes)}")


def _need_module(module: str, flag: str) -> None:
    """The back ends are an extra: say how to get it instead of failing at start-up."""
    if importlib.util.find_spec(module) is None:
        raise ConfigError(f"{flag} needs the {module!r} package: pip install 'graphrun[postgres]' "
                          "(from a clone: pip install -e '.[postgres]')")
