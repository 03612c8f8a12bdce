"""A compiled graph's shape as data: nodes and edges (conditional ones marked), for drawing.

Drawn as LangGraph 1.2.22 draws it (issue 17): the edges are found by stepping the graph's
channels symbolically from its input, with every node writing its static edges (plain
edges, joins, the known ends of its conditional edges and `Command` destinations); a node
that is reached and writes nothing gets an edge to `__end__`; a branch with no known ends
draws nothing (its node then looks like a dead end), and a node only a `Send` reaches has no
edges. With `xray`, a subgraph node is replaced by the subgraph's own nodes (`<node>:<inner>`).
"""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections import defaultdict
from typing import TYPE_CHECKING, Any, NamedTuple

from ._drawing_json import node_json
from ._drawing_render import as_langchain, bare_mermaid, need_langchain
from ._plan import branch_channel
from ._step import PULL, Task, apply_writes
from .types import END, START, Command

if TYPE_CHECKING:
    from ._pregel import CompiledStateGraph

__all__ = ["DrawableGraph", "graph_of"]

_LIMIT = 250  # symbolic steps (as LangGraph): enough for any cycle to show all its edges


class Edge(NamedTuple):
    """A drawn edge; a tuple in LangChain's `Edge` field order, so the two compare equal
    (programs check `get_graph().edges` against LangChain edges; issue 29)."""

    source: str
    target: str
    data: Any = None
    conditional: bool = False


class DrawnNode(dict):  # type: ignore[type-arg]
    """A drawn node: the data `to_json` shows (its name), carrying as LangChain's graph nodes
    do its `id`, `name`, `data` (the node's runnable: langgraph-swarm reads a `ToolNode`'s tools
    there, issue 27) and `metadata`."""

    __slots__ = ("id", "data", "metadata", "label")

    def __init__(
        self, name: str, runnable: Any = None, metadata: Any = None, label: str | None = None
    ) -> None:
        super().__init__(name=name)
        self.id = name
        self.data = runnable
        self.metadata = metadata or None
        self.label = label or name  # drawn text: an `xray` node keeps its own short name

    @property
    def name(self) -> str:
        return self["name"]


