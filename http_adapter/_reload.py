"""`graphrun dev` reloads on save (issue 30 item 2), as `langgraph dev` does with uvicorn's
reloader: this process binds the listening socket once and runs the server in a child process
that inherits it; when a project file changes, the child is stopped with SIGTERM (the server's
usual drain: runs in flight get the drain grace to finish, the ones still running are handed
back and resumed by the next start, as after any restart) and a new child starts on the same
socket and the same database. Connections made meanwhile wait in the socket's backlog.

What is watched: `.py` files, the config and its env file, under the config's directory, its
`dependencies` and its graph files' directories; not `.venv`, `__pycache__`, `.git`, ... (see
watchfiles' DefaultFilter) nor the data directory. `graphrun serve` never reloads.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["stop_with_parent", "supervise", "watched"]


def watched(config: Path) -> tuple[list[Path], set[Path]]:
    """The directories to watch and the files other than `.py` whose change reloads too."""
    root = config.resolve().parent
    raw = _read(config)
    dirs = [root]
    dependencies = raw.get("dependencies")
    for dependency in dependencies if isinstance(dependencies, list) else ():
        if isinstance(dependency, str) and (root / dependency).is_dir():
            dirs.append((root / dependency).resolve())
    graphs = raw.get("graphs")
    for spec in graphs.values() if isinstance(graphs, dict) else ():
        source = spec.get("path") if isinstance(spec, dict) else spec
        file = source.rsplit(":", 1)[0] if isinstance(source, str) else ""
        if file.endswith(".py") and (root / file).parent.is_dir():
            dirs.append((root / file).resolve().parent)
    files = {config.resolve()}
    if isinstance(raw.get("env"), str):
        files.add((root / raw["env"]).resolve())
    return _outermost(dirs), files


def _read(config: Path) -> dict[str, Any]:
    """The config as JSON, or {} (the server, started next, names what is wrong with it)."""
    try:
        raw = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return raw if isinstance(raw, dict) else {}


def _outermost(dirs: Iterable[Path]) -> list[Path]:
    """Each directory once, none inside another (a watch is recursive)."""
    kept: list[Path] = []
    for directory in sorted(set(dirs), key=lambda d: len(d.parts)):
        if not any(directory.is_relative_to(outer) for outer in kept):
            kept.append(directory)
    return kept


def _filter(files: set[Path], data_dir: Path | None) -> Any:
    import watchfiles

    default = watchfiles.DefaultFilter(ignore_paths=[data_dir] if data_dir else ())

    def keep(change: Any, path: str) -> bool:
        return (path.endswith(".py") or Path(path) in files) and default(change, path)

    return keep


class _Supervisor:
    """Runs `command` (the server, on inherited fd `fd`) and runs it again after a change."""

    def __init__(self, command: list[str], fd: int) -> None:
        self.command, self.fd = command, fd
        self.stopping = threading.Event()
        self.child: subprocess.Popen[bytes] | None = None
        self.reloads = 0

    def start(self) -> None:
        again = ["--reloaded"] if self.reloads else []
        self.child = subprocess.Popen([*self.command, *again], pass_fds=(self.fd,))

    def on_signal(self, signum: int, frame: object) -> None:
        """SIGTERM or Ctrl-C: the child drains and stops; so does this process after it."""
        self.stopping.set()
        self._terminate()

    def _terminate(self) -> None:
        if self.child is not None and self.child.poll() is None:
            self.child.send_signal(signal.SIGTERM)

    def restart(self, changes: set[tuple[Any, str]]) -> None:
        names = sorted({os.path.relpath(path) for _, path in changes})
        print(f"graphrun dev: {', '.join(names)} changed: reloading", flush=True)
        self._terminate()
        assert self.child is not None
        self.child.wait()
        self.reloads += 1
        if not self.stopping.is_set():
            self.start()

    def run(self, dirs: list[Path], keep: Any) -> int:
        import watchfiles

        self.start()
        said = False
        for changes in watchfiles.watch(*dirs, watch_filter=keep, stop_event=self.stopping,
                                        rust_timeout=500, yield_on_timeout=True):
            if changes:
                self.restart(changes)
                said = False
                continue
            assert self.child is not None
            code = self.child.poll()
            if code is not None and not self.stopping.is_set():
                if not self.reloads:  # the first start failed: exit as without reload
                    return _status(code)
                if not said:
                    print(f"graphrun dev: the server stopped (exit {code}); it starts again "
                          "on the next save", file=sys.stderr, flush=True)
                    said = True
        assert self.child is not None
        return _status(self.child.wait())


def _status(code: int) -> int:
    return code if code >= 0 else 128 - code  # killed by signal N: 128 + N, as a shell says


def supervise(argv: Sequence[str], fd: int, config: Path, data_dir: Path | None) -> int:
    """Serve `graphrun dev argv` in a child process on the listening socket `fd`, restarted
    when a watched file changes; returns the exit status of the last child."""
    dirs, files = watched(config)
    # The child gets this process's sys.path as it is: started as a console script or with
    # `python -m`, the same graphrun is imported (never a project's module of the same name).
    code = (f"import sys; sys.path[:] = {sys.path!r}; "
            "from http_adapter.cli import main; sys.exit(main())")
    command = [sys.executable, "-c", code, *argv, "--no-reload", "--listen-fd", str(fd)]
    supervisor = _Supervisor(command, fd)
    main = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.signal(sig, supervisor.on_signal)
                for sig in (signal.SIGTERM, signal.SIGINT)} if main else {}
    try:
        return supervisor.run(dirs, _filter(files, data_dir))
    finally:
        supervisor.on_signal(signal.SIGTERM, None)  # never leave a child behind
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def stop_with_parent() -> None:
    """In the served child: stop (the usual drain) once the supervising `graphrun dev` is gone,
    e.g. killed with SIGKILL, instead of serving on, orphaned, on its socket and database."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, daemon=True, name="graphrun-parent").start()
