"""The server's process-wide state: records, saver, store, graphs, run queue and broker.

Built once in the app's lifespan and reached by route handlers through `request.app.state`.
"""

from __future__ import annotations

import uuid
from typing import Any

from engine import CompiledStateGraph

from .._graph_spec import NotAGraph, compile_graph
from .broker import Broker
from .errors import NotFound, UnprocessableEntity
from .records import Records, RecordStore, now
from .saver import server_saver
from .schemas import Assistant
from .settings import Settings
from .store_options import make_store

__all__ = ["ServerState", "assistant_id_for"]

# SPEC §3: built-in assistants are uuid5 of the graph id in this namespace.
_ASSISTANT_NS = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")


def assistant_id_for(graph_id: str) -> str:
    return str(uuid.uuid5(_ASSISTANT_NS, graph_id))


class ServerState:
    """Owned by the app's lifespan: `open()` on start-up, `close()` on shutdown."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        path = settings.db_path
        if path is not None and settings.data_dir is not None:
            settings.data_dir.mkdir(parents=True, exist_ok=True)
        self.records: RecordStore = Records(path)
        self.saver: Any = server_saver(path)
        self.store: Any = make_store(settings)  # langgraph.json `store` (issue 18)
        self._graphs: dict[str, CompiledStateGraph] = {}
        self._stateless: dict[str, CompiledStateGraph] = {}
        self.broker = Broker()
        self.queue: Any = None  # set by app.py once the queue exists

    async def open(self) -> None:
        await self.records.open()
        for graph_id in self.settings.graphs:
            await self._ensure_builtin(graph_id)

    async def close(self) -> None:
        await self.records.close()
        await self.saver.aclose()
        close = getattr(self.store, "close", None)
        if close is not None:
            close()

    async def _ensure_builtin(self, graph_id: str) -> None:
        assistant_id = assistant_id_for(graph_id)
        if await self.records.get_assistant(assistant_id) is not None:
            return
        stamp = now()
        await self.records.put_assistant(
            Assistant(
                assistant_id=assistant_id,
                graph_id=graph_id,
                config={},
                context={},
                metadata={"created_by": "system"},
                name=graph_id,
                description=None,
                version=1,
                created_at=stamp,
                updated_at=stamp,
            )
        )

    # -- graphs ---------------------------------------------------------------------------------

    async def graph(self, graph_id: str, *, stateless: bool = False) -> CompiledStateGraph:
        """The graph with the server's saver and store attached (none for stateless runs)."""
        cache = self._stateless if stateless else self._graphs
        graph = cache.get(graph_id)
        if graph is None:
            base = await self._load(graph_id)
            graph = base.copy(checkpointer=None if stateless else self.saver, store=self.store)
            graph.name = graph_id  # the server names a graph by its id (events, metadata)
            cache[graph_id] = graph
        return graph

    async def _load(self, graph_id: str) -> CompiledStateGraph:
        spec = self.settings.graphs.get(graph_id)
        if spec is None:
            raise NotFound(f"Graph '{graph_id}' not found")
        try:
            return await compile_graph(spec)
        except NotAGraph:
            raise UnprocessableEntity(
                f"Graph '{graph_id}' is not a graph or a graph factory"
            ) from None

    async def assistant(self, assistant_id: str) -> Assistant:
        """An assistant by id, or a graph id naming its built-in assistant (SPEC §3)."""
        found = await self.records.get_assistant(assistant_id)
        if found is None and assistant_id in self.settings.graphs:
            found = await self.records.get_assistant(assistant_id_for(assistant_id))
        if found is None:
            raise NotFound(f"Assistant '{assistant_id}' not found")
        return found