@dataclasses.dataclass(slots=True)
class DrawableGraph:
    """Nodes (id -> data; None for an end node) with their metadata, and edges in order."""

    nodes: dict[str, dict[str, Any] | None]
    edges: list[Edge]
    metadata: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)

    def to_json(self, *, with_schemas: bool = False) -> dict[str, Any]:
        """LangChain's `Graph.to_json` shape, as LangGraph's drawing gives it: each node's
        data names its runnable's class and the node (`_drawing_json`, issue 27)."""
        nodes = []
        for node, data in self.nodes.items():
            item: dict[str, Any] = {"id": node, **node_json(node, data)}
            if self.metadata.get(node):
                item["metadata"] = self.metadata[node]
            nodes.append(item)
        edges = []
        for e in self.edges:
            item = {"source": e.source, "target": e.target}
            if e.data is not None:
                item["data"] = e.data
            if e.conditional:
                item["conditional"] = True
            edges.append(item)
        return {"nodes": nodes, "edges": edges}

    def draw_mermaid(self, **options: Any) -> str:
        """Mermaid flowchart text, as LangGraph's (`with_styles`, `curve_style`,
        `node_colors`, `wrap_label_n_words`, `frontmatter_config`; issue 29)."""
        graph = as_langchain(self)
        if graph is None and not options:
            return bare_mermaid(self)
        return need_langchain(self, "draw_mermaid(...)").draw_mermaid(**options)

    def draw_ascii(self) -> str:
        """The graph as ASCII art (LangChain's renderer; its layout needs `grandalf`)."""
        return need_langchain(self, "draw_ascii()").draw_ascii()

    def print_ascii(self) -> None:
        print(self.draw_ascii())  # noqa: T201 - what it is for

    def draw_mermaid_png(self, **options: Any) -> bytes:
        """A PNG of the Mermaid text, rendered as LangGraph's (`draw_method` picks the
        renderer: the Mermaid web service by default, or a local browser with pyppeteer)."""
        return need_langchain(self, "draw_mermaid_png(...)").draw_mermaid_png(**options)

    def draw_png(self, output_file_path: str | None = None, **options: Any) -> Any:
        """A PNG drawn with Graphviz (needs `pygraphviz`), as LangGraph's."""
        graph = need_langchain(self, "draw_png(...)")
        return graph.draw_png(output_file_path, **options)

    # -- LangChain Graph's operations, for replacing a subgraph node (xray) -----------------

    def add_edge(self, source: str, target: str, conditional: bool = False, data: Any = None) -> None:
        if any(e.source == source and e.target == target for e in self.edges):
            return
        if target == END and target not in self.nodes:
            self.nodes[END] = None
        self.edges.append(Edge(source, target, data, conditional))

    def first_node(self, exclude: tuple[str, ...] = ()) -> str | None:
        targets = {e.target for e in self.edges if e.source not in exclude}
        found = [n for n in self.nodes if n not in exclude and n not in targets]
        return found[0] if len(found) == 1 else None

    def last_node(self, exclude: tuple[str, ...] = ()) -> str | None:
        sources = {e.source for e in self.edges if e.target not in exclude}
        found = [n for n in self.nodes if n not in exclude and n not in sources]
        return found[0] if len(found) == 1 else None

    def trim(self) -> None:
        """Drop the start node and the end node where each has one edge (as LangChain)."""
        first = self.first_node()
        if first and self.first_node((first,)) and sum(e.source == first for e in self.edges) == 1:
            self._remove(first)
        last = self.last_node()
        if last and self.last_node((last,)) and sum(e.target == last for e in self.edges) == 1:
            self._remove(last)

    def _remove(self, node: str) -> None:
        del self.nodes[node]
        self.metadata.pop(node, None)
        self.edges = [e for e in self.edges if node not in (e.source, e.target)]

    def inline(self, name: str, sub: DrawableGraph) -> None:
        """Replace node `name` by `sub`'s nodes and edges, prefixed `name:`."""
        if len(sub.nodes) <= 1 or name not in self.nodes:
            return
        if sub.first_node() is None or sub.last_node() is None:
            return
        sub.trim()
        first, last = sub.first_node(), sub.last_node()
        del self.nodes[name]
        self.metadata.pop(name, None)
        for node, data in sub.nodes.items():
            label = getattr(data, "label", None) or node
            self.nodes[f"{name}:{node}"] = None if data is None else DrawnNode(
                f"{name}:{node}", getattr(data, "data", None), getattr(data, "metadata", None),
                label)
            if sub.metadata.get(node):
                self.metadata[f"{name}:{node}"] = sub.metadata[node]
        self.edges = [
            e._replace(
                source=f"{name}:{last}" if e.source == name else e.source,
                target=f"{name}:{first}" if e.target == name else e.target,
            )
            for e in self.edges
        ]
        self.edges += [
            e._replace(source=f"{name}:{e.source}", target=f"{name}:{e.target}")
            for e in sub.edges
        ]


