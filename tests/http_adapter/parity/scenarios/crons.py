"""Crons: create (stateless and on a thread), search/count, update, delete, errors (issue 18)."""

from __future__ import annotations

from ..registry import scenario
from ..transcript import Session

_MISSING = "00000000-0000-4000-8000-000000000000"


@scenario
def crons_create_stateless(s: Session) -> None:
    s.call("create", s.sdk.crons.create, "agent", schedule="0 0 1 1 *", input={"x": 1},
           metadata={"c": 1})


@scenario
def crons_create_for_thread(s: Session) -> None:
    tid = s.call("threads.create", s.sdk.threads.create)["thread_id"]
    s.call("create", s.sdk.crons.create_for_thread, tid, "agent", schedule="0 0 1 1 *",
           input={"x": 2}, config={"tags": ["cron"]})


@scenario
def crons_search_count_delete(s: Session) -> None:
    first = s.sdk.crons.create("agent", schedule="0 0 1 1 *", input={"x": 1})
    s.sdk.crons.create("router", schedule="0 0 1 2 *", input={"x": 1})
    s.call("search", s.sdk.crons.search, sort_by="created_at", sort_order="asc")
    router = s.sdk.assistants.search(graph_id="router")[0]["assistant_id"]
    s.call("search assistant", s.sdk.crons.search, assistant_id=router)
    s.call("count", s.sdk.crons.count)
    s.request("DELETE", f"/runs/crons/{first['cron_id']}")
    s.call("count after delete", s.sdk.crons.count)
    s.request("DELETE", f"/runs/crons/{first['cron_id']}")


@scenario
def crons_update(s: Session) -> None:
    cron = s.sdk.crons.create("agent", schedule="0 0 1 1 *", input={"x": 1})
    s.call("update", s.sdk.crons.update, cron["cron_id"], schedule="0 0 2 1 *", enabled=False)
    s.request("PATCH", f"/runs/crons/{_MISSING}", json={"enabled": True})


@scenario
def crons_errors(s: Session) -> None:
    s.request("POST", "/runs/crons", json={"assistant_id": "agent", "schedule": "not a schedule"})
    s.request("POST", "/runs/crons", json={"assistant_id": "nope", "schedule": "0 0 1 1 *"})
    s.request("POST", f"/threads/{_MISSING}/runs/crons", json={"assistant_id": "agent",
                                                                "schedule": "0 0 1 1 *"})
    s.request("POST", "/runs/crons", json={"schedule": "0 0 1 1 *"})


@scenario
def crons_search_by_graph_name(s: Session) -> None:
    s.sdk.crons.create("router", schedule="0 0 1 2 *", input={"x": 1})
    s.request("POST", "/runs/crons/search", json={"assistant_id": "router"})
