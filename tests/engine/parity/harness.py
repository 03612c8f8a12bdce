"""Tools for differential tests: the same scenario runs on LangGraph and on graphrun.

`load_lib(name)` gives a namespace with the same names for both libraries ("lg" = LangGraph 1.2.22,
"gr" = our `engine` + `checkpoints`), so a scenario is written once against `lib.StateGraph` etc.

`Normalizer` turns what a run produces (stream items, invoke results, snapshots, exceptions) into
plain comparable data. Ids that differ from run to run (task ids, checkpoint ids, run ids, interrupt
ids, the id half of "node:<task id>" namespaces) become "<id1>", "<id2>", ... in order of first
appearance, so two transcripts are equal only if the same id shows up in the same places.
Timestamps become "<ts>". Containers keep their type (tuple stays tuple, list stays list).
"""

from __future__ import annotations

import dataclasses
import re
import types
from typing import Any

__all__ = [
    "DELIBERATE_DIFFERENCES",
    "LIBS",
    "Normalizer",
    "Transcript",
    "as_graphrun",
    "first_difference",
    "load_lib",
    "normalize",
]

LIBS = ("lg", "gr")

# Names every scenario may use, grouped by where LangGraph keeps them.
_LG_IMPORTS = {
    "langgraph.graph": ("StateGraph", "START", "END", "MessagesState"),
    "langgraph.graph.message": ("add_messages",),
    "langgraph.types": (
        "Send", "Command", "interrupt", "RetryPolicy", "Interrupt", "Overwrite", "StateUpdate",
    ),
    "langgraph.config": ("get_stream_writer",),
    "langgraph.checkpoint.memory": ("InMemorySaver",),
    "langgraph.errors": ("GraphRecursionError", "InvalidUpdateError"),
    "langgraph.func": ("entrypoint", "task"),
    "langgraph.managed": ("RemainingSteps", "IsLastStep"),
    "langgraph.prebuilt": (
        "ToolNode", "tools_condition", "create_react_agent", "InjectedState", "InjectedStore",
        "ToolRuntime", "ValidationNode",
    ),
    "langgraph.store.memory": ("InMemoryStore",),
}
# Where graphrun keeps the names of a LangGraph module (default: `engine`).
_GR_MODULES = {
    "langgraph.checkpoint.memory": "checkpoints",
    "langgraph.managed": "engine.managed",
    "langgraph.prebuilt": "engine.prebuilt",
    "langgraph.store.memory": "checkpoints.store",
}


def load_lib(name: str) -> types.SimpleNamespace:
    """Import one library's names into a namespace. Import errors propagate (the test fails)."""
    import importlib

    ns = types.SimpleNamespace(name=name)
    for module, names in _LG_IMPORTS.items():
        if name == "lg":
            mod = importlib.import_module(module)
        else:
            mod = importlib.import_module(_GR_MODULES.get(module, "engine"))
        for attr in names:
            setattr(ns, attr, getattr(mod, attr))
    return ns


_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_UUID_RE = re.compile(_UUID)
_HEX32_RE = re.compile(r"^[0-9a-f]{32}$")
_TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}")
# one "name:id" namespace segment whose id looks generated (uuid or a long hex/dash run)
_NS_SEGMENT_RE = re.compile(r"^([^:|]+):([0-9a-fA-F-]{16,})$")
# dict keys whose string values are generated ids whatever their format
_ID_KEYS = frozenset({"checkpoint_id", "run_id", "task_id", "parent_checkpoint_id"})
_TASK_KEYS = frozenset({"input", "result", "triggers", "interrupts", "error"})
_TS_KEYS = frozenset({"timestamp", "created_at", "updated_at", "ts"})


def _is_message(obj: Any) -> bool:
    cls = type(obj)
    return (
        hasattr(obj, "content")
        and hasattr(obj, "type")
        and any(c.__name__ == "BaseMessage" for c in cls.__mro__)
    )


