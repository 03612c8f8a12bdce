"""Per-step cost of checkpointing (issue 3): graphrun's savers vs LangGraph's, same graphs.

- `checkpoint_chain_100_*`: a 100-node chain whose every node writes the state (so each step
  stores a changed channel), with the in-memory saver and with SQLite, sync and async;
- `checkpoint_long_thread_*`: one thread growing a 200-step conversation-like list, where a
  saver that rewrote the whole state every step would show; graphrun stores only the channels
  that changed (versioned blobs).

Each also runs on PostgreSQL (`*_postgres`: graphrun's `PostgresSaver` vs LangGraph's
`langgraph-checkpoint-postgres`, issue 19) on a throwaway local server (`_postgres`).

Run it alone with `python -m benchmarks --filter checkpoint_`.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from ._harness import Case, Lib, variants

__all__ = ["cases"]


class Counter(TypedDict):
    value: int


class Log(TypedDict):
    n: int
    notes: Annotated[list, operator.add]
    big: dict


def writing_chain(lib: Lib, size: int, is_async: bool) -> Any:
    """START -> node_0 -> ... -> node_{size-1} -> END; each node increments `value`."""

    def step(state: Counter) -> dict:
        return {"value": state["value"] + 1}

    if is_async:

        async def node(state: Counter) -> dict:
            return step(state)

    else:
        node = step  # type: ignore[assignment]

    builder = lib.StateGraph(Counter)
    previous = lib.START
    for index in range(size):
        builder.add_node(f"node_{index}", node)
        builder.add_edge(previous, f"node_{index}")
        previous = f"node_{index}"
    builder.add_edge(previous, lib.END)
    return builder


def long_thread(lib: Lib, size: int, is_async: bool) -> Any:
    """A loop appending one note per step next to a large, unchanging `big` value."""

    def step(state: Log) -> dict:
        return {"n": state["n"] + 1, "notes": [f"note {state['n']}"]}

    if is_async:

        async def node(state: Log) -> dict:
            return step(state)

    else:
        node = step  # type: ignore[assignment]

    def more(state: Log) -> str:
        return "tick" if state["n"] < size else lib.END

    builder = lib.StateGraph(Log)
    builder.add_node("tick", node)
    builder.add_edge(lib.START, "tick")
    builder.add_conditional_edges("tick", more)
    return builder


def _big() -> dict:
    return {f"key_{i}": "x" * 64 for i in range(500)}


def cases() -> list[Case]:
    return [
        *variants(
            "checkpoint_chain_100",
            "checkpoints",
            writing_chain,
            lambda size: {"value": 0},
            100,
            100,
            savers=("memory", "sqlite", "postgres"),
            unit="step",
            units=lambda size: size,
            summarize=lambda output: dict(output),
            note="every step stores one changed channel",
        ),
        *variants(
            "checkpoint_long_thread_200",
            "checkpoints",
            long_thread,
            lambda size: {"n": 0, "notes": [], "big": _big()},
            200,
            50,
            savers=("memory", "sqlite", "postgres"),
            unit="step",
            units=lambda size: size,
            summarize=lambda output: (output["n"], len(output["notes"])),
            note="a large unchanged value beside a growing list",
        ),
    ]
