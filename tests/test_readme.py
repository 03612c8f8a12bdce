"""The README (issue 30, items 7-8): its first screen is what a new user acts on, its set-up
command installs only what serving needs, and the examples on it really run."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http_adapter.test_cli import EXAMPLE, Running

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
FIRST_SCREEN = "\n".join(README.splitlines()[:60])

# Import names of the distributions in the `test` and `postgres` extras, which the README's
# first command does not install: the server must start and run graphs without any of them.
IMPORT_NAMES = {
    "pytest": "pytest", "pytest-timeout": "pytest_timeout", "pytest-xdist": "xdist",
    "syrupy": "syrupy", "langchain-core": "langchain_core", "langgraph": "langgraph",
    "langgraph-sdk": "langgraph_sdk", "a2a-sdk": "a2a", "mcp": "mcp", "trio": "trio",
    "playwright": "playwright", "hypothesis": "hypothesis",
    "langgraph-checkpoint-postgres": "langgraph", "psycopg": "psycopg", "asyncpg": "asyncpg",
    "hiredis": "hiredis", "redis": "redis",
    "langchain": "langchain", "langgraph-supervisor": "langgraph_supervisor",
    "langgraph-swarm": "langgraph_swarm",
}
BLOCKER = """import sys
BLOCKED = {blocked!r}
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (left out by pip install -e .)")
sys.meta_path.insert(0, Blocker())
"""


def blocks(lang: str, text: str = README) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, re.S | re.M)


def dist_name(requirement: str) -> str:
    return re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0].lower()


def serving_only_imports() -> set[str]:
    """The import names the first command leaves out; fails when an extra gains an unmapped one."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    runtime = {dist_name(r) for r in project["dependencies"]}
    extras = project["optional-dependencies"]
    left_out = {dist_name(r) for r in extras["test"] + extras["postgres"]} - runtime
    unmapped = left_out - IMPORT_NAMES.keys()
    assert not unmapped, f"map these to import names: {unmapped}"
    return {IMPORT_NAMES[name] for name in left_out}


def test_the_first_screen_holds_the_set_up_and_the_examples() -> None:
    serve, test = blocks("bash", FIRST_SCREEN)[:2]
    assert "pip install -e . &&" in serve
    assert "graphrun dev --config examples/langgraph.json" in serve
    assert "pip install -q -e '.[test,postgres]' &&" in test and "-m pytest -q" in test
    engine, sdk = blocks("python", FIRST_SCREEN)[:2]
    assert "from engine import" in engine
    assert "langgraph_sdk" in sdk and "__interrupt__" in sdk and '"resume"' in sdk
    picture = re.search(r"!\[[^\]]*\]\((docs/studio/\w+\.png)\)", FIRST_SCREEN)
    assert picture and (REPO / picture.group(1)).is_file()
    assert "benchmarks/README.md" in FIRST_SCREEN and "docs/porting.md" in FIRST_SCREEN


def test_ci_runs_exactly_the_readme_test_command() -> None:
    test_command = blocks("bash")[1].strip()
    ci = (REPO / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == test_command


PAGES = ["README.md", *sorted(p.name for p in (REPO / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", PAGES)
def test_relative_links_resolve(page: str) -> None:
    path = REPO / page if page == "README.md" else REPO / "docs" / page
    for target in re.findall(r"\]\(([^)#\s]+)[^)]*\)", path.read_text()):
        if not re.match(r"[a-z]+:", target):
            assert (path.parent / target).exists(), f"{page} links to a missing {target}"


def test_the_engine_example_prints_its_two_updates() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(blocks("python")[0], {"__name__": "readme_example"})
    assert out.getvalue().splitlines() == [
        "{'research': {'notes': ['facts about otters']}}",
        "{'write': {'notes': ['draft from 1 note(s)']}}",
    ]


@pytest.fixture
def serving_only(tmp_path: Path) -> Iterator[Running]:
    """`graphrun dev` on a copy of the examples, unable to import anything from the extras."""
    project = tmp_path / "project"
    project.mkdir()
    for path in [EXAMPLE / "langgraph.json", *EXAMPLE.glob("*.py")]:
        shutil.copy(path, project / path.name)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER.format(blocked=sorted(serving_only_imports())))
    server = Running(["dev", "--port", "0"], cwd=project, env={"PYTHONPATH": str(site)})
    yield server
    server.stop()
    assert "No module named" not in "".join(server.output)


def test_the_sdk_and_curl_examples_interrupt_and_resume(serving_only: Running) -> None:
    """The README's client examples, as written, against a server without the extras."""
    sdk = blocks("python")[1].replace("http://127.0.0.1:2024", serving_only.url)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(sdk, {"__name__": "readme_sdk"})
    asked, sent = out.getvalue().splitlines()
    assert "'question': \"Send this draft?" in asked
    assert sent == "Re: a refund. We will get back to you within a day."
    if not shutil.which("curl"):
        return
    curl = next(b for b in blocks("bash") if "curl" in b)
    curl = curl.replace("localhost:2024", serving_only.url)
    answers = subprocess.run(["bash", "-c", curl], capture_output=True, text=True,
                             timeout=30).stdout
    assert '"__interrupt__":[{"value":{"question":"Send this draft?' in answers
    assert answers.endswith('"sent":"Re: a refund. We will get back to you within a day."}')
