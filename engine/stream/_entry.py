"""`stream_events(version="v3")` / `astream_events(version="v3")`: a run as a run stream.

The run streams v2 parts of exactly the modes its transformers need (always with subgraphs,
so nested namespaces reach the child muxes); the built-in transformers (values, messages,
lifecycle, subgraphs) come first, then the graph's `stream_transformers`, then the call's.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .._event_filter import EventFilter, filter_events
from .._messages import PROTOCOL_KEY
from ._lifecycle import LifecycleTransformer, SubgraphTransformer
from ._messages import MessagesTransformer
from ._mux import StreamMux, TransformerFactory
from ._projections import ValuesTransformer
from ._run_stream import AsyncGraphRunStream, GraphRunStream
from ._transformer import StreamTransformer

__all__ = ["astream_events", "stream_events"]

_BUILTINS: tuple[TransformerFactory, ...] = (
    ValuesTransformer, MessagesTransformer, LifecycleTransformer, SubgraphTransformer,
)
#: v3 decides these itself: the modes from its transformers, subgraphs always on
_OWNED_KWARGS = ("stream_mode", "subgraphs")


def stream_events(
    graph: Any, input: Any, config: Any, version: str, transformers: Any, kwargs: dict[str, Any]
) -> GraphRunStream:
    if version != "v3":
        raise NotImplementedError("sync stream_events: only version='v3' (else astream_events)")
    return stream_events_v3(graph, input, config, transformers, kwargs)


def astream_events(
    graph: Any, input: Any, config: Any, version: str, transformers: Any, kwargs: dict[str, Any]
) -> Any:
    """v3: an awaitable run stream; v1/v2: LangChain's run events (the `events` mode)."""
    if version == "v3":
        return astream_events_v3(graph, input, config, transformers, kwargs)
    if version == "v1":  # deprecated in LangChain too; graphrun has v2's shapes only
        warnings.warn("astream_events version='v1' is deprecated: graphrun streams the v2 "
                      "event shapes", DeprecationWarning, stacklevel=3)
    elif version != "v2":
        raise ValueError("Only version='v1', 'v2' or 'v3' is supported")
    # The run streams the `events` mode whatever `stream_mode` the caller passed on (LangChain
    # hands it to `astream`); the graph run's own `on_chain_stream` chunks stay the `updates`
    # shape (issue 27).
    kwargs = {k: v for k, v in kwargs.items() if k != "stream_mode"}
    keep = EventFilter.take(kwargs)  # LangChain's include_*/exclude_* (issue 27)
    events = graph.astream(input, config, stream_mode="events", **kwargs)
    return events if keep is None else filter_events(events, keep)


def _check_kwargs(kwargs: dict[str, Any]) -> None:
    owned = [k for k in _OWNED_KWARGS if k in kwargs]
    if owned:
        raise TypeError(
            f"stream_events(version='v3') does not accept {', '.join(owned)}: v3 builds the "
            "stream modes from its transformers and always streams subgraphs."
        )


def factories(specs: Sequence[Callable[[tuple[str, ...]], Any]] | None) -> list[TransformerFactory]:
    """Transformer classes or `scope -> transformer` callables; an instance cannot be cloned
    into a subgraph's scope, so it is refused."""
    out: list[TransformerFactory] = []
    for spec in specs or ():
        if isinstance(spec, StreamTransformer):
            raise TypeError(
                "stream_events(version='v3') transformers must be scope-aware callables, got "
                f"pre-built instance {type(spec).__name__}: pass the class, or a factory like "
                "`lambda scope: MyTransformer(scope, ...)`."
            )
        if not callable(spec):
            raise TypeError(
                "stream_events(version='v3') transformers must be scope-aware callables, got "
                f"{type(spec).__name__}."
            )
        out.append(spec)
    return out


def _modes(mux: StreamMux) -> list[str]:
    modes: list[str] = []
    for transformer in mux._transformers:
        for mode in getattr(transformer, "required_stream_modes", ()):
            if mode not in modes:
                modes.append(mode)
    return modes


def _mux(graph: Any, config: Any, transformers: Any, is_async: bool) -> StreamMux:
    return StreamMux(
        factories=[
            *_BUILTINS,
            *factories(getattr(graph, "stream_transformers", ())),
            *factories(transformers),
        ],
        scope=_caller_namespace(config),
        is_async=is_async,
    )


def stream_events_v3(
    graph: Any, input: Any, config: Any, transformers: Any, kwargs: dict[str, Any]
) -> GraphRunStream:
    _check_kwargs(kwargs)
    mux = _mux(graph, config, transformers, False)
    parts = graph.stream(
        input, _protocol_config(config), stream_mode=_modes(mux), subgraphs=True,
        version="v2", **_defaults(kwargs),
    )
    return GraphRunStream(iter(parts), mux)


async def astream_events_v3(
    graph: Any, input: Any, config: Any, transformers: Any, kwargs: dict[str, Any]
) -> AsyncGraphRunStream:
    _check_kwargs(kwargs)
    mux = _mux(graph, config, transformers, True)
    parts = graph.astream(
        input, _protocol_config(config), stream_mode=_modes(mux), subgraphs=True,
        version="v2", **_defaults(kwargs),
    )
    return AsyncGraphRunStream(parts.__aiter__(), mux)


def _caller_namespace(config: Any) -> tuple[str, ...]:
    """The namespace this run's own events carry: `()` at the top, the calling task's
    namespace for a v3 run started inside a node."""
    from .._context import current_scope

    scope = current_scope.get()
    if scope is not None:
        return tuple(scope.task.ns.split("|"))
    ns = ((config or {}).get("configurable") or {}).get("checkpoint_ns")
    return tuple(ns.split("|")) if ns else ()


def _defaults(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The run options v3 always passes on, `None` when the caller gave none (as LangGraph)."""
    return {"interrupt_before": None, "interrupt_after": None, "control": None, **kwargs}


def _protocol_config(config: Any) -> dict[str, Any]:
    """The caller's config, marked so chat models stream content-block events."""
    config = dict(config or {})
    config["configurable"] = {**(config.get("configurable") or {}), PROTOCOL_KEY: True}
    return config
