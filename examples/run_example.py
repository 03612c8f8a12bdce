"""Run the bundled example graph on a SQLite checkpoint file and print its stream."""

from __future__ import annotations

import operator
import sys
from pathlib import Path
from typing import Annotated, TypedDict

from engine import START, StateGraph


class State(TypedDict):
    topic: str
    notes: Annotated[list[str], operator.add]


def research(state: State) -> dict:
    return {"notes": [f"facts about {state['topic']}"]}


def write(state: State) -> dict:
    return {"notes": [f"draft from {len(state['notes'])} note(s)"]}


def build(checkpointer=None):
    graph = StateGraph(State).add_sequence([research, write])
    graph.add_edge(START, "research")
    return graph.compile(checkpointer=checkpointer)


def main() -> int:
    try:
        from checkpoints import SqliteSaver
    except ImportError:  # the SQLite saver lands with the checkpoints issue
        from checkpoints import InMemorySaver as saver_factory

        saver = saver_factory()
    else:
        path = Path(".graphrun") / "example.sqlite"
        path.parent.mkdir(exist_ok=True)
        saver = SqliteSaver(str(path))
    app = build(saver)
    config = {"configurable": {"thread_id": "example"}}
    for chunk in app.stream({"topic": "otters"}, config, stream_mode="updates"):
        print(chunk)
    print(app.get_state(config).values)
    return 0


if __name__ == "__main__":
    sys.exit(main())
