"""Running one run: its config and input for the engine, its events, its outcome.

The engine does the work (`graph.astream`); this module only translates a Run record into the
engine's arguments, the engine's chunks into wire events (SPEC §3 "SSE framing") and the
outcome into run and thread statuses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from engine import Command, CompiledStateGraph

from .encode import dumps, to_jsonable
from .schemas import Assistant, Run

__all__ = ["Outcome", "engine_args", "event_name", "stream_modes", "wire_events"]


@dataclasses.dataclass(slots=True)
class Outcome:
    """How a run ended, for its run record, its thread and `/wait` callers."""

    status: str  # success | error | interrupted | timeout
    values: Any = None
    error: dict[str, str] | None = None
    interrupts: list[Any] = dataclasses.field(default_factory=list)


def stream_modes(kwargs: dict[str, Any]) -> list[str]:
    mode = kwargs.get("stream_mode") or ["values"]
    return [mode] if isinstance(mode, str) else list(mode)


def _merge_config(assistant: Assistant, kwargs: dict[str, Any]) -> dict[str, Any]:
    base = assistant.config or {}
    given = kwargs.get("config") or {}
    config = {**base, **given}
    config["configurable"] = {
        **(base.get("configurable") or {}), **(given.get("configurable") or {})
    }
    config["tags"] = [*(base.get("tags") or []), *(given.get("tags") or [])]
    return config


def engine_args(
    run: Run, assistant: Assistant, *, thread_id: str | None, attempt: int,
) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """(input, config, keyword arguments) for `graph.astream` from a run record."""
    kwargs = run.kwargs
    config = _merge_config(assistant, kwargs)
    conf = config["configurable"]
    conf.update({"run_id": run.run_id, "assistant_id": assistant.assistant_id,
                 "graph_id": assistant.graph_id})
    if thread_id is not None:
        conf["thread_id"] = thread_id
    if kwargs.get("checkpoint_id"):
        conf["checkpoint_id"] = kwargs["checkpoint_id"]
    checkpoint = kwargs.get("checkpoint") or {}
    if checkpoint.get("checkpoint_id"):
        conf["checkpoint_id"] = checkpoint["checkpoint_id"]
    config["metadata"] = {
        **(config.get("metadata") or {}),
        **(run.metadata or {}),
        "run_id": run.run_id,
        "assistant_id": assistant.assistant_id,
        "graph_id": assistant.graph_id,
        "run_attempt": attempt,
    }
    config["run_id"] = run.run_id
    command = kwargs.get("command")
    value: Any
    if command:
        value = Command(
            update=command.get("update"), resume=command.get("resume"),
            goto=_goto(command.get("goto")),
        )
    else:
        value = kwargs.get("input")
    options: dict[str, Any] = {
        "context": {**(assistant.context or {}), **(kwargs.get("context") or {})} or None,
        "subgraphs": bool(kwargs.get("stream_subgraphs")),
    }
    for key in ("interrupt_before", "interrupt_after", "durability"):
        if kwargs.get(key) is not None:
            value_ = kwargs[key]
            options[key] = ["*"] if value_ == "*" else value_
    return value, config, options


def _goto(goto: Any) -> Any:
    from engine import Send

    if isinstance(goto, dict) and "node" in goto:
        return Send(goto["node"], goto.get("input"))
    if isinstance(goto, list):
        return [_goto(g) for g in goto]
    return goto or ()


def event_name(mode: str, ns: tuple[str, ...]) -> str:
    return f"{mode}|{'|'.join(ns)}" if ns else mode


class _MessageAccumulator:
    """`messages` mode on the wire: metadata once per message, then accumulated partials."""

    def __init__(self) -> None:
        self.seen: dict[Any, dict[str, Any]] = {}

    def events(self, ns: tuple[str, ...], chunk: Any, meta: dict[str, Any]) -> list[tuple[str, Any]]:
        message = to_jsonable(_as_dict(chunk))
        mid = message.get("id")
        out: list[tuple[str, Any]] = []
        if mid not in self.seen:
            out.append((event_name("messages/metadata", ns), {mid: {"metadata": meta}}))
            self.seen[mid] = dict(message)
        else:
            merged = self.seen[mid]
            if isinstance(message.get("content"), str) and isinstance(merged.get("content"), str):
                merged["content"] += message["content"]
            message = {**message, "content": merged["content"]}
        is_chunk = str(message.get("type", "")).endswith("Chunk")
        kind = "messages/partial" if is_chunk else "messages/complete"
        out.append((event_name(kind, ns), [message]))
        return out


def _as_dict(message: Any) -> dict[str, Any]:
    if isinstance(message, dict):
        return message
    dump = getattr(message, "model_dump", None)
    return dump() if dump is not None else {"content": str(message)}


def wire_events(
    modes: list[str], subgraphs: bool,
) -> Callable[[Any], list[tuple[str, bytes]]]:
    """A function from one engine stream item to the SSE events it becomes."""
    tuple_mode = "messages-tuple" in modes
    accumulator = _MessageAccumulator() if "messages" in modes and not tuple_mode else None

    def convert(item: Any) -> list[tuple[str, bytes]]:
        if subgraphs:
            ns, mode, chunk = item
        else:
            (mode, chunk), ns = item, ()
        if mode == "messages":
            message, meta = chunk
            if accumulator is None:
                return [(event_name("messages", ns), dumps([_as_dict(message), meta]))]
            return [(name, dumps(data)) for name, data in accumulator.events(ns, message, meta)]
        if isinstance(chunk, dict) and "__interrupt__" in chunk:
            chunk = to_jsonable(chunk)
        return [(event_name(mode, ns), dumps(chunk))]

    return convert


def engine_modes(modes: list[str]) -> list[str]:
    """The engine's modes for the wire's: both message flavours come from `messages`."""
    out = []
    for mode in modes:
        mode = "messages" if mode in ("messages", "messages-tuple") else mode
        if mode not in out:
            out.append(mode)
    return out


def final_values(graph: CompiledStateGraph, values: Any, interrupts: list[Any]) -> Any:
    if interrupts:
        values = {**(values or {}), "__interrupt__": [to_jsonable(i) for i in interrupts]}
    return values
