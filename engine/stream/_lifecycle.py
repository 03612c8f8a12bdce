"""Subgraph discovery for v3 runs: `run.lifecycle` events and `run.subgraphs` handles.

Both read the `tasks` mode: the first task event seen under a namespace `node:<task_id>` says
a subgraph started there; the parent's result for task `<task_id>` says how it ended
(interrupted, failed or completed). Tasks events are folded into these projections and kept
out of the main log (issue 29).
"""

from __future__ import annotations

import logging
from typing import Any, Literal, TypedDict

from ..errors import GraphInterrupt
from ._channel import StreamChannel
from ._run_stream import AsyncSubgraphRunStream, SubgraphRunStream
from ._transformer import ProtocolEvent, StreamTransformer

__all__ = ["LifecyclePayload", "LifecycleTransformer", "SubgraphStatus", "SubgraphTransformer"]

_log = logging.getLogger(__name__)

SubgraphStatus = Literal["started", "completed", "failed", "interrupted", "drained"]
Namespace = tuple[str, ...]


class LifecyclePayload(TypedDict, total=False):
    """One `lifecycle` event: a subgraph at `namespace` started or ended."""

    event: SubgraphStatus
    namespace: list[str]
    graph_name: str
    trigger_call_id: str
    cause: dict[str, Any]
    error: str


def _split_segment(segment: str) -> tuple[str, str | None]:
    """`node:task_id` -> (node, task_id); a segment without a task id -> (segment, None)."""
    name, sep, task_id = segment.partition(":")
    return name, (task_id if sep else None)


def _status_of_error(err: BaseException) -> tuple[SubgraphStatus, str | None]:
    if any(cls.__name__ == "GraphDrained" for cls in type(err).__mro__):
        return "drained", None
    if isinstance(err, GraphInterrupt):
        return "interrupted", None
    return "failed", str(err)


def _status_of_result(data: dict[str, Any]) -> tuple[SubgraphStatus, str | None]:
    if data.get("interrupts"):  # an interrupt wins over an error
        return "interrupted", None
    if error := data.get("error"):
        return "failed", str(error)
    return "completed", None


def _tool_call_id(data: dict[str, Any]) -> str | None:
    """The id of the tool call a task runs: its input is a tool call (with context) or a
    list of tool calls (the first one's)."""
    payload = data.get("input")
    if isinstance(payload, dict) and isinstance(payload.get("tool_call"), dict):
        found = payload["tool_call"].get("id")
        return found if isinstance(found, str) else None
    if isinstance(payload, list):
        for call in payload:
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                return call["id"]
    return None


