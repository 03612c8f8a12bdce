"""`RemoteGraph`: call a graph served by an Agent Server as a local graph, as LangGraph's
`langgraph.pregel.remote` (issue 29).

It speaks through the official `langgraph-sdk` client, an optional dependency: install the
`remote` extra, ``pip install 'graphrun[remote]'``. Importing `engine` or this module never
needs it; `RemoteGraph(url=...)` does (a `RemoteGraph` given its own clients does not).
"""

from ._chunks import RemoteException
from ._graph import RemoteGraph

__all__ = ["RemoteException", "RemoteGraph"]
