"""The compiled, immutable plan of a graph: channels, triggers, writers and branches.

Built once by `StateGraph.compile()`. A super-step only looks up the nodes triggered by the
channels updated in the previous step (`trigger_to_nodes`), never scans every node.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._channels import (
    Channel, Deferred, DeferredBarrier, Ephemeral, LastValue, NamedBarrier, Topic,
)
from ._node import Callee
from ._schema import ROOT, channels_for, field_specs, object_to_dict, reader_for, schema_managed
from ._timeout import timeout_policy
from .errors import InvalidUpdateError
from .types import END, START, Command, RetryPolicy, Send

if TYPE_CHECKING:
    from .graph import BranchSpec, StateGraph

__all__ = [
    "BranchPlan", "NodePlan", "Plan", "TASKS", "build_plan", "branch_channel", "root_writes",
]

TASKS = "__pregel_tasks"
logger = logging.getLogger("engine")


def branch_channel(node: str) -> str:
    return f"branch:to:{node}"


def root_writes(output: Any) -> list[tuple[str, Any]]:
    """A node's return value as the write of a one-value state (issue 29). Also the `writer`
    of such a graph's nodes: it keeps them off the dict fast path (`_tasks._writes_of`)."""
    return [] if output is None else [(ROOT, output)]


@dataclasses.dataclass(slots=True)
class BranchPlan:
    name: str
    router: Callee
    path_map: dict[Any, str] | None
    reader: Callable[[dict[str, Any]], Any] | None
    managed: tuple[tuple[str, Any], ...] = ()  # managed keys the router sees (issue 17)
    # the keys it reads: those of the schema it is annotated with (as LangGraph; issue 27);
    # None: the whole state
    reads: tuple[str, ...] | None = None

    def destinations(self, result: Any) -> list[str | Send]:
        items = result if isinstance(result, (list, tuple)) else [result]
        out: list[str | Send] = []
        for item in items:
            if isinstance(item, Send):
                out.append(item)
            elif self.path_map is not None:
                out.append(self.path_map[item])  # KeyError for an unmapped result, as LangGraph
            else:
                out.append(item)
        return out


@dataclasses.dataclass(slots=True)
class NodePlan:
    name: str
    callee: Callee | None  # None for the START task, which only maps the input
    triggers: tuple[str, ...]
    reads: tuple[str, ...]
    reader: Callable[[dict[str, Any]], Any] | None
    edge_writes: tuple[tuple[str, Any], ...]
    branches: tuple[BranchPlan, ...]
    retry: tuple[RetryPolicy, ...]
    cache: Any
    metadata: dict[str, Any]
    is_async: bool
    is_subgraph: bool
    index: int = 0  # insertion order: tasks of a step are listed in it (as LangGraph's `next`)
    # Nodes reading the same keys through the same schema share a group: a step builds their
    # input once and hands each a shallow copy, as LangGraph does (a pydantic state is then
    # validated once per step, not once per parallel node). -1: START, never shared.
    input_group: int = -1
    # Turns the node's return value into writes instead of reading it as a state update: an
    # `@entrypoint` (END and `__previous__`) or a `@task` (`__return__`) node (issue 17).
    writer: Callable[[Any], list[tuple[str, Any]]] | None = None
    managed: tuple[tuple[str, Any], ...] = ()  # managed keys computed into its input (issue 17)
    timeout: Any = None  # a TimeoutPolicy: each attempt runs under it (`_timeout.py`)
    error_handler: str | None = None  # the node that runs if this one fails (issue 29)
    trace_policy: Any = None  # what tracers record of its runs (`_tracing.py`)


