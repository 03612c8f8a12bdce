"""A graph built with the real `langgraph` package, as the server speaks to graphs (issue 28).

The server speaks to "a graph": `astream`, `aget_state`, `aget_state_history`, `aupdate_state`,
`get_graph`, `copy(checkpointer=, store=)`, `name`, and `builder` for its schemas and nodes.
graphrun's compiled graph is that surface; `LangGraphGraph` gives it to a LangGraph graph
(a compiled `StateGraph` or a functional-API `Pregel`), which LangGraph's own runtime executes.
This module only translates at the edge: graphrun's saver and store go in as LangGraph's
(`langgraph_storage`), `Command`/`Send` from a request go in as LangGraph's, and LangGraph's
`Interrupt`s and state snapshots come out as graphrun's, so routes never look through it.

Nothing here imports `langgraph` at module level: a project that serves a LangGraph graph has
imported it already (`is_langgraph` reads only the object's class).
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any, Protocol

from engine import Command, Interrupt, InvalidUpdateError, PregelTask, Send, StateSnapshot

from .langgraph_storage import saver_for, store_for

__all__ = ["ENGINE_GRAPHRUN", "ENGINE_LANGGRAPH", "LangGraphGraph", "ServedGraph", "engine_of",
           "is_langgraph", "served"]

ENGINE_GRAPHRUN = "graphrun"
ENGINE_LANGGRAPH = "langgraph"
_LANGGRAPH_TYPES = frozenset({"Pregel", "StateGraph", "CompiledStateGraph"})
_KEEP = object()


class ServedGraph(Protocol):
    """What the server uses of a graph, whichever engine runs it: graphrun's
    `CompiledStateGraph` has it natively, a LangGraph graph through `LangGraphGraph`."""

    name: str
    builder: Any  # state_schema, input_schema, output_schema, context_schema, fields, nodes

    def copy(self, *, checkpointer: Any = ..., store: Any = ...) -> ServedGraph: ...
    def get_graph(self, config: Any = None, *, xray: int | bool = False) -> Any: ...
    def astream(self, value: Any, config: Any = None, **options: Any) -> AsyncIterator[Any]: ...
    async def aget_state(self, config: Any, *, subgraphs: bool = False) -> StateSnapshot: ...
    def aget_state_history(self, config: Any, **options: Any) -> AsyncIterator[StateSnapshot]: ...
    async def aupdate_state(self, config: Any, values: Any, as_node: str | None = None
                            ) -> Any: ...


def is_langgraph(value: Any) -> bool:
    """Whether `value` is a graph (or graph builder) of the real `langgraph` package."""
    return any(
        cls.__module__.split(".")[0] == "langgraph" and cls.__name__ in _LANGGRAPH_TYPES
        for cls in type(value).__mro__
    )


def engine_of(graph: Any) -> str:
    """Which runtime executes a served graph: "langgraph" or "graphrun"."""
    return ENGINE_LANGGRAPH if isinstance(graph, LangGraphGraph) else ENGINE_GRAPHRUN


def served(value: Any) -> Any:
    """A LangGraph graph (a `StateGraph` is compiled first) as a `LangGraphGraph`; anything
    else as it is."""
    if not is_langgraph(value):
        return value
    if hasattr(value, "compile") and not hasattr(value, "astream"):  # a StateGraph builder
        value = value.compile()
    return LangGraphGraph(value)


class LangGraphGraph:
    """A compiled LangGraph graph behind the surface the server uses (see the module doc)."""

    engine = ENGINE_LANGGRAPH

    def __init__(self, graph: Any) -> None:
        self.inner = graph
        self.builder = _Shape(graph)

    def __repr__(self) -> str:
        return f"LangGraphGraph({self.inner!r})"

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @name.setter
    def name(self, value: str) -> None:
        self.inner.name = value

    def copy(self, *, checkpointer: Any = _KEEP, store: Any = _KEEP) -> LangGraphGraph:
        """A copy with graphrun's `checkpointer` / `store` (None: none) given to LangGraph."""
        update: dict[str, Any] = {}
        if checkpointer is not _KEEP:
            update["checkpointer"] = saver_for(checkpointer)
        if store is not _KEEP:
            update["store"] = store_for(store)
        return LangGraphGraph(self.inner.copy(update))

    def get_graph(self, config: Any = None, *, xray: int | bool = False) -> _Drawing:
        return _Drawing(self.inner.get_graph(config, xray=xray))

    async def astream(self, value: Any, config: Any = None, **options: Any
                      ) -> AsyncIterator[Any]:
        modes = options.get("stream_mode")
        if isinstance(modes, list) and "events" in modes:
            async for item in self._with_events(value, config, modes, options):
                yield item
            return
        async for item in self.inner.astream(_lg_input(value), config, **options):
            yield _item_out(item, modes)

    async def _with_events(self, value: Any, config: Any, modes: list[str],
                           options: dict[str, Any]) -> AsyncIterator[Any]:
        """Mode `events`: LangGraph's stream has no such mode; as the Agent Server does, the
        run goes through `astream_events`, whose root `on_chain_stream` events carry the
        other modes' items (the server drops those events from the wire)."""
        others = [m for m in modes if m != "events"]
        subgraphs = bool(options.get("subgraphs"))
        async for event in self.inner.astream_events(
            _lg_input(value), config, version="v2", **{**options, "stream_mode": others},
        ):
            if event["event"] == "on_chain_stream" and not event["parent_ids"]:
                yield _item_out(event["data"]["chunk"], others)
            yield ((), "events", event) if subgraphs else ("events", event)

    async def aget_state(self, config: Any, *, subgraphs: bool = False) -> StateSnapshot:
        return _snapshot(await self.inner.aget_state(config, subgraphs=subgraphs))

    async def aget_state_history(self, config: Any, **options: Any
                                 ) -> AsyncIterator[StateSnapshot]:
        async for snapshot in self.inner.aget_state_history(config, **options):
            yield _snapshot(snapshot)

    async def aupdate_state(self, config: Any, values: Any, as_node: str | None = None
                            ) -> Any:
        try:
            return await self.inner.aupdate_state(config, _lg_input(values), as_node)
        except Exception as error:  # LangGraph's own error classes: as graphrun's (a 400)
            if type(error).__name__ == "InvalidUpdateError":
                raise InvalidUpdateError(str(error)) from error
            raise


