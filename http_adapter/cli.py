"""The `graphrun` command: `dev` and `serve` run the agent server over a langgraph.json project.

    graphrun dev [--config langgraph.json] [--host 127.0.0.1] [--port 2024] [--in-memory]
        [--no-reload] (reloads on save otherwise: `_reload.py`, issue 30)
    graphrun serve [...same flags...] [--studio] (port 8000 by default)
    graphrun serve --database-url postgresql://... [--redis-url redis://...] (many processes,
        one database: see `_backend_options.py`, issue 19)
    graphrun control-plane [--host] [--port 8124] [--data-dir] (see control_plane/__main__.py)

Both load the config (see `config.py`), keep checkpoints, store items and server records in one
SQLite file under `.graphrun/` next to the config (or nothing on disk with `--in-memory`), and
serve with uvicorn. `dev` prints where the server and its reference are and the graphs it serves,
and serves the studio at `/` (issue 20); `serve` does only with `--studio`.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from ._backend_options import add_backend_flags, backend_options
from ._limit_options import ConnectionLimits, add_limit_flags, limit_options
from .agent_server.settings import Settings
from .config import ConfigError, find_config, load_settings

__all__ = ["build_parser", "main"]

_DEFAULT_PORTS = {"dev": 2024, "serve": 8000}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphrun", description="graphrun's LangGraph-compatible agent server."
    )
    parser.add_argument("--version", action="version", version=f"graphrun {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, help_ in (
        ("dev", "serve a project for local development (port 2024)"),
        ("serve", "serve a project (port 8000)"),
    ):
        _server_flags(commands.add_parser(name, help=help_, description=help_), name)
    from .control_plane.__main__ import add_arguments as control_plane_flags

    control_plane_flags(commands.add_parser(
        "control-plane",
        help="the deployment control plane (/v2 API, port 8124)",
        description="The deployment control plane: builds and deploys agent servers (/v2 API).",
    ))
    return parser


def _server_flags(parser: argparse.ArgumentParser, command: str) -> None:
    parser.add_argument(
        "--config", default=None,
        help="the project's config: langgraph.json or graphrun.json (default: ./langgraph.json, "
             "else ./graphrun.json)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: %(default)s)")
    parser.add_argument(
        "--port", type=int, default=_DEFAULT_PORTS[command],
        help="port to bind; 0 picks a free one (default: %(default)s)",
    )
    parser.add_argument(
        "--in-memory", action="store_true",
        help="keep nothing on disk: threads, runs and store items end with the process",
    )
    parser.add_argument(
        "--data-dir", default=None,
        help="where the SQLite file lives (default: .graphrun/ next to the config)",
    )
    parser.add_argument("--workers", type=int, default=None, help="background run workers (default: 10)")
    parser.add_argument(
        "--engine", choices=("auto", "graphrun"), default=None,
        help="auto: each graph on the runtime that built it (LangGraph's for a langgraph "
             "graph); graphrun: the project's langgraph imports run on graphrun's engine "
             "(default: the config's `engine`, else auto)",
    )
    parser.add_argument(
        "--log-level", default="info",
        choices=("critical", "error", "warning", "info", "debug", "trace"),
        help="log level of the server and of failed runs' tracebacks (default: %(default)s)",
    )
    if command == "serve":  # `dev` always serves the studio
        parser.add_argument("--studio", action="store_true", help="also serve the studio page at /")
        parser.add_argument(
            "--handover", action="store_true",
            help="if another server holds the SQLite file, answer /ok, hold other requests and "
                 "take the file over once that server has drained and stopped (the control "
                 "plane's revision switch, issue 26)",
        )
    if command == "dev":  # issue 30 item 2: reload on save, as `langgraph dev`
        parser.add_argument(
            "--no-reload", action="store_true",
            help="do not restart the server when a .py file or the config changes",
        )
        parser.add_argument("--listen-fd", type=int, default=None, help=argparse.SUPPRESS)
        parser.add_argument("--reloaded", action="store_true", help=argparse.SUPPRESS)
    add_backend_flags(parser)
    add_limit_flags(parser)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `graphrun` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.command == "dev" and _reloads(args):
        return _dev_with_reload(args, sys.argv[1:] if argv is None else list(argv))
    if args.command == "control-plane":
        from .control_plane.__main__ import run as run_control_plane

        return run_control_plane(args)
    if args.workers is not None and args.workers < 1:
        print("graphrun: error: --workers must be at least 1", file=sys.stderr)
        return 2
    try:
        settings = load_settings(
            find_config(args.config), data_dir=args.data_dir, in_memory=args.in_memory,
            workers=args.workers, engine=args.engine,
        )
        limits, fields = limit_options(args, os.environ)
        for name, value in {**backend_options(args, os.environ), **fields}.items():
            setattr(settings, name, value)
    except ConfigError as error:
        print(f"graphrun: error: {error}", file=sys.stderr)
        return 1
    refused = _check_redis(settings)
    if refused is not None:
        print(f"graphrun: error: {refused}", file=sys.stderr)
        return 1
    if args.command == "dev":
        settings.extra["private_network"] = True  # as `langgraph dev` (cors.py)
    _warn_unsupported(settings)
    settings.studio = args.command == "dev" or args.studio
    settings.handover = getattr(args, "handover", False)
    if args.command == "dev":  # issue 30 item 2: what the banner says of reloading
        settings.extra["reload"] = "again" if args.reloaded else _reload_line(args)
        if args.drain_grace is None and _GRACE_ENV not in os.environ:
            settings.drain_grace = _DEV_DRAIN_GRACE  # a reload waits out the drain
    try:
        sock = _inherited(args) or _bind(args.host, args.port)
    except OSError as error:
        print(f"graphrun: error: cannot listen on {args.host}:{args.port}: {error}", file=sys.stderr)
        return 1
    url = _url(args.host, sock.getsockname()[1])
    settings.api_url = url
    _announce(args.command, settings, url)
    return _serve(settings, sock, args.log_level, limits)


_DEV_DRAIN_GRACE = 5.0  # langgraph-runtime-inmem's SHUTDOWN_GRACE_PERIOD_SECS (`langgraph dev`)
_GRACE_ENV = "BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS"  # `--drain-grace`'s variable (_backend_options)


def _reloads(args: argparse.Namespace) -> bool:
    """Whether this `dev` process supervises a reloading server (issue 30 item 2): not with
    `--no-reload`, not in the server it starts, not with `--in-memory` (a restart would lose
    every thread), not where a socket cannot be handed to a child (Windows)."""
    return not (args.no_reload or args.listen_fd is not None or args.in_memory
                or os.name != "posix")


def _reload_line(args: argparse.Namespace) -> str:
    if args.listen_fd is not None:
        return "on (.py files and the config; --no-reload to turn it off)"
    return "off (--in-memory: a restart would lose every thread)" if args.in_memory else "off"


def _dev_with_reload(args: argparse.Namespace, argv: list[str]) -> int:
    """Bind here, serve in a child that is restarted when a project file changes."""
    from ._reload import supervise

    try:
        config = find_config(args.config)
        sock = _bind(args.host, args.port)
    except ConfigError as error:
        print(f"graphrun: error: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"graphrun: error: cannot listen on {args.host}:{args.port}: {error}", file=sys.stderr)
        return 1
    data_dir = Path(args.data_dir).resolve() if args.data_dir else None
    try:
        return supervise(argv, sock.fileno(), config, data_dir)
    finally:
        sock.close()


def _inherited(args: argparse.Namespace) -> socket.socket | None:
    """The listening socket a reloading `graphrun dev` handed down (`--listen-fd`)."""
    fd = getattr(args, "listen_fd", None)
    if fd is None:
        return None
    from ._reload import stop_with_parent

    stop_with_parent()
    return socket.socket(fileno=fd)


def _bind(host: str, port: int) -> socket.socket:
    """Bind before serving, so `--port 0` works and the printed URL has the real port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _url(host: str, port: int) -> str:
    shown = {"0.0.0.0": "127.0.0.1", "::": "[::1]"}.get(host, f"[{host}]" if ":" in host else host)
    return f"http://{shown}:{port}"


