"""The compiled graph as a LangChain `Runnable` once langchain-core is loaded (issue 29).

LangChain composes and wraps runnables (`|`, `pipe`, `with_retry`, `as_tool`, `bind`, ...)
after checking `isinstance(x, Runnable)`. `import engine` must not import langchain-core, so
the graph cannot inherit from `Runnable`. Instead:

- `RunnableMethods` is registered as a virtual subclass of `Runnable` the first time a graph's
  `__class__` is read with langchain-core loaded, which is what `isinstance` does, so the
  order in which the two packages are imported does not matter;
- a name the graph lacks and `Runnable` has (`pipe`, `with_retry`, `as_tool`, `get_name`...)
  is bound from `Runnable` on first use (`__getattr__`: normal lookup never gets there, so the
  graph's own `invoke`/`stream`/`batch`/`with_config` stay, and running costs nothing);
- `|` needs the dunders on the class itself, so they are defined here.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["RunnableMethods"]

_MODULE = "langchain_core.runnables.base"
_INSTALL = "pip install 'graphrun[langchain]'"
# `Runnable`'s public names (langchain-core 1.x): reaching one imports langchain-core.
_PUBLIC = frozenset((
    "abatch", "abatch_as_completed", "ainvoke", "as_tool", "assign", "astream", "astream_events",
    "astream_log", "atransform", "batch", "batch_as_completed", "bind", "config_schema",
    "config_specs", "get_config_jsonschema", "get_graph", "get_input_jsonschema",
    "get_input_schema", "get_name", "get_output_jsonschema", "get_output_schema", "get_prompts",
    "input_schema", "invoke", "map", "output_schema", "pick", "pipe", "stream", "stream_events",
    "transform", "with_alisteners", "with_config", "with_fallbacks", "with_listeners",
    "with_retry", "with_types",
))
_registered: list[bool] = []
_members_cache: dict[str, Any] = {}


def _runnable() -> Any:
    """`Runnable`, with the graph registered as one of its virtual subclasses."""
    try:
        from langchain_core.runnables import Runnable
    except ImportError as error:
        raise ImportError(f"composing a graph as a Runnable needs langchain-core: {_INSTALL}") \
            from error
    if not _registered:
        Runnable.register(RunnableMethods)
        _registered.append(True)
    return Runnable


def _members() -> dict[str, Any]:
    """`Runnable`'s own methods and properties by name, unbound (dunders aside)."""
    if not _members_cache:
        for cls in reversed(_runnable().__mro__):
            _members_cache.update((k, v) for k, v in vars(cls).items() if k[:2] != "__")
    return _members_cache


class RunnableMethods:
    """LangChain's `Runnable` surface of a compiled graph, bound lazily (issue 29)."""

    __slots__ = ()

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # noqa: D105 - read by `isinstance`
        if not _registered and _MODULE in sys.modules:
            _runnable()
        return type(self)

    def __getattr__(self, name: str) -> Any:
        # Normal lookup failed. Any other name costs one set or dict lookup and no import.
        if name in _PUBLIC or (_MODULE in sys.modules and name in _members()):
            try:
                attr = _members().get(name)
            except ImportError as error:
                raise AttributeError(f"{name!r} needs langchain-core: {_INSTALL}") from error
            if attr is not None:
                return attr.__get__(self, type(self)) if hasattr(attr, "__get__") else attr
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __or__(self, other: Any) -> Any:
        return _runnable().__or__(self, other)

    def __ror__(self, other: Any) -> Any:
        return _runnable().__ror__(self, other)

    @property
    def InputType(self) -> Any:  # noqa: N802 - LangChain's name
        """The input schema, as LangGraph reports its single input channel's type."""
        return getattr(getattr(self, "builder", None), "input_schema", None)

    @property
    def OutputType(self) -> Any:  # noqa: N802 - LangChain's name
        """None, as LangGraph: the output comes from several channels."""
        return None
