"""One node that reads its runtime context: the smallest project shape LangChain ships.

Served by `langgraph dev` (PARITY_LIB=langgraph) and by `graphrun dev` (graphrun's engine).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from typing_extensions import TypedDict

if os.environ.get("PARITY_LIB") == "langgraph":
    from langgraph.graph import StateGraph
    from langgraph.runtime import Runtime
else:
    from engine import Runtime, StateGraph


class Context(TypedDict):
    """What a run may set per call (`context=` on the run, or the assistant's context)."""

    my_configurable_param: str


@dataclass
class State:
    """The graph's state; `changeme` is the one field the template starts with."""

    changeme: str = "example"


async def call_model(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Answers with what it was given and the context it ran with."""
    param = (runtime.context or {}).get("my_configurable_param")
    return {"changeme": f"output from call_model: {state.changeme}. Configured with {param}"}


graph = (
    StateGraph(State, context_schema=Context)
    .add_node(call_model)
    .add_edge("__start__", "call_model")
    .compile(name="New Graph")
)