class _TasksLifecycleBase(StreamTransformer):
    """Shared bookkeeping: which namespaces started, and which parent task closes each.

    Subclasses say which namespaces they track (`_should_track`) and what a start and an end
    do (`_on_started`, `_on_terminal`); `self._pending_cause` holds the cause of a start.
    """

    required_stream_modes = ("tasks",)

    def __init__(self, scope: Namespace = ()) -> None:
        super().__init__(scope)
        self._seen: set[Namespace] = set()
        self._open: dict[Namespace, str] = {}  # namespace -> the parent task id that ends it
        self._lc_by_ns: dict[Namespace, str | None] = {}  # the agent name first seen there
        self._pending_tool_calls: dict[str, str] = {}  # task id -> the tool call it runs
        self._pending_cause: dict[str, Any] | None = None

    def _should_track(self, ns: Namespace) -> bool:
        raise NotImplementedError

    def _on_started(self, ns: Namespace, graph_name: str | None,
                    trigger_call_id: str | None) -> None:
        raise NotImplementedError

    def _on_terminal(self, ns: Namespace, status: SubgraphStatus, error: str | None) -> None:
        raise NotImplementedError

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] != "tasks":
            return True
        ns = tuple(event["params"]["namespace"])
        data = event["params"]["data"]
        if "result" in data:
            for child, status, error in self._pop_terminal_transitions(ns, data):
                self._on_terminal(child, status, error)
        else:
            self._note_start(ns, data)
        return False

    def _note_start(self, ns: Namespace, data: dict[str, Any]) -> None:
        if ns not in self._lc_by_ns:
            self._lc_by_ns[ns] = (data.get("metadata") or {}).get("lc_agent_name")
        if isinstance(data.get("id"), str) and (call_id := _tool_call_id(data)) is not None:
            self._pending_tool_calls[data["id"]] = call_id
        self._handle_task_start(ns, data)

    def _handle_task_start(self, ns: Namespace, data: dict[str, Any]) -> None:
        if not self._should_track(ns) or ns in self._seen:
            return
        self._seen.add(ns)
        name, trigger = _split_segment(ns[-1])
        agent = (data.get("metadata") or {}).get("lc_agent_name")
        cause = None
        if agent is not None and trigger is not None:
            if call_id := self._pending_tool_calls.get(trigger):
                cause = {"type": "toolCall", "tool_call_id": str(call_id)}
        self._pending_cause = cause
        self._on_started(ns, agent if agent is not None else (name or None), trigger)
        if trigger is not None:
            self._open[ns] = trigger

    def _pop_terminal_transitions(
        self, ns: Namespace, data: dict[str, Any]
    ) -> list[tuple[Namespace, SubgraphStatus, str | None]]:
        """The tracked children of `ns` that the result of task `data["id"]` ends."""
        task_id = data.get("id")
        if not task_id:
            return []
        ended = []
        for child, parent_task in list(self._open.items()):
            if child[:-1] == ns and parent_task == task_id:
                ended.append((child, *_status_of_result(data)))
                del self._open[child]
        return ended

    def finalize(self) -> None:
        for ns in list(self._open):
            self._on_terminal(ns, "completed", None)
        self._open.clear()

    def fail(self, err: BaseException) -> None:
        status, error = _status_of_error(err)
        for ns in list(self._open):
            self._on_terminal(ns, status, error)
        self._open.clear()


class LifecycleTransformer(_TasksLifecycleBase):
    """`run.lifecycle`: started/ended events of every subgraph below this run, at any depth.

    Its channel is named, so the events also enter the main log as `lifecycle` events.
    """

    _native = True

    def __init__(self, scope: Namespace = ()) -> None:
        super().__init__(scope)
        self._channel: StreamChannel[LifecyclePayload] = StreamChannel("lifecycle")

    def init(self) -> dict[str, Any]:
        return {"lifecycle": self._channel}

    def _should_track(self, ns: Namespace) -> bool:
        depth = len(self.scope)
        return len(ns) > depth and ns[:depth] == self.scope

    def _on_started(self, ns: Namespace, graph_name: str | None,
                    trigger_call_id: str | None) -> None:
        if trigger_call_id is None:
            return  # nothing would say when it ends
        payload: LifecyclePayload = {"event": "started", "namespace": list(ns)}
        if graph_name:
            payload["graph_name"] = graph_name
        payload["trigger_call_id"] = trigger_call_id
        if self._pending_cause is not None:
            payload["cause"] = self._pending_cause
        self._channel.push(payload)

    def _on_terminal(self, ns: Namespace, status: SubgraphStatus, error: str | None) -> None:
        payload: LifecyclePayload = {"event": status, "namespace": list(ns)}
        if error is not None:
            payload["error"] = error
        self._channel.push(payload)


Handle = SubgraphRunStream | AsyncSubgraphRunStream


