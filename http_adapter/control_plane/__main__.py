"""`graphrun control-plane` (also `python -m http_adapter.control_plane`): serve the control plane.

    graphrun control-plane [--host 127.0.0.1] [--port 8124] [--data-dir .graphrun-control]
                           [--stop-servers-on-exit] [--drain-grace SECONDS] [--log-level info]

Keys and the secrets key come from the environment (`GRAPHRUN_CONTROL_PLANE_API_KEYS`,
`GRAPHRUN_SECRET_KEY`; see `settings.py`). Deployed agent servers keep running when the control
plane stops, and the next start re-adopts them, unless `--stop-servers-on-exit` is given.
"""

from __future__ import annotations

import argparse
import socket
import sys
from collections.abc import Sequence

__all__ = ["add_arguments", "main", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: %(default)s)")
    parser.add_argument("--port", type=int, default=8124,
                        help="port to bind; 0 picks a free one (default: %(default)s)")
    parser.add_argument("--data-dir", default=".graphrun-control",
                        help="where the control plane keeps its state and its deployments "
                             "(default: %(default)s)")
    parser.add_argument("--stop-servers-on-exit", action="store_true",
                        help="stop the deployed agent servers when the control plane stops "
                             "(default: leave them running for the next start to re-adopt)")
    parser.add_argument("--drain-grace", type=_seconds, default=None, metavar="SECONDS",
                        help="on a revision switch, how long the old server's runs in flight get "
                             "to finish before the new one re-runs them from their last "
                             "checkpoint (the servers' --drain-grace; default: theirs, 20 s, or "
                             "BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS among a deployment's secrets)")
    parser.add_argument("--log-level", default="info",
                        choices=("critical", "error", "warning", "info", "debug", "trace"),
                        help="uvicorn's log level (default: %(default)s)")
    return parser


def _seconds(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"{raw!r} is not 0 or more seconds")
    return value


def run(args: argparse.Namespace) -> int:
    """Serve the control plane as `args` (from `add_arguments`) say; the exit status."""
    import uvicorn

    from .app import create_app
    from .settings import ControlPlaneSettings

    settings = ControlPlaneSettings.from_env(
        data_dir=args.data_dir, stop_servers_on_exit=args.stop_servers_on_exit,
        drain_grace=getattr(args, "drain_grace", None))
    try:
        sock = _bind(args.host, args.port)
    except OSError as error:
        print(f"graphrun: error: cannot listen on {args.host}:{args.port}: {error}", file=sys.stderr)
        return 1
    host = {"0.0.0.0": "127.0.0.1", "::": "[::1]"}.get(args.host, args.host)
    url = f"http://{host}:{sock.getsockname()[1]}"
    print(f"graphrun control-plane: serving the /v2 API at {url} (reference: {url}/docs)\n"
          f"  State: {settings.data_dir}\n"
          f"  API keys {'required (X-Api-Key)' if settings.api_keys else 'NOT required'}",
          flush=True)
    server = uvicorn.Server(uvicorn.Config(create_app(settings), log_level=args.log_level,
                                           lifespan="on", ws="none", timeout_graceful_shutdown=5))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    return 0 if server.started else 1


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)  # connections queue from the moment the URL is printed
    except OSError:
        sock.close()
        raise
    return sock


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="graphrun control-plane",
                                     description="graphrun's deployment control plane (/v2 API).")
    return run(add_arguments(parser).parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
