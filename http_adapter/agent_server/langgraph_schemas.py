"""The schemas of a LangGraph-built graph, as LangGraph describes them (issue 28).

`langgraph dev` asks the graph itself: `get_input_jsonschema`, `get_output_jsonschema`, a
pydantic model of its stream channels for the state, its `configurable` and context schemas.
graphrun's own derivation (routes/assistants.py) reproduces that for graphrun's graphs; for a
graph the real `langgraph` built, the graph is asked the same questions, so the answer is the
reference's for every kind of graph (a functional-API `Pregel`, create_agent's state, the agent
libraries'), not an approximation of it. Nothing here runs a graph.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["entrypoint_schemas", "langgraph_schemas"]

logger = logging.getLogger(__name__)

# what the reference leaves out of a graph's `configurable` schema
_EXCLUDED_CONFIG = ("__pregel_checkpointer", "__pregel_store", "checkpoint_id", "checkpoint_ns",
                    "thread_id")


def langgraph_schemas(graph: Any) -> dict[str, Any]:
    """`input_schema`, `output_schema`, `state_schema`, `config_schema`, `context_schema` of a
    compiled LangGraph graph; one that LangGraph cannot describe is null (logged), as there."""
    return {
        "input_schema": _asked(graph.name, "input", graph.get_input_jsonschema),
        "output_schema": _asked(graph.name, "output", graph.get_output_jsonschema),
        "state_schema": _asked(graph.name, "state", lambda: _state(graph)),
        "config_schema": _asked(graph.name, "config", lambda: _configurable(graph)),
        "context_schema": _asked(graph.name, "context", graph.get_context_jsonschema),
    }


def _asked(name: str, what: str, ask: Callable[[], Any]) -> Any:
    try:
        with warnings.catch_warnings():  # `config_schema` is deprecated in LangGraph 1.x
            warnings.simplefilter("ignore")
            return ask()
    except Exception as error:  # noqa: BLE001 - the reference answers null and logs it too
        logger.warning("Failed to get %s schema for graph %s: %s", what, name, error)
        return None


def _state(graph: Any) -> dict[str, Any]:
    """A model with one optional field per stream channel (its update type, else Any)."""
    # LangChain's create_model (LangGraph depends on langchain-core): it keeps `__end__`-like
    # channel names and root types, which pydantic's own refuses, as the reference's does
    from langchain_core.runnables.utils import create_model

    fields: dict[str, Any] = {}
    for key in graph.stream_channels_list:
        kind = graph.channels[key].UpdateType
        try:
            create_model(key, __root__=(kind, None)).model_json_schema()
        except Exception:  # noqa: BLE001 - pydantic cannot describe it: Any, as the reference
            kind = Any
        fields[key] = (kind, None)
    model = create_model(graph.get_name("State"), **fields)
    return model.model_json_schema()  # type: ignore[no-any-return]


def _configurable(graph: Any) -> dict[str, Any]:
    """The `configurable` part of the graph's config schema, named after its config type."""
    from pydantic import TypeAdapter

    fields = getattr(graph.config_schema(), "model_fields", None) or {}
    if "configurable" not in fields:
        return {}
    schema: dict[str, Any] = TypeAdapter(fields["configurable"].annotation).json_schema()
    if schema:
        for key in _EXCLUDED_CONFIG:
            schema["properties"].pop(key, None)
    name = getattr(getattr(graph, "config_type", None), "__name__", None)
    if name is not None:
        schema["title"] = name
    return schema


def entrypoint_schemas(name: str, input_type: Any, output_type: Any) -> dict[str, Any] | None:
    """graphrun's functional-API graph described as LangGraph describes an `@entrypoint`: its
    input and output types as root models, its state the one `__end__` channel (issue 28:
    `--engine graphrun` answers as `langgraph dev`). None without langchain-core (the server's
    own derivation then stands)."""
    try:
        from langchain_core.runnables.utils import create_model
        from langchain_core.utils.pydantic import create_model_v2
        from pydantic import BaseModel
    except ImportError:
        return None

    def titled(suffix: str) -> str:  # LangGraph's `get_name(suffix)`
        return f"{name}{suffix}" if name[:1].isupper() else f"{name}_{suffix.lower()}"

    def root(suffix: str, kind: Any) -> Any:  # as LangChain's `Runnable.get_input_schema`
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            return kind.model_json_schema()
        return create_model_v2(titled(suffix), root=kind).model_json_schema()

    return {
        "input_schema": _asked(name, "input", lambda: root("Input", input_type)),
        "output_schema": _asked(name, "output", lambda: root("Output", output_type)),
        "state_schema": _asked(name, "state", lambda: create_model(
            titled("State"), __end__=(output_type, None)).model_json_schema()),
    }

