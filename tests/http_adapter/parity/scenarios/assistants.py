"""Assistants: built-ins, create/patch/versions/latest, search/count, schemas, graph, subgraphs."""

from __future__ import annotations

from ..registry import scenario
from ..transcript import Session

_MISSING = "00000000-0000-4000-8000-000000000000"


def _builtin(s: Session, graph: str) -> str:
    return s.sdk.assistants.search(graph_id=graph, metadata={"created_by": "system"})[0]["assistant_id"]


@scenario
def assistants_get_builtin(s: Session) -> None:
    s.call("assistants.get", s.sdk.assistants.get, _builtin(s, "agent"))


@scenario
def assistants_search_builtin(s: Session) -> None:
    s.call("assistants.search graph_id", s.sdk.assistants.search, graph_id="router")
    s.call("assistants.search sorted", s.sdk.assistants.search, sort_by="graph_id", sort_order="asc",
           select=["graph_id", "name"])


@scenario
def assistants_create(s: Session) -> None:
    s.call("assistants.create", s.sdk.assistants.create, "agent", config={"tags": ["t"]},
           context={"user": "u"}, metadata={"owner": "me"}, name="mine", description="desc")


@scenario
def assistants_create_with_id_if_exists(s: Session) -> None:
    assistant_id = "11111111-2222-4333-8444-555555555555"
    s.call("create", s.sdk.assistants.create, "agent", assistant_id=assistant_id, name="first")
    s.call("create do_nothing", s.sdk.assistants.create, "agent", assistant_id=assistant_id,
           name="second", if_exists="do_nothing")
    s.request("POST", "/assistants", json={"graph_id": "agent", "assistant_id": assistant_id})


@scenario
def assistants_create_unknown_graph_404(s: Session) -> None:
    s.request("POST", "/assistants", json={"graph_id": "nope"})


@scenario
def assistants_create_missing_graph_422(s: Session) -> None:
    s.request("POST", "/assistants", json={"name": "no graph"})


@scenario
def assistants_patch_versions_latest(s: Session) -> None:
    created = s.call("create", s.sdk.assistants.create, "agent", metadata={"v": 1}, name="a")
    aid = created["assistant_id"]
    s.call("update metadata", s.sdk.assistants.update, aid, metadata={"v": 2})
    s.call("update config", s.sdk.assistants.update, aid, config={"recursion_limit": 7},
           name="renamed")
    s.call("versions", s.sdk.assistants.get_versions, aid)
    s.call("versions filtered", s.sdk.assistants.get_versions, aid, metadata={"v": 2}, limit=1)
    s.call("set_latest 1", s.sdk.assistants.set_latest, aid, 1)
    s.call("get", s.sdk.assistants.get, aid)
    s.request("POST", f"/assistants/{aid}/latest", json={"version": 9})


@scenario
def assistants_patch_404(s: Session) -> None:
    s.request("PATCH", f"/assistants/{_MISSING}", json={"metadata": {}})


@scenario
def assistants_search_filters(s: Session) -> None:
    for name, team in (("b", "x"), ("a", "x"), ("c", "y")):
        s.call(f"create {name}", s.sdk.assistants.create, "router", metadata={"team": team}, name=name)
    s.call("search team x", s.sdk.assistants.search, metadata={"team": "x"})
    s.call("search name sort", s.sdk.assistants.search, graph_id="router", sort_by="name",
           sort_order="asc", limit=2, offset=1)
    s.request("POST", "/assistants/search", json={"metadata": {"team": "x"}, "limit": 1})
    s.request("POST", "/assistants/search", json={"name": "c"})


@scenario
def assistants_count(s: Session) -> None:
    s.call("create", s.sdk.assistants.create, "router", metadata={"team": "z"})
    s.call("count all", s.sdk.assistants.count)
    s.call("count graph", s.sdk.assistants.count, graph_id="router")
    s.call("count metadata", s.sdk.assistants.count, metadata={"team": "z"})


@scenario
def assistants_delete(s: Session) -> None:
    aid = s.call("create", s.sdk.assistants.create, "agent")["assistant_id"]
    s.request("DELETE", f"/assistants/{aid}")
    s.request("GET", f"/assistants/{aid}")
    s.request("DELETE", f"/assistants/{aid}")


@scenario
def assistants_get_404_and_bad_uuid(s: Session) -> None:
    s.request("GET", f"/assistants/{_MISSING}")
    s.request("GET", "/assistants/not-a-uuid")


@scenario
def assistants_schemas_agent(s: Session) -> None:
    s.call("schemas", s.sdk.assistants.get_schemas, _builtin(s, "agent"))


@scenario
def assistants_schemas_chat(s: Session) -> None:
    s.call("schemas", s.sdk.assistants.get_schemas, _builtin(s, "chat"))


@scenario
def assistants_graph_agent(s: Session) -> None:
    s.call("graph", s.sdk.assistants.get_graph, _builtin(s, "agent"))


@scenario
def assistants_graph_router(s: Session) -> None:
    s.call("graph", s.sdk.assistants.get_graph, _builtin(s, "router"))


@scenario
def assistants_graph_xray(s: Session) -> None:
    aid = _builtin(s, "nested")
    s.call("graph xray=True", s.sdk.assistants.get_graph, aid, xray=True)
    s.call("graph xray=1", s.sdk.assistants.get_graph, aid, xray=1)


@scenario
def assistants_subgraphs(s: Session) -> None:
    aid = _builtin(s, "nested")
    s.call("subgraphs", s.sdk.assistants.get_subgraphs, aid)
    s.call("subgraphs recurse", s.sdk.assistants.get_subgraphs, aid, recurse=True)
    s.call("subgraphs namespace", s.sdk.assistants.get_subgraphs, aid, namespace="outer")
    s.call("subgraphs of a flat graph", s.sdk.assistants.get_subgraphs, _builtin(s, "router"))
