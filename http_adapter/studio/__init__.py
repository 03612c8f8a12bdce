"""The local studio (issue 20): a browser page that sees, runs and debugs the served graphs.

Static files only (`index.html`, ES modules, CSS in this folder), served by the agent server
at `/` and `/studio/...` when `Settings.studio` is on (`graphrun dev`, `graphrun serve
--studio`). The page is a client of the public API: it calls the documented endpoints on the
same origin and nothing else, so there is no studio-only endpoint to secure or keep in step.
"""

from __future__ import annotations

from ._serve import routes

__all__ = ["routes"]
