"""A graph's output schema applied to what a run streams and answers (issue 31 item 12).

The reference streams with `output_keys=graph.output_channels`: for a graph compiled with an
output schema apart from its state schema, `values` events and the `/wait` and `/join` answers
hold only the output keys, and an `updates` event only what a node wrote to them (a node that
wrote none of them sends none). The keys come from the schema the graph was built with
(`graph.builder.output_schema`); the engine's stream is left as it is, and the thread's state
keeps every key. As the reference, a `values` event goes out only after writes to an output key
(the input's, or a step's: seen in the `updates` the server then asks the engine for too).
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["OutputView", "OutputViews", "output_keys", "through_output"]

_INTERRUPT = "__interrupt__"


def output_keys(graph: Any) -> frozenset[str] | None:
    """The output schema's keys, or None when the graph outputs its whole state."""
    builder = getattr(graph, "builder", None)
    schema = getattr(builder, "output_schema", None)
    if schema is None or schema is getattr(builder, "state_schema", None):
        return None
    fields = getattr(schema, "model_fields", None)
    if isinstance(fields, dict):  # pydantic
        return frozenset(fields)
    if dataclasses.is_dataclass(schema):
        return frozenset(f.name for f in dataclasses.fields(schema))
    typed = getattr(schema, "__required_keys__", None)
    if typed is not None:  # TypedDict, its bases' keys included
        return frozenset(typed) | frozenset(getattr(schema, "__optional_keys__", ()))
    return frozenset(getattr(schema, "__annotations__", {}))


def through_output(mode: str, chunk: Any, keys: frozenset[str]) -> Any:
    """A root graph's `values` or `updates` chunk as the reference streams it: None when
    nothing is left to send."""
    if mode == "values":
        return _picked(chunk, keys) if isinstance(chunk, dict) else chunk
    if mode != "updates" or not isinstance(chunk, dict):
        return chunk
    out = {}
    for node, update in chunk.items():
        if node.startswith("__"):  # `__interrupt__`, `__metadata__`
            out[node] = update
            continue
        kept = _update(update, keys)
        if kept is not None:
            out[node] = kept
    return out if any(not k.startswith("__") or k == _INTERRUPT for k in out) else None


def _update(update: Any, keys: frozenset[str]) -> Any:
    """One node's writes restricted to `keys`; None when it wrote none of them."""
    if isinstance(update, dict):
        kept = _picked(update, keys)
        return kept or None
    if isinstance(update, list):  # a node that wrote a key twice: one dict per write
        kept_list = [k for k in (_update(u, keys) for u in update) if k is not None]
        return (kept_list[0] if len(kept_list) == 1 else kept_list) if kept_list else None
    return None


def _picked(values: dict[str, Any], keys: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if k in keys or k == _INTERRUPT}


class OutputView:
    """One run's root `values`/`updates` chunks through the output keys: (chunk, send)."""

    def __init__(self, keys: frozenset[str], value: Any) -> None:
        self.keys = keys
        # the input's values event: sent when the input writes an output key (a resume's,
        # a Command or None input, always)
        self.written = not isinstance(value, dict) or any(k in keys for k in value)

    def see(self, mode: str, chunk: Any) -> tuple[Any, bool]:
        if mode == "updates":
            kept = through_output(mode, chunk, self.keys)
            self.written = self.written or kept is not None
            return kept, kept is not None
        if mode != "values":
            return chunk, True
        send = self.written or (isinstance(chunk, dict) and _INTERRUPT in chunk)
        self.written = False
        return through_output(mode, chunk, self.keys), send


class OutputViews:
    """A run's views by namespace: the root's, and with `subgraphs` one per subgraph whose
    graph has an output schema of its own (issue 28: LangGraph streams a subgraph's `values`
    through its output keys too, e.g. the template project's `polish`). A graph LangGraph's
    runtime executes streams that way itself: only its root is viewed, as before."""

    def __init__(self, graph: Any, value: Any, *, subgraphs: bool) -> None:
        self._graph = graph
        keys = output_keys(graph)
        self._views: dict[tuple[str, ...], OutputView | None] = {
            (): OutputView(keys, value) if keys is not None else None}
        self._subgraphs = subgraphs and getattr(graph, "engine", None) != "langgraph"
        self.any = keys is not None or (self._subgraphs and _outputs_below(graph))

    def get(self, ns: tuple[str, ...]) -> OutputView | None:
        if ns not in self._views:
            sub = _subgraph(self._graph, ns) if self._subgraphs else None
            keys = output_keys(sub) if sub is not None else None
            # a subgraph's input is its parent's state: its first `values` always goes out
            self._views[ns] = OutputView(keys, None) if keys is not None else None
        return self._views[ns]


def _nodes(graph: Any) -> dict[str, Any]:
    return dict(getattr(getattr(graph, "builder", None), "nodes", None) or {})


def _subgraph(graph: Any, ns: tuple[str, ...]) -> Any:
    """The graph of namespace `ns` ("node:task-id" per level), None if not a subgraph node."""
    for part in ns:
        node = _nodes(graph).get(part.split(":", 1)[0])
        graph = getattr(node, "action", None)
        if getattr(graph, "builder", None) is None:
            return None
    return graph


def _outputs_below(graph: Any, depth: int = 0) -> bool:
    """Whether a subgraph node (at any depth) has an output schema of its own."""
    for node in _nodes(graph).values():
        sub = getattr(node, "action", None)
        if getattr(sub, "builder", None) is not None and depth < 8 and (
                output_keys(sub) is not None or _outputs_below(sub, depth + 1)):
            return True
    return False
