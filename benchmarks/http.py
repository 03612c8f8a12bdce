"""HTTP benchmark: graphrun's agent server vs `langgraph dev`, same graph, same machine, one run.

`python -m benchmarks.http [--quick] [--json PATH] [--langgraph-cli PATH]`

Both servers serve the same 3-node chain (each through its own library) on 127.0.0.1 and are
started and stopped by this script. Cases:

- `http_wait_sequential`: one client, stateless `POST /runs/wait` back to back (latency, runs/s);
- `http_wait_10_clients`: ten clients at once (runs/s);
- `http_sse_events`: one `POST /runs/stream` of a 200-step loop in `updates` mode (events/s);
- `http_idle_rss`: resident memory of the idle server process after start-up (MiB).

`langgraph dev` needs `langgraph-cli[inmem]`, which pins its own dependencies: install it in any
environment and point `--langgraph-cli` (or $GRAPHRUN_BENCH_LANGGRAPH_CLI, or PATH) at its
`langgraph` executable. Without it the LangGraph column is empty.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from ._harness import format_table

RESULTS = Path(__file__).resolve().parent / "results"

_GRAPH = """
import operator
from typing import Annotated, TypedDict
from {module} import StateGraph, START, END

class State(TypedDict, total=False):
    x: int
    n: int
    log: Annotated[list, operator.add]

def a(s): return {{"x": s.get("x", 0) + 1, "log": ["a"]}}
def b(s): return {{"log": ["b"]}}
def c(s): return {{"log": ["c"]}}
chain = StateGraph(State)
chain.add_node("a", a); chain.add_node("b", b); chain.add_node("c", c)
chain.add_edge(START, "a"); chain.add_edge("a", "b"); chain.add_edge("b", "c"); chain.add_edge("c", END)
chain = chain.compile()

