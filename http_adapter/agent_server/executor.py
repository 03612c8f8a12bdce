"""Running one run: its config and input for the engine, its events, its outcome.

The engine does the work (`graph.astream`); this module only translates a Run record into the
engine's arguments, the engine's chunks into wire events (SPEC §3 "SSE framing") and names
the facts of a run's kwargs the queue needs. A Run's `kwargs` has the LangGraph server's shape
(`input, command, config{configurable, metadata}, context, stream_mode, interrupt_before,
interrupt_after, webhook, feedback_keys, temporary, subgraphs, resumable, checkpoint_during,
durability`); `runs.py` builds it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from engine import Command, Send

from .auth import AuthUser
from .encode import dumps, to_jsonable
from .schemas import Assistant, Run

__all__ = [
    "STREAM_MODES",
    "Outcome",
    "after_seconds",
    "engine_args",
    "engine_modes",
    "event_name",
    "is_resumable",
    "message_json",
    "metadata_event",
    "schema_context",
    "stream_modes",
    "wire_events",
]

STREAM_MODES = frozenset({
    "values", "updates", "messages", "messages-tuple", "tasks", "checkpoints", "debug",
    "custom", "events",
})

# What the run's engine metadata reports: the releases whose behaviour graphrun follows, as the
# LangGraph server reports its own (issue 18: clients compare these, not graphrun's version).
_LANGGRAPH_VERSION = "1.2.22"  # the LangGraph release graphrun's engine is compatible with
_API_VERSION = "0.16.7"  # the Agent Server release whose wire format the server follows


@dataclasses.dataclass(slots=True)
class Outcome:
    """How a run ended, for its run record, its thread and `/wait` callers."""

    status: str  # success | error | interrupted | timeout
    values: Any = None
    error: dict[str, str] | None = None
    interrupts: list[Any] = dataclasses.field(default_factory=list)
    # The values are the root graph's whole state at its last checkpoint (no output schema
    # apart, no interrupt): a record may name that checkpoint instead of a copy (issue 32).
    whole: bool = False


# -- facts of a run's kwargs ----------------------------------------------------------------------


def stream_modes(kwargs: dict[str, Any]) -> list[str]:
    mode = kwargs.get("stream_mode") or ["values"]
    return [mode] if isinstance(mode, str) else list(mode)


def is_resumable(kwargs: dict[str, Any]) -> bool:
    """Whether the run keeps a replay log for `Last-Event-ID` (`stream_resumable`)."""
    return bool(kwargs.get("resumable") or kwargs.get("stream_resumable"))


def after_seconds(kwargs: dict[str, Any]) -> float:
    """How long the run waits before it may start (`after_seconds`, 0 for none)."""
    configurable = (kwargs.get("config") or {}).get("configurable") or {}
    return float(configurable.get("__after_seconds__") or kwargs.get("after_seconds") or 0)


def metadata_event(run_id: str, attempt: int) -> tuple[str, bytes]:
    """The first event of every run's stream (published when the run starts)."""
    return "metadata", dumps({"run_id": run_id, "attempt": attempt})


# -- engine arguments -----------------------------------------------------------------------------


def _merge_config(assistant: Assistant, kwargs: dict[str, Any]) -> dict[str, Any]:
    base = assistant.config or {}
    given = kwargs.get("config") or {}
    config = {**base, **given}
    config["configurable"] = {
        **(base.get("configurable") or {}), **(given.get("configurable") or {})
    }
    tags = [*(base.get("tags") or []), *(given.get("tags") or [])]
    if tags:
        config["tags"] = tags
    return config


def server_metadata(attempt: int, api_url: str | None) -> dict[str, Any]:
    """What the server adds to a run's config metadata when an attempt starts (as observed)."""
    return {
        "run_attempt": attempt,
        "langgraph_version": _LANGGRAPH_VERSION,
        "langgraph_api_version": _API_VERSION,
        "langgraph_plan": "enterprise",  # what `langgraph dev` reports
        "langgraph_host": "self-hosted",
        "langgraph_api_url": api_url,
    }


def started_kwargs(kwargs: dict[str, Any], attempt: int, api_url: str | None) -> dict[str, Any]:
    """A run's kwargs once a worker starts it: the reference stores the attempt's metadata and
    its node counter slot in the run record's config (issue 18: `GET /runs/{id}` shows them)."""
    config = dict(kwargs.get("config") or {})
    config["metadata"] = {**(config.get("metadata") or {}), **server_metadata(attempt, api_url)}
    config["configurable"] = {**(config.get("configurable") or {}), "__pregel_node_finished": None}
    return {**kwargs, "config": config}


