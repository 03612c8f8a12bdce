"""Serving the studio's files: the page at `/` and `/studio/`, its assets at `/studio/<name>`.

Only the files shipped in this folder with a known type are served (no directory walking, no
`..`). The routes are left out of the OpenAPI document: they are a page, not the API.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.routing import BaseRoute, Route

__all__ = ["routes"]

_HERE = Path(__file__).resolve().parent
_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
# The page changes with the package: revalidate (ETag) instead of caching blindly.
_CACHE = "no-cache"


def _assets() -> dict[str, Path]:
    """name -> file, for every servable file shipped beside this module (read once)."""
    return {p.name: p for p in sorted(_HERE.iterdir()) if p.suffix in _TYPES and p.is_file()}


_ASSETS = _assets()


def _page(root_path: str) -> str:
    """index.html with its base URL set, so assets and API calls work under a proxy prefix."""
    html = (_HERE / "index.html").read_text(encoding="utf-8")
    base = root_path.rstrip("/").replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    return html.replace("{{BASE}}", f"{base}/studio/")


async def index(request: Request) -> Response:
    """The studio page."""
    return HTMLResponse(_page(request.scope.get("root_path", "")), headers={"Cache-Control": _CACHE})


async def asset(request: Request) -> Response:
    """One of the page's files; 404 (JSON, like every other miss) for anything else."""
    name = request.path_params["name"]
    if name in ("", "index.html"):
        return await index(request)
    path = _ASSETS.get(name)
    if path is None:
        return Response(b'{"detail":"Not Found"}', status_code=404, media_type="application/json")
    return FileResponse(path, media_type=_TYPES[path.suffix], headers={"Cache-Control": _CACHE})


def routes() -> list[BaseRoute]:
    """The studio's routes, for `create_app` to add when the studio is on."""
    return [
        Route("/", index, methods=["GET"], include_in_schema=False),
        Route("/studio", index, methods=["GET"], include_in_schema=False),
        Route("/studio/{name:path}", asset, methods=["GET"], include_in_schema=False),
    ]