def tick(s): return {{"n": s.get("n", 0) + 1}}
def more(s): return "tick" if s.get("n", 0) < 200 else END
loop = StateGraph(State)
loop.add_node("tick", tick); loop.add_edge(START, "tick"); loop.add_conditional_edges("tick", more)
loop = loop.compile()
"""


def project(root: Path, module: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "graphs.py").write_text(textwrap.dedent(_GRAPH.format(module=module)))
    config = {"dependencies": ["."], "graphs": {"chain": "./graphs.py:chain",
                                                "loop": "./graphs.py:loop"}, "env": {}}
    (root / "langgraph.json").write_text(json.dumps(config))
    return root / "langgraph.json"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """A server subprocess on a loopback port: started, waited for, measured, stopped."""

    def __init__(self, name: str, argv: list[str], port: int, cwd: Path) -> None:
        self.name = name
        self.url = f"http://127.0.0.1:{port}"
        self.log = open(cwd / f"{name}.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(argv, cwd=cwd, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{name} exited early; see {self.log.name}")
            try:
                if httpx.get(f"{self.url}/ok", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"{name} did not start in time")

    def rss_mib(self) -> float:
        """Resident memory of the server and its children (langgraph dev runs a worker)."""
        total = 0
        pids = [self.proc.pid]
        try:
            children = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True,
                                      text=True).stdout.split()
            pids += [int(p) for p in children]
        except FileNotFoundError:
            pass
        for pid in pids:
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            except OSError:
                continue
        return total / 1024

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.log.close()


def _graphrun_server(work: Path) -> Server:
    config = project(work / "graphrun", "engine")
    port = free_port()
    code = (
        "import sys, uvicorn;"
        "from http_adapter.config import load_settings;"
        "from http_adapter.agent_server import create_app;"
        f"s = load_settings({str(config)!r}, in_memory=True);"
        f"uvicorn.run(create_app(s), host='127.0.0.1', port={port}, log_level='warning')"
    )
    return Server("graphrun", [sys.executable, "-c", code], port, config.parent)


def _langgraph_server(work: Path, cli: str) -> Server:
    config = project(work / "langgraph", "langgraph.graph")
    port = free_port()
    argv = [cli, "dev", "--no-browser", "--no-reload", "--port", str(port), "--config",
            str(config)]
    return Server("langgraph", argv, port, config.parent)


def stats(times: list[float]) -> dict[str, Any]:
    ms = sorted(t * 1000 for t in times)
    q1, _, q3 = statistics.quantiles(ms, n=4, method="inclusive") if len(ms) > 1 else (ms[0],) * 3
    return {"median_ms": statistics.median(ms), "q1_ms": q1, "q3_ms": q3, "min_ms": ms[0],
            "max_ms": ms[-1], "reps": len(ms)}


_BODY = {"assistant_id": "chain", "input": {"x": 1}}


def _sequential(server: Server, runs: int) -> dict[str, Any]:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for _ in range(max(5, runs // 10)):
            client.post("/runs/wait", json=_BODY).raise_for_status()
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            client.post("/runs/wait", json=_BODY).raise_for_status()
            times.append(time.perf_counter() - started)
    out = stats(times)
    out["runs_per_s"] = runs / sum(times)
    return out


def _concurrent(server: Server, clients: int, per_client: int) -> dict[str, Any]:
    # Each client connects and warms up first (as the sequential case does); the clock runs
    # from the moment all of them are ready until the last one is done.
    ready = threading.Barrier(clients + 1, timeout=120)  # a failed client breaks it: no hang

    def work(_: int) -> None:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            for _ in range(3):
                client.post("/runs/wait", json=_BODY).raise_for_status()
            ready.wait()
            for _ in range(per_client):
                client.post("/runs/wait", json=_BODY).raise_for_status()

    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        done = [pool.submit(work, i) for i in range(clients)]
        ready.wait()
        started = time.perf_counter()
        for future in done:
            future.result()
        elapsed = time.perf_counter() - started
    total = clients * per_client
    return {"median_ms": elapsed * 1000 / total, "q1_ms": 0, "q3_ms": 0, "reps": total,
            "runs_per_s": total / elapsed}


def _sse(server: Server, reps: int) -> dict[str, Any]:
    body = {"assistant_id": "loop", "input": {"n": 0}, "stream_mode": "updates",
            "config": {"recursion_limit": 1000}}
    times, counts = [], []
    with httpx.Client(base_url=server.url, timeout=60) as client:
        for _ in range(reps):
            started = time.perf_counter()
            events = 0
            with client.stream("POST", "/runs/stream", json=body) as response:
                for line in response.iter_lines():
                    if line.startswith("event: updates"):
                        events += 1
            times.append(time.perf_counter() - started)
            counts.append(events)
    out = stats(times)
    out["events"] = int(statistics.median(counts))
    out["events_per_s"] = out["events"] / (out["median_ms"] / 1000)
    return out


def _measure(server: Server, quick: bool) -> dict[str, dict[str, Any]]:
    time.sleep(1.0)  # let start-up settle before reading idle memory
    rss = server.rss_mib()
    return {
        "http_idle_rss": {"median_ms": 0.0, "q1_ms": 0.0, "q3_ms": 0.0, "reps": 1, "rss_mib": rss},
        "http_wait_sequential": _sequential(server, 20 if quick else 300),
        "http_wait_10_clients": _concurrent(server, 10, 5 if quick else 50),
        "http_sse_events": _sse(server, 2 if quick else 5),
    }


def _ratio(case: str, ours: dict[str, Any], theirs: dict[str, Any] | None) -> float | None:
    if not theirs:
        return None
    if case == "http_idle_rss":
        return theirs["rss_mib"] / ours["rss_mib"] if ours["rss_mib"] else None
    if case == "http_wait_10_clients":
        return ours["runs_per_s"] / theirs["runs_per_s"]
    return theirs["median_ms"] / ours["median_ms"] if ours["median_ms"] else None


def _note(case: str, ours: dict[str, Any], theirs: dict[str, Any] | None) -> str:
    def fmt(stats: dict[str, Any] | None) -> str:
        if not stats:
            return "-"
        if case == "http_idle_rss":
            return f"{stats['rss_mib']:.0f} MiB"
        if case == "http_sse_events":
            return f"{stats['events_per_s']:,.0f} events/s"
        return f"{stats['runs_per_s']:,.1f} runs/s"

    return f"{fmt(ours)} vs {fmt(theirs)}"


CASES = ("http_idle_rss", "http_wait_sequential", "http_wait_10_clients", "http_sse_events")


def find_cli(given: str | None = None) -> str | None:
    """The `langgraph` executable to compare with: given, $GRAPHRUN_BENCH_LANGGRAPH_CLI or PATH."""
    return given or os.environ.get("GRAPHRUN_BENCH_LANGGRAPH_CLI") or shutil.which("langgraph")


def run(quick: bool, cli: str | None) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="graphrun-http-bench-"))
    results: dict[str, dict[str, dict[str, Any]]] = {}
    try:
        server = _graphrun_server(work)
        try:
            results["graphrun"] = _measure(server, quick)
        finally:
            server.stop()
        if cli:
            server = _langgraph_server(work, cli)
            try:
                results["langgraph"] = _measure(server, quick)
            finally:
                server.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    cases = []
    for case, ours in results["graphrun"].items():
        theirs = results.get("langgraph", {}).get(case)
        ratio = _ratio(case, ours, theirs)
        cases.append({"case": case, "group": "http", "graphrun": ours, "langgraph": theirs,
                      "ratio": ratio, "note": _note(case, ours, theirs)})
    return {"meta": {"created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "quick": quick,
                     "langgraph_cli": cli}, "cases": cases}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.http", description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--langgraph-cli", metavar="PATH")
    args = parser.parse_args(argv)
    report = run(args.quick, find_cli(args.langgraph_cli))
    print(format_table(report))
    for case in report["cases"]:
        print(f"{case['case']}: {case['note']}")
    path = Path(args.json) if args.json else RESULTS / ("http_quick.json" if args.quick
                                                        else "http_latest.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1, default=str) + "\n")
    print(f"results written to {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
