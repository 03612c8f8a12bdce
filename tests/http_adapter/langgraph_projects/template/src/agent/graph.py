"""Draft notes on a topic, polish them in a subgraph, and ask a person to approve them.

The run's `context` configures the greeting (`Context`), as templates configure their model.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Annotated, Any

from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from typing_extensions import TypedDict


@dataclass
class Context:
    """What a run may set in its `context`."""

    greeting: str = "Hello"


@dataclass
class State:
    topic: str = ""
    notes: Annotated[list[str], operator.add] = field(default_factory=list)
    summary: str = ""
    verdict: str = ""


class PolishState(TypedDict):
    notes: list[str]
    summary: str


class Polished(TypedDict):
    summary: str


def shine(state: PolishState) -> dict[str, Any]:
    return {"summary": f"polished {len(state['notes'])} note(s)"}


polish = (StateGraph(PolishState, output_schema=Polished)
          .add_node("shine", shine).add_edge(START, "shine").compile())


async def draft(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    return {"notes": [f"{runtime.context.greeting}, {state.topic}"]}


def review(state: State) -> dict[str, Any]:
    answer = interrupt({"question": "Publish these notes?", "notes": state.notes,
                        "summary": state.summary})
    return {"verdict": str(answer)}


graph = (
    StateGraph(State, context_schema=Context)
    .add_node(draft)
    .add_node("polish", polish)
    .add_node(review)
    .add_edge(START, "draft")
    .add_edge("draft", "polish")
    .add_edge("polish", "review")
    .compile(name="Template Graph")
)
