"""The SQLite file `fixtures/before_issue_32.sqlite`, written by the code before issue 32.

`python tests/checkpoints/old_file.py DIR` with the older `engine` and `checkpoints` first on
PYTHONPATH writes `DIR/before_issue_32.sqlite` and, beside it, what that code read back from it
(`before_issue_32.json`: every checkpoint's values, metadata and pending writes, newest first).
The committed pair was made so at 4d7c393 (main before issue 32): full values, capped delta
chains that restart, sourced deltas, write references, a fork and an update, and a pending
interrupt. `test_old_file.py` reads it with today's code and expects the same.
"""

from __future__ import annotations

import json
import operator
import sys
from pathlib import Path
from typing import Annotated, Any, TypedDict

NAME = "before_issue_32"


class State(TypedDict, total=False):
    items: Annotated[list, operator.add]
    log: Annotated[list, operator.add]
    n: int


def build(engine: Any, steps: int) -> Any:
    """A loop appending an item per step; every 5th step `log` takes all of `items` (a
    sourced delta), and the last step asks for a human (a pending interrupt)."""

    def add(state: State) -> dict[str, Any]:
        n = state.get("n", 0)
        update: dict[str, Any] = {"items": [{"step": n, "text": f"item {n}"}], "n": n + 1}
        if n % 5 == 4:
            update["log"] = state["items"]
        return update

    def ask(state: State) -> dict[str, Any]:
        answer = engine.interrupt("more?")
        return {"items": [answer]}

    builder = engine.StateGraph(State)
    builder.add_node("add", add)
    builder.add_node("ask", ask)
    builder.add_edge(engine.START, "add")
    builder.add_conditional_edges("add", lambda s: "ask" if s["n"] >= steps else "add")
    builder.add_edge("ask", engine.END)
    return builder


def plain(value: Any) -> Any:
    """JSON-able: tuples become lists, objects their repr (none are expected)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def read_back(saver: Any) -> list[Any]:
    """Every checkpoint of every thread as the saver reads it, newest first."""
    return [
        plain({
            "config": t.config["configurable"],
            "values": t.checkpoint["channel_values"],
            "versions": t.checkpoint["channel_versions"],
            "metadata": t.metadata,
            "writes": [list(w) for w in t.pending_writes or []],
        })
        for t in saver.list(None)
    ]


def write(out: Path) -> None:
    import engine
    from checkpoints import SqliteSaver

    path = out / f"{NAME}.sqlite"
    with SqliteSaver(path) as saver:
        graph = build(engine, 40).compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "t"}, "recursion_limit": 200}
        graph.invoke({"items": [], "log": [], "n": 0}, config)  # stops at the interrupt
        history = list(graph.get_state_history(config))
        older = history[len(history) // 2].config
        graph.update_state(older, {"items": [{"step": -1, "text": "edited"}]})
        forked = {"configurable": {"thread_id": "f"}, "recursion_limit": 200}
        graph.invoke({"items": [], "log": [], "n": 0}, forked)
        graph.invoke(engine.Command(resume="yes"), forked)
        saver.flush()
        expected = read_back(saver)
    (out / f"{NAME}.json").write_text(json.dumps(expected, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    write(Path(sys.argv[1]))
