"""Clearing cached node results: `graph.clear_cache(nodes)` and `task_fn.clear_cache(cache)`
(LangGraph's names, issue 27).

The run keeps a node's (or a `@task`'s) cached writes under the namespace
`("__node_cache__", <name>)` (`Run._cache_key`); clearing drops those namespaces from the
cache, so the next run calls the node again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["GraphCacheMethods", "TaskCacheMethods"]

_NAMESPACE = "__node_cache__"


def _namespace(name: str) -> tuple[str, str]:
    return (_NAMESPACE, name)


class GraphCacheMethods:
    """Mixed into the compiled graph: clear its nodes' cached results."""

    cache: Any
    plan: Any

    def _cache_namespaces(self, nodes: Sequence[str] | None) -> list[tuple[str, str]]:
        if not self.cache:
            raise ValueError("No cache is set for this graph. Cannot clear cache.")
        known = self.plan.nodes
        return [_namespace(name) for name in nodes or known if name in known]

    def clear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Forget the cached results of `nodes` (all the graph's nodes when None)."""
        namespaces = self._cache_namespaces(nodes)
        self.cache.clear(namespaces)

    async def aclear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Async `clear_cache`."""
        namespaces = self._cache_namespaces(nodes)
        await self.cache.aclear(namespaces)


class TaskCacheMethods:
    """Mixed into `@task` functions: clear the task's cached results in a given cache."""

    name: str
    node: Any

    def clear_cache(self, cache: Any) -> None:
        """Forget this task's cached results (a task without a cache policy has none)."""
        if self.node.cache is not None:
            cache.clear([_namespace(self.name)])

    async def aclear_cache(self, cache: Any) -> None:
        """Async `clear_cache`."""
        if self.node.cache is not None:
            await cache.aclear([_namespace(self.name)])
