"""Agent server processes: start one on a free loopback port, wait for `/ok`, stop it, and
recognise one a previous control plane left running.

Each server runs in its own session (process group), so it outlives a control-plane restart and
a stop signal reaches everything it spawned. The control plane's own children are watched
through their `Popen`; servers adopted after a restart are watched by pid, with their command
line checked against the revision directory so a recycled pid is never taken for ours.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio

from .errors import DeployFailed

__all__ = ["ServerProcess", "answers_ok", "free_port", "pid_alive", "runs_from", "wait_active"]

_STANDBY = b"\r\nx-graphrun-standby:"  # the agent server's handover.STANDBY_HEADER, lower case


class ServerProcess:
    """One running agent server: its pid, port and URL (and `Popen` when it is our child)."""

    def __init__(
        self, pid: int, port: int, host: str, revision_id: str,
        popen: subprocess.Popen[bytes] | None = None, drain_grace: float = 20.0,
    ) -> None:
        self.pid = pid
        self.drain_grace = drain_grace  # seconds its runs get to finish after SIGTERM
        self.port = port
        self.host = host
        self.revision_id = revision_id
        self.popen = popen
        self._gone = False

    @classmethod
    def gone(cls, port: int, host: str, revision_id: str) -> ServerProcess:
        """A server known to be dead (to be started again): never signalled."""
        server = cls(0, port, host, revision_id)
        server._gone = True
        return server

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def alive(self) -> bool:
        if self._gone:
            return False
        if self.popen is not None:
            return self.popen.poll() is None
        return pid_alive(self.pid)

    def exit_code(self) -> int | None:
        return self.popen.poll() if self.popen is not None else None

    async def stop(self, timeout: float) -> None:
        """SIGTERM the server's process group; SIGKILL what is left after `timeout` seconds."""
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
            if not self.alive():
                return
            _signal_group(self.pid, sig)
            with anyio.move_on_after(wait):
                while self.alive():
                    await anyio.sleep(0.02)

    def kill_now(self) -> None:
        """SIGKILL without waiting (cleanup on cancellation)."""
        if self.alive():
            _signal_group(self.pid, signal.SIGKILL)
            if self.popen is not None:
                try:
                    self.popen.wait(5)
                except subprocess.TimeoutExpired:
                    pass


def start(
    command: Sequence[str], *, env: Mapping[str, str], cwd: Path, log_path: Path, host: str,
    port: int, revision_id: str, drain_grace: float = 20.0,
) -> ServerProcess:
    """Start `command` in its own session, its output appended to `log_path`."""
    with open(log_path, "ab") as log:
        popen = subprocess.Popen(
            list(command), cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )
    return ServerProcess(popen.pid, port, host, revision_id, popen, drain_grace)


async def wait_ready(server: ServerProcess, timeout: float) -> None:
    """Return once the server answers `GET /ok`; DeployFailed if it exits or takes too long."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not server.alive():
            raise DeployFailed(f"the agent server exited with code {server.exit_code()} before "
                               "answering /ok (see the server log)")
        if await answers_ok(server.host, server.port, timeout=1.0):
            return
        await anyio.sleep(0.05)
    raise DeployFailed(f"the agent server did not answer /ok within {timeout:g} s")


async def answers_ok(host: str, port: int, timeout: float = 2.0) -> bool:
    """Whether `GET /ok` on host:port answers 200 (raw HTTP/1.1: no client library needed)."""
    head = await _ok_head(host, port, timeout)
    return head is not None and head.split(b"\r\n", 1)[0].split(b" ")[1:2] == [b"200"]


async def wait_active(server: ServerProcess, timeout: float) -> bool:
    """Wait until a server started with `--handover` has taken its data directory over (its `/ok`
    no longer says standby, issue 26); False if it died or took longer than `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and server.alive():
        head = await _ok_head(server.host, server.port, timeout=1.0)
        if head is not None and _STANDBY not in head.lower():
            return True
        await anyio.sleep(0.05)
    return False


async def _ok_head(host: str, port: int, timeout: float) -> bytes | None:
    """The status line and headers of `GET /ok`, or None if nothing answered in time."""
    request = f"GET /ok HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode()
    with anyio.move_on_after(timeout):
        try:
            async with await anyio.connect_tcp(host, port) as stream:
                await stream.send(request)
                head = b""
                while b"\r\n\r\n" not in head and len(head) < 16384:
                    head += await stream.receive()
                return head.split(b"\r\n\r\n", 1)[0]
        except (OSError, anyio.EndOfStream, anyio.BrokenResourceError):
            return None
    return None


def free_port(host: str, preferred: int | None = None) -> int:
    """`preferred` when it can be bound now, else a port the OS picks."""
    for port in ((preferred, 0) if preferred else (0,)):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            # as the server will bind: a port whose old connections linger in TIME_WAIT is free
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((host, port))
            except OSError:
                continue
            return int(sock.getsockname()[1])
    raise OSError(f"no free port on {host}")


def pid_alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def runs_from(pid: int, marker: str) -> bool:
    """Whether process `pid`'s command line mentions `marker` (a revision directory): a pid that
    the system recycled for another program is not ours. Without /proc, trust the pid."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return pid_alive(pid) and not Path("/proc/self").exists()
    except OSError:
        return False
    return marker.encode() in cmdline


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass
    except PermissionError:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
