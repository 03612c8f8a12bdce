"""Tool arguments the model never sees: graph state, the store, the tool runtime (issue 17).

LangChain leaves `InjectedToolArg`-annotated arguments out of the schema it shows the model;
`ToolNode` fills them in before calling the tool. The markers and the `ToolRuntime` argument
behave as LangGraph's (langgraph-prebuilt 1.1): `InjectedState` (whole state or one field),
`InjectedStore`, and a parameter typed `ToolRuntime` (or named `runtime`).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from typing import Annotated, Any, Generic, TypeVar, get_args, get_origin, get_type_hints

from langchain_core.tools import BaseTool, InjectedToolArg
from langchain_core.tools.base import _DirectlyInjectedToolArg, get_all_basemodel_annotations

from .._lc_tools import tool_output_writer

__all__ = ["InjectedState", "InjectedStore", "Injections", "ToolRuntime", "injections_of"]

ContextT = TypeVar("ContextT")
StateT = TypeVar("StateT")


@dataclasses.dataclass
class ToolRuntime(_DirectlyInjectedToolArg, Generic[ContextT, StateT]):
    """What a tool parameter typed `ToolRuntime` receives: the call's state, id and config,
    plus the run's context, store and stream writer. LangChain keeps it out of the schema
    (a directly injected argument), so the model never fills it."""

    state: StateT
    context: ContextT
    config: dict[str, Any]
    stream_writer: Callable[[Any], None]
    tool_call_id: str | None
    store: Any
    tools: list[BaseTool] = dataclasses.field(default_factory=list)
    execution_info: Any = None
    server_info: Any = None

    def emit_output_delta(self, delta: Any) -> None:
        """Stream `delta` as a `tool-output-delta` event of this tool call (issue 29).

        A no-op when the run does not stream the `tools` mode, so tools can call it always.
        """
        write = tool_output_writer()
        if write is not None:
            write(delta)


class InjectedState(InjectedToolArg):
    """`Annotated[dict, InjectedState]` receives the graph state;
    `Annotated[T, InjectedState("key")]` receives one key of it."""

    def __init__(self, field: str | None = None) -> None:
        self.field = field


class InjectedStore(InjectedToolArg):
    """`Annotated[Any, InjectedStore()]` receives the store the graph was compiled with."""


@dataclasses.dataclass(frozen=True)
class Injections:
    """Which parameters of one tool are injected, found once when the `ToolNode` is built."""

    state: dict[str, str | None]  # parameter -> state key (None: the whole state)
    store: str | None
    runtime: str | None
    keys: frozenset[str]  # every injected parameter: a model's value for them is dropped
    optional_state: frozenset[str]  # state parameters with a default: a missing key is fine

    def __bool__(self) -> bool:
        return bool(self.state or self.store or self.runtime or self.keys)


def _marker(hint: Any, kind: type) -> Any:
    """The `kind` marker a hint carries (an instance, or True for the bare class), or None."""
    if isinstance(hint, kind) or (isinstance(hint, type) and issubclass(hint, kind)):
        return True if isinstance(hint, type) else hint
    origin = get_origin(hint)
    if origin is Annotated or origin is typing.Union:
        found = [m for m in (_marker(a, kind) for a in get_args(hint)) if m is not None]
        if len(found) > 1 and origin is Annotated:
            raise ValueError(
                f"A tool argument should not be annotated with {kind.__name__} more than once. "
                f"Found: {found}"
            )
        return found[0] if found else None
    if isinstance(origin, type) and issubclass(origin, kind):
        return True
    return None


def _is_injected(hint: Any) -> bool:
    origin = get_origin(hint)
    direct = hint if isinstance(hint, type) else origin
    if isinstance(direct, type) and issubclass(direct, _DirectlyInjectedToolArg):
        return True
    return any(
        isinstance(a, InjectedToolArg) or (isinstance(a, type) and issubclass(a, InjectedToolArg))
        for a in get_args(hint)[1:]
    )


def injections_of(tool: BaseTool) -> Injections:
    """Read a tool's injected parameters from its input schema and its function's hints."""
    schema = tool.get_input_schema()
    func = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    hints = get_type_hints(func, include_extras=True) if func else {}
    hints.update(get_all_basemodel_annotations(schema))
    state: dict[str, str | None] = {}
    optional: set[str] = set()
    store = runtime = None
    keys = set()
    for name, hint in hints.items():
        if _is_injected(hint):
            keys.add(name)
        if name == "runtime" or _marker(hint, ToolRuntime) is not None:
            runtime = name
        marker = _marker(hint, InjectedState)
        if marker is not None:
            state[name] = marker.field if isinstance(marker, InjectedState) else None
            field = schema.model_fields.get(name) if hasattr(schema, "model_fields") else None
            if state[name] and field is not None and not field.is_required():
                optional.add(name)
        if _marker(hint, InjectedStore) is not None:
            store = name
    return Injections(state, store, runtime, frozenset(keys), frozenset(optional))


def inject(
    call: dict[str, Any], injections: Injections, runtime: ToolRuntime, messages_key: str
) -> dict[str, Any]:
    """The tool call with its injected arguments filled in (any value the model gave for
    them is dropped, so a model cannot forge them)."""
    added: dict[str, Any] = {}
    if injections.state:
        added.update(_state_args(call, injections, runtime.state, messages_key))
    if injections.store:
        if runtime.store is None:
            raise ValueError(
                "Cannot inject store into tools with InjectedStore annotations - "
                "please compile your graph with a store."
            )
        added[injections.store] = runtime.store
    if injections.runtime:
        added[injections.runtime] = runtime
    args = {k: v for k, v in call["args"].items() if k not in injections.keys}
    return {**call, "args": {**args, **added}}


def _state_args(
    call: dict[str, Any], injections: Injections, state: Any, messages_key: str
) -> dict[str, Any]:
    wanted = list(injections.state.values())
    if isinstance(state, list):  # a ToolNode fed a bare message list
        if (len(wanted) == 1 and wanted[0] == messages_key) or wanted[0] is None:
            state = {messages_key: state}
        else:
            message = (
                f"Invalid input to ToolNode. Tool {call['name']} requires graph state dict as "
                "input."
            )
            if any(wanted):
                message += f" State should contain fields {', '.join(f for f in wanted if f)}."
            raise ValueError(message)
    out: dict[str, Any] = {}
    for arg, key in injections.state.items():
        if not key:
            out[arg] = state
        elif isinstance(state, dict):
            if key in state:
                out[arg] = state[key]
            elif arg not in injections.optional_state:
                raise KeyError(key)
        elif hasattr(state, key):
            out[arg] = getattr(state, key)
        elif arg not in injections.optional_state:
            raise AttributeError(key)
    return out
