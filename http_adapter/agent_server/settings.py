"""What one agent server process serves and how (built by `config.py` from langgraph.json).

With `database_url` the server keeps every record in PostgreSQL and many processes may share it;
`redis_url` adds Redis for wake-ups, cancels and run streams across them (issue 19). Without
either, one SQLite file under `data_dir` (the embedded default).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

__all__ = ["Settings"]


@dataclasses.dataclass(slots=True)
class Settings:
    """Everything `create_app` needs; the CLI fills it from flags, env and the config file."""

    graphs: dict[str, Any]  # graph_id -> compiled graph (or a factory), already imported
    data_dir: Path | None = Path(".graphrun")  # None: --in-memory, nothing on disk
    api_keys: frozenset[str] = frozenset()  # empty: no key required
    auth: Any = None  # a custom `http_adapter.auth.Auth` object (crons/auth issue)
    workers: int = 10  # background run workers
    run_timeout: float | None = None  # seconds; a run past it ends with status "timeout"
    heartbeat: float = 5.0  # seconds between SSE heartbeat comments
    max_body_size: int | None = 64 << 20  # bytes; a larger request body is a 413 (issue 26)
    wait_keepalive: float = 5.0  # seconds between the newlines a `/wait` or `/join` sends (issue 31)
    config_path: Path | None = None
    studio: bool = False  # serve the local studio at / (issue 20): `dev` always, `serve --studio`
    api_url: str | None = None  # where clients reach it; runs report it as `langgraph_api_url`
    env: dict[str, str] = dataclasses.field(default_factory=dict)
    # -- scale-out (issue 19 §5, §9, §10) --
    database_url: str | None = None  # PostgreSQL: every durable record; None: SQLite
    redis_url: str | None = None  # Redis: signals and run streams; needs database_url
    pool_min: int = 1  # connections each PostgreSQL pool keeps open
    pool_max: int = 10  # and at most
    prepared_statements: bool = True  # off for PgBouncer in transaction mode
    lease: float = 30.0  # seconds a claimed run is owned without a heartbeat
    lease_heartbeat: float | None = None  # seconds between lease renewals; None: lease / 3
    reaper_interval: float = 5.0  # seconds between sweeps for lapsed leases
    drain_grace: float = 20.0  # SIGTERM: seconds running runs get to finish before release
    handover: bool = False  # wait for the server holding the SQLite file (handover.py, issue 26)
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def heartbeat_interval(self) -> float:
        """Seconds between lease renewals: given, or a third of the lease."""
        return self.lease_heartbeat if self.lease_heartbeat is not None else self.lease / 3

    @property
    def cluster(self) -> bool:
        """PostgreSQL (and maybe Redis) back end: records shared by many processes."""
        return self.database_url is not None

    @property
    def db_path(self) -> str | None:
        """The one SQLite file for checkpoints, store items and server records."""
        if self.data_dir is None:
            return None
        return str(self.data_dir / "graphrun.sqlite")
