"""`graphrun dev|serve` flags and environment that choose the back end (issue 19 §5)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from http_adapter import cli
from http_adapter._backend_options import backend_options
from http_adapter.agent_server.settings import Settings
from http_adapter.config import ConfigError

from .test_cli import graphrun_command

DB = "postgresql://u@db.example:5432/app"
REDIS = "redis://cache.example:6379/0"


def options(*argv: str, **environ: str) -> dict[str, object]:
    args = cli.build_parser().parse_args(["serve", *argv])
    return backend_options(args, environ)


def test_no_flags_no_environment_is_the_sqlite_default() -> None:
    assert options() == {}


def test_flags_and_langgraphs_environment_names() -> None:
    assert options("--database-url", DB, "--redis-url", REDIS) == {
        "database_url": DB, "redis_url": REDIS}
    assert options(DATABASE_URI=DB, REDIS_URI=REDIS) == {"database_url": DB, "redis_url": REDIS}
    # A flag wins over its variable.
    other = "postgres://v@elsewhere/db"
    assert options("--database-url", other, DATABASE_URI=DB)["database_url"] == other


def test_pools_prepared_statements_and_drain_grace() -> None:
    assert options("--database-url", DB, "--pool-min", "2", "--pool-max", "20",
                   "--no-prepared-statements", "--drain-grace", "45") == {
        "database_url": DB, "pool_min": 2, "pool_max": 20, "prepared_statements": False,
        "drain_grace": 45.0}
    assert options(GRAPHRUN_POOL_MIN="3", GRAPHRUN_POOL_MAX="7",
                   GRAPHRUN_PREPARED_STATEMENTS="off",
                   BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS="180") == {
        "pool_min": 3, "pool_max": 7, "prepared_statements": False, "drain_grace": 180.0}
    assert options("--pool-max", "4", GRAPHRUN_POOL_MAX="9") == {"pool_max": 4}
    assert options(GRAPHRUN_PREPARED_STATEMENTS="true") == {"prepared_statements": True}


def test_lease_heartbeat_and_reaper_intervals() -> None:
    assert options("--lease-seconds", "2", "--reaper-seconds", "0.5") == {
        "lease": 2.0, "reaper_interval": 0.5}
    assert options("--lease-seconds", "6", "--heartbeat-seconds", "1") == {
        "lease": 6.0, "lease_heartbeat": 1.0}
    settings = Settings(graphs={}, lease=2.0)
    assert settings.heartbeat_interval == pytest.approx(2 / 3)  # renewed well within the lease
    assert Settings(graphs={}, lease_heartbeat=4.0).heartbeat_interval == 4.0


@pytest.mark.parametrize(("argv", "environ", "message"), [
    (["--redis-url", REDIS], {}, "needs --database-url"),
    ([], {"REDIS_URI": REDIS}, "needs --database-url"),
    (["--database-url", "mysql://x/y"], {}, "postgresql://"),
    (["--database-url", DB, "--redis-url", "http://cache"], {}, "redis://"),
    (["--database-url", DB, "--in-memory"], {}, "exclude each other"),
    (["--pool-min", "5", "--pool-max", "2"], {}, "must not exceed"),
    (["--pool-max", "0"], {}, "at least 1"),
    ([], {"GRAPHRUN_POOL_MAX": "many"}, "GRAPHRUN_POOL_MAX='many' is not a number"),
    ([], {"GRAPHRUN_PREPARED_STATEMENTS": "maybe"}, "expected true or false"),
    (["--drain-grace", "-1"], {}, "0 or more"),
    (["--lease-seconds", "0"], {}, "more than 0"),
    (["--lease-seconds", "2", "--heartbeat-seconds", "2"], {}, "shorter than --lease"),
    (["--heartbeat-seconds", "40"], {}, "shorter than --lease"),
])
def test_bad_choices_are_clear_errors(argv: list[str], environ: dict[str, str],
                                      message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        options(*argv, **environ)


def test_redis_without_a_database_stops_graphrun_with_a_message(tmp_path: Path) -> None:
    (tmp_path / "langgraph.json").write_text('{"graphs": {"g": "./g.py:graph"}}')
    (tmp_path / "g.py").write_text(
        "from typing import TypedDict\nfrom engine import StateGraph, START\n"
        "class S(TypedDict):\n    x: int\n"
        "g = StateGraph(S)\ng.add_node('n', lambda s: s)\ng.add_edge(START, 'n')\n"
        "graph = g.compile()\n")
    done = subprocess.run([*graphrun_command(), "serve", "--port", "0", "--redis-url", REDIS],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "graphrun: error: --redis-url (REDIS_URI) needs --database-url" in done.stderr
    assert not (tmp_path / ".graphrun").exists()  # stopped before opening anything


def test_the_default_install_imports_neither_asyncpg_nor_redis() -> None:
    """The cluster back end is an extra: importing the server and the CLI must not need it."""
    code = (
        "import sys\n"
        "import http_adapter.agent_server, http_adapter.cli, http_adapter.agent_server.app\n"
        "from http_adapter.agent_server.state import ServerState\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('asyncpg', 'redis'))\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_banner_never_prints_a_password() -> None:
    assert cli._without_password("postgresql://app:s3cret@db:5432/app") == \
        "postgresql://app:***@db:5432/app"
    assert cli._without_password("redis://:s3cret@cache/0") == "redis://:***@cache/0"
    assert cli._without_password(DB) == DB
