"""Re-record the parity snapshots from `langgraph dev` (issue 18).

`python -m tests.http_adapter.parity.record [--langgraph-cli PATH] [--check] [-k EXPR]`

Starts `langgraph dev` (langgraph-cli[inmem] in its own venv: --langgraph-cli, else
$GRAPHRUN_PARITY_LANGGRAPH_CLI, else `langgraph` on PATH) on a copy of app/, runs the parity
tests against it with --snapshot-update, and stops it; the template projects
(test_templates.py) and the LangGraph projects (test_projects.py, issue 28) get a `langgraph dev`
each. `--check` compares instead of writing:
run it after a recording to see whether the reference itself is deterministic.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .servers import Server

_HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.http_adapter.parity.record")
    parser.add_argument("--langgraph-cli", default=os.environ.get("GRAPHRUN_PARITY_LANGGRAPH_CLI")
                        or shutil.which("langgraph"))
    parser.add_argument("--check", action="store_true", help="compare, do not write snapshots")
    parser.add_argument("-k", default=None, help="only scenarios matching this pytest -k expression")
    args = parser.parse_args(argv)
    if not args.langgraph_cli:
        parser.error("no `langgraph` executable: pass --langgraph-cli PATH")
    server = Server(langgraph=args.langgraph_cli)
    try:
        # test_templates.py and test_projects.py start a reference per project themselves
        # (issues 31, 28)
        command = [sys.executable, "-m", "pytest", "-q", "-n0", "-p", "no:randomly",
                   str(_HERE / "test_parity.py"), str(_HERE / "test_templates.py"),
                   str(_HERE / "test_projects.py")]
        command += [] if args.check else ["--snapshot-update"]
        command += ["-k", args.k] if args.k else []
        env = {**os.environ, "PARITY_REFERENCE_URL": server.url,
               "PARITY_REFERENCE_CLI": args.langgraph_cli}
        return subprocess.call(command, cwd=_HERE.parents[2], env=env)
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
