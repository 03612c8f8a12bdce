"""The judge: LangGraph 1.2.22's and langgraph-prebuilt 1.1.3's own tests, run unchanged on graphrun.

    .venv/bin/python -m tests.langgraph_suite.harness            # every file (a release check)
    .venv/bin/python -m tests.langgraph_suite.harness --subset ci   # the files CI runs
    .venv/bin/python -m tests.langgraph_suite.harness --file langgraph/test_retry.py  # one file

Issue 27. What it does, all cached under `.cache/langgraph_suite/` (gitignored; LangGraph's
files are never committed here):
1. `pip download --no-deps --no-binary :all:` the two sdists and extract their `tests/`.
2. Two virtualenvs: "langgraph" (LangGraph, its test extras) and "graphrun" (graphrun's runtime
   dependencies, langchain-core and the same pytest plugins, and no `langgraph*` distribution).
   graphrun itself is put on `sys.path` through symlinks to this checkout's `engine/` and
   `checkpoints/`, so the run always sees the working tree.
3. The baseline: the tests on real LangGraph with their own conftest (`NO_DOCKER=true`), cached
   by versions and by the plugin's source.
4. The shim run: the same test files, only `tests/conftest.py` replaced (`fixtures/`: the same
   fixture names on graphrun's savers), with `shim/langgraph` (re-exports of graphrun) on
   `sys.path`. The plugin (`plugin/judge_plugin.py`) checks at start and end that no real
   LangGraph is installed or imported; a dishonest run is an error, not a result.
5. Each test is classified by `shim/judge_rules.py`; the command prints per-file counts, the
   public names graphrun lacks by frequency, and last `N passed, M failed` over the counted
   tests. `.cache/langgraph_suite/last/report.json` has every verdict with its error type, and
   the two runs' pytest logs lie beside it.
A LangGraph test that hangs on graphrun fails after `PER_TEST_TIMEOUT`. Two harness runs in one
checkout at once are fine only with different `--report` folders (the test suite's background
run uses its own, see `background.py`).
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CACHE = Path(os.environ.get("GRAPHRUN_JUDGE_CACHE", REPO / ".cache" / "langgraph_suite"))
RUNS = CACHE / "runs"  # the background runs of pytest sessions (`background.py`)
SDISTS = {"langgraph": ("langgraph", "1.2.22"), "prebuilt": ("langgraph_prebuilt", "1.1.3")}
PYPI_NAMES = {"langgraph": "langgraph", "prebuilt": "langgraph-prebuilt"}
REPLACED_CONFTEST = {"langgraph": "conftest_langgraph.py", "prebuilt": "conftest_prebuilt.py"}
TEST_TOOLS = ["pytest>=8", "pytest-mock", "pytest-timeout", "pytest-xdist", "syrupy>=4", "httpx",
              "langchain-core>=1.4.7", "pydantic>=2.7.4"]
LANGGRAPH_REQS = ["langgraph==1.2.22", "langgraph-prebuilt==1.1.3", "langgraph-checkpoint-sqlite",
                  "langgraph-checkpoint-postgres", "psycopg[binary]", "psycopg-pool", "redis",
                  "pycryptodome"]
#: The files CI runs (`--subset ci`, about a fifth of the tests): most of those issue 27's "Done
#: when" names, without `test_pregel*.py` and the async twins (the full command runs them all).
CI_FILES = {
    "langgraph": ["test_interruption.py", "test_interrupt_state.py", "test_messages_state.py",
                  "test_runtime.py", "test_parent_command.py", "test_parent_command_async.py",
                  "test_pydantic.py", "test_time_travel.py", "test_subgraph_persistence.py",
                  "test_large_cases.py", "test_state.py", "test_managed_values.py", "test_retry.py"],
    "prebuilt": ["test_react_agent.py", "test_tool_node.py"],
}
PER_TEST_TIMEOUT = 30  # seconds, per LangGraph test: a hang on graphrun is a failure, not a stall


def log(message: str) -> None:
    print(f"[judge] {message}", file=sys.stderr, flush=True)


def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kwargs)


def fetch_tests(package: str) -> Path:
    """The extracted `tests/` of one sdist (downloaded and extracted once)."""
    dist, version = SDISTS[package]
    target = CACHE / "src" / f"{dist}-{version}"
    if (target / "tests").is_dir():
        return target / "tests"
    downloads = CACHE / "sdist"
    archive = downloads / f"{dist}-{version}.tar.gz"
    if not archive.exists():
        log(f"downloading {PYPI_NAMES[package]}=={version}")
        run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
             f"{PYPI_NAMES[package]}=={version}", "-d", str(downloads)])
    tmp = target.with_name(f"{target.name}.tmp{os.getpid()}")
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(f"{dist}-{version}/tests/")]
        tar.extractall(tmp, members=members, filter="data")
    target.mkdir(parents=True, exist_ok=True)
    try:
        (tmp / f"{dist}-{version}" / "tests").rename(target / "tests")
    except OSError:  # another process extracted it first
        pass
    shutil.rmtree(tmp)
    return target / "tests"


def graphrun_requirements() -> list[str]:
    with open(REPO / "pyproject.toml", "rb") as f:
        return list(tomllib.load(f)["project"]["dependencies"])


def venv(name: str, requirements: list[str]) -> Path:
    """A cached virtualenv with exactly these requirements (rebuilt when they change)."""
    path = CACHE / f"venv-{name}"
    stamp = path / "judge-requirements.txt"
    wanted = "\n".join(requirements)
    if stamp.exists() and stamp.read_text() == wanted:
        return path / "bin" / "python"
    log(f"building the {name} virtualenv")
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")  # another process may build it too
    run([sys.executable, "-m", "venv", str(tmp)])
    run([str(tmp / "bin" / "python"), "-m", "pip", "install", "-q", *requirements])
    (tmp / stamp.name).write_text(wanted)
    shutil.rmtree(path, ignore_errors=True)
    try:
        tmp.rename(path)
    except OSError:  # another process finished first: use its venv
        shutil.rmtree(tmp, ignore_errors=True)
    return path / "bin" / "python"


def graphrun_path() -> Path:
    """A directory holding only graphrun's packages (symlinks to this checkout)."""
    path = CACHE / "graphrun-path"
    path.mkdir(parents=True, exist_ok=True)
    for package in ("engine", "checkpoints"):
        link = path / package
        if not link.is_symlink():
            link.symlink_to(REPO / package)
    return path


