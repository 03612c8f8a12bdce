"""What the JS client tests need (node, the npm packages of js/, Chromium) and how they start
`graphrun dev` on the chat project of js/project/.

`.ci/run` installs all of it; in CI (`CI=true`) a missing tool fails the test, elsewhere it
skips with the command that installs it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

JS_DIR = Path(__file__).resolve().parent / "js"
PROJECT = JS_DIR / "project" / "langgraph.json"
IN_CI = os.environ.get("CI", "").strip().lower() == "true"


def need(ok: bool, reason: str) -> None:
    """Fail in CI, skip elsewhere, when a tool is missing."""
    if ok:
        return
    if IN_CI:
        pytest.fail(f"{reason} (CI installs it in .ci/run)")
    pytest.skip(reason)


def node() -> str:
    found = shutil.which("node")
    need(found is not None, "node is not installed (apt-get install nodejs npm)")
    assert found is not None
    need((JS_DIR / "node_modules" / "@langchain" / "langgraph-sdk").is_dir(),
         f"the JS test packages are not installed (cd {JS_DIR} && npm ci)")
    return found


def chromium() -> str:
    found = shutil.which("chromium")
    need(found is not None, "chromium is not installed (apt-get install chromium)")
    assert found is not None
    return found


def bundle(entry: Path, out: Path) -> None:
    """Bundle a browser script with the SDK through the esbuild of js/node_modules."""
    node()
    esbuild = JS_DIR / "node_modules" / ".bin" / "esbuild"
    subprocess.run([str(esbuild), str(entry), "--bundle", "--format=esm", "--platform=browser",
                    "--log-level=warning", f"--outfile={out}"], cwd=JS_DIR, check=True,
                   timeout=60)
