"""Building a revision: fetch its source into the revision's own directory, then check in a
subprocess (the same interpreter) that every graph of its langgraph.json imports and compiles.

Sources: `github` is any repository URL or path the `git` CLI can clone (https, ssh, file://, a
local path), checked out at `repo_ref` (a branch, `refs/tags/...` or a commit); `local` is a
directory copied as it is now. A redeploy copies the source tree of the revision it redeploys
when that tree is still on disk, so it runs exactly the same code.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit, urlunsplit

import anyio

from .errors import BuildFailed

__all__ = ["RevisionLog", "check_graphs", "config_file", "copy_tree", "fetch_git", "local_path",
           "redact_url"]

_SKIP = shutil.ignore_patterns(".git", ".graphrun", ".graphrun-control", "__pycache__", ".venv",
                               "venv", "node_modules", ".mypy_cache", ".pytest_cache")


class RevisionLog:
    """Appends timestamped lines to one of a revision's log files (build.log, deploy.log)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, message: str) -> None:
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
        with open(self.path, "a", encoding="utf-8") as file:
            file.write(f"{stamp} {message}\n")

    async def run(
        self, command: Sequence[str], *, cwd: Path, env: Mapping[str, str], shown: str | None = None,
    ) -> int:
        """Run `command`, its output appended to this log; the exit code (cancellation kills it)."""
        self.write(f"$ {shown or ' '.join(command)}")
        with open(self.path, "ab") as file:
            result = await anyio.run_process(
                list(command), cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=file,
                stderr=subprocess.STDOUT, check=False,
            )
        return result.returncode

    def tail_line(self) -> str:
        """The last non-empty line of the log (a failed step's own summary)."""
        try:
            lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        return next((line.strip() for line in reversed(lines) if line.strip()), "")


def local_path(repo_url: str) -> Path:
    """The directory a `local` source names: a path or a file:// URL."""
    if repo_url.startswith("file://"):
        return Path(urlsplit(repo_url).path)
    return Path(repo_url).expanduser()


def redact_url(url: str) -> str:
    """`url` without the credentials it may carry (https://user:token@host/...)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


async def copy_tree(source: Path, dest: Path, log: RevisionLog, exclude: Path | None = None) -> None:
    """Copy `source` to `dest` without VCS, caches and virtualenvs, and without `exclude` (the
    control plane's own directory, when it lies inside the source)."""
    if not source.is_dir():
        raise BuildFailed(f"source directory {source} does not exist")
    log.write(f"copying {source} -> {dest}")

    def ignore(directory: str, names: list[str]) -> set[str]:
        skipped = set(_SKIP(directory, names))
        if exclude is not None:
            skipped.update(n for n in names if Path(directory, n).resolve() == exclude)
        return skipped

    def copy_file(src: str, dst: str) -> None:
        """A file deleted while the tree is being copied (a live working directory) is simply
        not part of the copy, as if the copy had started a moment later."""
        try:
            shutil.copy2(src, dst, follow_symlinks=False)
        except FileNotFoundError:
            if os.path.lexists(src):
                raise

    await anyio.to_thread.run_sync(
        lambda: shutil.copytree(source, dest, symlinks=True, ignore=ignore, dirs_exist_ok=True,
                                copy_function=copy_file))


async def fetch_git(url: str, ref: str | None, dest: Path, log: RevisionLog) -> str:
    """Clone `url` into `dest` and check out `ref` (default: the remote's HEAD); the commit sha."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "LC_ALL": "C"}
    shown = redact_url(url)
    code = await log.run(["git", "clone", "--quiet", "--no-checkout", "--", url, str(dest)],
                         cwd=dest.parent, env=env, shown=f"git clone --no-checkout {shown}")
    if code:
        raise BuildFailed(f"git clone of {shown} failed (exit code {code}; see the build log)")
    sha = await _resolve(ref, dest, env)
    if sha is None:
        raise BuildFailed(f"repo_ref {ref!r} is not a branch, tag or commit of {shown}")
    code = await log.run(["git", "-c", "advice.detachedHead=false", "checkout", "--quiet",
                          "--detach", sha], cwd=dest, env=env)
    if code:
        raise BuildFailed(f"git checkout of {sha} failed (exit code {code})")
    log.write(f"checked out {ref or 'HEAD'} at {sha}")
    return sha


async def _resolve(ref: str | None, repo: Path, env: Mapping[str, str]) -> str | None:
    candidates = [f"origin/{ref}", ref] if ref else ["HEAD"]
    for candidate in candidates:
        if candidate.startswith("-"):
            continue
        result = await anyio.run_process(
            ["git", "rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"], cwd=repo,
            env=dict(env), check=False)
        if result.returncode == 0:
            return result.stdout.decode().strip()
    return None


def config_file(src: Path, config_path: str) -> Path:
    """The revision's langgraph.json, which must lie inside its source tree."""
    relative = PurePosixPath(config_path)
    if relative.is_absolute() or ".." in relative.parts:
        raise BuildFailed(f"langgraph_config_path {config_path!r} must be relative to the source root")
    path = src / relative
    if path.is_dir():
        path = path / "langgraph.json"
    if not path.is_file():
        raise BuildFailed(f"no {relative} in the source")
    return path


async def check_graphs(
    python: str, config: Path, env: Mapping[str, str], log: RevisionLog
) -> None:
    """Import and compile every graph of `config` in a fresh interpreter; BuildFailed if not."""
    log.write(f"checking the graphs of {config.name}")
    code = await log.run([python, "-m", "http_adapter.control_plane.buildcheck", str(config)],
                         cwd=config.parent, env=env, shown=f"graph check of {config.name}")
    if code:
        reason = log.tail_line() or f"exit code {code}"
        raise BuildFailed(f"graph check failed: {reason}")
    log.write("all graphs import and compile")
