"""The server's process-wide state: records, saver, store, graphs, run queue and broker.

Built once in the app's lifespan and reached by route handlers through `request.app.state`.
Which back end the parts are (SQLite, or PostgreSQL + Redis) is `backends.py`'s choice.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import msgspec

from engine import CompiledStateGraph

from .._graph_spec import NotAGraph, is_factory, open_graph
from ..server_runtime import ExecutionRuntime, ReadRuntime
from .backends import build_parts
from .errors import FailedDependency, NotFound, UnprocessableEntity
from .langgraph_graph import LangGraphGraph, ServedGraph, is_langgraph
from .loops import Failing
from .records import RecordStore, now
from .schemas import Assistant
from .settings import Settings
from .webhooks import Webhooks

__all__ = ["ServerState", "assistant_id_for"]

# SPEC §3: built-in assistants are uuid5 of the graph id in this namespace.
_DEFAULT_NAME = "LangGraph"  # what `compile()` names a graph not given a name
_ASSISTANT_NS = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")


def assistant_id_for(graph_id: str) -> str:
    return str(uuid.uuid5(_ASSISTANT_NS, graph_id))


class ServerState:
    """Owned by the app's lifespan: `open()` on start-up, `close()` on shutdown."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        parts = build_parts(settings)
        self.records: RecordStore = parts.records
        self.saver: Any = parts.saver
        self.store: Any = parts.store  # langgraph.json `store` (issue 18)
        self._graphs: dict[str, ServedGraph] = {}  # graphrun's or LangGraph's (issue 28)
        self._stateless: dict[str, ServedGraph] = {}
        self.broker: Any = parts.broker
        self.signals: Any = parts.signals  # cluster.signals.Signals with Redis, else None
        self.unavailable = parts.unavailable  # errors meaning the database is out of reach
        self._make_queue = parts.make_queue
        self.queue: Any = None  # set by app.py once the queue exists (`make_queue`)
        self.webhooks = Webhooks.from_settings(settings)  # policy and sender (issue 26)
        self.failing = Failing()  # background loops failing now, for /ok (issue 26)
        self.stopped: str | None = None  # why the background tasks ended early, if they did

    async def open(self) -> None:
        await self.records.open()
        for graph_id in self.settings.graphs:
            await self._ensure_builtin(graph_id)

    def make_queue(self) -> Any:
        """This back end's run queue (the embedded `RunQueue` or the cluster's)."""
        self.queue = self._make_queue(self)
        return self.queue

    async def health(self) -> dict[str, str]:
        """Each shared service's state ("ok" | "unavailable"), by name; empty when embedded.

        Asks the parts that talk to a service: the records for the database (`health()`, a
        live query), the signals for Redis (`healthy`: whether their listener is connected).
        """
        if not self.settings.cluster:
            return {}
        found = {"postgres": await _health(self.records)}
        if self.settings.redis_url is not None:
            found["redis"] = await _health(self.signals or self.broker)
        return found

    async def close(self) -> None:
        await self.records.close()
        await self.saver.aclose()
        close = getattr(self.store, "close", None)
        if close is not None:
            close()

    async def _ensure_builtin(self, graph_id: str) -> None:
        assistant_id = assistant_id_for(graph_id)
        name = graph_name(self.settings.graphs[graph_id], graph_id)
        found = await self.records.get_assistant(assistant_id)
        if found is not None:
            if found.name != name:  # the graph was renamed since (the reference syncs it too)
                await self.records.put_assistant(msgspec.structs.replace(found, name=name))
            return
        stamp = now()
        await self.records.put_assistant(
            Assistant(
                assistant_id=assistant_id,
                graph_id=graph_id,
                config={},
                context={},
                metadata={"created_by": "system"},
                name=name,
                description=None,
                version=1,
                created_at=stamp,
                updated_at=stamp,
            )
        )

    # -- graphs ---------------------------------------------------------------------------------

    async def graph(self, graph_id: str, *, stateless: bool = False) -> ServedGraph:
        """The graph with the server's saver and store attached (none for stateless runs)."""
        cache = self._stateless if stateless else self._graphs
        graph = cache.get(graph_id)
        if graph is None:
            base = await self._load(graph_id)
            graph = base.copy(checkpointer=None if stateless else self.saver, store=self.store)
            graph.name = graph_name(base, graph_id)  # events, metadata, schema titles
            cache[graph_id] = graph
        return graph

    @contextlib.asynccontextmanager
    async def run_graph(
        self, graph_id: str, *, stateless: bool, config: dict[str, Any], context: Any,
    ) -> AsyncIterator[ServedGraph]:
        """The graph a run executes: a factory is called for this run (with its config and an
        `ExecutionRuntime` carrying its context) and, if it is a context manager, left when
        the run ends (issue 31, as the reference); any other graph is the cached one."""
        spec = self.settings.graphs.get(graph_id)
        if not is_factory(spec):
            yield await self.graph(graph_id, stateless=stateless)
            return
        conf = config.get("configurable") or {}
        runtime = ExecutionRuntime(access_context="threads.create_run", store=self.store,
                                   user=conf.get("langgraph_auth_user"), context=context)
        async with _loading(graph_id, open_graph(spec, config, runtime)) as base:
            graph = base.copy(checkpointer=None if stateless else self.saver, store=self.store)
            graph.name = graph_name(base, graph_id)
            yield graph

    async def _load(self, graph_id: str) -> ServedGraph:
        spec = self.settings.graphs.get(graph_id)
        if spec is None:
            raise NotFound(f"Graph '{graph_id}' not found")
        # the graph's shape (schemas, drawing, state reads): a factory is called once for it
        runtime = ReadRuntime(access_context="assistants.read", store=self.store)
        async with _loading(graph_id, open_graph(spec, {"configurable": {}}, runtime)) as graph:
            return graph

    async def assistant(self, assistant_id: str) -> Assistant:
        """An assistant by id, or a graph id naming its built-in assistant (SPEC §3)."""
        found = await self.records.get_assistant(assistant_id)
        if found is None and assistant_id in self.settings.graphs:
            found = await self.records.get_assistant(assistant_id_for(assistant_id))
        if found is None:
            raise NotFound(f"Assistant '{assistant_id}' not found")
        return found


