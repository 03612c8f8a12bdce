"""A throwaway PostgreSQL for the `*_postgres` saver cases (issue 19), started on first use.

The same server the tests use (`tests.services.PostgresServer`: Debian's binaries, a temp dir,
a free loopback port, no fsync), stopped at exit. Each library's side of a case gets a database
of its own, so neither reads the other's tables.
"""

from __future__ import annotations

import atexit
from typing import Any

__all__ = ["available", "new_database"]

_server: Any = None


def available() -> bool:
    """Whether the PostgreSQL binaries and asyncpg are installed."""
    try:
        import asyncpg  # noqa: F401

        from tests.services import postgres_bin

        postgres_bin()
    except Exception:  # noqa: BLE001 - missing binaries or driver: no postgres column
        return False
    return True


def new_database() -> str:
    """The URL of a fresh database on the benchmark's server."""
    global _server
    if _server is None:
        from tests.services import PostgresServer

        _server = PostgresServer().start()
        atexit.register(_server.stop)
    return str(_server.new_database())
