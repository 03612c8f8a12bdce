"""Per-step engine overhead (issue 2): a chain of no-op nodes, sync `invoke`.

Every node returns nothing, so a run is pure engine work: trigger selection, task setup, the
(empty) write application, and with a saver one checkpoint per step. The figure to read is
microseconds per super-step; the target is graphrun >= 10x faster than LangGraph per step
without a checkpointer and with the in-memory saver.

Run it alone with `python -m benchmarks --filter chain_`.
"""

from __future__ import annotations

from typing import Any, TypedDict

from ._harness import Case, Lib, variants

__all__ = ["cases", "chain"]

CHAIN_NODES = 100


class ChainState(TypedDict):
    value: int


def chain(lib: Lib, size: int, is_async: bool) -> Any:
    """START -> node_0 -> ... -> node_{size-1} -> END, every node a no-op."""
    if is_async:

        async def noop(state: ChainState) -> None:
            return None

    else:

        def noop(state: ChainState) -> None:  # type: ignore[misc]
            return None

    builder = lib.StateGraph(ChainState)
    previous = lib.START
    for index in range(size):
        name = f"node_{index}"
        builder.add_node(name, noop)
        builder.add_edge(previous, name)
        previous = name
    builder.add_edge(previous, lib.END)
    return builder


def cases() -> list[Case]:
    return variants(
        f"chain_{CHAIN_NODES}",
        "engine",
        chain,
        lambda size: {"value": 1},
        CHAIN_NODES,
        CHAIN_NODES,
        modes=(False,),
        unit="step",
        units=lambda size: size,
        summarize=lambda output: dict(output),
        note="no-op chain, sync invoke; per-step time is the figure to read",
    )
