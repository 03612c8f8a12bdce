"""`--engine graphrun` (issue 28 item 2): a project's unchanged `langgraph.*` imports served by
graphrun's objects, so its graphs run on graphrun's engine without edits.

Only LangGraph's public API maps (the modules in `SOURCES`, the table of docs/porting.md); a
project that imports anything else (`langgraph.pregel`, `langgraph.channels`, `_internal`, or a
public name graphrun lacks) fails while its graphs load, with an error naming the name and the
file that used it, never at its first run. The mapping is in force only while the project's
graph modules import (`graphrun_imports()`), so the process's real `langgraph` (if installed)
stays untouched for everything else; a library the project imports then (LangChain's agents,
langgraph-supervisor) meets the same mapping and is refused the same way when it reaches past
the public API.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

__all__ = ["ENGINES", "UnsupportedLangGraphName", "graphrun_imports"]

ENGINES = ("auto", "graphrun")  # auto: each graph on the runtime of the package that built it

#: LangGraph's public modules -> graphrun modules (in order) whose public names they offer.
SOURCES: dict[str, tuple[str, ...]] = {
    "langgraph": (),
    "langgraph.graph": ("engine", "engine.graph"),
    "langgraph.graph.state": ("engine", "engine.graph"),
    "langgraph.graph.message": ("engine",),
    "langgraph.types": ("engine.types", "engine"),
    "langgraph.func": ("engine",),
    "langgraph.config": ("engine",),
    "langgraph.errors": ("engine.errors", "engine"),
    "langgraph.constants": ("engine.types", "engine"),
    "langgraph.runtime": ("engine.runtime", "engine"),
    "langgraph.callbacks": ("engine.callbacks",),
    "langgraph.warnings": ("engine.warnings",),
    "langgraph.stream": ("engine.stream",),
    "langgraph.stream.run_stream": ("engine.stream",),
    "langgraph.stream.stream_channel": ("engine.stream",),
    "langgraph.stream.transformers": ("engine.stream",),
    "langgraph.managed": ("engine.managed",),
    "langgraph.prebuilt": ("engine.prebuilt",),
    "langgraph.prebuilt.chat_agent_executor": ("engine.prebuilt",),
    "langgraph.prebuilt.tool_node": ("engine.prebuilt",),
    "langgraph.prebuilt.tool_validator": ("engine.prebuilt",),
    "langgraph.pregel": (),  # only its public `remote` submodule maps
    "langgraph.pregel.remote": ("engine.remote",),  # issue 29: a graph calling a served graph
    "langgraph.checkpoint": (),
    "langgraph.checkpoint.memory": ("checkpoints.memory", "checkpoints"),
    "langgraph.checkpoint.sqlite": ("checkpoints.sqlite", "checkpoints"),
    "langgraph.store": (),
    "langgraph.store.base": ("checkpoints.store",),
    "langgraph.store.memory": ("checkpoints.store",),
    "langgraph.cache": (),
    "langgraph.cache.memory": ("checkpoints.cache", "checkpoints"),
}


class UnsupportedLangGraphName(ImportError):
    """A project reached a LangGraph name graphrun's engine does not provide."""


def _public(module: ModuleType) -> dict[str, Any]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return {n: getattr(module, n) for n in names if hasattr(module, n)}


def _importer() -> str:
    """Where the import being refused was written: the first frame outside the import
    machinery and this module (the project's file, or a library's it imported)."""
    frame = sys._getframe(1)
    while frame is not None and (frame.f_code.co_filename == __file__
                                 or frame.f_code.co_filename.startswith("<frozen")):
        frame = frame.f_back
    return f"{frame.f_code.co_filename}, line {frame.f_lineno}" if frame else "an unknown file"


def _refusal(what: str) -> UnsupportedLangGraphName:
    return UnsupportedLangGraphName(
        f"{what} (imported at {_importer()}) is not provided by graphrun's engine "
        "(only LangGraph's public API is, see "
        "docs/porting.md); serve this project without `--engine graphrun` to run it on "
        "LangGraph's runtime"
    )


def _missing(module_name: str) -> Any:
    def __getattr__(attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        raise _refusal(f"`{module_name}.{attr}`")

    return __getattr__


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return ModuleType(spec.name)

    def exec_module(self, module: ModuleType) -> None:
        name = module.__name__
        module.__path__ = []  # a package: its public submodules import through the finder
        for source in SOURCES[name]:
            try:
                found = importlib.import_module(source)
            except ImportError:  # engine.prebuilt without langchain-core
                continue
            for attr, value in _public(found).items():
                module.__dict__.setdefault(attr, value)
        module.__getattr__ = _missing(name)  # type: ignore[method-assign]


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "langgraph" and not fullname.startswith("langgraph."):
            return None
        if fullname not in SOURCES:
            raise _refusal(f"module `{fullname}`")
        return importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=True)


def _langgraph_modules() -> dict[str, ModuleType]:
    return {k: v for k, v in sys.modules.items()
            if k == "langgraph" or k.startswith("langgraph.")}


@contextlib.contextmanager
def graphrun_imports() -> Iterator[None]:
    """While open, `import langgraph...` gives graphrun's objects (or refuses the name); on
    leaving, the process's own `langgraph` modules (if any were imported) are back."""
    real = _langgraph_modules()
    for name in real:
        del sys.modules[name]
    finder = _Finder()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in _langgraph_modules():
            del sys.modules[name]
        sys.modules.update(real)
