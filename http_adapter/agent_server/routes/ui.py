"""`POST /ui/{graph_id}`: a graph's generative-UI components (the JS SDK's `~ui.getComponent`,
issue 31). graphrun does not bundle the JS components a langgraph.json `ui` section names, so
every graph answers as the reference answers for a graph without components: 404 naming it
(as JSON `{"detail": ...}`; the reference sends bare text)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..errors import NotFound

__all__ = ["routes"]


async def ui_component(request: Request) -> Response:
    """Get a graph's UI components (none are bundled: 404)."""
    raise NotFound(f"UI not found for graph '{request.path_params['graph_id']}'")


routes = [Route("/ui/{graph_id}", ui_component, methods=["POST"])]
