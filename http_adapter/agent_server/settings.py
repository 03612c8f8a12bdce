"""What one agent server process serves and how (built by `config.py` from langgraph.json)."""

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
    config_path: Path | None = None
    studio: bool = False  # serve the local studio at / (issue 20): `dev` always, `serve --studio`
    api_url: str | None = None  # where clients reach it; runs report it as `langgraph_api_url`
    env: dict[str, str] = dataclasses.field(default_factory=dict)
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def db_path(self) -> str | None:
        """The one SQLite file for checkpoints, store items and server records."""
        if self.data_dir is None:
            return None
        return str(self.data_dir / "graphrun.sqlite")
