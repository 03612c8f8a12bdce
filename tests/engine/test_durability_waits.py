"""When a run waits for its saver: "async" durability hands changes over with `*_nowait` and
waits once, at the end of the invocation; a subgraph writing through the same saver leaves that
wait to its root run, a graph with a saver of its own waits for it before returning.

`Deferred` is a saver whose hand-overs are only stored by `flush`, so a missing wait shows up
as missing checkpoints rather than as a timing difference.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest

from checkpoints import InMemorySaver
from engine import START, Send, StateGraph


class Deferred(InMemorySaver):
    """An in-memory saver with background hand-overs that `flush` / `aflush` commit."""

    def __init__(self) -> None:
        super().__init__()
        self.queued: list[tuple[str, tuple[Any, ...]]] = []
        self.handed_over = 0
        self.flushes = 0

    def put_nowait(self, config: Any, checkpoint: Any, metadata: Any, versions: Any) -> Any:
        self.handed_over += 1
        self.queued.append(("put", (config, checkpoint, metadata, versions)))
        conf = config["configurable"]
        return {
            "configurable": {
                "thread_id": conf["thread_id"],
                "checkpoint_ns": conf.get("checkpoint_ns", ""),
                "checkpoint_id": checkpoint["id"],
            }
        }

    def put_writes_nowait(
        self, config: Any, writes: Any, task_id: str, task_path: str = ""
    ) -> None:
        self.handed_over += 1
        self.queued.append(("put_writes", (config, writes, task_id, task_path)))

    def flush(self) -> None:
        self.flushes += 1
        queued, self.queued = self.queued, []
        for op, args in queued:
            getattr(self, op)(*args)

    async def aflush(self) -> None:
        self.flush()


class Work(TypedDict):
    out: Annotated[list, operator.add]


class Item(TypedDict):
    item: str
    out: Annotated[list, operator.add]


def _fan_out(use_async: bool) -> Any:
    """START sends one subgraph run per item; each subgraph runs two steps."""

    def first(s: Item) -> dict:
        return {"out": [f"{s['item']}1"]}

    async def afirst(s: Item) -> dict:
        return first(s)

    sub = StateGraph(Item)
    sub.add_node("first", afirst if use_async else first)
    sub.add_node("second", lambda s: {"out": [f"{s['item']}2"]})
    sub.add_edge(START, "first")
    sub.add_edge("first", "second")
    g = StateGraph(Work)
    g.add_node("sub", sub.compile())
    g.add_conditional_edges(START, lambda s: [Send("sub", {"item": i, "out": []}) for i in "abc"])
    return g


def _stored_namespaces(saver: InMemorySaver, thread_id: str) -> list[str]:
    return sorted(saver.storage.get(thread_id, {}))


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.anyio
async def test_a_fan_out_to_subgraphs_waits_for_the_saver_once(use_async: bool) -> None:
    saver = Deferred()
    app = _fan_out(use_async).compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "fan"}}
    if use_async:
        out = await app.ainvoke({"out": []}, cfg)
    else:
        out = app.invoke({"out": []}, cfg)
    assert sorted(out["out"]) == ["a1", "a2", "b1", "b2", "c1", "c2"]
    assert saver.flushes == 1  # the root's end, not one more per subgraph
    assert saver.queued == []
    namespaces = _stored_namespaces(saver, "fan")
    assert namespaces[0] == "" and len(namespaces) == 4  # the root and the three subgraph runs
    assert all(ns.startswith("sub:") for ns in namespaces[1:])
    state = app.get_state(cfg)
    assert state.next == () and sorted(state.values["out"]) == sorted(out["out"])


@pytest.mark.parametrize("durability", ["sync", "exit"])
@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.anyio
async def test_subgraphs_save_as_their_root_does(durability: str, use_async: bool) -> None:
    """`durability` given to the root holds for its subgraphs too (as LangGraph): nothing is
    handed over in the background, so nothing waits for a flush."""
    saver = Deferred()
    app = _fan_out(use_async).compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "fan"}}
    if use_async:
        await app.ainvoke({"out": []}, cfg, durability=durability)
    else:
        app.invoke({"out": []}, cfg, durability=durability)
    assert saver.handed_over == 0 and saver.flushes == 0
    # "exit" keeps only the root's last checkpoint: a subgraph that finished saves nothing.
    assert len(_stored_namespaces(saver, "fan")) == (4 if durability == "sync" else 1)


def test_a_graph_handing_over_under_a_root_that_does_not_wait_waits_itself() -> None:
    """A graph invoked in a node with `durability="async"` while its root saves synchronously
    (so never flushes) waits for its own hand-overs before returning."""
    inner = StateGraph(Work)
    inner.add_node("i1", lambda s: {"out": ["inner"]})
    inner.add_edge(START, "i1")
    inner_app = inner.compile()  # no saver of its own: writes through the root's
    saver = Deferred()
    seen: list[Any] = []

    def caller(s: Work) -> dict:
        out = inner_app.invoke({"out": []}, durability="async")
        seen.append((saver.handed_over, list(saver.queued)))
        return {"out": out["out"]}

    g = StateGraph(Work)
    g.add_node("caller", caller)
    g.add_edge(START, "caller")
    app = g.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "outer"}}
    assert app.invoke({"out": []}, cfg, durability="sync") == {"out": ["inner"]}
    [(handed_over, queued)] = seen
    assert handed_over > 0 and queued == []  # the inner run handed over, then flushed
    assert len(_stored_namespaces(saver, "outer")) == 2


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.anyio
async def test_a_graph_with_its_own_saver_waits_for_it_before_returning(use_async: bool) -> None:
    inner_saver = Deferred()
    inner = StateGraph(Work)
    inner.add_node("i1", lambda s: {"out": ["inner"]})
    inner.add_edge(START, "i1")
    inner_app = inner.compile(checkpointer=inner_saver)
    seen: list[Any] = []

    def caller(s: Work) -> dict:
        out = inner_app.invoke({"out": []})
        seen.append((list(inner_saver.queued), _stored_namespaces(inner_saver, "outer")))
        return {"out": out["out"]}

    async def acaller(s: Work) -> dict:
        out = await inner_app.ainvoke({"out": []})
        seen.append((list(inner_saver.queued), _stored_namespaces(inner_saver, "outer")))
        return {"out": out["out"]}

    outer_saver = Deferred()
    g = StateGraph(Work)
    g.add_node("caller", acaller if use_async else caller)
    g.add_edge(START, "caller")
    app = g.compile(checkpointer=outer_saver)
    cfg = {"configurable": {"thread_id": "outer"}}
    out = await app.ainvoke({"out": []}, cfg) if use_async else app.invoke({"out": []}, cfg)
    assert out == {"out": ["inner"]}
    # Inside the node, right after the inner invocation: its saver had stored everything.
    [(queued, namespaces)] = seen
    assert queued == [] and len(namespaces) == 1 and namespaces[0].startswith("caller:")
    assert inner_saver.flushes == 1 and outer_saver.flushes == 1
