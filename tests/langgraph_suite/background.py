"""One background run of the judge per pytest session, shared by the xdist workers (issue 27).

The run's directory is named by xdist's `testrunuid` (the same in every worker of one session),
so the worker that creates it first starts the harness and whichever worker runs the judge test
waits for the same result. Without xdist each session gets its own directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.langgraph_suite import harness

JUDGE_TEST = "test_judge.py::test_langgraph_suite_on_graphrun"
_LOCAL_RUN = uuid.uuid4().hex


def run_dir(config: pytest.Config) -> Path:
    workerinput = getattr(config, "workerinput", None)
    run_id = workerinput["testrunuid"] if workerinput else _LOCAL_RUN
    return harness.RUNS / f"session-{run_id}"


def start(config: pytest.Config) -> None:
    """Start the CI subset of the judge once for this session (a no-op if another worker did)."""
    directory = run_dir(config)
    directory.parent.mkdir(parents=True, exist_ok=True)
    _prune(directory.parent)
    try:
        directory.mkdir()
    except FileExistsError:
        return
    command = [sys.executable, "-m", "tests.langgraph_suite.harness", "--subset", "ci", "--jobs", "0",
               "--report", str(directory / "report.json"), "--done", str(directory / "exit-status")]
    with open(directory / "output.txt", "w") as out:
        subprocess.Popen(command, cwd=harness.REPO, stdout=out, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, start_new_session=True, env=_environ())


def _prune(runs: Path) -> None:
    """Drop the logs of sessions older than a day."""
    for old in runs.glob("session-*"):
        if time.time() - old.stat().st_mtime > 86400:
            shutil.rmtree(old, ignore_errors=True)


def _environ() -> dict[str, str]:
    environ = dict(os.environ)
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_CURRENT_TEST"):
        environ.pop(name, None)
    return environ


def wait(config: pytest.Config, deadline: float) -> tuple[int, str, dict[str, Any] | None]:
    """(exit status, printed output, report) of this session's run, once it has finished."""
    directory = run_dir(config)
    if not directory.exists():
        start(config)
    status = directory / "exit-status"
    while not status.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the judge did not finish: see {directory / 'output.txt'}")
        time.sleep(1)
    output = (directory / "output.txt").read_text()
    report_path = directory / "report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else None
    return int(status.read_text()), output, report
