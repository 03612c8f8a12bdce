"""`Runtime` and what it carries about the running node: LangGraph 1.2's shape (issue 29).

A node asking for `runtime` gets its run's context, store and stream writer, and also
`execution_info` (which checkpoint, task and attempt it is), `server_info` (the assistant and
graph an Agent Server run was started for) and `control`, the run's `RunControl` through which
anyone may ask the run to drain: stop at the next step boundary with its checkpoint saved.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["DEFAULT_RUNTIME", "ExecutionInfo", "RunControl", "Runtime", "ServerInfo"]

ContextT = TypeVar("ContextT")


def _no_writer(_: Any) -> None:
    return None


def _no_heartbeat() -> None:
    return None


@dataclasses.dataclass(frozen=True, slots=True)
class ExecutionInfo:
    """Where the current node runs: its checkpoint, namespace, task, and which attempt."""

    checkpoint_id: str
    checkpoint_ns: str
    task_id: str
    thread_id: str | None = None
    run_id: str | None = None
    node_attempt: int = 1
    node_first_attempt_time: float | None = None

    def patch(self, **overrides: Any) -> ExecutionInfo:
        """A copy with some fields replaced (the info itself is read-only)."""
        return dataclasses.replace(self, **overrides)


@dataclasses.dataclass(frozen=True, slots=True)
class ServerInfo:
    """What an Agent Server run was started for; None outside a server."""

    assistant_id: str
    graph_id: str
    user: Any = None


class RunControl:
    """A run's cooperative drain switch: `request_drain()` from any thread stops the run at
    its next step boundary (`GraphDrained`), its progress saved so it can be resumed.

    One attribute write is the whole signal, so no lock is needed.
    """

    __slots__ = ("_drain_reason",)

    def __init__(self) -> None:
        self._drain_reason: str | None = None

    def request_drain(self, reason: str = "shutdown") -> None:
        self._drain_reason = reason

    @property
    def drain_requested(self) -> bool:
        return self._drain_reason is not None

    @property
    def drain_reason(self) -> str | None:
        return self._drain_reason


@dataclasses.dataclass(slots=True)
class Runtime(Generic[ContextT]):
    """Run-scoped dependencies a node may ask for with a `runtime` parameter."""

    context: ContextT = None  # type: ignore[assignment]
    store: Any = None
    stream_writer: Callable[[Any], None] = _no_writer
    previous: Any = None
    # progress for an `idle_timeout` (TimeoutPolicy); a no-op outside a timed attempt
    heartbeat: Callable[[], None] = _no_heartbeat
    execution_info: ExecutionInfo | None = None
    server_info: ServerInfo | None = None
    control: RunControl | None = None

    def merge(self, other: Runtime[ContextT]) -> Runtime[ContextT]:
        """`other`'s values where it has them (truthy, or not the no-op default), else ours."""
        return Runtime(
            context=other.context or self.context,
            store=other.store or self.store,
            stream_writer=(
                other.stream_writer if other.stream_writer is not _no_writer
                else self.stream_writer
            ),
            previous=self.previous if other.previous is None else other.previous,
            heartbeat=other.heartbeat if other.heartbeat is not _no_heartbeat else self.heartbeat,
            execution_info=other.execution_info or self.execution_info,
            server_info=other.server_info or self.server_info,
            control=other.control or self.control,
        )

    def override(self, **overrides: Any) -> Runtime[ContextT]:
        """A copy with the given fields replaced."""
        return dataclasses.replace(self, **overrides)

    def patch_execution_info(self, **overrides: Any) -> Runtime[ContextT]:
        """A copy whose `execution_info` has some fields replaced."""
        if self.execution_info is None:
            raise RuntimeError("Cannot patch execution_info before it has been set")
        return dataclasses.replace(self, execution_info=self.execution_info.patch(**overrides))

    @property
    def drain_requested(self) -> bool:
        return self.control is not None and self.control.drain_requested

    @property
    def drain_reason(self) -> str | None:
        return self.control.drain_reason if self.control is not None else None


DEFAULT_RUNTIME: Runtime[Any] = Runtime()


def server_info(configurable: dict[str, Any]) -> ServerInfo | None:
    """What the Agent Server put in `configurable` (assistant, graph, authenticated user)."""
    assistant_id = configurable.get("assistant_id")
    graph_id = configurable.get("graph_id")
    user = configurable.get("langgraph_auth_user")
    if user is not None and not hasattr(user, "identity"):
        user = None  # a plain dict is not a user object (LangGraph's rule)
    if assistant_id is None and graph_id is None and user is None:
        return None
    return ServerInfo(
        assistant_id=str(assistant_id) if assistant_id else "",
        graph_id=str(graph_id) if graph_id else "",
        user=user,
    )