def engine_args(
    run: Run, assistant: Assistant, *, thread_id: str | None, attempt: int,
    api_url: str | None = None,
) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """(input, config, keyword arguments) for `graph.astream` from a run record."""
    kwargs = run.kwargs
    config = _merge_config(assistant, kwargs)
    conf = config["configurable"]
    conf.update({"run_id": run.run_id, "assistant_id": assistant.assistant_id,
                 "graph_id": assistant.graph_id})
    if isinstance(conf.get("langgraph_auth_user"), dict):  # custom auth: `.identity` works
        conf["langgraph_auth_user"] = AuthUser(conf["langgraph_auth_user"])
    if thread_id is not None:
        conf["thread_id"] = thread_id
    for legacy in ("checkpoint", "checkpoint_id"):  # records written before kwargs had this shape
        given = kwargs.get(legacy)
        if isinstance(given, dict):
            conf.update({k: v for k, v in given.items() if k != "thread_id" and v is not None})
        elif given:
            conf["checkpoint_id"] = given
    metadata = {**(config.get("metadata") or {}), **(run.metadata or {})}
    metadata.pop("run_id", None)
    metadata.update(server_metadata(attempt, api_url))
    if conf.get("thread_id") is not None:
        metadata["thread_id"] = conf["thread_id"]
    if conf.get("checkpoint_id"):  # a run from a past checkpoint: its checkpoints name it
        metadata["checkpoint_id"] = conf["checkpoint_id"]
    metadata["run_id"] = run.run_id
    config["metadata"] = metadata
    config["run_id"] = run.run_id
    options: dict[str, Any] = {
        # always a dict, as the reference: `{}` builds the graph's context schema (issue 31)
        "context": {**(assistant.context or {}), **(kwargs.get("context") or {})},
        "subgraphs": bool(kwargs.get("subgraphs", kwargs.get("stream_subgraphs"))),
    }
    for key in ("interrupt_before", "interrupt_after", "durability"):
        if kwargs.get(key) is not None:
            value = kwargs[key]
            options[key] = ["*"] if value == "*" else value
    if kwargs.get("checkpoint_during") is False and kwargs.get("durability") is None:
        options["durability"] = "exit"
    return _input(kwargs), config, options


def schema_context(context: dict[str, Any], graph: Any) -> dict[str, Any]:
    """The run's context without the keys its graph's context schema does not name, as the
    reference filters it (issue 31: `configurable` stands for the context and carries more)."""
    builder = getattr(graph, "builder", None)
    keys = _schema_keys(getattr(builder, "context_schema", None))
    if not context or not keys:
        return context
    return {k: v for k, v in context.items() if k in keys}


def _schema_keys(schema: Any) -> frozenset[str]:
    """The field names of a dataclass, pydantic model or TypedDict schema (empty: unknown)."""
    if schema is None:
        return frozenset()
    if dataclasses.is_dataclass(schema):
        return frozenset(f.name for f in dataclasses.fields(schema))
    fields = getattr(schema, "model_fields", None)  # pydantic: its aliases are names too
    if isinstance(fields, dict):
        return frozenset(fields) | {f.alias for f in fields.values() if getattr(f, "alias", None)}
    return frozenset(getattr(schema, "__annotations__", None) or ())


def _input(kwargs: dict[str, Any]) -> Any:
    command = kwargs.get("command")
    if not command:
        return kwargs.get("input")
    return Command(
        update=command.get("update"), resume=command.get("resume"), goto=_goto(command.get("goto")),
    )


def _goto(goto: Any) -> Any:
    if isinstance(goto, dict) and "node" in goto:
        return Send(goto["node"], goto.get("input"))
    if isinstance(goto, list):
        return [_goto(g) for g in goto]
    return goto or ()


def engine_modes(modes: list[str]) -> list[str]:
    """The engine's modes for the wire's: both message flavours come from `messages`."""
    out = []
    for mode in modes:
        mode = "messages" if mode in ("messages", "messages-tuple") else mode
        if mode not in out:
            out.append(mode)
    return out


# -- engine chunks -> wire events -----------------------------------------------------------------


def event_name(mode: str, ns: tuple[str, ...]) -> str:
    """`mode`, or `mode|<ns1>|<ns2>` for a subgraph's event (`stream_subgraphs`)."""
    return f"{mode}|{'|'.join(ns)}" if ns else mode