class SubgraphTransformer(_TasksLifecycleBase):
    """`run.subgraphs`: a handle per direct child subgraph, with projections of its own.

    Each handle has a child mux (fresh transformers at the child's scope) fed the events
    under its namespace; grandchildren appear on the child handle's own `subgraphs`.
    """

    _native = True
    supports_sync = True

    def __init__(self, scope: Namespace = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Handle] = StreamChannel()
        self._handles: dict[Namespace, Handle] = {}
        self._mux: Any = None

    def init(self) -> dict[str, Any]:
        return {"subgraphs": self._log}

    def _on_register(self, mux: Any) -> None:
        self._mux = mux

    def _should_track(self, ns: Namespace) -> bool:
        depth = len(self.scope)
        return len(ns) == depth + 1 and ns[:depth] == self.scope

    def _on_started(self, ns: Namespace, graph_name: str | None,
                    trigger_call_id: str | None) -> None:
        if self._mux is None:
            return
        try:
            child = self._mux._make_child(ns)
        except RuntimeError:
            return
        cls = AsyncSubgraphRunStream if child.is_async else SubgraphRunStream
        handle = cls(child, path=ns, graph_name=graph_name, trigger_call_id=trigger_call_id)
        self._handles[ns] = handle
        self._log.push(handle)

    def _mark_terminal(self, handle: Handle, status: SubgraphStatus, error: str | None) -> bool:
        if handle._seen_terminal:
            return False
        handle.status = status
        if error is not None and handle.error is None:
            handle.error = error
        handle._seen_terminal = True
        return True

    def _on_terminal(self, ns: Namespace, status: SubgraphStatus, error: str | None) -> None:
        handle = self._handles.get(ns)
        if handle is None or not self._mark_terminal(handle, status, error):
            return
        if handle._mux._events._closed:
            return
        if status == "failed":
            handle._mux.fail(RuntimeError(error or "Subgraph failed"))
        else:
            handle._mux.close()

    async def _aon_terminal(self, ns: Namespace, status: SubgraphStatus,
                            error: str | None) -> None:
        handle = self._handles.get(ns)
        if handle is None or not self._mark_terminal(handle, status, error):
            return
        if handle._mux._events._closed:
            return
        if status == "failed":
            await handle._mux.afail(RuntimeError(error or "Subgraph failed"))
        else:
            await handle._mux.aclose()

    def _handle_for_event(self, event: ProtocolEvent) -> Handle | None:
        ns = tuple(event["params"]["namespace"])
        depth = len(self.scope)
        if len(ns) <= depth:
            return None
        handle = self._handles.get(ns[: depth + 1])
        if handle is None or handle._mux._events._closed:
            return None
        return handle

    def process(self, event: ProtocolEvent) -> bool:
        keep = super().process(event)  # first, so a start creates the handle it feeds
        if (handle := self._handle_for_event(event)) is not None:
            handle._observe_event(event)
            handle._mux.push(event)
        return keep

    async def aprocess(self, event: ProtocolEvent) -> bool:
        keep = True
        if event["method"] == "tasks":
            keep = False
            ns = tuple(event["params"]["namespace"])
            data = event["params"]["data"]
            if "result" in data:
                for child, status, error in self._pop_terminal_transitions(ns, data):
                    await self._aon_terminal(child, status, error)
            else:
                self._note_start(ns, data)
        if (handle := self._handle_for_event(event)) is not None:
            handle._observe_event(event)
            await handle._mux.apush(event)
        return keep

    def _still_open(self) -> list[Namespace]:
        pending = list(self._open)
        self._open.clear()
        return pending

    def finalize(self) -> None:
        first: BaseException | None = None
        for ns in self._still_open():
            try:
                self._on_terminal(ns, "completed", None)
            except BaseException as error:
                first = first or error
        for ns in list(self._handles):
            try:
                self._on_terminal(ns, "completed", None)
            except BaseException as error:
                first = first or error
        if first is not None:
            raise first

    async def afinalize(self) -> None:
        first: BaseException | None = None
        for ns in [*self._still_open(), *self._handles]:
            try:
                await self._aon_terminal(ns, "completed", None)
            except BaseException as error:
                first = first or error
        if first is not None:
            raise first

    def fail(self, err: BaseException) -> None:
        status, error = _status_of_error(err)
        self._open.clear()
        for handle in self._handles.values():
            self._mark_terminal(handle, status, error)
            if not handle._mux._events._closed:
                try:
                    handle._mux.fail(err)
                except Exception:
                    _log.warning("Could not fail the subgraph stream at %s", handle.path,
                                 exc_info=True)

    async def afail(self, err: BaseException) -> None:
        status, error = _status_of_error(err)
        self._open.clear()
        for handle in self._handles.values():
            self._mark_terminal(handle, status, error)
            if not handle._mux._events._closed:
                try:
                    await handle._mux.afail(err)
                except Exception:
                    _log.warning("Could not fail the subgraph stream at %s", handle.path,
                                 exc_info=True)
