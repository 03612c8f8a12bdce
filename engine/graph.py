"""`StateGraph`: the builder users write graphs with (SPEC §1 "Builder").

The builder only records nodes, edges and branches and validates them; `compile()` turns them
into an immutable plan (`_plan.py`) run by `CompiledStateGraph` (`_pregel.py`).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import logging
import typing
from collections.abc import Callable, Hashable, Sequence
from datetime import timedelta
from typing import Any, Generic, TypeVar

from ._error_handler import HANDLER_PREFIX, NodeDefaults, add_handler_node, set_defaults
from ._error_handler import with_node_defaults
from ._managed import check_no_managed
from ._schema import field_specs, is_root_schema, schema_managed
from .types import END, START, CachePolicy, RetryPolicy, TimeoutPolicy
from .warnings import renamed

__all__ = ["StateGraph", "NodeSpec", "BranchSpec"]

logger = logging.getLogger(__name__)

StateT = TypeVar("StateT")
_RESERVED_CHARS = ("|", ":")


@dataclasses.dataclass(slots=True)
class NodeSpec:
    name: str
    action: Any
    input_schema: Any = None
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None
    cache_policy: CachePolicy | None = None
    defer: bool = False
    metadata: dict[str, Any] | None = None
    destinations: tuple[str, ...] | dict[str, str] = ()
    timeout: Any = None  # `timeout=` as given (checked when compiled, as LangGraph)
    error_handler: str | None = None  # the node that runs when this one fails (issue 29)
    is_error_handler: bool = False
    trace_policy: Any = None  # what tracers record of its runs (`TracePolicy`, issue 29)

    @property
    def bound(self) -> Any:
        """The node's runnable, under LangGraph's `PregelNode` name (issue 29)."""
        return self.action

    @property
    def subgraphs(self) -> list[Any]:
        """The compiled graph the node is or calls, if any (`_subgraphs`, issue 29)."""
        from ._subgraphs import find_subgraph

        found = find_subgraph(self.action)
        return [found] if found is not None else []

    def copy(self, update: dict[str, Any] | None = None) -> NodeSpec:
        """A copy with some fields replaced (LangGraph's `PregelNode.copy`)."""
        return dataclasses.replace(self, **(update or {}))

    def invoke(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        """Run the node's action alone, as LangGraph's `graph.nodes[name].invoke` (issue 29)."""
        if hasattr(self.action, "invoke"):
            return self.action.invoke(input, config, **kwargs)
        return self.action(input)

    async def ainvoke(
        self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any
    ) -> Any:
        if hasattr(self.action, "ainvoke"):
            return await self.action.ainvoke(input, config, **kwargs)
        result = self.action(input)
        return await result if inspect.isawaitable(result) else result


@dataclasses.dataclass(slots=True)
class BranchSpec:
    path: Callable[..., Any]
    path_map: dict[Hashable, str] | None = None
    input_schema: Any = None  # the keys the router reads, from its annotation (issue 27)

    @property
    def ends(self) -> tuple[str, ...]:
        return tuple(self.path_map.values()) if self.path_map else ()


class StateGraph(Generic[StateT]):
    """A graph whose nodes read and write a shared state through per-key channels."""

    def __init__(
        self,
        state_schema: Any,
        context_schema: Any = None,
        *,
        input_schema: Any = None,
        output_schema: Any = None,
        **legacy: Any,
    ) -> None:
        # LangGraph's older keyword spellings, still common in user code
        for old, new in (("input", "input_schema"), ("output", "output_schema"),
                         ("config_schema", "context_schema")):
            if old in legacy:  # LangGraph's older keyword spellings, still common in user code
                renamed(old, new)
        input_schema = input_schema or legacy.pop("input", None)
        output_schema = output_schema or legacy.pop("output", None)
        context_schema = context_schema or legacy.pop("config_schema", None)
        if legacy:
            raise TypeError(f"StateGraph() got unexpected arguments: {sorted(legacy)}")
        if state_schema is None:
            if input_schema is None or output_schema is None:
                raise ValueError("Must provide state_schema or input and output")
            state_schema = input_schema
        self.state_schema = state_schema
        self.context_schema = context_schema
        self.input_schema = input_schema or state_schema
        self.output_schema = output_schema or state_schema
        self.fields = dict(field_specs(state_schema))
        for extra in (self.input_schema, self.output_schema):
            if extra is not state_schema:  # issue 17: managed keys only in the state schema
                check_no_managed(extra, schema_managed(extra))
            for name, spec in field_specs(extra).items():
                self.fields.setdefault(name, spec)
        self.nodes: dict[str, NodeSpec] = {}
        self.edges: list[tuple[str, str]] = []
        self.waiting_edges: list[tuple[tuple[str, ...], str]] = []
        self.branches: dict[str, dict[str, BranchSpec]] = {}
        self.node_defaults = NodeDefaults()  # `set_node_defaults` (issue 29)
        self.compiled = False

    @property
    def schemas(self) -> dict[Any, dict[str, Any]]:
        """Each schema's stored keys, as LangGraph's `builder.schemas` (langgraph-swarm checks
        `builder.schemas[builder.state_schema]` for its `active_agent` key; issue 27)."""
        found = (self.state_schema, self.input_schema, self.output_schema)
        return {schema: field_specs(schema) for schema in dict.fromkeys(found)}

    @property
    def managed(self) -> dict[str, Any]:
        """The state's managed keys (`RemainingSteps`, ...) by name, as LangGraph's
        `builder.managed` (issue 27)."""
        return dict(schema_managed(self.state_schema))

    @property
    def channels(self) -> dict[str, Any]:
        """The state's channels by key, as LangGraph's `builder.channels` (issue 29)."""
        from ._schema import channels_for

        return channels_for(self.fields)

    # -- nodes ---------------------------------------------------------------------------------

    def add_node(
        self,
        node: str | Callable[..., Any],
        action: Any = None,
        *,
        defer: bool = False,
        metadata: dict[str, Any] | None = None,
        input_schema: Any = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        cache_policy: CachePolicy | None = None,
        destinations: dict[str, str] | tuple[str, ...] | None = None,
        timeout: float | timedelta | TimeoutPolicy | None = None,
        error_handler: Callable[..., Any] | None = None,
        trace_policy: Any = None,
        **legacy: Any,
    ) -> StateGraph[StateT]:
        """Add a node; the name defaults to the function's `__name__`."""
        for old, new in (("retry", "retry_policy"), ("input", "input_schema")):
            if old in legacy:
                renamed(old, new)
        input_schema = input_schema or legacy.pop("input", None)
        retry_policy = retry_policy or legacy.pop("retry", None)
        if legacy:
            raise TypeError(f"add_node() got unexpected arguments: {sorted(legacy)}")
        if not isinstance(node, str):
            action, node = node, _name_of(node)
        if isinstance(action, dict):  # LangChain's RunnableParallel of the entries (issue 27)
            from ._dict_node import DictNode

            action = DictNode(action)
        if action is None or not (callable(action) or hasattr(action, "invoke")):
            raise TypeError(
                "Expected a Runnable, callable or dict."
                f"Instead got an unsupported type: {type(action)}"
            )
        if self.compiled:
            logger.warning(
                "Adding a node to a graph that has already been compiled. This will not be "
                "reflected in the compiled graph."
            )
        for char in _RESERVED_CHARS:
            if char in node:
                raise ValueError(
                    f"'{char}' is a reserved character and is not allowed in the node names."
                )
        if node in self.nodes:
            raise ValueError(f"Node `{node}` already present.")
        if node in (START, END):
            raise ValueError(f"Node `{node}` is reserved.")
        if input_schema is None:
            input_schema = _annotated_input(action, self.state_schema)
        if input_schema is not None:
            for name, spec in field_specs(input_schema).items():
                self.fields.setdefault(name, spec)
        handler = None
        if error_handler is not None:
            handler = add_handler_node(self, HANDLER_PREFIX + node, error_handler, input_schema)
        self.nodes[node] = NodeSpec(
            name=node,
            action=action,
            input_schema=input_schema,
            retry_policy=retry_policy,
            cache_policy=cache_policy,
            defer=defer,
            metadata=metadata,
            # a dict keeps its edge labels for drawing (issue 29)
            destinations=dict(destinations) if isinstance(destinations, dict) else tuple(
                destinations or ()),
            timeout=TimeoutPolicy.coerce(timeout),
            error_handler=handler,
            trace_policy=trace_policy,
        )
        return self

    def set_node_defaults(
        self,
        *,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        cache_policy: CachePolicy | None = None,
        error_handler: Callable[..., Any] | None = None,
        timeout: float | timedelta | TimeoutPolicy | None = None,
    ) -> StateGraph[StateT]:
        """Policies for every node that sets none of its own, applied when compiled (retry
        and timeout reach error handlers too; cache and error handler only regular nodes)."""
        set_defaults(
            self.node_defaults, retry_policy=retry_policy, cache_policy=cache_policy,
            error_handler=error_handler, timeout=timeout,
        )
        return self

    def add_edge(self, start_key: str | Sequence[str], end_key: str) -> StateGraph[StateT]:
        """`a -> b`, or `[a, b] -> c`: c runs once after every one of a and b ran."""
        if isinstance(start_key, str):
            if start_key == END:
                raise ValueError("END cannot be a start node")
            if end_key == START:
                raise ValueError("START cannot be an end node")
            self.edges.append((start_key, end_key))
            return self
        starts = tuple(start_key)
        for start in starts:
            if start == END:
                raise ValueError("END cannot be a start node")
            if start not in self.nodes:
                raise ValueError(f"Need to add_node `{start}` first")
        if end_key == START:
            raise ValueError("START cannot be an end node")
        self.waiting_edges.append((starts, end_key))
        return self

    def add_conditional_edges(
        self,
        source: str,
        path: Callable[..., Any],
        path_map: dict[Hashable, str] | Sequence[str] | None = None,
    ) -> StateGraph[StateT]:
        """Route after `source` by calling `path` on the state (names, Sends or END)."""
        if isinstance(path_map, dict):
            mapping: dict[Hashable, str] | None = dict(path_map)
        elif path_map is not None:
            mapping = {name: name for name in path_map}
        else:
            mapping = None
        name = _name_of(path)
        if name == "<lambda>":
            name = "condition"
        branches = self.branches.setdefault(source, {})
        if name in branches:
            raise ValueError(
                f"Branch with name `{name}` already exists for node `{source}`"
            )
        schema = _annotated_input(path, None)  # the state schema too: it limits the keys
        for key, spec in field_specs(schema).items() if schema is not None else ():
            self.fields.setdefault(key, spec)
        branches[name] = BranchSpec(path, mapping, schema)
        return self

    def add_sequence(
        self, nodes: Sequence[Callable[..., Any] | tuple[str, Callable[..., Any]]]
    ) -> StateGraph[StateT]:
        """Add nodes and chain them with edges in the given order."""
        if not nodes:
            raise ValueError("Sequence requires at least one node.")
        previous: str | None = None
        for item in nodes:
            if isinstance(item, tuple):
                name, action = item
            else:
                name, action = _name_of(item), item
            self.add_node(name, action)
            if previous is not None:
                self.add_edge(previous, name)
            previous = name
        return self

    def set_entry_point(self, key: str) -> StateGraph[StateT]:
        return self.add_edge(START, key)

    def set_conditional_entry_point(
        self, path: Callable[..., Any], path_map: dict[Hashable, str] | Sequence[str] | None = None
    ) -> StateGraph[StateT]:
        return self.add_conditional_edges(START, path, path_map)

    def set_finish_point(self, key: str) -> StateGraph[StateT]:
        return self.add_edge(key, END)

    # -- validation and compile -----------------------------------------------------------------

    def _frozen(self) -> StateGraph[StateT]:
        """The compiled graph keeps this copy: later builder edits do not reach it."""
        return _copy_graph(self)

    def validate(self, interrupt: Sequence[str] | None = None) -> StateGraph[StateT]:
        """Raise ValueError for a graph that cannot run: unknown nodes, no entry point."""
        sources = {src for src, _ in self.edges}
        sources.update(src for starts, _ in self.waiting_edges for src in starts)
        sources.update(self.branches)
        for source in sources:
            if source != START and source not in self.nodes:
                raise ValueError(f"Found edge starting at unknown node '{source}'")
        if START not in sources:
            raise ValueError(
                "Graph must have an entrypoint: add at least one edge from START to another node"
            )
        targets = {dst for _, dst in self.edges}
        targets.update(dst for _, dst in self.waiting_edges)
        for source, branches in self.branches.items():
            for name, branch in branches.items():
                for end in branch.ends:
                    if end != END and end not in self.nodes:
                        raise ValueError(
                            f"At '{source}' node, '{name}' branch found unknown target '{end}'"
                        )
        for node in self.nodes.values():
            targets.update(node.destinations)
        for target in targets:
            if target != END and target not in self.nodes:
                raise ValueError(f"Found edge ending at unknown node `{target}`")
        for name in interrupt or ():
            if name != "*" and name not in self.nodes:
                raise ValueError(f"Interrupt node `{name}` not found")
        return self

    def compile(
        self,
        checkpointer: Any = None,
        *,
        cache: Any = None,
        store: Any = None,
        interrupt_before: Sequence[str] | str | None = None,
        interrupt_after: Sequence[str] | str | None = None,
        debug: bool = False,
        name: str | None = None,
    ) -> Any:
        """Validate and build the runnable graph."""
        from ._pregel import CompiledStateGraph
        from ._plan import build_plan

        before = _interrupt_list(interrupt_before)
        after = _interrupt_list(interrupt_after)
        graph = with_node_defaults(self)
        graph.validate(interrupt=[*before, *after])
        self.compiled = True
        plan = build_plan(graph, interrupt_before=before, interrupt_after=after)
        return CompiledStateGraph(
            plan,
            builder=graph._frozen(),
            checkpointer=checkpointer,
            store=store,
            cache=cache,
            name=name or "LangGraph",
            debug=debug,
        )


def _copy_graph(graph: StateGraph[Any]) -> StateGraph[Any]:
    frozen = copy.copy(graph)
    frozen.nodes = dict(graph.nodes)
    frozen.edges = list(graph.edges)
    frozen.waiting_edges = list(graph.waiting_edges)
    frozen.branches = {k: dict(v) for k, v in graph.branches.items()}
    return frozen


def _interrupt_list(value: Sequence[str] | str | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(value)


def _annotated_input(action: Any, state_schema: Any) -> Any:
    """A node typed `def node(state: Private)` reads `Private`'s keys (LangGraph infers it)."""
    if not callable(action) or isinstance(action, type):
        return None
    plain = inspect.isfunction(action) or inspect.ismethod(action)
    try:  # a callable object's hints are its `__call__`'s (as LangGraph; issue 27)
        hints = typing.get_type_hints(action if plain else type(action).__call__)
        first = next(iter(inspect.signature(action).parameters), None)
    except Exception:  # unresolvable annotations: read the whole state
        return None
    hint = hints.get(first) if first else None
    if hint is None or hint is state_schema or not isinstance(hint, type):
        return None
    return hint if field_specs(hint) and not is_root_schema(hint) else None


def _name_of(obj: Any) -> str:
    """Functions by `__name__`; compiled graphs and runnables by their `name`."""
    for attr in ("__name__", "name"):
        name = getattr(obj, attr, None)
        if isinstance(name, str) and name:
            return name
    return type(obj).__name__