def _warn_unsupported(settings: Settings) -> None:
    """Name every config key graphrun ignores (issue 18: never silently)."""
    ignored = settings.extra.get("config_warnings") or []
    if ignored:
        print(f"graphrun: warning: {settings.config_path}: not supported, ignored: "
              f"{', '.join(ignored)}", file=sys.stderr, flush=True)
    for warning in settings.extra.get("start_warnings") or ():  # e.g. a missing env file
        print(f"graphrun: warning: {warning}", file=sys.stderr, flush=True)


def _announce(command: str, settings: Settings, url: str) -> None:
    reload = settings.extra.get("reload")
    if reload == "again":  # the same server, restarted on a save: one line, not the banner
        print(f"graphrun dev: reloaded; serving {len(settings.graphs)} graph(s) at {url}",
              flush=True)
        return
    storage = (
        _without_password(settings.database_url) if settings.database_url
        else "in memory" if settings.db_path is None else settings.db_path
    )
    if settings.redis_url:
        storage += f" + {_without_password(settings.redis_url)}"
    lines = [f"graphrun {command}: serving {len(settings.graphs)} graph(s) at {url}"]
    if command == "dev":
        lines += [
            f"  Studio:  {url}/",
            f"  API:     {url}",
            f"  Docs:    {url}/docs",
            f"  Config:  {settings.config_path}",
            f"  Storage: {storage}",
            *_graph_lines(settings),
        ]
        if reload:
            lines.append(f"  Reload:  {reload}")
    elif settings.studio:
        lines.append(f"  Studio:  {url}/")
    if command != "dev":
        lines += _graph_lines(settings)
    if command != "dev" and settings.database_url:
        lines.append(f"  Storage: {storage}")
    if settings.api_keys:
        lines.append("  API keys required (X-Api-Key)")
    print("\n".join(lines), flush=True)


# issue 28: what porting a LangGraph-built graph to `engine` gained in benchmarks/README.md
_PORTING_GAIN = (
    "  Engine:  LangGraph-built graphs run on LangGraph's runtime with graphrun's storage; "
    "ported to graphrun's engine (`--engine graphrun`, docs/porting.md) runs were "
    "10-67x faster per run with a SQLite saver in benchmarks/README.md"
)


