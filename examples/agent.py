"""The bundled example graph: research, write, review, and rewrite until the review passes.

A small but real graph: a reducer (`notes` accumulates across nodes and revisions), a
conditional edge that loops back to `write`, and a per-run setting read from the run's
`config.configurable` (`max_revisions`, default 2). No model or network needed.

Served by `graphrun dev --config examples/langgraph.json` as the assistant `agent`:

    curl -s localhost:2024/runs/wait -H 'Content-Type: application/json' \
         -d '{"assistant_id": "agent", "input": {"topic": "otters"}}'
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, TypedDict

from engine import END, START, StateGraph


class State(TypedDict, total=False):
    topic: str
    notes: Annotated[list[str], operator.add]  # reducer: every node's notes are appended
    draft: str
    revision: int
    approved: bool


def research(state: State) -> dict[str, Any]:
    topic = state.get("topic") or "graphs"
    return {"notes": [f"{topic}: three facts", f"{topic}: one open question"], "revision": 0}


def write(state: State) -> dict[str, Any]:
    revision = state.get("revision", 0) + 1
    draft = f"Draft {revision} on {state.get('topic') or 'graphs'}, from {len(state['notes'])} notes"
    return {"draft": draft, "revision": revision, "notes": [f"wrote draft {revision}"]}


def review(state: State, config: dict[str, Any]) -> dict[str, Any]:
    wanted = _max_revisions(config)
    approved = state["revision"] >= wanted
    verdict = "approved" if approved else "needs another pass"
    return {"approved": approved, "notes": [f"review of draft {state['revision']}: {verdict}"]}


def after_review(state: State) -> Literal["write", "__end__"]:
    return END if state.get("approved") else "write"


def _max_revisions(config: dict[str, Any]) -> int:
    configurable = (config or {}).get("configurable") or {}
    return int(configurable.get("max_revisions", 2))


builder = StateGraph(State)
builder.add_node("research", research)
builder.add_node("write", write)
builder.add_node("review", review)
builder.add_edge(START, "research")
builder.add_edge("research", "write")
builder.add_edge("write", "review")
builder.add_conditional_edges("review", after_review, ["write", END])

graph = builder.compile()
