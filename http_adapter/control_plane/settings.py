"""What the control plane runs with: where it keeps its state, its keys, and deployer limits.

`ControlPlaneSettings.from_env()` reads the environment the way `graphrun control-plane` does:

- `GRAPHRUN_CONTROL_PLANE_API_KEYS`: comma-separated keys; every route but `/ok`, `/docs` and
  `/openapi.json` then needs one (`X-Api-Key` or `Authorization: Bearer`). They are also the
  keys the deployed agent servers require (`GRAPHRUN_API_KEYS`): one set of keys per org.
- `GRAPHRUN_SECRET_KEY`: the Fernet key (or any passphrase) that encrypts secrets at rest; see
  `secrets.py`. Without it a key is generated once into `<data_dir>/secret.key`.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["API_KEYS_ENV", "SECRET_KEY_ENV", "ControlPlaneSettings"]

API_KEYS_ENV = "GRAPHRUN_CONTROL_PLANE_API_KEYS"
SECRET_KEY_ENV = "GRAPHRUN_SECRET_KEY"


@dataclasses.dataclass(slots=True)
class ControlPlaneSettings:
    """Everything `create_app` needs."""

    data_dir: Path = Path(".graphrun-control")  # control.sqlite + one directory per deployment
    api_keys: frozenset[str] = frozenset()  # empty: the control plane is open (a warning is logged)
    secret_key: str | None = None  # None: generated into data_dir/secret.key
    python: str = sys.executable  # the interpreter that checks builds and runs agent servers
    server_host: str = "127.0.0.1"  # deployed servers listen on loopback only
    server_log_level: str = "info"
    build_timeout: float = 300.0  # seconds for fetch + import check of one revision
    deploy_timeout: float = 60.0  # seconds for a new server to answer /ok
    stop_timeout: float = 10.0  # seconds between SIGTERM and SIGKILL (deleting, stopping)
    # seconds a replaced revision's runs in flight get to finish (its servers' --drain-grace);
    # None: the server's default (20 s) or BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS among the secrets
    drain_grace: float | None = None
    monitor_interval: float = 1.0  # seconds between liveness checks of the deployed servers
    restart_delay: float = 2.0  # seconds before a crashed server is started again
    keep_revisions: int = 3  # source trees kept besides the active one (for redeploys)
    stop_servers_on_exit: bool = False  # False: servers outlive the control plane (re-adopted)

    def __post_init__(self) -> None:
        # Absolute: servers run with their revision's directory as cwd.
        self.data_dir = Path(self.data_dir).resolve()

    @property
    def db_path(self) -> Path:
        return self.data_dir / "control.sqlite"

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, **overrides: object
    ) -> ControlPlaneSettings:
        """Settings from `GRAPHRUN_CONTROL_PLANE_API_KEYS` and `GRAPHRUN_SECRET_KEY`."""
        env = os.environ if environ is None else environ
        keys = frozenset(k.strip() for k in env.get(API_KEYS_ENV, "").split(",") if k.strip())
        values: dict[str, object] = {"api_keys": keys, "secret_key": env.get(SECRET_KEY_ENV) or None}
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]
