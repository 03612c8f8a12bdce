"""Every public method of the installed Python `langgraph-sdk`, and of the JS client of js/, is
exercised by the SDK parity scenarios (`parity/scenarios/sdk_methods.py`, `js/sdk_methods.mjs`,
replayed against `graphrun dev` and compared with `langgraph dev`'s recording) or listed there
as skipped with its reason (issue 31). A new SDK version with a new method fails here until the
method gets a row."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from langgraph_sdk import get_client, get_sync_client

from .js_tools import JS_DIR, node
from .parity.scenarios.sdk_methods import CLIENT_METHODS, RESOURCES, SKIPPED, STEPS


def _public(obj: Any) -> set[str]:
    return {name for name in dir(obj) if not name.startswith("_") and callable(getattr(obj, name))}


def _methods(client: Any) -> set[str]:
    """`resource.method` for every resource attribute of the client."""
    found = set()
    for resource in sorted(set(vars(client)) - {"close", "aclose"}):
        if resource.startswith("_"):
            continue
        found |= {f"{resource}.{name}" for name in _public(getattr(client, resource))}
    return found


@pytest.mark.parametrize("make", [get_sync_client, get_client], ids=["sync", "async"])
def test_every_sdk_method_is_a_row_or_skipped(make: Any) -> None:
    client = make(url="http://127.0.0.1:9", api_key=None)
    rows = [name for name, _ in STEPS]
    assert len(rows) == len(set(rows)), "one row per method"
    assert not set(rows) & set(SKIPPED)
    assert {name.partition(".")[0] for name in _methods(client)} == set(RESOURCES)
    assert _methods(client) == set(rows) | set(SKIPPED)
    assert _public(client) - set(RESOURCES) <= set(CLIENT_METHODS)


def test_the_check_sees_a_new_method() -> None:
    """The enumeration is not vacuous: a method added to a resource shows up in it."""
    client = get_sync_client(url="http://127.0.0.1:9", api_key=None)
    type(client.threads).brand_new = lambda self: None  # type: ignore[attr-defined]
    try:
        assert "threads.brand_new" in _methods(client)
    finally:
        del type(client.threads).brand_new  # type: ignore[attr-defined]


def test_every_js_sdk_method_is_a_row_or_skipped() -> None:
    """The same check for the JS client of js/ (js/sdk_methods.mjs holds its rows)."""
    listed = subprocess.run([node(), "sdk_methods.mjs", "--list"], cwd=JS_DIR,
                            capture_output=True, text=True, timeout=30, check=True)
    seen = json.loads(listed.stdout)
    rows, skipped = seen["rows"], set(seen["skipped"])
    assert len(rows) == len(set(rows)) and not set(rows) & skipped
    assert {"assistants.create", "threads.joinStream", "~ui.getComponent"} <= set(rows)
    assert set(seen["methods"]) == set(rows) | skipped
