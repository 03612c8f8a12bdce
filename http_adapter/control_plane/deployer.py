"""The deployer: drives each revision from QUEUED to DEPLOYED (or a *_FAILED status with the
reason), and keeps every deployment's active agent server running.

    QUEUED ─> BUILDING ─> DEPLOYING ─> DEPLOYED
                 │            └──────> DEPLOY_FAILED   (the server did not answer /ok)
                 └───────────────────> BUILD_FAILED    (fetch failed, a graph did not compile)
    QUEUED ─> SKIPPED                                  (a newer revision was queued meanwhile)

- Build: the revision's source is fetched into its own directory, and a fresh interpreter
  imports and compiles every graph of its langgraph.json (`buildcheck.py`), with the revision's
  secrets in its environment. A failed build leaves the running revision serving.
- Deploy: `python -m http_adapter.cli serve` on a free loopback port, with the deployment's data
  directory (shared by all its revisions: threads and checkpoints persist), the secrets as env
  variables and the org's API keys required (`GRAPHRUN_API_KEYS`). Once it answers `/ok` the
  deployment switches to it (`active_revision_id`, `source_config.custom_url`), and only then is
  the previous revision's server stopped: there is always a server answering.
- Runs in flight on a switch (issue 26, finding 8): every server runs with `--handover`, so a new
  one on the deployment's data directory only answers `/ok` and holds other requests until the
  one before it has let go of the SQLite file. The old server is sent SIGTERM: it takes no more
  runs, gives its running ones their drain grace (`drain_grace`, else the server's default or
  `BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS` among the secrets) and exits; the new one then opens the
  file and serves, and re-runs from its last checkpoint only what outlived the grace, as LangGraph
  Platform retries an old revision's unfinished runs. No run executes on both at once, and new
  runs go to the new revision. The revision is DEPLOYED once the new server has taken over.
- Revisions of one deployment are handled one at a time, in order; different deployments
  proceed concurrently, each in a task of the deployer's task group (owned by the app's lifespan).
- A monitor restarts a server that dies. After a control-plane restart, a recorded server whose
  pid is alive, runs from its revision directory and answers `/ok` is adopted; any other is
  started again, and revisions that were in progress are queued again.

Files, under `<data_dir>/deployments/<deployment_id>/`: `data/` (the agent server's SQLite),
and per revision `revisions/<revision_id>/` with `src/`, `build.log`, `deploy.log`,
`server.log` and `server.pid`.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.abc
import msgspec

from . import _processes as processes
from ._build import (
    RevisionLog,
    check_graphs,
    config_file,
    copy_tree,
    fetch_git,
    local_path,
)
from ._processes import ServerProcess
from .errors import BuildFailed, RevisionFailed
from .records import ControlRecords, ServerRecord, now
from .schemas import TERMINAL_STATUSES, Deployment, Revision, Secret
from .settings import API_KEYS_ENV, SECRET_KEY_ENV, ControlPlaneSettings

__all__ = ["Deployer"]

logger = logging.getLogger("http_adapter.control_plane")

# The control plane's own secrets never reach user code; GRAPHRUN_API_KEYS is set explicitly.
_PRIVATE_ENV = frozenset((API_KEYS_ENV, SECRET_KEY_ENV, "GRAPHRUN_API_KEYS"))
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # where `http_adapter` is importable
_LOG_TAIL = 256 * 1024
_MAX_RESTART_DELAY = 60.0
_PORT_ATTEMPTS = 3
_GRACE_ENV = "BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS"
_SERVER_GRACE = 20.0  # the agent server's own drain grace when nothing sets one
# A server's watchdog ends it 5 s (open connections) + its grace + 5 s after SIGTERM (cli.py):
# SIGKILL only after that.
_STOP_MARGIN = 15.0


def _pid_file(revision_dir: Path) -> Path:
    return revision_dir / "server.pid"


class Deployer:
    """Revision lifecycle and server supervision for every deployment of the control plane."""

    def __init__(self, settings: ControlPlaneSettings, records: ControlRecords) -> None:
        self.settings = settings
        self.records = records
        self.root = settings.data_dir / "deployments"
        self._tg: anyio.abc.TaskGroup | None = None
        self._servers: dict[str, ServerProcess] = {}  # deployment id -> its active server
        self._locks: dict[str, anyio.Lock] = {}
        self._draining: set[str] = set()  # deployments whose revision loop is running
        self._again: set[str] = set()  # deployments with revisions queued since the loop looked
        self._deleting: set[str] = set()
        self._scopes: dict[str, anyio.CancelScope] = {}  # revision work and restarts, per deployment
        self._restarting: set[str] = set()
        self._crashes: dict[str, int] = {}
        self._retiring: dict[str, ServerProcess] = {}  # replaced servers draining their runs

    # -- used by the routes --------------------------------------------------------------------

    def lock(self, deployment_id: str) -> anyio.Lock:
        """Held around every read-modify-write of a deployment record (routes and deployer)."""
        return self._locks.setdefault(deployment_id, anyio.Lock())

    def prepare(self, deployment_id: str) -> None:
        """Create the deployment's data directory (its "database")."""
        (self.root / deployment_id / "data").mkdir(parents=True, exist_ok=True)

    def submit(self, deployment_id: str) -> None:
        """Queued revisions of this deployment are waiting: start its revision loop if idle."""
        self._again.add(deployment_id)
        if deployment_id not in self._draining:
            assert self._tg is not None, "the deployer is not running"
            self._draining.add(deployment_id)
            self._tg.start_soon(self._drain, deployment_id)

    async def remove(self, deployment_id: str) -> None:
        """Stop everything of a deployment and delete its records and files."""
        self._deleting.add(deployment_id)
        try:
            for scope in self._scopes_of(deployment_id):
                scope.cancel()
            retiring = self._retiring.get(deployment_id)
            if retiring is not None:  # its runs are deleted with the deployment: no drain
                retiring.kill_now()
            while deployment_id in self._draining or deployment_id in self._restarting:
                await anyio.sleep(0.01)
            server = self._servers.pop(deployment_id, None)
            if server is not None:
                await server.stop(self.settings.stop_timeout)
            await self._reap(self.root / deployment_id, keep=())
            async with self.lock(deployment_id):  # not under a PATCH adding a revision
                await self.records.delete_deployment(deployment_id)
            await anyio.to_thread.run_sync(
                lambda: shutil.rmtree(self.root / deployment_id, ignore_errors=True))
        finally:
            self._deleting.discard(deployment_id)
            self._locks.pop(deployment_id, None)
            self._crashes.pop(deployment_id, None)

    def logs(self, deployment_id: str, revision_id: str) -> dict[str, str]:
        """The tails of a revision's build, deploy and server logs."""
        directory = self._revision_dir(deployment_id, revision_id)
        return {f"{name}_log": _tail(directory / f"{name}.log")
                for name in ("build", "deploy", "server")}

    # -- lifecycle -----------------------------------------------------------------------------

    async def serve(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Re-adopt or restart the deployed servers, resume unfinished revisions, then supervise
        until cancelled (the app's lifespan owns this task)."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            self.root.mkdir(parents=True, exist_ok=True)
            await self._recover()
            tg.start_soon(self._monitor)
            task_status.started()

    async def close(self) -> None:
        """After `serve` ends: stop the servers if the settings say so, else leave them running
        for the next control plane to adopt. Either way their records stay, so the next start
        adopts them or starts them again."""
        with anyio.CancelScope(shield=True):
            if self.settings.stop_servers_on_exit:
                for server in self._servers.values():
                    await server.stop(self.settings.stop_timeout)
            self._servers.clear()

    # -- the revision loop of one deployment ---------------------------------------------------

    async def _drain(self, deployment_id: str) -> None:
        try:
            while deployment_id in self._again and deployment_id not in self._deleting:
                self._again.discard(deployment_id)
                queued = await self.records.revisions(
                    deployment_id, statuses=("QUEUED",), oldest_first=True)
                if not queued:
                    continue
                *older, newest = queued
                for rev in older:
                    await self._set(rev, "SKIPPED", f"superseded by revision {newest.id}")
                self._again.add(deployment_id)  # look once more when this one is done
                with anyio.CancelScope() as scope:
                    self._scopes[f"{deployment_id}:revision"] = scope
                    try:
                        await self._deploy(deployment_id, newest)
                    finally:
                        self._scopes.pop(f"{deployment_id}:revision", None)
        except Exception:
            logger.exception("the revision loop of deployment %s failed", deployment_id)
        finally:
            self._draining.discard(deployment_id)

    async def _deploy(self, deployment_id: str, rev: Revision) -> None:
        directory = self._revision_dir(deployment_id, rev.id)
        directory.mkdir(parents=True, exist_ok=True)
        build, deploy = RevisionLog(directory / "build.log"), RevisionLog(directory / "deploy.log")
        rev = await self._set(rev, "BUILDING")
        try:
            env = self._env(await self.records.revision_secrets(rev.id))
            with anyio.fail_after(self.settings.build_timeout):
                config, rev = await self._build(deployment_id, rev, directory, build, env)
        except Exception as error:
            await self._failed(rev, "BUILD_FAILED", build, error)
            return
        rev = await self._set(rev, "DEPLOYING")
        try:
            server = await self._launch(deployment_id, rev.id, config, env, deploy)
        except Exception as error:
            await self._failed(rev, "DEPLOY_FAILED", deploy, error)
            return
        await self._switch(deployment_id, rev, server, deploy)

    async def _failed(self, rev: Revision, status: str, log: RevisionLog, error: Exception) -> None:
        if isinstance(error, RevisionFailed):
            reason = str(error)
        elif isinstance(error, TimeoutError):
            reason = f"the build took longer than {self.settings.build_timeout:g} s"
        else:
            logger.error("revision %s: unexpected error", rev.id, exc_info=error)
            reason = f"internal error: {type(error).__name__}: {error}"
        log.write(f"{status.replace('_', ' ')}: {reason}")
        await self._set(rev, status, reason)

    async def _build(
        self, deployment_id: str, rev: Revision, directory: Path, log: RevisionLog,
        env: dict[str, str],
    ) -> tuple[Path, Revision]:
        dep = await self.records.deployment(deployment_id)
        if dep is None:
            raise BuildFailed("the deployment was deleted")
        src = directory / "src"
        await anyio.to_thread.run_sync(lambda: shutil.rmtree(src, ignore_errors=True))
        cfg = rev.source_revision_config
        code_from = await self.records.revision_code_from(rev.id)
        previous = self._revision_dir(deployment_id, code_from) / "src" if code_from else None
        if previous is not None and previous.is_dir():
            await copy_tree(previous, src, log)  # a redeploy runs exactly the code it had
        elif dep.source == "local":
            await copy_tree(local_path(dep.source_config.repo_url or ""), src, log,
                            exclude=self.settings.data_dir)
        else:
            sha = await fetch_git(dep.source_config.repo_url or "", cfg.repo_commit_sha or cfg.repo_ref,
                                  src, log)
            rev = await self._record_commit(deployment_id, rev, sha)
        config = config_file(src, cfg.langgraph_config_path or "langgraph.json")
        await check_graphs(self.settings.python, config, env, log)
        return config, rev

    async def _record_commit(self, deployment_id: str, rev: Revision, sha: str) -> Revision:
        cfg = msgspec.structs.replace(rev.source_revision_config, repo_commit_sha=sha)
        rev = msgspec.structs.replace(rev, source_revision_config=cfg, updated_at=now())
        async with self.lock(deployment_id):
            await self.records.update_revision(rev)
            dep = await self.records.deployment(deployment_id)
            if dep is not None and dep.latest_revision_id == rev.id:
                await self.records.update_deployment(
                    msgspec.structs.replace(dep, source_revision_config=cfg))
        return rev

    async def _launch(
        self, deployment_id: str, revision_id: str, config: Path, env: dict[str, str],
        log: RevisionLog, port: int | None = None,
    ) -> ServerProcess:
        """Start the revision's agent server and wait for `/ok`; nothing is left running on failure.
        A port taken between choosing it and the server's bind is retried with another."""
        for attempt in range(_PORT_ATTEMPTS):
            server, output = self._start_server(deployment_id, revision_id, config, env, log, port)
            try:
                await processes.wait_ready(server, self.settings.deploy_timeout)
            except BaseException as error:
                server.kill_now()
                _pid_file(self._revision_dir(deployment_id, revision_id)).unlink(missing_ok=True)
                if (isinstance(error, RevisionFailed) and attempt + 1 < _PORT_ATTEMPTS
                        and b"cannot listen on" in _read_from(*output)):
                    log.write(f"port {server.port} was taken meanwhile; trying another")
                    port = None
                    continue
                raise
            log.write(f"the agent server (pid {server.pid}) answers at {server.url}")
            return server
        raise AssertionError("unreachable")

    def _start_server(
        self, deployment_id: str, revision_id: str, config: Path, env: dict[str, str],
        log: RevisionLog, port: int | None,
    ) -> tuple[ServerProcess, tuple[Path, int]]:
        host = self.settings.server_host
        data = self.root / deployment_id / "data"
        data.mkdir(parents=True, exist_ok=True)
        directory = self._revision_dir(deployment_id, revision_id)
        port = processes.free_port(host, port)
        command = [
            self.settings.python, "-m", "http_adapter.cli", "serve", "--config", str(config),
            "--host", host, "--port", str(port), "--data-dir", str(data),
            "--log-level", self.settings.server_log_level, "--handover",
        ]
        grace = self._grace(env)
        if self.settings.drain_grace is not None:
            command += ["--drain-grace", str(self.settings.drain_grace)]
        output = directory / "server.log"
        offset = output.stat().st_size if output.exists() else 0
        log.write(f"starting the agent server on {host}:{port}")
        server = processes.start(command, env=env, cwd=config.parent, log_path=output, host=host,
                                 port=port, revision_id=revision_id, drain_grace=grace)
        _pid_file(directory).write_text(str(server.pid))
        return server, (output, offset)

    async def _switch(
        self, deployment_id: str, rev: Revision, server: ServerProcess, log: RevisionLog
    ) -> None:
        """Point the deployment at `server`, stop the server it replaces, then mark the revision
        DEPLOYED: a client that sees DEPLOYED sees the whole rollout done."""
        with anyio.CancelScope(shield=True):
            async with self.lock(deployment_id):
                dep = await self.records.deployment(deployment_id)
                if dep is None or deployment_id in self._deleting:
                    server.kill_now()
                    return
                old = self._servers.get(deployment_id)
                self._servers[deployment_id] = server
                await self._activate(dep, rev.id, server)
            log.write(f"the deployment now points at {server.url}")
            if old is not None and old.pid != server.pid:
                await self._retire(deployment_id, old, log)
            await self._hand_over(server, log)
            await self._set(rev, "DEPLOYED")
            log.write(f"revision {rev.id} is DEPLOYED")
        await anyio.to_thread.run_sync(self._prune, deployment_id, rev.id)

    async def _retire(self, deployment_id: str, old: ServerProcess, log: RevisionLog) -> None:
        """Stop the replaced server, letting its runs in flight finish first (issue 26)."""
        log.write(f"stopping the previous server (revision {old.revision_id}, pid {old.pid}): "
                  f"its runs in flight get {old.drain_grace:g} s to finish")
        self._retiring[deployment_id] = old
        try:
            if deployment_id in self._deleting:  # as in `remove`: no drain
                old.kill_now()
            await old.stop(old.drain_grace + _STOP_MARGIN)
        finally:
            self._retiring.pop(deployment_id, None)
        _pid_file(self._revision_dir(deployment_id, old.revision_id)).unlink(missing_ok=True)
        log.write(f"stopped the previous server (revision {old.revision_id}, pid {old.pid})")

    async def _hand_over(self, server: ServerProcess, log: RevisionLog) -> None:
        """Wait for the new server to take the data directory over (after the old one's exit)."""
        if await processes.wait_active(server, self.settings.deploy_timeout):
            log.write("the agent server took the deployment's data over")
        else:  # it died or hangs: the monitor starts it again, as any server that dies
            log.write("the agent server did not take the deployment's data over within "
                      f"{self.settings.deploy_timeout:g} s (see the server log)")

    async def _activate(self, dep: Deployment, revision_id: str, server: ServerProcess) -> None:
        await self.records.set_server(ServerRecord(
            deployment_id=dep.id, revision_id=revision_id, pid=server.pid, port=server.port,
            url=server.url, started_at=now()))
        source_config = msgspec.structs.replace(dep.source_config, custom_url=server.url)
        await self.records.update_deployment(msgspec.structs.replace(
            dep, active_revision_id=revision_id, source_config=source_config, status="READY",
            updated_at=now()))

    async def _set(self, rev: Revision, status: str, message: str | None = None) -> Revision:
        rev = msgspec.structs.replace(rev, status=status, status_message=message, updated_at=now())
        await self.records.update_revision(rev)
        return rev

    def _prune(self, deployment_id: str, active: str) -> None:
        """Keep the source trees of the active revision and the newest few others."""
        revisions = self.root / deployment_id / "revisions"
        trees = sorted((d for d in revisions.iterdir() if (d / "src").is_dir() and d.name != active),
                       key=lambda d: d.stat().st_mtime, reverse=True)
        for directory in trees[self.settings.keep_revisions:]:
            shutil.rmtree(directory / "src", ignore_errors=True)

    # -- supervision ---------------------------------------------------------------------------

    async def _monitor(self) -> None:
        while True:
            await anyio.sleep(self.settings.monitor_interval)
            for deployment_id, server in list(self._servers.items()):
                if not server.alive():
                    self._restart_later(deployment_id, server)

    def _restart_later(self, deployment_id: str, server: ServerProcess, delay: float | None = None) -> None:
        if deployment_id in self._restarting or deployment_id in self._deleting:
            return
        crashes = self._crashes.get(deployment_id, 0)
        if delay is None:
            delay = min(self.settings.restart_delay * 2 ** crashes, _MAX_RESTART_DELAY)
            code = server.exit_code()
            RevisionLog(self._revision_dir(deployment_id, server.revision_id) / "deploy.log").write(
                f"the agent server (pid {server.pid}) exited"
                + (f" with code {code}" if code is not None else "")
                + f"; starting it again in {delay:g} s")
        self._crashes[deployment_id] = crashes + 1
        self._restarting.add(deployment_id)
        assert self._tg is not None
        self._tg.start_soon(self._restart, deployment_id, server, delay)

    async def _restart(self, deployment_id: str, dead: ServerProcess, delay: float) -> None:
        log = RevisionLog(self._revision_dir(deployment_id, dead.revision_id) / "deploy.log")
        try:
            with anyio.CancelScope() as scope:
                self._scopes[f"{deployment_id}:restart"] = scope
                await anyio.sleep(delay)
                await self._start_again(deployment_id, dead, log)
        except RevisionFailed as error:
            log.write(f"RESTART FAILED: {error}")
            await self._mark(deployment_id, "UNKNOWN")
        except Exception:
            logger.exception("restarting the server of deployment %s failed", deployment_id)
        finally:
            self._scopes.pop(f"{deployment_id}:restart", None)
            self._restarting.discard(deployment_id)

    async def _start_again(self, deployment_id: str, dead: ServerProcess, log: RevisionLog) -> None:
        rev = await self.records.revision(deployment_id, dead.revision_id)
        if rev is None:
            return
        src = self._revision_dir(deployment_id, rev.id) / "src"
        config = config_file(src, rev.source_revision_config.langgraph_config_path or "langgraph.json")
        env = self._env(await self.records.revision_secrets(rev.id))
        server = await self._launch(deployment_id, rev.id, config, env, log, port=dead.port)
        with anyio.CancelScope(shield=True):
            async with self.lock(deployment_id):
                dep = await self.records.deployment(deployment_id)
                current = self._servers.get(deployment_id)
                if (dep is None or deployment_id in self._deleting or dep.active_revision_id != rev.id
                        or (current is not None and current.pid != dead.pid)):
                    server.kill_now()  # a newer revision took over meanwhile
                    return
                self._servers[deployment_id] = server
                await self._activate(dep, rev.id, server)
        self._crashes.pop(deployment_id, None)

    async def _mark(self, deployment_id: str, status: str) -> None:
        async with self.lock(deployment_id):
            dep = await self.records.deployment(deployment_id)
            if dep is not None and dep.status != status:
                await self.records.update_deployment(
                    msgspec.structs.replace(dep, status=status, updated_at=now()))

    # -- after a control-plane restart ---------------------------------------------------------

    async def _recover(self) -> None:
        adopted: set[int] = set()
        for record in await self.records.servers():
            server = await self._adopt(record)
            if server is not None and server.alive():
                adopted.add(server.pid)
        for deployment in self.root.iterdir() if self.root.is_dir() else ():
            await self._reap(deployment, keep=adopted)
        for deployment_id, rev in await self.records.unfinished_revisions(TERMINAL_STATUSES):
            if rev.status != "QUEUED":
                RevisionLog(self._revision_dir(deployment_id, rev.id) / "build.log").write(
                    f"the control plane restarted while this revision was {rev.status}; "
                    "starting it again")
                await self._set(rev, "QUEUED")
            self.submit(deployment_id)

    async def _adopt(self, record: ServerRecord) -> ServerProcess | None:
        """The recorded server, re-adopted if it still answers; else scheduled to start again."""
        host = self.settings.server_host
        marker = str(self._revision_dir(record.deployment_id, record.revision_id))
        server = ServerProcess(record.pid, record.port, host, record.revision_id,
                               drain_grace=await self._recorded_grace(record.revision_id))
        ours = processes.pid_alive(record.pid) and processes.runs_from(record.pid, marker)
        dep = await self.records.deployment(record.deployment_id)
        if dep is None or dep.active_revision_id != record.revision_id:
            if ours:
                await server.stop(self.settings.stop_timeout)
            await self.records.delete_server(record.deployment_id)
            return None
        log = RevisionLog(Path(marker) / "deploy.log")
        if ours and await processes.answers_ok(host, record.port):
            log.write(f"control plane restarted: re-adopted the agent server (pid {record.pid})")
            self._servers[record.deployment_id] = server
            return server
        if ours:
            await server.stop(self.settings.stop_timeout)
        log.write("control plane restarted: the agent server is gone; starting it again")
        server = ServerProcess.gone(record.port, host, record.revision_id)
        self._servers[record.deployment_id] = server
        self._restart_later(record.deployment_id, server, delay=0)
        return None

    async def _reap(self, deployment_dir: Path, keep: set[int] | tuple[()]) -> None:
        """Stop servers of this deployment that nobody tracks (a deploy cut short by a crash)."""
        for pid_file in deployment_dir.glob("revisions/*/server.pid"):
            try:
                pid = int(pid_file.read_text())
            except (OSError, ValueError):
                continue
            tracked = any(s.pid == pid for s in self._servers.values())
            if pid in keep or tracked:
                continue
            if processes.pid_alive(pid) and processes.runs_from(pid, str(pid_file.parent)):
                await ServerProcess(pid, 0, "", pid_file.parent.name).stop(self.settings.stop_timeout)
            pid_file.unlink(missing_ok=True)

    # -- helpers -------------------------------------------------------------------------------

    def _revision_dir(self, deployment_id: str, revision_id: str) -> Path:
        return self.root / deployment_id / "revisions" / revision_id

    def _scopes_of(self, deployment_id: str) -> Iterator[anyio.CancelScope]:
        for kind in ("revision", "restart"):
            scope = self._scopes.get(f"{deployment_id}:{kind}")
            if scope is not None:
                yield scope

    def _grace(self, env: dict[str, str]) -> float:
        """The drain grace a revision's server runs with: ours (passed as `--drain-grace`), else
        the one its environment sets, else the server's default."""
        if self.settings.drain_grace is not None:
            return self.settings.drain_grace
        try:
            return max(0.0, float(env.get(_GRACE_ENV, "").strip() or _SERVER_GRACE))
        except ValueError:  # the server refuses to start with it; nothing to wait for
            return _SERVER_GRACE

    async def _recorded_grace(self, revision_id: str) -> float:
        """`_grace` of a server started by an earlier control plane (its secrets decrypted)."""
        try:
            return self._grace(self._env(await self.records.revision_secrets(revision_id)))
        except Exception:  # secrets it cannot decrypt: the restart will say so, not the adoption
            return self._grace(self._env([]))

    def _env(self, secrets: list[Secret]) -> dict[str, str]:
        """The environment of a revision's build check and server."""
        env = {k: v for k, v in os.environ.items() if k not in _PRIVATE_ENV}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
        env["PYTHONUNBUFFERED"] = "1"
        env.update({secret.name: secret.value for secret in secrets})
        if self.settings.api_keys:
            env["GRAPHRUN_API_KEYS"] = ",".join(sorted(self.settings.api_keys))
        return env


def _read_from(path: Path, offset: int) -> bytes:
    try:
        with open(path, "rb") as file:
            file.seek(offset)
            return file.read()
    except OSError:
        return b""


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as file:
            file.seek(0, os.SEEK_END)
            size = file.tell()
            file.seek(max(0, size - _LOG_TAIL))
            return file.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""
