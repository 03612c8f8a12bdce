"""`graphrun dev|serve` with langgraph.json's `http` section (issue 18): the start-up warning
for ignored keys, `http.cors` for `serve`, and Private Network Access preflights for `dev` only."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .test_cli import EXAMPLE, Running, graphrun_command, running  # noqa: F401 (a fixture)

CORS = {"allow_origins": ["https://app.test"], "allow_methods": ["POST"],
        "allow_headers": ["content-type"], "max_age": 5}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    config = json.loads((EXAMPLE / "langgraph.json").read_text())
    for path in config["graphs"].values():
        name = path.split(":")[0].removeprefix("./")
        shutil.copy(EXAMPLE / name, root / name)
    config["http"] = {"cors": CORS, "mount_prefix": "/api"}
    config["encryption"] = {"path": "./enc.py:encryption"}
    config["python_version"] = "3.12"
    (root / "langgraph.json").write_text(json.dumps(config))
    return root


def _preflight(url: str, origin: str, private: bool = False) -> httpx.Response:
    asked = {"Access-Control-Request-Private-Network": "true"} if private else {}
    return httpx.options(f"{url}/threads", headers={
        "Origin": origin, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type", **asked})


def test_serve_warns_of_ignored_keys_and_applies_http_cors(project: Path,
                                                           running: list[Running]) -> None:
    server = Running(["serve", "--port", "0", "--in-memory"], cwd=project)
    running.append(server)
    warning = next(line for line in server.output if "warning" in line)
    assert warning.strip() == (f"graphrun: warning: {project / 'langgraph.json'}: not supported, "
                               "ignored: encryption, http.mount_prefix")
    allowed = _preflight(server.url, "https://app.test")
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://app.test"
    assert allowed.headers["access-control-max-age"] == "5"
    assert _preflight(server.url, "https://other.test").status_code == 400
    # Private Network Access is `dev`'s (a public page calling a server on loopback)
    assert _preflight(server.url, "https://app.test", private=True).status_code == 400


def test_dev_answers_private_network_preflights(project: Path, running: list[Running]) -> None:
    server = Running(["dev", "--port", "0", "--in-memory"], cwd=project)
    running.append(server)
    answer = _preflight(server.url, "https://app.test", private=True)
    assert answer.status_code == 200
    assert answer.headers["access-control-allow-private-network"] == "true"


def test_bad_http_section_exits_1(project: Path, running: list[Running]) -> None:
    config = json.loads((project / "langgraph.json").read_text())
    config["http"] = {"cors": {"allow_origins": "*"}}
    (project / "langgraph.json").write_text(json.dumps(config))
    done = subprocess.run([*graphrun_command(), "serve", "--port", "0"], cwd=project,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert done.stderr.strip().endswith("http.cors.allow_origins: must be a list of strings")