def _graph_lines(settings: Settings) -> list[str]:
    """`Graphs:` each graph id with the engine that runs it (issue 28), grouped in order; a
    line on what porting would gain when one of them is LangGraph-built."""
    from ._graph_spec import is_factory
    from .agent_server.langgraph_graph import is_langgraph

    groups: dict[str, list[str]] = {}
    for graph_id, spec in settings.graphs.items():
        kind = ("LangGraph runtime" if is_langgraph(spec) else
                "factory" if is_factory(spec) else "graphrun engine")
        groups.setdefault(kind, []).append(graph_id)
    listed = "; ".join(f"{', '.join(ids)} ({kind})" for kind, ids in groups.items())
    return [f"  Graphs:  {listed}", *([_PORTING_GAIN] if "LangGraph runtime" in groups else [])]


def _check_redis(settings: Settings) -> str | None:
    """Refuse a Redis older than 6.2 before serving (issue 19 §9; why refuse, not warn:
    `cluster/redis_version.py`). A Redis that does not answer yet is only warned about."""
    if settings.redis_url is None:
        return None
    import asyncio

    from .agent_server.cluster.redis_version import RedisVersionError, check_redis

    try:
        found = asyncio.run(check_redis(settings.redis_url))
    except RedisVersionError as error:
        return str(error)
    if found is None:
        print(f"graphrun: warning: Redis at {_without_password(settings.redis_url)} does not "
              "answer; starting without it (its version is not checked)", file=sys.stderr)
    return None


def _without_password(url: str) -> str:
    """A connection URL fit to print: its password (if any) masked."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def _serve(settings: Settings, sock: socket.socket, log_level: str,
           limits: ConnectionLimits) -> int:
    import uvicorn

    from ._http_protocol import limited_protocol
    from .agent_server import create_app

    config = uvicorn.Config(
        create_app(settings),
        log_level=log_level,
        log_config=_log_config(log_level),
        lifespan="on",
        ws="none",
        timeout_graceful_shutdown=_GRACEFUL,
        http=limited_protocol(limits),  # issue 26: header size, timeouts, connections
        timeout_keep_alive=limits.keep_alive_timeout,  # type: ignore[arg-type]
    )
    server = _server_class(uvicorn.Server)(config, _GRACEFUL + settings.drain_grace + 5)
    # A drained stop is a clean exit: uvicorn re-raises the signal it caught once it has shut
    # down, and this handler makes that a no-op (exit status 0, issue 19 §5).
    main = threading.current_thread() is threading.main_thread()  # signals live there only
    previous = signal.signal(signal.SIGTERM, lambda *_: None) if main else None
    if main:
        _raise_open_files_limit()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
        sock.close()
    return 0 if server.started else 1


_GRACEFUL = 5  # seconds open connections get to finish once asked to stop


def _log_config(log_level: str) -> dict[str, object]:
    """uvicorn's logging, plus graphrun's own loggers on the same terminal at `--log-level`
    (issue 30: a failed run's traceback was logged to no handler and never shown)."""
    import copy

    from uvicorn.config import LOG_LEVELS, LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    level = LOG_LEVELS[log_level]
    for name in ("http_adapter", "engine", "checkpoints"):
        config["loggers"][name] = {"handlers": ["default"], "level": level, "propagate": False}
    return config


def _raise_open_files_limit() -> None:
    """Soft limit on open files up to the hard one, as Redis and nginx do for themselves: each
    open stream holds a client socket, and on Redis a connection of its own, so the usual soft
    limit of 1,024 would end a host at ~500 streams (EMFILE) while the hard one allows more."""
    try:
        import resource
    except ImportError:  # not on this platform (Windows): nothing to raise
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else 1 << 20  # Linux's default fs.nr_open
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):  # above what the kernel allows: keep the soft limit
            pass


def _server_class(base: type) -> type:
    """uvicorn's server with a watchdog: once asked to stop, the process ends within `limit`
    seconds even when a node stuck in sync code keeps a thread busy after the drain gave its
    run up (cancelling cannot stop a thread; the run is re-run elsewhere or at the next start).
    """

    class _Server(base):  # type: ignore[misc, valid-type]
        def __init__(self, config: object, limit: float) -> None:
            super().__init__(config)
            self._limit = limit
            self._armed = False

        def handle_exit(self, sig: int, frame: object) -> None:
            super().handle_exit(sig, frame)
            if not self._armed:
                self._armed = True
                threading.Thread(target=self._watch, daemon=True, name="graphrun-exit").start()

        def _watch(self) -> None:
            time.sleep(self._limit)
            print(f"graphrun: still stopping after {self._limit:g} s (a node stuck in sync "
                  "code?): exiting; its run is re-run", file=sys.stderr, flush=True)
            sys.stdout.flush()
            os._exit(0)

    return _Server


def _version() -> str:
    from .agent_server.openapi import package_version

    return package_version()


if __name__ == "__main__":
    sys.exit(main())