def wire_events(
    modes: list[str], subgraphs: bool,
) -> Callable[[Any], list[tuple[str, bytes]]]:
    """A function from one engine stream item to the SSE events (name, JSON) it becomes.

    `messages-tuple` goes out as `messages` with `[message, metadata]`; mode `messages` as
    `messages/metadata` once per message id, then `messages/partial` (the chunks so far,
    accumulated into one message) or `messages/complete` (a whole message).
    """
    tuple_mode = "messages-tuple" in modes
    accumulator = None if tuple_mode else _MessageAccumulator()

    def convert(item: Any) -> list[tuple[str, bytes]]:
        if subgraphs:
            ns, mode, chunk = item
        else:
            (mode, chunk), ns = item, ()
        if mode == "messages":
            message, meta = chunk
            if accumulator is None:
                return [(event_name("messages", ns), dumps([message_json(message), meta]))]
            return [(name, dumps(data)) for name, data in accumulator.events(ns, message, meta)]
        if mode == "events" and chunk["event"] == "on_chain_stream" and not chunk["parent_ids"]:
            return []  # the root run's chunks feed the other modes; the server never sends them
        if mode == "events":  # as the reference: an inner graph's are `events` too, no `|ns`
            ns = ()  # (they tell their graph in `metadata`, `parent_ids`; issue 31 item 11)
        if mode == "debug" and chunk.get("type") == "checkpoint":
            chunk = {**chunk, "payload": _debug_checkpoint(chunk["payload"])}
        return [(event_name(mode, ns), dumps(chunk))]

    return convert


def _debug_checkpoint(payload: dict[str, Any]) -> dict[str, Any]:
    """A `debug` checkpoint payload as the Agent Server sends it (issue 18): the checkpoint's
    and its parent's ids beside their configs, a subgraph task's `state` as `checkpoint`."""
    parent = payload.get("parent_config")
    tasks = [
        {k: v for k, v in task.items() if k != "state"}
        | {"checkpoint": task["state"]["configurable"]}
        if task.get("state") else task
        for task in payload.get("tasks", ())
    ]
    return {**payload, "checkpoint": _checkpoint_ids(payload["config"]),
            "parent_checkpoint": _checkpoint_ids(parent) if parent else None, "tasks": tasks}


def _checkpoint_ids(config: dict[str, Any]) -> dict[str, Any]:
    conf = config["configurable"]
    return {k: conf[k] for k in ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map")
            if k in conf}


# -- messages ----------------------------------------------------------------------------------

_ROLE_TYPES = {"user": "human", "assistant": "ai", "developer": "system"}
_CHUNK_TYPES = {
    "AIMessageChunk": "ai", "HumanMessageChunk": "human", "SystemMessageChunk": "system",
    "ToolMessageChunk": "tool", "ChatMessageChunk": "chat", "FunctionMessageChunk": "function",
}
_BASE_KEYS = ("content", "additional_kwargs", "response_metadata", "type", "name", "id")


def message_json(message: Any) -> dict[str, Any]:
    """A message (LangChain object or dict) as LangChain's `model_dump()` of it: every field,
    in LangChain's order, so a plain-dict message looks on the wire like a LangChain one."""
    if not isinstance(message, dict):
        dump = getattr(message, "model_dump", None)
        return to_jsonable(dump()) if dump is not None else {"content": str(message)}
    given = dict(message)
    role = given.pop("role", None)
    type_ = given.get("type") or _ROLE_TYPES.get(role, role) or "ai"
    base = _CHUNK_TYPES.get(type_, type_)
    out: dict[str, Any] = {
        "content": given.get("content", ""),
        "additional_kwargs": given.get("additional_kwargs") or {},
        "response_metadata": given.get("response_metadata") or {},
        "type": type_,
        "name": given.get("name"),
        "id": given.get("id"),
    }
    if base == "ai":
        out["tool_calls"] = given.get("tool_calls") or []
        out["invalid_tool_calls"] = given.get("invalid_tool_calls") or []
        out["usage_metadata"] = given.get("usage_metadata")
        if type_ != base:
            out["tool_call_chunks"] = given.get("tool_call_chunks") or []
            out["chunk_position"] = given.get("chunk_position")
    elif base == "tool":
        out["tool_call_id"] = given.get("tool_call_id")
        out["artifact"] = given.get("artifact")
        out["status"] = given.get("status") or "success"
    elif base == "chat":
        out["role"] = role if role is not None else given.get("role")
    for key, value in given.items():
        out.setdefault(key, value)
    return to_jsonable(out)  # type: ignore[no-any-return]