@dataclasses.dataclass(slots=True)
class Plan:
    channels: dict[str, Channel]
    state_keys: tuple[str, ...]
    state_key_set: frozenset[str]
    input_keys: tuple[str, ...]
    output_keys: tuple[str, ...]
    nodes: dict[str, NodePlan]
    trigger_to_nodes: dict[str, tuple[str, ...]]
    interrupt_before: tuple[str, ...]
    interrupt_after: tuple[str, ...]
    has_async: bool
    state_schema: Any
    context_schema: Any
    output_reader: Callable[[dict[str, Any]], Any] | None
    # a node has an async form too (`ToolNode`, agent nodes): async runs use the async driver
    has_dual: bool = False
    # what a router's result naming a node writes (`branch_channel`), built once, not per step
    route_writes: dict[str, tuple[str, None]] = dataclasses.field(default_factory=dict)
    # the channels a step updated -> the nodes they trigger (`_step._triggered`'s cache)
    triggered: dict[tuple[str, ...], tuple[tuple[str, ...], bool]] = dataclasses.field(
        default_factory=dict
    )
    root: bool = False  # the state is one value under `ROOT`, not keys (issue 29)
    deferred: tuple[str, ...] = ()  # the triggers of `defer=True` nodes (`_defer`, issue 27)

    def new_channels(self) -> dict[str, Channel]:
        return {name: channel.fresh() for name, channel in self.channels.items()}

    def updates_of(self, output: Any) -> list[tuple[str, Any]]:
        """A node's return value as state writes; unknown keys are ignored (SPEC §1)."""
        if output is None:
            return []
        if self.root:
            return [(ROOT, output)]
        keys = self.state_key_set
        if isinstance(output, dict):
            return [(k, v) for k, v in output.items() if k in keys]
        as_dict = object_to_dict(output)
        if as_dict is None:
            raise InvalidUpdateError(f"Expected dict, got {output}")
        return [(k, v) for k, v in as_dict.items() if k in keys]

    def check_single_writes(self, writes: list[tuple[str, Any]]) -> None:
        """One task may write a plain (non-reducer) key once, as across tasks of a step."""
        seen: set[str] = set()
        channels = self.channels
        for key, _ in writes:
            if key in seen and isinstance(channels.get(key), LastValue):
                raise InvalidUpdateError(
                    f"At key '{key}': Can receive only one value per step. "
                    "Use an Annotated key to handle multiple values."
                )
            seen.add(key)

    def command_writes(self, command: Command) -> list[tuple[str, Any]]:
        keys = self.state_key_set
        if self.root:  # the update is the value (issue 29)
            writes = root_writes(command.update)
        else:
            writes = [(k, v) for k, v in command.update_items() if k in keys]
        for target in command.goto_list():
            if isinstance(target, Send):
                writes.append((TASKS, target))
            elif target != END:
                if target not in self.nodes:
                    logger.warning("Command goto to unknown node `%s`, ignoring it.", target)
                    continue
                writes.append((branch_channel(target), None))
        return writes


