"""One remote `stream()` call: the modes asked of the server, what each chunk becomes (issue 29).

IO-free, so the sync and async clients share it. As LangGraph's `RemoteGraph` does:
- `updates` is always asked for, so an interrupt of the remote run is seen; `messages` travels
  as the server's `messages-tuple`;
- called inside a graph's task (its config names the task's `checkpoint_ns`), the remote run's
  chunks are also pushed to the enclosing stream under the task's namespace, an interrupt of
  the remote run is raised in the task as `GraphInterrupt` and a `Command(graph=PARENT)` as
  `ParentCommand`;
- an `error` event raises `RemoteException`; the caller gets only the modes it asked for, in
  the shape `stream()` gives locally (chunk, `(mode, chunk)`, `(ns, ...)`, or v2 dict parts).
"""

from __future__ import annotations

from typing import Any

from ..errors import GraphInterrupt, ParentCommand
from ..types import Command
from ._wire import interrupt_of

__all__ = ["SKIP", "RemoteException", "StreamCall"]

NS_SEP = "|"
INTERRUPT = "__interrupt__"
SKIP: Any = object()  # `StreamCall.shape`: nothing for the caller


class RemoteException(Exception):
    """The remote run failed: its `error` event's payload."""


class StreamCall:
    """The modes of one call (`sent` to the server) and the shaping of what comes back."""

    __slots__ = ("sent", "requested", "single", "subgraphs", "version", "caller_ns", "parent")

    def __init__(
        self,
        stream_mode: str | list[str] | None,
        *,
        subgraphs: bool,
        version: str,
        caller_ns: tuple[str, ...],
        parent: Any,
    ) -> None:
        self.single = not stream_mode or isinstance(stream_mode, str)
        requested = [stream_mode or "updates"] if self.single else list(stream_mode or ())
        self.requested = {"messages" if m == "messages-tuple" else m for m in requested}
        self.sent = _server_modes(requested, parent.modes if parent is not None else ())
        self.subgraphs = subgraphs
        self.version = version
        self.caller_ns = caller_ns
        self.parent = parent  # the enclosing run's sink (`engine._stream.Sink`), when streamed

    def shape(self, chunk: Any) -> Any:
        """What the caller sees of one server chunk (the SDK's `StreamPart`; `SKIP` for
        nothing); raises the remote run's interrupts (inside a graph), parent commands and
        errors."""
        event, data = chunk.event, chunk.data
        mode, _, ns_text = event.partition(NS_SEP)
        ns = tuple(ns_text.split(NS_SEP)) if ns_text else ()
        if mode == "command" and isinstance(data, dict) and data.get("graph") == Command.PARENT:
            raise ParentCommand(Command(**data))
        ns = self.caller_ns + ns
        if self.parent is not None and mode in self.parent.modes:
            self.parent.push((ns, mode, data))  # as received: a message pair as a list (LangGraph)
        if mode == "messages":
            data = tuple(data)
            chunk = chunk._replace(data=data)
        if mode == "updates" and isinstance(data, dict) and INTERRUPT in data and self.caller_ns:
            raise GraphInterrupt(tuple(interrupt_of(i) for i in data[INTERRUPT]))
        if mode == "error":
            raise RemoteException(data)
        if mode not in self.requested or (ns_text and not self.subgraphs and mode != "messages"):
            return SKIP
        return self._part(chunk, mode, ns, data)

    def _part(self, chunk: Any, mode: str, ns: tuple[str, ...], data: Any) -> Any:
        if self.version == "v2":
            interrupts: tuple[Any, ...] = ()
            if mode == "values" and isinstance(data, dict) and INTERRUPT in data:
                data = dict(data)
                interrupts = tuple(interrupt_of(i) for i in data.pop(INTERRUPT))
            return {"type": mode, "ns": ns, "data": data, "interrupts": interrupts}
        if self.subgraphs:
            return (ns, data) if self.single else (ns, mode, data)
        return data if self.single else chunk


def _server_modes(requested: list[str], parent_modes: Any) -> list[str]:
    """The server's names for the modes asked (and the enclosing stream's), `updates` added."""
    modes = [*requested, *(m for m in parent_modes if m in _SERVER_MODES)]
    sent: list[str] = []
    for mode in modes:
        mode = "messages-tuple" if mode == "messages" else mode
        if mode != "events" and mode not in sent:
            sent.append(mode)
    if "updates" not in sent:
        sent.append("updates")
    return sent


_SERVER_MODES = frozenset(
    ("values", "updates", "messages", "custom", "debug", "tasks", "checkpoints")
)

