"""`RemoteGraph`: a graph served by an Agent Server, called like a local compiled graph (issue 29).

LangGraph 1.2.22's `langgraph.pregel.remote.RemoteGraph`: the same constructor, methods and
results, on the official `langgraph-sdk` clients (given, or built from `url`). The request
building and chunk shaping are IO-free (`_wire`, `_chunks`, `_node`); each method here is the
one client call around them, once for the sync client and once for the async one.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from .._drawing import DrawableGraph, DrawnNode, Edge
from .._runnable import RunnableMethods
from .._stream_v2 import GraphOutput
from ..types import Command, StateSnapshot
from . import _sdk
from ._chunks import SKIP, StreamCall
from ._node import Caller, caller_of
from ._run_stream import AsyncRemoteRunStream, RemoteRunStream, wire_input
from ._wire import checkpoint_of, config_of, merge_configs, sanitize_config, snapshot_of

__all__ = ["RemoteGraph", "V3_SUPPORTED_KWARGS"]

logger = logging.getLogger("engine.remote")

#: The extra keyword arguments `stream_events(version="v3")` forwards to the run.
V3_SUPPORTED_KWARGS = frozenset({"metadata", "headers"})


class RemoteGraph(RunnableMethods):
    """A graph deployed on an Agent Server (`graphrun dev`/`serve`, LangGraph Platform), used
    as a compiled graph is: invoke, stream, state and history, drawing, or as a node of a local
    graph (its stream, interrupts and resume pass through the enclosing run)."""

    def __init__(
        self,
        assistant_id: str,
        /,
        *,
        url: str | None = None,
        api_key: str | None = None,
        headers: dict[str, str] | None = None,
        client: Any = None,
        sync_client: Any = None,
        config: dict[str, Any] | None = None,
        name: str | None = None,
        distributed_tracing: bool = False,
    ) -> None:
        """`url` (with `api_key`, `headers`) builds the SDK's clients; `client` /
        `sync_client` replace them. `name` (default: the assistant id) names the node when the
        graph is added to a local one."""
        self.assistant_id = assistant_id
        self.name = assistant_id if name is None else name
        self.config = config
        self.distributed_tracing = distributed_tracing
        if url is not None and (client is None or sync_client is None):
            default_async, default_sync = _sdk.default_clients(url, api_key, headers)
            client = default_async if client is None else client
            sync_client = default_sync if sync_client is None else sync_client
        self.client = client
        self.sync_client = sync_client

    # -- configuration -------------------------------------------------------------------------

    def copy(self, update: dict[str, Any]) -> RemoteGraph:
        """A RemoteGraph like this one with `update`'s attributes changed."""
        attrs = {**self.__dict__, **update}
        return type(self)(attrs.pop("assistant_id"), **attrs)

    def with_config(self, config: dict[str, Any] | None = None, **kwargs: Any) -> RemoteGraph:
        """A copy whose calls merge `config` (and `kwargs` as config keys) into theirs."""
        return self.copy({"config": merge_configs(self.config, config, kwargs)})

    def _async(self) -> Any:
        if self.client is None:
            raise ValueError(
                "Async client is not initialized: please provide `url` or `client` when "
                "initializing `RemoteGraph`."
            )
        return self.client

    def _sync(self) -> Any:
        if self.sync_client is None:
            raise ValueError(
                "Sync client is not initialized: please provide `url` or `sync_client` when "
                "initializing `RemoteGraph`."
            )
        return self.sync_client

    def _headers(self, headers: dict[str, str] | None) -> dict[str, str] | None:
        return _sdk.merge_tracing_headers(headers) if self.distributed_tracing else headers

    # -- drawing -------------------------------------------------------------------------------

    def get_graph(
        self, config: dict[str, Any] | None = None, *, xray: int | bool = False,
        headers: dict[str, str] | None = None, params: Any = None,
    ) -> DrawableGraph:
        """The served graph's drawing (`GET /assistants/{id}/graph`); `config` is unused."""
        return _drawable(self._sync().assistants.get_graph(
            assistant_id=self.assistant_id, xray=xray, headers=headers, params=params,
        ))

    async def aget_graph(
        self, config: dict[str, Any] | None = None, *, xray: int | bool = False,
        headers: dict[str, str] | None = None, params: Any = None,
    ) -> DrawableGraph:
        return _drawable(await self._async().assistants.get_graph(
            assistant_id=self.assistant_id, xray=xray, headers=headers, params=params,
        ))

    # -- thread state --------------------------------------------------------------------------

    def _state_request(
        self, config: dict[str, Any], subgraphs: bool, headers: Any, params: Any
    ) -> dict[str, Any]:
        merged = merge_configs(self.config, config)
        return {
            "thread_id": merged["configurable"]["thread_id"], "checkpoint": checkpoint_of(merged),
            "subgraphs": subgraphs, "headers": headers, "params": params,
        }

    def get_state(
        self, config: dict[str, Any], *, subgraphs: bool = False,
        headers: dict[str, str] | None = None, params: Any = None,
    ) -> StateSnapshot:
        """The thread's state at the config's checkpoint (its latest when none is named)."""
        request = self._state_request(config, subgraphs, headers, params)
        return snapshot_of(self._sync().threads.get_state(**request))

    async def aget_state(
        self, config: dict[str, Any], *, subgraphs: bool = False,
        headers: dict[str, str] | None = None, params: Any = None,
    ) -> StateSnapshot:
        request = self._state_request(config, subgraphs, headers, params)
        return snapshot_of(await self._async().threads.get_state(**request))

    def _history_request(self, config: dict[str, Any], filter: Any, before: Any, limit: Any,
                         headers: Any, params: Any) -> dict[str, Any]:
        merged = merge_configs(self.config, config)
        return {
            "thread_id": merged["configurable"]["thread_id"], "limit": limit or 10,
            "before": checkpoint_of(before), "metadata": filter,
            "checkpoint": checkpoint_of(merged), "headers": headers, "params": params,
        }

    def get_state_history(
        self, config: dict[str, Any], *, filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None, limit: int | None = None,
        headers: dict[str, str] | None = None, params: Any = None,
    ) -> Iterator[StateSnapshot]:
        """The thread's states, newest first (10 unless `limit` says otherwise)."""
        request = self._history_request(config, filter, before, limit, headers, params)
        for state in self._sync().threads.get_history(**request):
            yield snapshot_of(state)

    async def aget_state_history(
        self, config: dict[str, Any], *, filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None, limit: int | None = None,
        headers: dict[str, str] | None = None, params: Any = None,
    ) -> AsyncIterator[StateSnapshot]:
        request = self._history_request(config, filter, before, limit, headers, params)
        for state in await self._async().threads.get_history(**request):
            yield snapshot_of(state)

    def _update_request(self, config: dict[str, Any], values: Any, as_node: str | None,
                        headers: Any, params: Any) -> dict[str, Any]:
        merged = merge_configs(self.config, config)
        return {
            "thread_id": merged["configurable"]["thread_id"], "values": values,
            "as_node": as_node, "checkpoint": checkpoint_of(merged),
            "headers": headers, "params": params,
        }

    def update_state(
        self, config: dict[str, Any], values: Any, as_node: str | None = None, *,
        headers: dict[str, str] | None = None, params: Any = None,
    ) -> dict[str, Any]:
        """Write `values` to the thread as `as_node` would; the new checkpoint's config."""
        request = self._update_request(config, values, as_node, headers, params)
        return config_of(self._sync().threads.update_state(**request)["checkpoint"])

    async def aupdate_state(
        self, config: dict[str, Any], values: Any, as_node: str | None = None, *,
        headers: dict[str, str] | None = None, params: Any = None,
    ) -> dict[str, Any]:
        request = self._update_request(config, values, as_node, headers, params)
        return config_of((await self._async().threads.update_state(**request))["checkpoint"])

    def bulk_update_state(self, config: dict[str, Any], updates: Any) -> dict[str, Any]:
        raise NotImplementedError

    async def abulk_update_state(self, config: dict[str, Any], updates: Any) -> dict[str, Any]:
        raise NotImplementedError

    # -- runs ----------------------------------------------------------------------------------

    def _run(self, input: Any, config: dict[str, Any] | None, options: dict[str, Any],
             kwargs: dict[str, Any]) -> tuple[dict[str, Any], StreamCall, Caller]:
        """The `runs.stream` arguments of one call, its chunk shaper and its caller."""
        caller = caller_of(config)
        call = StreamCall(
            options["stream_mode"], subgraphs=options["subgraphs"], version=options["version"],
            caller_ns=caller.ns, parent=caller.sink,
        )
        sent_config = sanitize_config(merge_configs(self.config, config))
        command = None
        if isinstance(input, Command):
            command, input = dataclasses.asdict(input), None
        request = {
            "thread_id": sent_config.get("configurable", {}).pop("thread_id", None),
            "assistant_id": self.assistant_id, "input": input, "command": command,
            "config": sent_config, "context": options["context"], "stream_mode": call.sent,
            "interrupt_before": options["interrupt_before"],
            "interrupt_after": options["interrupt_after"],
            "stream_subgraphs": options["subgraphs"] or call.parent is not None,
            "if_not_exists": "create", "headers": self._headers(options["headers"]),
            "params": options["params"], **kwargs,
        }
        return request, call, caller

    @staticmethod
    def _resumes(request: dict[str, Any], caller: Caller) -> bool:
        """Whether to read the remote thread's state for answers to its interrupts."""
        if request["command"] is not None or request["thread_id"] is None:
            return False
        return caller.may_resume()

    @staticmethod
    def _resume(request: dict[str, Any], caller: Caller, state: dict[str, Any]) -> None:
        command = caller.resume_command(state)
        if command is not None:
            request["input"], request["command"] = None, command

    def stream(
        self, input: Any, config: dict[str, Any] | None = None, *, context: Any = None,
        stream_mode: str | list[str] | None = None, interrupt_before: Any = None,
        interrupt_after: Any = None, subgraphs: bool = False,
        headers: dict[str, str] | None = None, params: Any = None, version: str = "v1",
        **kwargs: Any,
    ) -> Iterator[Any]:
        """Run on the server (`POST /threads/{id}/runs/stream`, or `/runs/stream` without a
        thread id) and yield its chunks as a local `stream()` would."""
        client = self._sync()
        options = {
            "context": context, "stream_mode": stream_mode, "interrupt_before": interrupt_before,
            "interrupt_after": interrupt_after, "subgraphs": subgraphs, "headers": headers,
            "params": params, "version": version,
        }
        request, call, caller = self._run(input, config, options, kwargs)
        if self._resumes(request, caller):
            self._resume(request, caller, client.threads.get_state(request["thread_id"]))
        for chunk in client.runs.stream(**request):
            item = call.shape(chunk)
            if item is not SKIP:
                yield item

    async def astream(
        self, input: Any, config: dict[str, Any] | None = None, *, context: Any = None,
        stream_mode: str | list[str] | None = None, interrupt_before: Any = None,
        interrupt_after: Any = None, subgraphs: bool = False,
        headers: dict[str, str] | None = None, params: Any = None, version: str = "v1",
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        client = self._async()
        options = {
            "context": context, "stream_mode": stream_mode, "interrupt_before": interrupt_before,
            "interrupt_after": interrupt_after, "subgraphs": subgraphs, "headers": headers,
            "params": params, "version": version,
        }
        request, call, caller = self._run(input, config, options, kwargs)
        if self._resumes(request, caller):
            self._resume(request, caller, await client.threads.get_state(request["thread_id"]))
        async for chunk in client.runs.stream(**request):
            item = call.shape(chunk)
            if item is not SKIP:
                yield item

    def invoke(
        self, input: Any, config: dict[str, Any] | None = None, *, context: Any = None,
        interrupt_before: Any = None, interrupt_after: Any = None,
        headers: dict[str, str] | None = None, params: Any = None, version: str = "v1",
        **kwargs: Any,
    ) -> Any:
        """Run on the server and return the final state (a `GraphOutput` with `version="v2"`)."""
        last = SKIP
        for last in self.stream(
            input, config, context=context, interrupt_before=interrupt_before,
            interrupt_after=interrupt_after, headers=headers, params=params, version=version,
            stream_mode="values", **kwargs,
        ):
            pass
        return _output(last, version)

    async def ainvoke(
        self, input: Any, config: dict[str, Any] | None = None, *, context: Any = None,
        interrupt_before: Any = None, interrupt_after: Any = None,
        headers: dict[str, str] | None = None, params: Any = None, version: str = "v1",
        **kwargs: Any,
    ) -> Any:
        last = SKIP
        async for last in self.astream(
            input, config, context=context, interrupt_before=interrupt_before,
            interrupt_after=interrupt_after, headers=headers, params=params, version=version,
            stream_mode="values", **kwargs,
        ):
            pass
        return _output(last, version)

    # -- v3 event streams ----------------------------------------------------------------------

    def _reject_v3_unsupported(
        self, *, control: Any, transformers: Any, interrupt_before: Any, interrupt_after: Any,
        extra_kwargs: dict[str, Any],
    ) -> None:
        """NotImplementedError for what the v3 remote stream cannot carry."""
        for name, value in (
            ("control", control), ("transformers", transformers),
            ("interrupt_before", interrupt_before), ("interrupt_after", interrupt_after),
        ):
            if value:
                raise NotImplementedError(
                    f"RemoteGraph.stream_events(version='v3') does not support `{name}=`."
                )
        unknown = sorted(set(extra_kwargs) - V3_SUPPORTED_KWARGS)
        if unknown:
            raise NotImplementedError(
                f"RemoteGraph.stream_events(version='v3') does not support the keyword "
                f"arguments {unknown!r}; it takes {sorted(V3_SUPPORTED_KWARGS)!r}."
            )

    def _v3_session(self, client: Any, config: Any, headers: Any) -> tuple[Any, dict[str, Any]]:
        """The SDK's thread stream session for a v3 call, and the config the run gets."""
        sent_config = sanitize_config(merge_configs(self.config, config))
        session = client.threads.stream(
            thread_id=sent_config.get("configurable", {}).pop("thread_id", None),
            assistant_id=self.assistant_id, headers=self._headers(headers),
        )
        return session, sent_config

    def stream_events(
        self, input: Any, config: dict[str, Any] | None = None, *, version: str = "v2",
        interrupt_before: Any = None, interrupt_after: Any = None, control: Any = None,
        transformers: Sequence[Any] | None = None, headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> RemoteRunStream:
        """`version="v3"`: a run stream over the server's v3 thread stream (enter it to start
        the run). Other versions are not available on the sync path, as for any Runnable."""
        if version != "v3":
            raise NotImplementedError(
                f"stream_events(version={version!r}) is not supported: use astream_events() "
                "on a local graph for v1/v2, or version='v3'."
            )
        checks = _v3_checks(control, transformers, interrupt_before, interrupt_after, kwargs)
        self._reject_v3_unsupported(**checks)
        wire_input(input)  # a Command with goto/update fails before any request
        session, sent_config = self._v3_session(self._sync(), config, headers)
        metadata = kwargs.get("metadata")
        return RemoteRunStream(self.sync_client, session, input, sent_config, metadata)

    async def astream_events(
        self, input: Any, config: dict[str, Any] | None = None, *, version: str = "v2",
        interrupt_before: Any = None, interrupt_after: Any = None, control: Any = None,
        transformers: Sequence[Any] | None = None, headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> AsyncRemoteRunStream:
        """`version="v3"` only (`async with await remote.astream_events(...) as run`); use
        `astream()` for the v1/v2 chunks."""
        if version != "v3":
            raise NotImplementedError(
                f"RemoteGraph.astream_events(version={version!r}) is not implemented; use "
                "astream() for v1/v2 streaming or version='v3'."
            )
        checks = _v3_checks(control, transformers, interrupt_before, interrupt_after, kwargs)
        self._reject_v3_unsupported(**checks)
        wire_input(input)
        client = self._async()
        session, sent_config = self._v3_session(client, config, headers)
        return AsyncRemoteRunStream(client, session, input, sent_config, kwargs.get("metadata"))


def _output(last: Any, version: str) -> Any:
    if last is SKIP:
        logger.warning("No events received from remote graph")
        return None
    if version == "v2":
        return GraphOutput(value=last["data"], interrupts=tuple(last.get("interrupts", ())))
    return last


def _v3_checks(
    control: Any, transformers: Any, before: Any, after: Any, kwargs: dict[str, Any]
) -> dict[str, Any]:
    return {"control": control, "transformers": transformers, "interrupt_before": before,
            "interrupt_after": after, "extra_kwargs": kwargs}


def _drawable(graph: dict[str, Any]) -> DrawableGraph:
    """The server's graph JSON (LangChain's `Graph.to_json` shape) as a local drawing."""
    nodes: dict[str, Any] = {}
    for node in graph["nodes"]:
        node_id = str(node["id"])
        data = node.get("data", {})
        name = node.get("name")
        if name is None:
            name = data.get("name", node_id) if isinstance(data, dict) else node_id
        drawn = DrawnNode(name, data, node.get("metadata"))
        drawn.id = node_id
        nodes[node_id] = drawn
    edges = [
        Edge(e["source"], e["target"], e.get("data"), bool(e.get("conditional", False)))
        for e in graph["edges"]
    ]
    return DrawableGraph(nodes=nodes, edges=edges)
