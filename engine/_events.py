"""The `events` stream mode: run and node lifecycle events in the style of astream_events v2.

Event: ``{event, name, run_id, tags, metadata, data, parent_ids}`` (SPEC §1). The graph run
emits `on_chain_start`/`on_chain_end` around the run and `on_chain_stream` per node update;
each node emits its own start/stream/end with `parent_ids` leading back to the graph run.
Subgraph nodes nest under their parent task. Chat models called inside a node add
`on_chat_model_*` events through the LangChain bridge in `_messages.py`.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from .types import START

if TYPE_CHECKING:
    from ._run import Run
    from ._step import Task

__all__ = ["Events"]


class Events:
    """Builds the events of one run (root or subgraph) and pushes them to the sink."""

    __slots__ = ("run", "run_id", "parents", "name", "tags", "metadata", "node_ids", "input")

    def __init__(self, run: Run) -> None:
        self.run = run
        config = run.config
        if run.parent is None:
            self.run_id = str(config.get("run_id") or uuid.uuid4())
            self.parents: list[str] = []
        else:
            # a subgraph is a run of its own inside its parent's node (as LangGraph)
            outer = run.parent.events
            task = run.parent_task
            self.run_id = str(uuid.uuid4())
            self.parents = [*outer.parents, outer.run_id] if outer is not None else []
            if outer is not None and task is not None:
                self.parents.append(outer.node_run_id(task))
        self.node_ids: dict[str, str] = {}  # task id -> its run's id (a uuid, as LangGraph)
        self.input: Any = None
        self.name = run.graph.name
        self.tags = list(config.get("tags") or [])
        self.metadata = {**run.meta, "ls_integration": "langgraph"}

    def node_run_id(self, task: Task) -> str:
        """The run id a node's events carry: a fresh uuid per task (not the task id: a
        model's `checkpoint_ns` names the task, as under LangGraph)."""
        run_id = self.node_ids.get(task.id)
        if run_id is None:
            run_id = self.node_ids[task.id] = str(uuid.uuid4())
        return run_id

    def _push(self, event: dict[str, Any]) -> None:
        run = self.run
        run.sink.push((run.ns_tuple, "events", event))

    def _event(
        self, kind: str, name: str, run_id: str, tags: list[str], metadata: dict[str, Any],
        data: dict[str, Any], parents: list[str],
    ) -> dict[str, Any]:
        return {
            "event": kind,
            "data": data,
            "name": name,
            "tags": tags,
            "run_id": run_id,
            "metadata": metadata,
            "parent_ids": parents,
        }

    def graph_start(self, value: Any) -> None:
        self.input = value
        self._push(self._event("on_chain_start", self.name, self.run_id, self._own_tags(),
                               self.metadata, {"input": value}, self.parents))

    def graph_end(self, output: Any) -> None:
        data = {"output": output}
        if self.run.parent is not None:  # a subgraph's end also shows its input
            data["input"] = self.input
        self._push(self._event("on_chain_end", self.name, self.run_id, self._own_tags(),
                               self.metadata, data, self.parents))

    def _own_tags(self) -> list[str]:
        # a subgraph runs as the first step of its parent's node (LangChain's sequence tag)
        return self.tags if self.run.parent is None else [*self.tags, "seq:step:1"]

    def _node(self, task: Task) -> tuple[list[str], dict[str, Any], list[str]]:
        tags = [*self.tags, f"graph:step:{self.run.step}"]
        metadata = {
            **self.run.meta,
            "ls_integration": "langgraph",
            **self.run.task_metadata(task),
        }
        return tags, metadata, [*self.parents, self.run_id]

    def node_start(self, task: Task) -> None:
        tags, metadata, parents = self._node(task)
        self._push(self._event("on_chain_start", task.name, self.node_run_id(task), tags, metadata,
                               {"input": _input(task)}, parents))

    def node_end(self, task: Task) -> None:
        tags, metadata, parents = self._node(task)
        output = task.update
        if output is not None:
            self._push(self._event("on_chain_stream", task.name, self.node_run_id(task), tags, metadata,
                                   {"chunk": output}, parents))
        self._push(self._event("on_chain_end", task.name, self.node_run_id(task), tags, metadata,
                               {"output": output, "input": _input(task)}, parents))
        if self.run.parent is None:
            self._push(self._event("on_chain_stream", self.name, self.run_id, self.tags,
                                   self.metadata, {"chunk": {task.name: output}}, []))

    def router_start(self, task: Task, index: int, state: Any) -> str | None:
        """A conditional edge's router runs as a chain inside its node (LangChain's runnable
        sequence: the node function, its state write, each edge write, then each router), so
        it has its own run and a `seq:step` tag (issue 18). The run's id, None for START's."""
        if task.name == START:  # START's task has no events of its own
            return None
        tags, metadata, parents = self._node(task)
        step = 3 + len(task.node.edge_writes) + index
        run_id = str(uuid.uuid4())
        name = _router_name(task.node.branches[index].router.fn)
        self._push(self._event("on_chain_start", name, run_id, [*self.tags, f"seq:step:{step}"],
                               metadata, {"input": state}, [*parents, self.node_run_id(task)]))
        return run_id

    def router_end(self, task: Task, index: int, run_id: str | None, state: Any,
                   output: Any) -> None:
        if run_id is None:
            return
        tags, metadata, parents = self._node(task)
        step = 3 + len(task.node.edge_writes) + index
        name = _router_name(task.node.branches[index].router.fn)
        self._push(self._event("on_chain_end", name, run_id, [*self.tags, f"seq:step:{step}"],
                               metadata, {"output": output, "input": state},
                               [*parents, self.node_run_id(task)]))

    def node_replayed(self, task: Task) -> None:
        """A task replayed from pending writes does not run: only the graph streams its update
        (marked cached, as in `updates`), as LangGraph (issue 17)."""
        if self.run.parent is None:
            chunk = {task.name: task.update, "__metadata__": {"cached": True}}
            self._push(self._event("on_chain_stream", self.name, self.run_id, self.tags,
                                   self.metadata, {"chunk": chunk}, []))

    def node_error(self, task: Task, error: BaseException) -> None:
        tags, metadata, parents = self._node(task)
        self._push(self._event("on_chain_error", task.name, self.node_run_id(task), tags, metadata,
                               {"error": error, "input": _input(task)}, parents))

    def chat_model(
        self, task: Task, kind: str, name: str, run_id: str, data: dict[str, Any],
        metadata: dict[str, Any], tags: list[str], ancestors: list[str] = (),  # type: ignore[assignment]
    ) -> None:
        """An event of a LangChain run (a chat model, a chain, prompt, parser, tool...) from
        the LangChain bridge, nested under the node's task and the runs it runs in."""
        parents = [*self.parents, self.run_id, self.node_run_id(task), *ancestors]
        self._push(self._event(kind, name, run_id, tags, metadata, data, parents))


def _router_name(fn: Any) -> str:
    """A router's run name: a Runnable's own, a function's, "Unnamed" for a lambda (LangChain)."""
    get_name = getattr(fn, "get_name", None)
    if callable(get_name):
        return str(get_name())
    name = getattr(fn, "__name__", None)
    return name if name and name != "<lambda>" else "Unnamed"


def _input(task: Task) -> Any:
    """A node's input as it is; a called `@task`'s arguments by name (as LangGraph)."""
    if task.node.writer is None or not isinstance(task.input, tuple):
        return task.input
    from ._calls import is_call, named_input

    return named_input(task) if is_call(task) else task.input
