"""`python -m benchmarks [--quick] [--json PATH] [--filter SUBSTR] [--reps N] [--no-langgraph]
[--no-http] [--langgraph-cli PATH]`: the engine, checkpoint and streaming cases, then the agent
server's HTTP cases (`benchmarks.http`, each server started and stopped here on loopback)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from . import all_cases
from . import http as http_bench
from ._harness import Settings, format_table, load_libs, run_cases

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="graphrun vs LangGraph on the same graphs, same run, same machine.",
    )
    parser.add_argument(
        "--quick", action="store_true", help="few repetitions, smaller sizes (< 1 min)"
    )
    parser.add_argument(
        "--json",
        metavar="PATH",
        help="where to write the results (default results/latest.json, results/quick.json with --quick)",
    )
    parser.add_argument(
        "--filter",
        metavar="SUBSTR",
        action="append",
        help="run only cases whose name contains SUBSTR (repeatable: any of them)",
    )
    parser.add_argument("--reps", type=int, help="repetitions per library (default 15, quick 3)")
    parser.add_argument("--no-langgraph", action="store_true", help="measure graphrun only")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--list", action="store_true", help="list the case names and exit")
    parser.add_argument(
        "--no-http", action="store_true", help="skip the agent server cases (benchmarks.http)"
    )
    parser.add_argument(
        "--langgraph-cli",
        metavar="PATH",
        help="`langgraph` executable for `langgraph dev` (default $GRAPHRUN_BENCH_LANGGRAPH_CLI "
        "or PATH); without one the HTTP cases measure graphrun only",
    )
    args = parser.parse_args(argv)

    def wanted(name: str) -> bool:
        return not args.filter or any(part in name for part in args.filter)

    cases = [case for case in all_cases() if wanted(case.name)]
    with_http = not args.no_http and any(wanted(name) for name in http_bench.CASES)
    if args.list:
        names = [case.name for case in cases]
        names += [name for name in http_bench.CASES if with_http and wanted(name)]
        print("\n".join(names))
        return 0
    if not cases and not with_http:
        print("no case matches the filter", file=sys.stderr)
        return 2

    settings = Settings.make(args.quick, args.reps)
    libs = load_libs(with_langgraph=not args.no_langgraph)
    names = ", ".join(f"{lib.name} {lib.version}" for lib in libs)
    print(
        f"{len(cases)} case(s){' + the HTTP cases' if with_http else ''}; {names}; "
        f"{'quick' if args.quick else 'full'} run",
        file=sys.stderr,
    )

    started = time.perf_counter()

    def progress(result: dict[str, Any]) -> None:
        ratio = result.get("ratio")
        state = (
            result.get("skipped") or result.get("error") or (f"{ratio:.1f}x" if ratio else "done")
        )
        print(f"  {result['case']}: {state}", file=sys.stderr, flush=True)

    report = run_cases(cases, libs, settings, progress)
    if with_http:
        cli = None if args.no_langgraph else http_bench.find_cli(args.langgraph_cli)
        print(f"  http: graphrun serve vs {cli or '(no langgraph dev)'}", file=sys.stderr)
        http = http_bench.run(args.quick, cli)
        report["cases"] += [case for case in http["cases"] if wanted(case["case"])]
        report["meta"]["langgraph_cli"] = cli
    report["meta"]["wall_s"] = round(time.perf_counter() - started, 1)

    print(format_table(report, markdown=args.markdown))
    print(f"\n{len(report['cases'])} case(s) in {report['meta']['wall_s']} s", file=sys.stderr)

    path = args.json or os.path.join(RESULTS, "quick.json" if args.quick else "latest.json")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "w") as handle:
        json.dump(report, handle, indent=1, default=str)
        handle.write("\n")
    os.replace(tmp, path)
    print(f"results written to {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