def graph_of(graph: CompiledStateGraph, *, xray: int | bool = False) -> DrawableGraph:
    plan = graph.plan
    builder = graph.builder
    found, start_tasks, last_sources = _discover(graph)
    drawn = DrawableGraph({}, [])
    for name in plan.nodes:
        meta = _node_metadata(graph, name)
        runnable = getattr(builder.nodes.get(name), "action", None) if hasattr(builder, "nodes") \
            else None
        drawn.nodes[name] = DrawnNode(name, runnable, meta)
        if meta:
            drawn.metadata[name] = meta
    if START not in plan.nodes:  # an entrypoint: its input starts its node directly
        drawn.nodes[START] = None  # no node of its own: drawn bare (as LangGraph)
        for name in start_tasks:
            drawn.add_edge(START, name)
    for source, target, conditional, label in sorted(found, key=_edge_key):
        drawn.add_edge(source, target, conditional, label if label != target else None)
    termini = {e[1] for e in found if e[1] != END}.difference(e[0] for e in found)
    if termini:
        for name in sorted(termini):
            drawn.add_edge(name, END)
    elif len(last_sources) == 1 and not any(e[1] == END for e in found):
        drawn.add_edge(next(iter(last_sources)), END, conditional=True)
    if xray:
        deeper = xray if isinstance(xray, bool) else xray - 1
        for name, spec in builder.nodes.items():
            sub = getattr(spec, "action", None)
            if hasattr(sub, "get_graph") and hasattr(sub, "plan"):
                drawn.inline(name, sub.get_graph(xray=deeper))
    return drawn


def _edge_key(edge: tuple[str, str, bool, Any]) -> tuple[str, str, bool, str]:
    return (edge[0], edge[1], edge[2], "" if edge[3] is None else str(edge[3]))


def _node_metadata(graph: CompiledStateGraph, name: str) -> dict[str, Any]:
    spec = graph.builder.nodes.get(name)
    if spec is None:
        return {}
    meta = dict(getattr(spec, "metadata", None) or {})
    if getattr(spec, "defer", False):
        meta["defer"] = True
    plan = graph.plan
    before, after = name in plan.interrupt_before, name in plan.interrupt_after
    if before or after:
        meta["__interrupt"] = "before,after" if before and after else "before" if before else "after"
    tools = getattr(getattr(spec, "action", None), "tools_by_name", None)
    if isinstance(tools, dict) and tools:
        meta["__tools"] = list(tools)
    return meta


# -- the symbolic run -----------------------------------------------------------------------------

_Write = tuple[str, Any, bool, Any]  # channel, value, conditional, label


def _static_writes(graph: CompiledStateGraph, name: str) -> tuple[list[_Write], set[Any]]:
    """What node `name` writes for drawing, and its edges straight to `__end__`."""
    node = graph.plan.nodes[name]
    writes: list[_Write] = [(ch, value, False, None) for ch, value in node.edge_writes]
    to_end: set[Any] = set()
    targets: list[tuple[str, Any]] = []
    for branch in getattr(graph.builder, "branches", {}).get(name, {}).values():
        targets += _branch_targets(branch)
    spec = graph.builder.nodes.get(name)
    if spec is not None:
        targets += _destinations(spec)
    for dest, label in targets:
        if dest == END:
            to_end.add((name, END, True, label))
        elif dest in graph.plan.nodes:
            writes.append((branch_channel(dest), None, True, label))
    return writes, to_end


def _branch_targets(branch: Any) -> list[tuple[str, Any]]:
    """A conditional edge's known ends with their labels: its path map, else the `Literal`
    its router is annotated to return; none when neither says (as LangGraph)."""
    if branch.path_map:
        return [(dest, key) for key, dest in branch.path_map.items()]
    return [(dest, None) for dest in _literal_return(branch.path)]


def _destinations(spec: Any) -> list[tuple[str, Any]]:
    """A node's declared ends with their labels (`destinations={"b": "label"}`), else the
    ends its `Command[Literal[...]]` return annotation names."""
    given = spec.destinations
    if isinstance(given, dict):
        return list(given.items())
    if given:
        return [(dest, None) for dest in given]
    return [(dest, None) for dest in _command_return(spec.action)]


def _command_return(fn: Any) -> tuple[str, ...]:
    """The names a node's `-> Command[Literal[...]]` (also inside a Union) lists; a bare
    `Literal` return is a value, not a destination (as LangGraph; issue 29)."""
    hint = _return_hint(fn)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        hint = next((a for a in typing.get_args(hint) if typing.get_origin(a) is Command), None)
    if typing.get_origin(hint) is not Command or not typing.get_args(hint):
        return ()
    ends = typing.get_args(hint)[0]
    if typing.get_origin(ends) is not typing.Literal:
        return ()
    return tuple(a for a in typing.get_args(ends) if isinstance(a, str))