class Normalizer:
    """Stateful normalizer: one per transcript, so placeholders are shared across its items."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def placeholder(self, raw: str) -> str:
        if raw not in self.ids:
            self.ids[raw] = f"<id{len(self.ids) + 1}>"
        return self.ids[raw]

    def string(self, s: str) -> str:
        if _TS_RE.match(s):
            return "<ts>"
        if _HEX32_RE.match(s):
            return self.placeholder(s)
        if "|" in s or ":" in s:
            parts = s.split("|")
            matches = [_NS_SEGMENT_RE.match(p) for p in parts]
            if all(matches):
                return "|".join(f"{m.group(1)}:{self.placeholder(m.group(2))}" for m in matches)  # type: ignore[union-attr]
        return _UUID_RE.sub(lambda m: self.placeholder(m.group(0)), s)

    def __call__(self, obj: Any) -> Any:
        return self.norm(obj)

    def norm(self, obj: Any) -> Any:
        if obj is None or isinstance(obj, (bool, int, float)):
            return obj
        if isinstance(obj, str):
            return self.string(obj)
        if isinstance(obj, BaseException):
            # LangGraph appends links to its own docs; the message before them must match.
            first = str(obj).split("\n")[0]
            return ("raised", type(obj).__name__, re.sub(r"\s*Docs: https?://\S+$", "", first))
        cls_name = type(obj).__name__
        if cls_name == "Interrupt" and hasattr(obj, "value"):
            return ("Interrupt", self.norm(obj.value))
        if cls_name == "Send" and hasattr(obj, "node"):
            return ("Send", obj.node, self.norm(obj.arg))
        if _is_message(obj):
            return (cls_name, self.norm(obj.content), self.norm(obj.id))
        if isinstance(obj, dict):
            return self.mapping(obj)
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # NamedTuple (StateSnapshot, ...)
            return self.mapping(dict(zip(obj._fields, obj)))
        if isinstance(obj, tuple):
            return tuple(self.norm(x) for x in obj)
        if isinstance(obj, list):
            return [self.norm(x) for x in obj]
        if isinstance(obj, (set, frozenset)):
            return sorted((self.norm(x) for x in obj), key=repr)
        if hasattr(obj, "__struct_fields__"):  # msgspec.Struct
            return self.mapping({f: getattr(obj, f) for f in obj.__struct_fields__})
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            fields = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
            return ("dataclass", cls_name, self.mapping(fields))
        return ("object", cls_name)

    def mapping(self, d: dict[Any, Any]) -> dict[Any, Any]:
        task_like = "id" in d and "name" in d and bool(_TASK_KEYS & d.keys())
        out: dict[Any, Any] = {}
        for k, v in d.items():
            key = self.norm(k)
            if isinstance(v, str) and (k in _ID_KEYS or (task_like and k == "id")):
                out[key] = self.placeholder(v)
            elif isinstance(v, str) and k in _TS_KEYS:
                out[key] = "<ts>"
            else:
                out[key] = self.norm(v)
        return out


def normalize(obj: Any) -> Any:
    """Normalize one object with a fresh id table."""
    return Normalizer().norm(obj)


# Where graphrun deliberately differs from LangGraph 1.2.22 in what a transcript shows: each one
# is also in docs/differences.md. `as_graphrun` applies them to LangGraph's transcript,
# so the comparison still checks that graphrun shows them, exactly there and nowhere else.
DELIBERATE_DIFFERENCES = {
    "graph_node": "`messages` metadata also carries `graph_node`, equal to `langgraph_node` "
    "(the seed's name for it; issue 17, SPEC §1)",
}


def _is_message_row(obj: Any) -> bool:
    """A normalized `(message, metadata)` pair of the `messages` stream mode (a scenario may
    normalize the message itself in its own way; the metadata is LangGraph's)."""
    return (
        isinstance(obj, tuple)
        and len(obj) == 2
        and isinstance(obj[0], tuple)
        and isinstance(obj[1], dict)
        and "langgraph_node" in obj[1]
        and "langgraph_step" in obj[1]
    )


def _with_graph_node(obj: Any) -> Any:
    if _is_message_row(obj):
        message, meta = obj
        return (message, {**meta, "graph_node": meta["langgraph_node"]})
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return tuple(_with_graph_node(x) for x in obj)
    if isinstance(obj, list):
        return [_with_graph_node(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _with_graph_node(v) for k, v in obj.items()}
    return obj


def as_graphrun(items: list[Any]) -> list[Any]:
    """LangGraph's normalized transcript with graphrun's DELIBERATE_DIFFERENCES applied."""
    return [_with_graph_node(item) for item in items]


def _deep_difference(a: Any, b: Any, path: str) -> tuple[str, Any, Any] | None:
    """The path of the first leaf where `a` and `b` differ, or None when they are equal."""
    if a == b:
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return (f"{path}[{k!r}]", a.get(k, "<missing>"), b.get(k, "<missing>"))
            found = _deep_difference(a[k], b[k], f"{path}[{k!r}]")
            if found:
                return found
    if type(a) is type(b) and isinstance(a, (list, tuple)) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            found = _deep_difference(x, y, f"{path}[{i}]")
            if found:
                return found
    return (path, a, b)


def first_difference(a: list[Any], b: list[Any]) -> str:
    """Describe where two transcripts first differ (for assertion messages)."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            where = _deep_difference(x, y, "")
            detail = f"\n  at {where[0]}:\n    lg: {where[1]!r}\n    gr: {where[2]!r}" if where else ""
            return f"first difference at item {i}:\n  lg: {x!r}\n  gr: {y!r}{detail}"
    if len(a) != len(b):
        longer, who = (a, "lg") if len(a) > len(b) else (b, "gr")
        return f"{who} has {abs(len(a) - len(b))} extra item(s), first: {longer[min(len(a), len(b))]!r}"
    return "no difference"


class Transcript:
    """Collects normalized items of one scenario run under short labels."""

    def __init__(self) -> None:
        self.norm = Normalizer()
        self.items: list[tuple[str, Any]] = []

    def add(self, label: str, obj: Any) -> None:
        self.items.append((label, self.norm(obj)))

    def stream(self, label: str, graph: Any, inp: Any, config: Any = None, **kw: Any) -> None:
        """Record every item of `graph.stream(...)`, then the exception if one ends it."""
        try:
            for item in graph.stream(inp, config, **kw):
                self.add(label, item)
        except Exception as e:  # noqa: BLE001 - the error is part of the transcript
            self.add(label, e)

    def call(self, label: str, fn: Any, *args: Any, **kw: Any) -> Any:
        """Record `fn(*args, **kw)` or the exception it raises; return the raw result."""
        try:
            result = fn(*args, **kw)
        except Exception as e:  # noqa: BLE001
            self.add(label, e)
            return None
        self.add(label, result)
        return result

    def state(self, label: str, graph: Any, config: Any, **kw: Any) -> Any:
        """Record a StateSnapshot (all fields)."""
        return self.call(label, graph.get_state, config, **kw)