class _MessageAccumulator:
    """Mode `messages`: chunks of one message id merged as LangChain's `+` merges them."""

    def __init__(self) -> None:
        self.seen: dict[Any, dict[str, Any]] = {}

    def events(self, ns: tuple[str, ...], chunk: Any, meta: dict[str, Any]) -> list[tuple[str, Any]]:
        message = message_json(chunk)
        mid = message.get("id")
        out: list[tuple[str, Any]] = []
        if mid not in self.seen:
            out.append((event_name("messages/metadata", ns), {mid: {"metadata": meta}}))
        if message["type"] not in _CHUNK_TYPES:  # a whole message
            self.seen[mid] = message
            out.append((event_name("messages/complete", ns), [message]))
            return out
        merged = _merge_chunks(self.seen.get(mid), message)
        self.seen[mid] = merged
        out.append((event_name("messages/partial", ns), [_chunk_to_message(merged)]))
        return out


def _merge_chunks(left: dict[str, Any] | None, right: dict[str, Any]) -> dict[str, Any]:
    if left is None or left.get("type") not in _CHUNK_TYPES:
        return dict(right)
    merged = dict(left)
    merged["content"] = _merge_content(left.get("content"), right.get("content"))
    for key in ("additional_kwargs", "response_metadata"):
        merged[key] = _merge_dicts(left.get(key) or {}, right.get(key) or {})
    merged["tool_call_chunks"] = _merge_tool_chunks(
        left.get("tool_call_chunks") or [], right.get("tool_call_chunks") or []
    )
    merged["usage_metadata"] = _merge_usage(left.get("usage_metadata"), right.get("usage_metadata"))
    for key, value in right.items():
        if key not in merged or merged[key] is None:
            merged[key] = value
    if right.get("chunk_position") is not None:
        merged["chunk_position"] = right["chunk_position"]
    return merged


def _merge_content(left: Any, right: Any) -> Any:
    if isinstance(left, str) and isinstance(right, str):
        return left + right
    return _content_blocks(left) + _content_blocks(right)


def _content_blocks(content: Any) -> list[Any]:
    if isinstance(content, list):
        return content
    return [{"type": "text", "text": content}] if content else []


def _merge_dicts(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    merged = dict(left)
    for key, value in right.items():
        have = merged.get(key)
        if isinstance(have, str) and isinstance(value, str) and key not in ("id", "type"):
            merged[key] = have + value
        elif isinstance(have, dict) and isinstance(value, dict):
            merged[key] = _merge_dicts(have, value)
        elif value is not None or key not in merged:
            merged[key] = value
    return merged


def _merge_tool_chunks(left: list[Any], right: list[Any]) -> list[Any]:
    merged = [dict(c) for c in left]
    for chunk in right:
        index = chunk.get("index")
        same = next((c for c in merged if index is not None and c.get("index") == index), None)
        if same is None:
            merged.append(dict(chunk))
            continue
        for key in ("name", "args"):
            if chunk.get(key):
                same[key] = (same.get(key) or "") + chunk[key]
        if same.get("id") is None:
            same["id"] = chunk.get("id")
    return merged


def _merge_usage(left: Any, right: Any) -> Any:
    if not isinstance(left, dict) or not isinstance(right, dict):
        return right if right is not None else left
    return {
        key: left.get(key, 0) + right.get(key, 0) if isinstance(left.get(key, 0), int)
        and isinstance(right.get(key, 0), int) else right.get(key, left.get(key))
        for key in {**left, **right}
    }


def _chunk_to_message(chunk: dict[str, Any]) -> dict[str, Any]:
    """A merged chunk as the whole message it adds up to (LangChain `message_chunk_to_message`)."""
    message = {k: v for k, v in chunk.items() if k not in ("tool_call_chunks", "chunk_position")}
    message["type"] = _CHUNK_TYPES[chunk["type"]]
    if chunk.get("tool_call_chunks"):
        calls, invalid = [], []
        for tc in chunk["tool_call_chunks"]:
            try:
                args = json.loads(tc.get("args") or "{}")
            except ValueError:
                args = None
            if isinstance(args, dict):
                calls.append({"name": tc.get("name") or "", "args": args, "id": tc.get("id"),
                              "type": "tool_call"})
            else:
                invalid.append({"name": tc.get("name"), "args": tc.get("args"), "id": tc.get("id"),
                                "error": None, "type": "invalid_tool_call"})
        message["tool_calls"], message["invalid_tool_calls"] = calls, invalid
    return message
