"""The judge's pytest plugin, loaded (`-p judge_plugin`) in both runs of LangGraph's tests (issue 27).

It writes one JSON report per process (`--judge-report PATH`, `PATH.<xdist worker>.json` under
xdist): each test's outcome and error type, and in the shim run (`JUDGE_MODE=shim`) what the test
touched that graphrun does not provide (placeholders used while its file was imported or while
it ran; `__pregel_*` config keys its source names), plus the honesty checks: no `langgraph*`
distribution installed and every `langgraph*` module in `sys.modules` a shim module, at the
start and at the end of the session.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import json
import os
import re
import sys
from typing import Any

import pytest

SHIM = os.environ.get("JUDGE_MODE") == "shim"
_TESTS: dict[str, dict[str, Any]] = {}
_FILES: dict[str, dict[str, Any]] = {}
_HONESTY: dict[str, list[str]] = {}
_KEY = re.compile(r"__pregel_\w+")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--judge-report", default=None, help="where to write the judge's JSON report")


def _dishonest() -> list[str]:
    """Real LangGraph found in the shim run: installed distributions or imported modules."""
    found = [
        f"distribution {d.metadata['Name']}"
        for d in importlib.metadata.distributions()
        if (d.metadata["Name"] or "").lower().startswith("langgraph")
    ]
    for name, module in list(sys.modules.items()):
        if name.split(".")[0].startswith("langgraph") and not getattr(module, "__judge_shim__", False):
            found.append(f"module {name}")
    return found


def pytest_sessionstart(session: pytest.Session) -> None:
    if SHIM:
        _HONESTY["start"] = _dishonest()


def _context(name: str) -> Any:
    import judge_record

    judge_record.CONTEXT.append(name)
    return judge_record


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    module = isinstance(collector, pytest.Module)
    record = _context(collector.nodeid) if SHIM and module else None
    outcome = yield
    if record is not None:
        record.CONTEXT.pop()
    report = outcome.get_result()
    if module and report.failed:
        lines = str(report.longrepr).strip().splitlines()
        _FILES.setdefault(collector.nodeid, {})["error"] = lines[-1][:300] if lines else "?"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Any:
    record = _context(item.nodeid) if SHIM else None
    _TESTS[item.nodeid] = {"outcome": "passed", "file": item.nodeid.split("::")[0]}
    if SHIM:
        _TESTS[item.nodeid]["keys"] = _config_keys(item)
    yield
    if record is not None:
        record.CONTEXT.pop()


def _config_keys(item: pytest.Item) -> list[str]:
    """LangGraph's private config keys (`"__pregel_runtime"`, ...) the test's source names."""
    try:
        source = inspect.getsource(item.function)  # type: ignore[attr-defined]
    except (AttributeError, OSError, TypeError):
        return []
    return sorted(set(_KEY.findall(source)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report = outcome.get_result()
    entry = _TESTS.setdefault(item.nodeid, {"outcome": "passed", "file": item.nodeid.split("::")[0]})
    if entry["outcome"] != "passed":
        return
    if report.failed or (report.skipped and report.when != "teardown"):
        entry["outcome"] = "failed" if report.failed else "skipped"
        if call.excinfo is not None:
            entry["error_type"] = call.excinfo.typename
            entry["message"] = str(call.excinfo.value).strip()[:300]
    elif report.when == "call" and hasattr(report, "wasxfail"):
        entry["outcome"] = "xpassed"


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("--judge-report")
    if not path:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        path = f"{path}.{worker}.json"
    elif session.config.pluginmanager.hasplugin("dsession"):
        return  # the xdist controller: its workers write the reports
    if SHIM:
        _HONESTY["end"] = _dishonest()
        import judge_record

        touched = {ctx: sorted(map(list, names)) for ctx, names in judge_record.TOUCHED.items()}
    else:
        touched = {}
    data = {"tests": _TESTS, "files": _FILES, "touched": touched, "honesty": _HONESTY}
    with open(path, "w") as f:
        json.dump(data, f)