def _return_hint(fn: Any) -> Any:
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else getattr(fn, "__call__", None)
    try:
        return typing.get_type_hints(target).get("return") if target is not None else None
    except Exception:  # unresolvable annotations: nothing known
        return None


def _literal_return(fn: Any) -> tuple[str, ...]:
    """The names a function's return annotation lists: `Literal[...]`, also inside a
    generic such as `Command[Literal[...]]`."""
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else getattr(fn, "__call__", None)
    try:
        hint = typing.get_type_hints(target).get("return") if target is not None else None
    except Exception:  # unresolvable annotations: nothing known
        return ()
    while typing.get_origin(hint) is not None and typing.get_origin(hint) is not typing.Literal:
        args = typing.get_args(hint)
        if not args:
            return ()
        hint = args[0]
    if typing.get_origin(hint) is typing.Literal:
        return tuple(a for a in typing.get_args(hint) if isinstance(a, str))
    return ()


def _discover(graph: CompiledStateGraph) -> tuple[set[Any], list[str], set[str]]:
    """Step the graph's channels symbolically; the edges found (source, target,
    conditional, label), the first step's tasks and the last step's."""
    plan = graph.plan
    channels = plan.new_channels()
    versions: dict[str, int] = {}
    channels[START].update([None])
    updated: list[str] | None = [START]
    statics = {name: _static_writes(graph, name) for name in plan.nodes}
    tasks = _ready(plan, channels)
    start_tasks = list(tasks)
    edges: set[Any] = set()
    sources: dict[str, set[Any]] = {}
    step_sources: dict[str, set[Any]] = {}
    for _ in range(-1, _LIMIT):  # as LangGraph's loop: steps -1 to 249, so a cycle's last
        if not tasks:  # step (which draws its `__end__` edge) is the same node
            break
        step_sources = {}
        for name in tasks:
            writes, to_end = statics[name]
            edges |= to_end
            step_sources[name] = {(ch, cond, label) for ch, _, cond, label in writes}
        sources.update(step_sources)
        by_trigger: dict[str, set[Any]] = defaultdict(set)
        for src, written in sources.items():
            for channel, cond, label in written:
                by_trigger[channel].add((src, cond, label))
        updated = apply_writes(channels, versions, _as_tasks(plan, tasks, statics), updated, set())
        tasks = _ready(plan, channels)
        for name in tasks:
            added = False
            for trigger in plan.nodes[name].triggers:
                for src, cond, label in sorted(by_trigger[trigger], key=_source_key):
                    edges.add((src, name, cond, label))
                    if (trigger, cond, label) in step_sources.get(src, ()):
                        added = True
                    else:
                        sources[src].discard((trigger, cond, label))
            if not added:  # reached by writes of earlier steps only
                edges.update((src, name, True, None) for src in step_sources)
    return edges, start_tasks, set(step_sources)


def _source_key(item: tuple[str, bool, Any]) -> tuple[str, bool, str]:
    return (item[0], item[1], "" if item[2] is None else str(item[2]))


def _ready(plan: Any, channels: dict[str, Any]) -> list[str]:
    def ready() -> list[str]:
        return [
            name for name, node in plan.nodes.items()
            if any(channels[t].is_available() for t in node.triggers)
        ]

    names = ready()
    if not names and any([ch.finish() for ch in channels.values()]):
        names = ready()  # deferred nodes run once nothing else is left
    return names


def _as_tasks(plan: Any, names: list[str], statics: dict[str, Any]) -> list[Task]:
    tasks = []
    for name in names:
        node = plan.nodes[name]
        task = Task("", node, None, (PULL, name), node.triggers, "", (0, name))
        task.writes = [(ch, value) for ch, value, _, _ in statics[name][0]]
        tasks.append(task)
    return tasks
