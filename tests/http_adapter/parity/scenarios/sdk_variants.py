"""The SDK methods' less common arguments (issue 31, after `sdk_methods`): select, sort,
filters, paging, counts by status, state of subgraphs, history filters, store filters."""

from __future__ import annotations

from ..registry import scenario
from ..transcript import Session


@scenario
def sdk_argument_variants(s: Session) -> None:
    sdk = s.sdk
    for name in ("b", "a", "c"):
        sdk.assistants.create("router", name=name, metadata={"v": "x"})
    s.call("assistants sorted", sdk.assistants.search, metadata={"v": "x"}, sort_by="name",
           sort_order="asc", select=["name", "graph_id"])
    s.call("assistants paged", sdk.assistants.search, metadata={"v": "x"}, limit=1, offset=1,
           sort_by="name", sort_order="desc", select=["name"])
    s.call("assistants by name", sdk.assistants.search, name="a", select=["name"])
    tids = []
    for x in (1, 2, 3):
        tid = sdk.threads.create(metadata={"v": "x", "n": x})["thread_id"]
        sdk.runs.wait(tid, "router", input={"x": x})
        tids.append(tid)
    s.call("threads by values", sdk.threads.search, values={"x": 2}, select=["metadata"])
    s.call("threads sorted", sdk.threads.search, metadata={"v": "x"}, sort_by="created_at",
           sort_order="asc", select=["metadata", "status"])
    s.call("threads by status", sdk.threads.count, status="idle")
    s.call("threads select values", sdk.threads.search, ids=[tids[0]], select=["values"])
    s.call("runs by status", sdk.runs.list, tids[0], status="success", select=["status"])
    s.call("runs paged", sdk.runs.list, tids[0], limit=1, offset=0, select=["status"])
    nested = sdk.threads.create()["thread_id"]
    sdk.runs.wait(nested, "nested", input={"x": 1, "ask": True})
    s.call("state subgraphs", sdk.threads.get_state, nested, subgraphs=True)
    s.call("history by metadata", sdk.threads.get_history, tids[1], metadata={"source": "input"})
    state = sdk.threads.get_state(tids[1])
    # (`before=` a checkpoint: the reference answers 500, "Internal Server Error")
    s.call("state at checkpoint", sdk.threads.get_state, tids[1], checkpoint=state["checkpoint"])
    for key in ("k1", "k2"):
        sdk.store.put_item(["var"], key, {"kind": key, "n": 1})
    s.call("store filter", sdk.store.search_items, ["var"], filter={"kind": "k2"})
    # (paging store items: the order differs, listed as `store_search`'s difference)
    s.call("store namespaces depth", sdk.store.list_namespaces, prefix=["var"], max_depth=1)
    s.call("stream events", sdk.runs.stream, None, "router", input={"x": 1},
           stream_mode="debug")