@dataclasses.dataclass(slots=True)
class _Drawing:
    """LangGraph's drawing, whose JSON the Agent Server sends without the class path LangGraph
    puts in each node's `data` (`id`): recorded from `langgraph dev`."""

    graph: Any

    def to_json(self) -> dict[str, Any]:
        drawn = self.graph.to_json()
        for node in drawn.get("nodes", ()):
            if isinstance(node.get("data"), dict):
                node["data"].pop("id", None)
        return drawn  # type: ignore[no-any-return]


@dataclasses.dataclass(slots=True)
class _Node:
    action: Any


class _Shape:
    """What the server reads of a graph's builder: its schemas, state keys and nodes. A
    functional-API graph has no builder: its context schema is the entrypoint's."""

    def __init__(self, graph: Any) -> None:
        builder = getattr(graph, "builder", None)
        self._graph = graph
        self.state_schema = getattr(builder, "state_schema", None)
        self.input_schema = getattr(builder, "input_schema", None)
        self.output_schema = getattr(builder, "output_schema", None)
        self.context_schema = (getattr(builder, "context_schema", None)
                               or getattr(graph, "context_schema", None))
        self.fields = dict(getattr(builder, "channels", None) or {})
        self._node_names = list(getattr(builder, "nodes", None) or {})

    @property
    def nodes(self) -> dict[str, _Node]:
        subs = {name: LangGraphGraph(sub) for name, sub in self._graph.get_subgraphs()}
        return {name: _Node(subs.get(name)) for name in self._node_names}


# -- translation at the edge -------------------------------------------------------------------


def _lg_types() -> tuple[type, type, type]:
    from langgraph.types import Command as LGCommand
    from langgraph.types import Interrupt as LGInterrupt
    from langgraph.types import Send as LGSend

    return LGCommand, LGSend, LGInterrupt


def _lg_input(value: Any) -> Any:
    """graphrun's `Command` / `Send` (what a request decodes to) as LangGraph's."""
    if not isinstance(value, Command):
        return value
    lg_command, _, _ = _lg_types()
    kwargs: dict[str, Any] = {"update": value.update, "resume": value.resume,
                              "goto": _lg_goto(value.goto)}
    if getattr(value, "graph", None) is not None:
        kwargs["graph"] = value.graph
    return lg_command(**kwargs)


def _lg_goto(goto: Any) -> Any:
    if isinstance(goto, Send):
        return _lg_types()[1](goto.node, goto.arg)
    if isinstance(goto, (list, tuple)):
        return [_lg_goto(g) for g in goto]
    return goto


def _interrupt(value: Any) -> Any:
    """A LangGraph `Interrupt` as graphrun's (the encoders know graphrun's)."""
    if type(value).__name__ == "Interrupt" and not isinstance(value, Interrupt):
        return Interrupt(value=value.value, id=value.id)
    return value


def _walk(value: Any) -> Any:
    """`value` with every LangGraph `Interrupt` in its dicts, lists and tuples replaced."""
    if isinstance(value, dict):
        return {k: _walk(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_walk(v) for v in value)
    return _interrupt(value)


def _chunk_out(mode: str, chunk: Any) -> Any:
    if mode == "messages":
        return chunk  # (message, metadata): nothing of LangGraph's own
    if mode in ("values", "updates") and isinstance(chunk, dict):
        if "__interrupt__" in chunk:  # only this key holds LangGraph objects: no full walk
            return {**chunk, "__interrupt__": _walk(chunk["__interrupt__"])}
        return chunk
    return _walk(chunk)


def _item_out(item: Any, modes: Any) -> Any:
    """One stream item in the shape asked for: `chunk`, `(mode, chunk)` or `(ns, mode, chunk)`."""
    if isinstance(modes, str):
        return _chunk_out(modes, item)
    if len(item) == 3:
        ns, mode, chunk = item
        return ns, mode, _chunk_out(mode, chunk)
    mode, chunk = item
    return mode, _chunk_out(mode, chunk)


def _snapshot(snapshot: Any) -> StateSnapshot:
    """LangGraph's `StateSnapshot` (subgraph states and task interrupts too) as graphrun's."""
    tasks = tuple(
        PregelTask(t.id, t.name, tuple(t.path), t.error,
                   tuple(_interrupt(i) for i in t.interrupts),
                   _snapshot(t.state) if type(t.state).__name__ == "StateSnapshot" else t.state,
                   t.result)
        for t in snapshot.tasks
    )
    return StateSnapshot(
        snapshot.values, tuple(snapshot.next), snapshot.config, snapshot.metadata,
        snapshot.created_at, snapshot.parent_config, tasks,
        tuple(_interrupt(i) for i in snapshot.interrupts),
    )
