"""The parity app's custom routes (`http.app`): listed in `/openapi.json` (issue 31 item 7)."""

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


async def hello(request: Request) -> JSONResponse:
    """Say hello."""
    return JSONResponse({"hello": "world"})


app = Starlette(routes=[Route("/custom/hello", hello, methods=["GET"])])
