"""`version="v2"` streaming: every chunk as a `{"type", "ns", "data"}` part (issue 29).

LangGraph 1.1 added a second output format next to the tuple shapes of `stream()`: one dict
per chunk, whatever the modes and the `subgraphs` flag, so a caller narrows on `part["type"]`
instead of on the tuple's length. `values` parts carry the run's interrupts in their own
`interrupts` field, and state values are built into the graph's pydantic or dataclass schema.
`invoke(..., version="v2")` returns a `GraphOutput(value, interrupts)`.

Kept apart from `_stream.py` so plain `stream()` pays nothing for it: the graph hands its chunk
buffers here only when a caller asked for `v2`.
"""

from __future__ import annotations

import dataclasses
import inspect
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .types import Interrupt
from .warnings import LangGraphDeprecatedSinceV11

if TYPE_CHECKING:
    from ._pregel import CompiledStateGraph

__all__ = ["GraphOutput", "check_version", "schema_mapper", "to_part"]

INTERRUPT = "__interrupt__"
_VERSIONS = ("v1", "v2")

OutputT = TypeVar("OutputT")


@dataclasses.dataclass(frozen=True)
class GraphOutput(Generic[OutputT]):
    """What `invoke(..., version="v2")` returns: the output and the interrupts apart.

    Item access (`result["key"]`, `"__interrupt__" in result`) still works for code written
    against v1's dict, with LangGraph's deprecation warning.
    """

    value: OutputT
    interrupts: tuple[Interrupt, ...] = ()

    def __getitem__(self, key: str) -> Any:
        _warn_item_access("result[key]")
        if key == INTERRUPT:
            return self.interrupts
        if isinstance(self.value, dict):
            return self.value[key]
        try:
            return getattr(self.value, key)
        except AttributeError:
            raise KeyError(key) from None

    def __contains__(self, key: object) -> bool:
        _warn_item_access("key in result")
        if key == INTERRUPT:
            return bool(self.interrupts)
        if isinstance(self.value, dict):
            return key in self.value
        return isinstance(key, str) and hasattr(self.value, key)


def _warn_item_access(form: str) -> None:
    warnings.warn(
        f"Accessing GraphOutput via `{form}` is deprecated: use `.value` for the output and "
        "`.interrupts` for the interrupts.",
        LangGraphDeprecatedSinceV11,  # issue 29: LangGraph's class, so its filters apply
        stacklevel=3,
    )


def check_version(version: Any) -> str:
    if version not in _VERSIONS:
        raise ValueError(f"Unknown stream version: {version!r} (expected 'v1' or 'v2')")
    return version


def schema_mapper(schema: Any) -> Callable[[dict[str, Any]], Any] | None:
    """Builds a state dict into `schema` when it is a pydantic model or a dataclass."""
    if not inspect.isclass(schema):
        return None
    if dataclasses.is_dataclass(schema) or hasattr(schema, "model_validate"):
        return lambda values: schema(**values)
    return None


class PartMaker:
    """Turns one `(ns, mode, chunk)` item into a v2 part, building states into the schema."""

    __slots__ = ("output", "state")

    def __init__(self, graph: CompiledStateGraph) -> None:
        builder = getattr(graph, "builder", None)
        self.output = schema_mapper(getattr(builder, "output_schema", None))
        self.state = schema_mapper(getattr(builder, "state_schema", None))

    def __call__(self, item: tuple[tuple[str, ...], str, Any]) -> dict[str, Any]:
        ns, mode, chunk = item
        if mode == "values":
            interrupts: Any = ()
            if isinstance(chunk, dict):
                if INTERRUPT in chunk:
                    chunk = dict(chunk)
                    interrupts = tuple(chunk.pop(INTERRUPT))
                # a subgraph's states are its own schema's: only the root's are built
                if self.output is not None and not ns:
                    chunk = self.output(chunk)
            return {"type": mode, "ns": ns, "data": chunk, "interrupts": interrupts}
        if mode in ("checkpoints", "debug") and self.state is not None and not ns:
            chunk = _with_built_values(chunk, self.state)
        return {"type": mode, "ns": ns, "data": chunk}


def to_part(
    graph: CompiledStateGraph, version: Any
) -> Callable[[tuple[tuple[str, ...], str, Any]], Any]:
    check_version(version)
    return PartMaker(graph)


def invoke(
    graph: CompiledStateGraph, input: Any, config: Any, stream_mode: Any, kwargs: dict[str, Any]
) -> Any:
    """`invoke(..., version=...)`: a `GraphOutput` for `values`, else the list of parts."""
    kwargs = {**kwargs, "version": check_version(kwargs["version"])}
    if kwargs["version"] == "v1":
        del kwargs["version"]
        return graph.invoke(input, config, stream_mode=stream_mode, **kwargs)
    parts = graph.stream(input, config, stream_mode=stream_mode, **kwargs)
    return output_of(parts) if stream_mode == "values" else list(parts)


async def ainvoke(
    graph: CompiledStateGraph, input: Any, config: Any, stream_mode: Any, kwargs: dict[str, Any]
) -> Any:
    kwargs = {**kwargs, "version": check_version(kwargs["version"])}
    if kwargs["version"] == "v1":
        del kwargs["version"]
        return await graph.ainvoke(input, config, stream_mode=stream_mode, **kwargs)
    parts = graph.astream(input, config, stream_mode=stream_mode, **kwargs)
    return await aoutput_of(parts) if stream_mode == "values" else [p async for p in parts]


def _with_built_values(chunk: Any, build: Callable[[dict[str, Any]], Any]) -> Any:
    """A checkpoint payload (or a debug event wrapping one) with its values built.

    The input checkpoint is left as is: its channels are not all written yet.
    """
    if not isinstance(chunk, dict):
        return chunk
    if chunk.get("type") == "checkpoint" and isinstance(chunk.get("payload"), dict):
        return {**chunk, "payload": _with_built_values(chunk["payload"], build)}
    values = chunk.get("values")
    if isinstance(values, dict) and "__start__" not in chunk.get("next", ()):
        return {**chunk, "values": build(values)}
    return chunk


def output_of(parts: Iterator[dict[str, Any]]) -> GraphOutput[Any]:
    """The `GraphOutput` of a run streamed in `values` mode as v2 parts."""
    latest: Any = None
    interrupts: list[Interrupt] = []
    for part in parts:
        latest = part["data"]
        interrupts.extend(part["interrupts"])
    return GraphOutput(latest, tuple(interrupts))


async def aoutput_of(parts: AsyncIterator[dict[str, Any]]) -> GraphOutput[Any]:
    latest: Any = None
    interrupts: list[Interrupt] = []
    async for part in parts:
        latest = part["data"]
        interrupts.extend(part["interrupts"])
    return GraphOutput(latest, tuple(interrupts))
