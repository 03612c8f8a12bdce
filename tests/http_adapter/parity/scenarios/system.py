"""System routes and request-level errors (issue 18)."""

from __future__ import annotations

from ..registry import scenario
from ..transcript import Session


@scenario
def system_ok(s: Session) -> None:
    s.request("GET", "/ok")


@scenario
def system_info(s: Session) -> None:
    s.request("GET", "/info")


@scenario
def system_unknown_route_404(s: Session) -> None:
    s.request("GET", "/no/such/route")


@scenario
def system_method_not_allowed_405(s: Session) -> None:
    s.request("DELETE", "/threads/search")


@scenario
def system_invalid_json_body(s: Session) -> None:
    s.request("POST", "/threads", content=b"{not json", headers={"content-type": "application/json"})
    s.request("POST", "/assistants/search", content=b"[1,", headers={"content-type": "application/json"})


@scenario
def system_wrong_body_type_422(s: Session) -> None:
    s.request("POST", "/threads/search", json={"limit": "many"})
    s.request("POST", "/assistants", json={"graph_id": 7})