@contextlib.asynccontextmanager
async def _loading(graph_id: str, opening: Any) -> AsyncIterator[ServedGraph]:
    """Enter `opening` (a graph's loading); a failure to load becomes an error naming its cause
    (issue 31: never a bare 500, never a run left running). Errors of the caller's block pass."""
    stack = contextlib.AsyncExitStack()
    try:
        graph = await stack.enter_async_context(opening)
    except NotAGraph as error:
        raise UnprocessableEntity(
            f"Graph '{graph_id}' is not a graph or a graph factory: {error}"
        ) from None
    except Exception as error:
        raise FailedDependency(
            f"Graph '{graph_id}' failed to load: {type(error).__name__}: {error}"
        ) from error
    async with stack:
        yield graph


def graph_name(graph: Any, graph_id: str) -> str:
    """What the reference calls a graph: the name it was compiled with, else its id (issue 31
    item 12: assistants of a graph compiled with `name="ReAct Agent"` are named so)."""
    known = isinstance(graph, (CompiledStateGraph, LangGraphGraph)) or (
        is_langgraph(graph) and hasattr(graph, "astream"))  # a compiled LangGraph graph
    name = getattr(graph, "name", None) if known else None
    return name if name and name != _DEFAULT_NAME else graph_id


async def _health(part: Any) -> str:
    """A part's `health()` (or its `healthy` flag), never raising: a failing check is
    "unavailable"."""
    try:
        check = getattr(part, "health", None)
        healthy = await check() if callable(check) else getattr(part, "healthy", False)
    except Exception:
        return "unavailable"
    return "ok" if healthy in (True, "ok") else "unavailable"
