"""graphrun's deployment control plane: the /v2 API that builds and deploys agent servers.

    from http_adapter.control_plane import ControlPlaneSettings, create_app

`graphrun control-plane [--host] [--port]` serves it (`__main__.py`).
"""

from .app import create_app
from .settings import ControlPlaneSettings

__all__ = ["ControlPlaneSettings", "create_app"]
