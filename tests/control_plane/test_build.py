"""Build helpers and the graph check subprocess."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from http_adapter.control_plane._build import (
    RevisionLog,
    config_file,
    copy_tree,
    local_path,
    redact_url,
)
from http_adapter.control_plane.errors import BuildFailed

from .conftest import write_project


def _check(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "http_adapter.control_plane.buildcheck", str(config)],
                          capture_output=True, text=True, cwd=config.parent, timeout=60,
                          check=False)


def test_buildcheck_passes_graphs_that_compile(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p")
    (project / "factory.py").write_text(
        "from agent import builder\n\nasync def make(config):\n    return builder\n")
    (project / "langgraph.json").write_text(
        '{"graphs": {"agent": "./agent.py:graph", "made": "./factory.py:make"}}')
    done = _check(project / "langgraph.json")
    assert done.returncode == 0, done.stdout
    assert "graph 'agent': ok (1 node(s))" in done.stdout and "graph 'made': ok" in done.stdout


def test_buildcheck_names_what_failed(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", broken=True)
    done = _check(project / "langgraph.json")
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1].startswith("FAILED: graph 'agent': ValueError:")
    (project / "agent.py").write_text("import does_not_exist\n")
    done = _check(project / "langgraph.json")
    assert done.returncode == 1 and "does_not_exist" in done.stdout.splitlines()[-1]
    (project / "langgraph.json").write_text('{"graphs": {}}')
    assert _check(project / "langgraph.json").stdout.startswith("FAILED: ")
    (project / "langgraph.json").write_text('{"graphs": {"f": "./agent.py:nothing"}}')
    (project / "agent.py").write_text("def nothing():\n    return 42\n")
    assert "not a graph" in _check(project / "langgraph.json").stdout


def test_config_file_stays_inside_the_source(tmp_path: Path) -> None:
    write_project(tmp_path)
    assert config_file(tmp_path, "langgraph.json") == tmp_path / "langgraph.json"
    assert config_file(tmp_path, ".") == tmp_path / "langgraph.json"
    for outside in ("../langgraph.json", "/etc/passwd"):
        with pytest.raises(BuildFailed, match="relative to the source root"):
            config_file(tmp_path, outside)
    with pytest.raises(BuildFailed, match="no other.json in the source"):
        config_file(tmp_path, "other.json")


def test_urls_and_paths() -> None:
    assert redact_url("https://user:token@github.com/o/r.git") == "https://***@github.com/o/r.git"
    assert redact_url("https://github.com/o/r") == "https://github.com/o/r"
    assert local_path("file:///srv/project") == Path("/srv/project")
    assert local_path("/srv/project") == Path("/srv/project")


def test_copy_tree_skips_caches_and_the_control_plane_directory(tmp_path: Path) -> None:
    source = write_project(tmp_path / "project")
    for skipped in (".git", "__pycache__", ".venv", "state"):
        (source / skipped).mkdir()
        (source / skipped / "file").write_text("x")
    dest = tmp_path / "copy"
    log = RevisionLog(tmp_path / "build.log")
    anyio.run(copy_tree, source, dest, log, (source / "state").resolve())
    assert sorted(p.name for p in dest.iterdir()) == ["agent.py", "langgraph.json"]
    assert "copying" in (tmp_path / "build.log").read_text()
    with pytest.raises(BuildFailed, match="does not exist"):
        anyio.run(copy_tree, tmp_path / "nope", dest, log)


def test_copy_tree_leaves_out_a_file_deleted_while_it_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A live working directory changes under the copy (the CI failure: a marker file unlinked
    between copytree's listing and its copy failed the build)."""
    source = write_project(tmp_path / "project")
    (source / "gone").write_text("")
    real = shutil.copy2

    def vanishing(src: str, dst: str, **kwargs: object) -> object:
        if Path(src).name == "gone":
            Path(src).unlink()
        return real(src, dst, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(shutil, "copy2", vanishing)
    dest = tmp_path / "copy"
    anyio.run(copy_tree, source, dest, RevisionLog(tmp_path / "build.log"))
    assert sorted(p.name for p in dest.iterdir()) == ["agent.py", "langgraph.json"]