def build_plan(
    graph: StateGraph[Any],
    *,
    interrupt_before: tuple[str, ...],
    interrupt_after: tuple[str, ...],
) -> Plan:
    specs = graph.fields
    channels: dict[str, Channel] = channels_for(specs)
    state_keys = tuple(specs)
    channels[START] = Ephemeral(START)
    channels[TASKS] = Topic(TASKS)
    for spec in graph.nodes.values():
        key = branch_channel(spec.name)
        channels[key] = Deferred(key) if spec.defer else Ephemeral(key)

    edge_writes, join_triggers = _edge_tables(graph, channels)
    state_reader = reader_for(graph.state_schema)
    state_managed = tuple(schema_managed(graph.state_schema).items())
    nodes: dict[str, NodePlan] = {
        START: NodePlan(
            name=START,
            callee=None,
            triggers=(START,),
            reads=state_keys,
            reader=state_reader,
            edge_writes=tuple(edge_writes.get(START, ())),
            branches=_branches(graph.branches.get(START, {}), state_reader, state_managed),
            retry=(),
            cache=None,
            metadata={},
            is_async=False,
            is_subgraph=False,
        )
    }
    groups: dict[tuple[int, tuple[str, ...]], int] = {}
    # a node typed with no schema of its own reads the state schema's keys, not the keys
    # only the input or output schema adds (as LangGraph; issue 27)
    state_reads = tuple(field_specs(graph.state_schema)) or state_keys
    for index, spec in enumerate(graph.nodes.values(), start=1):
        callee = Callee(spec.action, spec.name)
        schema = spec.input_schema or graph.state_schema
        reads = tuple(field_specs(schema)) if spec.input_schema else state_reads
        group = groups.setdefault((id(schema), reads), len(groups))
        retry = spec.retry_policy
        branches = _branches(graph.branches.get(spec.name, {}), state_reader, state_managed)
        nodes[spec.name] = NodePlan(
            name=spec.name,
            callee=callee,
            # sorted, and a task lists them all whichever fired (as LangGraph's tasks do)
            triggers=tuple(sorted((branch_channel(spec.name), *join_triggers.get(spec.name, ())))),
            reads=reads,
            reader=reader_for(schema),
            edge_writes=tuple(edge_writes.get(spec.name, ())),
            branches=branches,
            retry=(retry,) if isinstance(retry, RetryPolicy) else tuple(retry or ()),
            cache=spec.cache_policy,
            metadata=dict(spec.metadata or {}),
            is_async=callee.is_async or any(b.router.is_async for b in branches),
            is_subgraph=callee.kind == "graph",
            index=index,
            input_group=group,
            managed=(
                tuple(schema_managed(spec.input_schema).items())
                if spec.input_schema else state_managed
            ),
            timeout=timeout_policy(spec.timeout, callee.is_async, spec.name),
            error_handler=spec.error_handler,
            trace_policy=spec.trace_policy,
            writer=root_writes if state_keys == (ROOT,) else None,
        )

    trigger_to_nodes: dict[str, list[str]] = {}
    for node in nodes.values():
        for trigger in node.triggers:
            trigger_to_nodes.setdefault(trigger, []).append(node.name)

    return Plan(
        channels=channels,
        state_keys=state_keys,
        state_key_set=frozenset(state_keys),
        input_keys=tuple(field_specs(graph.input_schema)) or state_keys,
        output_keys=tuple(field_specs(graph.output_schema)) or state_keys,
        nodes=nodes,
        trigger_to_nodes={
            k: tuple(sorted(v, key=lambda n: nodes[n].index)) for k, v in trigger_to_nodes.items()
        },
        interrupt_before=interrupt_before,
        interrupt_after=interrupt_after,
        has_async=any(n.is_async for n in nodes.values()),
        state_schema=graph.state_schema,
        context_schema=graph.context_schema,
        output_reader=None,
        has_dual=any(n.callee is not None and n.callee.afn is not None for n in nodes.values()),
        route_writes={name: (branch_channel(name), None) for name in nodes if name != START},
        root=state_keys == (ROOT,),
        deferred=tuple(
            k for k, ch in channels.items() if isinstance(ch, (Deferred, DeferredBarrier))
        ),
    )


def _edge_tables(
    graph: StateGraph[Any], channels: dict[str, Channel]
) -> tuple[dict[str, list[tuple[str, Any]]], dict[str, list[str]]]:
    """Each node's edge writes (source -> [(channel, value)]) and each join target's barrier
    channels, adding those barriers to `channels`."""
    edge_writes: dict[str, list[tuple[str, Any]]] = {}
    for src, dst in graph.edges:
        if dst != END:
            edge_writes.setdefault(src, []).append((branch_channel(dst), None))
    join_triggers: dict[str, list[str]] = {}
    for starts, dst in graph.waiting_edges:
        if dst == END:
            continue
        key = f"join:{'+'.join(starts)}:{dst}"
        deferred = dst in graph.nodes and graph.nodes[dst].defer  # waits for the end too
        channels[key] = (DeferredBarrier if deferred else NamedBarrier)(key, frozenset(starts))
        join_triggers.setdefault(dst, []).append(key)
        for src in starts:
            edge_writes.setdefault(src, []).append((key, src))
    return edge_writes, join_triggers


def _branches(
    specs: dict[str, BranchSpec],
    reader: Callable[[dict[str, Any]], Any] | None,
    managed: tuple[tuple[str, Any], ...] = (),
) -> tuple[BranchPlan, ...]:
    """A node's routers; one annotated with a schema reads only that schema's keys."""
    out = []
    for name, spec in specs.items():
        schema = spec.input_schema
        out.append(BranchPlan(
            name=name, router=Callee(spec.path, name), path_map=spec.path_map,
            reader=reader_for(schema) if schema is not None else reader,
            managed=tuple(schema_managed(schema).items()) if schema is not None else managed,
            reads=tuple(field_specs(schema)) if schema is not None else None,
        ))
    return tuple(out)