def prepare(work: Path, env: str, package: str, source: Path) -> Path:
    """A fresh run directory: `tests/` as shipped, its conftest replaced in the shim run."""
    root = work / env / package
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(source, root / "tests")
    if env == "graphrun":
        shutil.copy(HERE / "fixtures" / REPLACED_CONFTEST[package], root / "tests" / "conftest.py")
    (root / "pytest.ini").write_text("[pytest]\n")
    return root


def pytest_run(python: Path, env: str, root: Path, files: list[str] | None, jobs: int) -> dict[str, Any]:
    """Run the tests in `root` with the judge plugin; the merged per-process reports."""
    report = root / "judge-report"
    paths = [f"tests/{f}" for f in files] if files else ["tests"]
    cmd = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "judge_plugin",
           "-o", "addopts=", "--durations=20", "--continue-on-collection-errors",
           "--timeout", str(PER_TEST_TIMEOUT), "--judge-report", str(report), "-n", str(jobs), *paths]
    pythonpath = [HERE / "plugin"]
    if env == "graphrun":
        pythonpath += [HERE / "shim", graphrun_path()]
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join(map(str, pythonpath)), NO_DOCKER="true",
                   LANGGRAPH_TEST_FAST="true", JUDGE_MODE="shim" if env == "graphrun" else "langgraph")
    environ.pop("PYTEST_XDIST_WORKER", None)
    environ.pop("PYTEST_ADDOPTS", None)
    started = time.monotonic()
    with open(root / "pytest.log", "w") as out:
        subprocess.run(cmd, cwd=root, env=environ, stdout=out, stderr=subprocess.STDOUT, check=False)
    log(f"{env} run of {root.name}: {time.monotonic() - started:.0f} s (log: {root / 'pytest.log'})")
    shutil.rmtree(root / "tests")  # LangGraph's files: the copy is not needed past the run
    return merge_reports(sorted(root.glob("judge-report*")))


