"""The judge's classification rules, as code (issue 27).

A LangGraph name is *internal* when a user could not be expected to rely on it:
- its module path has a private part (`langgraph._internal._config`, `langgraph.pregel._algo`),
  or is one of LangGraph's machinery modules (`langgraph.channels.*`, `langgraph.pregel*` except
  `langgraph.pregel.remote`, `langgraph.checkpoint.serde.types`, `langgraph.stream._*`);
- or the name is private (`_messages_delta_reducer`), a `CONFIG_KEY_*` constant, or one of the
  internal constants LangGraph keeps in `langgraph.constants` (`TASKS`, `CONF`, `PULL`, ...).
Every other name of a `langgraph.*` module is *public*: the shim maps it onto graphrun or, when
graphrun lacks it, hands out a placeholder of kind "missing".

A collected test is then, given its result on LangGraph 1.2.22 and what it touched on graphrun:
- "langgraph_fails": it did not pass on LangGraph (failed, skipped, xfailed): ignored;
- "internal": it touched an internal name (a placeholder used during the test or while its file
  was imported, or a `__pregel_*` config key named in its source): listed with the names, not
  counted. Importing a name is not touching it: test files import internals that only some of
  their tests use, and one such import must not hide the file's other tests;
- "passed": it passed on graphrun and touched no missing public name;
- "failed": anything else (a failure, an error, a skip, or a missing public name touched).
"""

from __future__ import annotations

from typing import Any

INTERNAL_MODULES = (
    "langgraph.channels",
    "langgraph.pregel",
    "langgraph.checkpoint.serde.types",
)
PUBLIC_UNDER_INTERNAL = ("langgraph.pregel.remote",)
INTERNAL_CONSTANTS = frozenset(
    {"CONF", "TASKS", "PREVIOUS", "ERROR", "INTERRUPT", "INPUT", "NO_WRITES", "NULL_TASK_ID",
     "OVERWRITE", "PULL", "PUSH", "RESUME", "RETURN", "SELF", "MISSING", "NS_SEP", "NS_END"}
)


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def module_is_internal(module: str) -> bool:
    if any(part.startswith("_") for part in module.split(".")):
        return True
    return _under(module, INTERNAL_MODULES) and not _under(module, PUBLIC_UNDER_INTERNAL)


def name_kind(module: str, name: str) -> str:
    """"internal" or "public" for LangGraph's `module.name` (see the module docstring)."""
    if module_is_internal(module) or name.startswith("_"):
        return "internal"
    if name.startswith("CONFIG_KEY_") or name in INTERNAL_CONSTANTS:
        return "internal"
    return "public"


def classify(test: dict[str, Any], baseline: str | None, file_touched: list[list[str]]) -> dict[str, Any]:
    """The verdict for one test: its shim-run record, its outcome on LangGraph, its file's touches."""
    if baseline != "passed":
        return {"verdict": "langgraph_fails", "baseline": baseline}
    touched = {tuple(t) for t in test.get("touched", [])} | {tuple(t) for t in file_touched}
    internal = sorted(name for kind, name in touched if kind == "internal")
    internal += [f"config key {key}" for key in test.get("keys", [])]
    if internal:
        return {"verdict": "internal", "names": internal}
    missing = sorted(name for kind, name in touched if kind == "missing")
    if test.get("outcome") in ("passed", "xpassed") and not missing:
        return {"verdict": "passed"}
    error = test.get("error_type") or test.get("outcome")
    return {"verdict": "failed", "error_type": error, "message": test.get("message", ""), "missing": missing}
