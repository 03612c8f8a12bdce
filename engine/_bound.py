"""A compiled graph with a bound default config, LangGraph's `graph.with_config(...)` (issue 29).

A bound config is merged under each call's config as LangGraph merges configs: tags are
concatenated, `metadata` and `configurable` merged key by key, callback lists or managers
combined, any other non-empty key taken from the later config. So a tracing callback or a
`configurable` key bound once survives a call that brings its own.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

__all__ = ["BoundGraph", "merge_configs"]

# The graph's entry points whose second argument (or `config=`) is a run config.
_RUNS = frozenset((
    "invoke", "ainvoke", "stream", "astream", "stream_events", "astream_events",
))
_BATCHES = frozenset(("batch", "abatch"))


def _merge_callbacks(base: Any, new: Any) -> Any:
    """Two `callbacks` values (a list of handlers or a LangChain callback manager) as one."""
    if base is None:
        return new.copy() if hasattr(new, "copy") else new
    if isinstance(base, list) and isinstance(new, list):
        return base + new
    if isinstance(new, list):  # a manager, then handlers
        manager = base.copy()
        for handler in new:
            manager.add_handler(handler, inherit=True)
        return manager
    if isinstance(base, list):  # handlers, then a manager
        manager = new.copy()
        for handler in base:
            manager.add_handler(handler, inherit=True)
        return manager
    return base.merge(new)


def merge_configs(*configs: Mapping[str, Any] | None) -> dict[str, Any]:
    """`configs` merged left to right; empty values never replace a set one."""
    merged: dict[str, Any] = {}
    for config in configs:
        for key, value in (config or {}).items():
            if not value:
                continue
            if key in ("metadata", "configurable"):
                merged[key] = {**merged.get(key, {}), **value}
            elif key == "tags":
                merged[key] = [*merged.get(key, ()), *value]
            elif key == "callbacks":
                merged[key] = _merge_callbacks(merged.get(key), value)
            else:
                merged[key] = value
    merged.setdefault("configurable", {})
    return merged


class BoundGraph:
    """A compiled graph and the config `with_config` bound to it; everything else delegates."""

    def __init__(self, graph: Any, config: dict[str, Any]) -> None:
        self._graph = graph
        self.config = config

    def __repr__(self) -> str:
        return f"<BoundGraph {self._graph!r} config={self.config!r}>"

    def with_config(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> BoundGraph:
        return BoundGraph(self._graph, merge_configs(self.config, config, kwargs))

    def __getattr__(self, name: str) -> Any:
        if name == "_graph":  # not set yet (copy, pickle): no recursion
            raise AttributeError(name)
        attr = getattr(self._graph, name)
        if name in _RUNS:
            return functools.partial(_run, attr, self.config)
        if name in _BATCHES:
            return functools.partial(_batch, attr, self.config)
        return attr


def _run(fn: Any, bound: dict[str, Any], input: Any, config: Any = None, **kwargs: Any) -> Any:
    return fn(input, merge_configs(bound, config), **kwargs)


def _batch(fn: Any, bound: dict[str, Any], inputs: Any, config: Any = None, **kwargs: Any) -> Any:
    if isinstance(config, (list, tuple)):
        return fn(inputs, [merge_configs(bound, c) for c in config], **kwargs)
    return fn(inputs, merge_configs(bound, config), **kwargs)