def merge_reports(paths: list[Path]) -> dict[str, Any]:
    merged: dict[str, Any] = {"tests": {}, "files": {}, "touched": {}, "honesty": {}}
    if not paths:
        raise RuntimeError("the pytest run wrote no judge report: see its pytest.log")
    for path in paths:
        data = json.loads(path.read_text())
        for key in ("tests", "files", "touched"):
            merged[key].update(data[key])
        for when, found in data["honesty"].items():
            merged["honesty"].setdefault(when, []).extend(found)
    return merged


def baseline(work: Path, package: str, source: Path, files: list[str] | None, jobs: int) -> dict[str, Any]:
    """Outcomes on real LangGraph, cached by versions, plugin source and selected files."""
    python = venv("langgraph", LANGGRAPH_REQS + TEST_TOOLS)
    key = hashlib.sha256(json.dumps([SDISTS[package], LANGGRAPH_REQS, TEST_TOOLS, files,
                                     (HERE / "plugin" / "judge_plugin.py").read_text()]).encode())
    cached = CACHE / f"baseline-{package}-{key.hexdigest()[:16]}.json"
    if cached.exists():
        return json.loads(cached.read_text())
    if files and (whole := _cached_whole(package, python)):  # a file's outcomes from the full run
        return _only(whole, files)
    data = pytest_run(python, "langgraph", prepare(work, "langgraph", package, source), files, jobs)
    cached.write_text(json.dumps(data))
    return data


def _cached_whole(package: str, python: Path) -> dict[str, Any] | None:
    key = hashlib.sha256(json.dumps([SDISTS[package], LANGGRAPH_REQS, TEST_TOOLS, None,
                                     (HERE / "plugin" / "judge_plugin.py").read_text()]).encode())
    cached = CACHE / f"baseline-{package}-{key.hexdigest()[:16]}.json"
    return json.loads(cached.read_text()) if cached.exists() else None


def _only(data: dict[str, Any], files: list[str]) -> dict[str, Any]:
    """The part of a run's report that concerns `files` (tests/-relative paths)."""
    paths = {f"tests/{f}" for f in files}

    def keep(nodeid: str) -> bool:
        return nodeid.split("::")[0] in paths

    return dict(data, tests={k: v for k, v in data["tests"].items() if keep(k)},
                touched={k: v for k, v in data["touched"].items() if keep(k)},
                files={k: v for k, v in data["files"].items() if keep(k)})


def shim_run(work: Path, package: str, source: Path, files: list[str] | None, jobs: int) -> dict[str, Any]:
    python = venv("graphrun", graphrun_requirements() + TEST_TOOLS)
    data = pytest_run(python, "graphrun", prepare(work, "graphrun", package, source), files, jobs)
    dishonest = [f for found in data["honesty"].values() for f in found]
    if dishonest or set(data["honesty"]) != {"start", "end"}:
        raise RuntimeError(f"the shim run saw real LangGraph: {dishonest or data['honesty']}")
    return data


