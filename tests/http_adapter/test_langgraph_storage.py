"""graphrun's saver and store offered to LangGraph's runtime (issue 28): the adapter module
`http_adapter.agent_server.langgraph_storage`, driven by real LangGraph graphs."""

from __future__ import annotations

import asyncio
import operator
from pathlib import Path
from typing import Annotated, Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore
from langgraph.types import Command, Send, interrupt
from typing_extensions import TypedDict

from checkpoints import SqliteSaver
from checkpoints.store import InMemoryStore
from http_adapter.agent_server.langgraph_storage import saver_for, store_for


class State(TypedDict, total=False):
    notes: Annotated[list[str], operator.add]
    verdict: str


def draft(state: State) -> dict[str, Any]:
    return {"notes": ["draft"]}


def review(state: State) -> dict[str, Any]:
    return {"verdict": interrupt("publish?")}


def fan_out(state: State) -> list[Send]:
    return [Send("draft", {}), Send("draft", {})]


BUILDER = (StateGraph(State).add_node(draft).add_node(review)
           .add_conditional_edges(START, fan_out, ["draft"]).add_edge("draft", "review"))
CONFIG = {"configurable": {"thread_id": "t"}}


async def _fork_story(checkpointer: Any) -> None:
    """Two Sends (kept in a checkpoint), an interrupt, a resume; then a fork from the review
    with an edited note, resumed differently."""
    graph = BUILDER.compile(checkpointer=checkpointer)
    await graph.ainvoke({"notes": []}, CONFIG)
    await graph.ainvoke(Command(resume="yes"), CONFIG)
    history = [s async for s in graph.aget_state_history(CONFIG)]
    at_review = next(s for s in history if s.next == ("review",))
    fork = await graph.aupdate_state(at_review.config, {"notes": ["edited"]}, as_node="draft")
    await graph.ainvoke(Command(resume="no"), fork)


async def _history(checkpointer: Any) -> list[tuple[Any, ...]]:
    graph = BUILDER.compile(checkpointer=checkpointer)
    return [(s.metadata["step"], s.metadata["source"], s.next, s.values)
            async for s in graph.aget_state_history(CONFIG)]


def test_a_fork_leaves_the_other_branch_as_it_was(tmp_path: Path) -> None:
    """LangGraph forks from a past checkpoint reuse its version counters: the versions the
    adapter hands out keep the branches' stored values apart. Read back by a fresh saver (as
    another host reads it), the history is LangGraph's own saver's."""
    async def main() -> None:
        reference = InMemorySaver()
        await _fork_story(reference)
        saver = SqliteSaver(str(tmp_path / "t.db"))
        await _fork_story(saver_for(saver))
        await saver.aclose()
        again = SqliteSaver(str(tmp_path / "t.db"))
        found = await _history(saver_for(again))
        await again.aclose()
        assert found == await _history(reference)
        assert found[2][3] == {"notes": ["draft", "draft"], "verdict": "yes"}  # the first branch

    asyncio.run(main())


def test_the_store_reaches_langgraph_nodes() -> None:
    """A node's `store` (LangGraph's BaseStore) is the server's store: items put through one
    are read through the other."""
    ours = InMemoryStore()
    ours.put(("users", "u1"), "profile", {"name": "Ada"})

    def remember(state: State, *, store: BaseStore) -> dict[str, Any]:
        name = store.get(("users", "u1"), "profile").value["name"]
        store.put(("users", "u1"), "seen", {"by": "node"})
        found = [i.key for i in store.search(("users",))]
        spaces = store.list_namespaces(prefix=("users",))
        return {"notes": [name, *sorted(found), *("/".join(s) for s in spaces)]}

    graph = (StateGraph(State).add_node(remember).add_edge(START, "remember")
             .compile(store=store_for(ours)))
    assert graph.invoke({"notes": []})["notes"] == ["Ada", "profile", "seen", "users/u1"]
    assert ours.get(("users", "u1"), "seen").value == {"by": "node"}
