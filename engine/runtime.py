"""The runtime a node may ask for, LangGraph's `langgraph.runtime` surface (issue 29).

`Runtime` bundles the run's context, store and stream writer with `execution_info`,
`server_info` and `control` (a `RunControl`: `request_drain()` stops the run at its next step
boundary with `GraphDrained`, its progress saved).
"""

from ._context import get_runtime
from ._runtime import DEFAULT_RUNTIME, ExecutionInfo, RunControl, Runtime, ServerInfo

__all__ = ["DEFAULT_RUNTIME", "ExecutionInfo", "RunControl", "Runtime", "ServerInfo", "get_runtime"]