def classify_package(package: str, base: dict[str, Any], shim: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """nodeid -> verdict, for every test the shim run collected or could not collect."""
    sys.path.insert(0, str(HERE / "shim"))
    import judge_rules

    verdicts: dict[str, dict[str, Any]] = {}
    outcomes = {nodeid: t["outcome"] for nodeid, t in base["tests"].items()}
    for nodeid, test in shim["tests"].items():
        test = dict(test, touched=shim["touched"].get(nodeid, []))
        file_touched = shim["touched"].get(test["file"], [])
        verdict = judge_rules.classify(test, outcomes.get(nodeid), file_touched)
        verdicts[f"{package}/{nodeid}"] = verdict
    for nodeid, outcome in outcomes.items():  # the tests of files that did not import on graphrun
        file = nodeid.split("::")[0]
        error = shim["files"].get(file, {}).get("error")
        if error:
            test = {"outcome": "error", "error_type": "collection error", "message": error}
            file_touched = shim["touched"].get(file, [])
            verdicts[f"{package}/{nodeid}"] = judge_rules.classify(test, outcome, file_touched)
    return verdicts


def per_file(verdicts: dict[str, dict[str, Any]]) -> dict[str, collections.Counter[str]]:
    files: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for nodeid, verdict in verdicts.items():
        files[nodeid.split("::")[0]][verdict["verdict"]] += 1
    return dict(sorted(files.items()))


def summary_lines(verdicts: dict[str, dict[str, Any]]) -> list[str]:
    """The printed report: per-file counts, missing public names, then `N passed, M failed`."""
    lines = [f"{'file':58} {'passed':>7} {'failed':>7} {'internal':>9} {'lg-fails':>9}"]
    for file, c in per_file(verdicts).items():
        lines.append(f"{file:58} {c['passed']:7} {c['failed']:7} {c['internal']:9} {c['langgraph_fails']:9}")
    totals = collections.Counter(v["verdict"] for v in verdicts.values())
    missing = collections.Counter(name for v in verdicts.values() for name in v.get("missing", []))
    internal = collections.Counter(name for v in verdicts.values() for name in v.get("names", []))
    errors = collections.Counter(v["error_type"] for v in verdicts.values() if v["verdict"] == "failed")
    lines.append("")
    lines.append("public names graphrun lacks (failing counted tests that touched each): "
                 + (", ".join(f"{n} {c}" for n, c in missing.most_common(40)) or "none"))
    lines.append("internal names (tests not counted): "
                 + ", ".join(f"{n} {c}" for n, c in internal.most_common(15)))
    lines.append("counted failures by error type: "
                 + ", ".join(f"{n} {c}" for n, c in errors.most_common(15)))
    counted = totals["passed"] + totals["failed"]
    lines.append(f"{len(verdicts)} tests: {counted} counted (public API, pass on LangGraph), "
                 f"{totals['internal']} need internals, {totals['langgraph_fails']} do not pass on LangGraph")
    lines.append(f"{totals['passed']} passed, {totals['failed']} failed")
    return lines


def judge(subset: str, jobs: int, work: Path, only: list[str] | None = None) -> dict[str, Any]:
    """Run everything in `work` (or only the `package/file` names in `only`); the report."""
    started = time.monotonic()
    verdicts: dict[str, dict[str, Any]] = {}
    for package in SDISTS:
        files = CI_FILES[package] if subset == "ci" else None
        if only is not None:
            files = [name.split("/", 1)[1] for name in only if name.startswith(package + "/")]
            if not files:
                continue
        source = fetch_tests(package)
        base = baseline(work, package, source, files, jobs)
        verdicts.update(classify_package(package, base, shim_run(work, package, source, files, jobs)))
    totals = collections.Counter(v["verdict"] for v in verdicts.values())
    return {"subset": subset, "seconds": round(time.monotonic() - started), "totals": dict(totals),
            "files": {f: dict(c) for f, c in per_file(verdicts).items()}, "tests": verdicts}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subset", choices=["all", "ci"], default="all")
    parser.add_argument("--jobs", type=int, default=2, help="xdist workers per run (0: one process)")
    parser.add_argument("--report", type=Path, default=CACHE / "last" / "report.json",
                        help="where the JSON verdicts go (the runs' logs go beside it)")
    parser.add_argument("--done", type=Path, help="a file to write the exit status to, last")
    parser.add_argument("--file", action="append", dest="only", metavar="PACKAGE/FILE",
                        help="only this file, e.g. langgraph/test_retry.py or prebuilt/test_tool_node.py"
                             " (repeatable; while working on a feature)")
    args = parser.parse_args(argv)
    status = 1
    try:
        report = judge(args.subset, args.jobs, args.report.parent, args.only)
        args.report.write_text(json.dumps(report, indent=1, sort_keys=True))
        print("\n".join(summary_lines(report["tests"])), flush=True)
        log(f"{report['seconds']} s; verdicts in {args.report}")
        status = 0
    finally:
        if args.done:
            args.done.write_text(str(status))
    return status


if __name__ == "__main__":
    sys.exit(main())
