"""A `langgraph` import shim that re-exports graphrun, for LangGraph's own tests (issue 27).

Honest by construction: every name it hands out is a graphrun object found in the graphrun
modules listed for that LangGraph module in `SOURCES` (or named in `RENAMES`), one of the pure
typing aliases in `ALIASES`, or a `judge_record.Placeholder` that fails (and is recorded) on
first use. Nothing here adapts behaviour. `langgraph.X.Y` modules are built on import by `_ShimFinder`, so every
LangGraph module path imports; a name is classified by `rules.name_kind` ("internal" names do
not count, "missing" public names count as failures).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType  # not `import types`: the submodule langgraph.types would replace it
from typing import Any, Literal

from pydantic import BaseModel

import judge_record
import judge_rules as rules

#: LangGraph module -> the graphrun modules (in order) whose public names it re-exports.
SOURCES: dict[str, tuple[str, ...]] = {
    "langgraph": (),
    "langgraph.graph": ("engine", "engine.graph"),
    "langgraph.graph.state": ("engine", "engine.graph"),
    "langgraph.graph.message": ("engine",),
    "langgraph.types": ("engine.types", "engine"),
    "langgraph.func": ("engine",),
    "langgraph.config": ("engine",),
    "langgraph.errors": ("engine.errors", "engine"),
    "langgraph.constants": ("engine.constants", "engine.types"),
    "langgraph.runtime": ("engine.runtime", "engine"),
    "langgraph.callbacks": ("engine.callbacks",),
    "langgraph.warnings": ("engine.warnings",),
    "langgraph.managed": ("engine.managed",),
    "langgraph.checkpoint.base": ("checkpoints.base", "checkpoints"),
    "langgraph.checkpoint.memory": ("checkpoints.memory", "checkpoints"),
    "langgraph.checkpoint.sqlite": ("checkpoints.sqlite",),
    "langgraph.checkpoint.serde.base": ("checkpoints.serde",),
    "langgraph.checkpoint.serde.jsonplus": ("checkpoints.jsonplus",),  # issue 29
    "langgraph.store.base": ("checkpoints.store",),
    "langgraph.store.memory": ("checkpoints.store",),
    "langgraph.store.sqlite": ("checkpoints.store",),
    "langgraph.cache.base": ("checkpoints.cache",),
    "langgraph.cache.memory": ("checkpoints.cache",),
    "langgraph.stream": ("engine.stream",),  # issue 29: v3 run streams and transformers
    "langgraph.stream.transformers": ("engine.stream",),
    "langgraph.stream.run_stream": ("engine.stream",),
    "langgraph.stream.stream_channel": ("engine.stream",),
    "langgraph.pregel.remote": ("engine.remote",),  # issue 29: the Agent Server client
    "langgraph.prebuilt": ("engine.prebuilt",),
    "langgraph.prebuilt.tool_node": ("engine.prebuilt",),
    "langgraph.prebuilt.chat_agent_executor": ("engine.prebuilt",),
    "langgraph.prebuilt.tool_validator": ("engine.prebuilt",),
}

#: LangGraph names graphrun has under another name: the same role, graphrun's object.
RENAMES: dict[str, dict[str, tuple[str, str]]] = {
    # the serializer interface savers take as `serde` (dumps_typed / loads_typed)
    "langgraph.checkpoint.base": {"SerializerProtocol": ("checkpoints.serde", "Serializer")},
    "langgraph.checkpoint.serde.base": {"SerializerProtocol": ("checkpoints.serde", "Serializer")},
    # issue 29: a stream transformer; graphrun keeps it with the others
    "langgraph.prebuilt": {"ToolCallTransformer": ("engine.stream", "ToolCallTransformer")},
}

#: Pure typing aliases LangGraph defines and graphrun has no object for (no behaviour).
ALIASES: dict[str, dict[str, Any]] = {
    "langgraph.types": {"Durability": Literal["sync", "async", "exit"]},
    "langgraph.prebuilt.chat_agent_executor": {
        "StructuredResponse": dict | BaseModel,
        "StructuredResponseSchema": dict | type[BaseModel],
    },
}


def _public(module: ModuleType) -> set[str]:
    names = getattr(module, "__all__", None)
    return set(names) if names is not None else {n for n in vars(module) if not n.startswith("_")}


def _lookup(shim_name: str, attr: str) -> Any:
    """The graphrun object LangGraph's `shim_name.attr` maps to, else a recording placeholder."""
    if attr in ALIASES.get(shim_name, {}):
        return ALIASES[shim_name][attr]
    if attr in RENAMES.get(shim_name, {}):
        source, name = RENAMES[shim_name][attr]
        return getattr(importlib.import_module(source), name)
    kind = rules.name_kind(shim_name, attr)
    if kind == "public":
        for source in SOURCES.get(shim_name, ()):
            try:
                module = importlib.import_module(source)
            except ImportError:  # engine.prebuilt without langchain-core
                continue
            if attr in _public(module):
                return getattr(module, attr)
        kind = "missing"
    return judge_record.Placeholder(kind, f"{shim_name}.{attr}")


def _imported(source: str) -> ModuleType | None:
    try:
        return importlib.import_module(source)
    except ImportError:  # engine.prebuilt without langchain-core
        return None


def _module_getattr(shim_name: str) -> Any:
    def __getattr__(attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        for source in SOURCES.get(shim_name, ()):
            # a name graphrun still serves with LangGraph's deprecation warning: fetched on
            # every import (not cached), so each import warns as LangGraph's does (issue 29)
            module = sys.modules.get(source) or _imported(source)
            if attr in getattr(module, "__deprecated__", ()):
                return getattr(module, attr)
        value = _lookup(shim_name, attr)
        setattr(sys.modules[shim_name], attr, value)
        return value

    return __getattr__


class _ShimLoader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return ModuleType(spec.name)

    def exec_module(self, module: ModuleType) -> None:
        module.__path__ = []  # every shim module is a package, so any submodule path imports
        module.__judge_shim__ = True
        module.__getattr__ = _module_getattr(module.__name__)  # type: ignore[method-assign]


class _ShimFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if not fullname.startswith("langgraph."):
            return None
        return importlib.machinery.ModuleSpec(fullname, _ShimLoader(), is_package=True)


__judge_shim__ = True
__getattr__ = _module_getattr(__name__)
sys.meta_path.insert(0, _ShimFinder())
