"""The agent's tools; `search` reads the run's context through `get_runtime`."""

from __future__ import annotations

from typing import Any

from react_agent.context import Context
from react_agent.lib import get_runtime


async def search(query: str) -> dict[str, Any]:
    """Search for general web results (here: made up from the query)."""
    runtime = get_runtime(Context)
    limit = int(runtime.context.max_search_results)
    return {"query": query, "results": [f"{query} #{i}" for i in range(min(limit, 3))]}


TOOLS = [search]
