"""What bounds the PostgreSQL saver's ratio (issue 19): CPU against waiting, per run.

`python -m benchmarks.pg_bound [CASE ...] [--rounds N]` (default: the two
`checkpoint_long_thread_200_postgres` cases). Each round runs LangGraph's saver, graphrun's
`PostgresSaver` and graphrun's in-memory saver on the same graph, in alternating order, and
times graphrun's PostgreSQL run three ways:

- "caller CPU": the CPU time of the thread that runs the graph (engine, nodes, serialization,
  handing rows to the writer);
- "writer CPU": the CPU time of the saver's loop thread ("graphrun-postgres": encoding and
  sending batches, reading replies). Both threads need the GIL, so the two add up;
- "waiting": the rest of the wall time: the first read of the run, hand-overs to the writer,
  the final flush, waits for the GIL and for a CPU (the machine's load).

"ceiling" is LangGraph's time over the two CPU figures: the ratio with no waiting at all. The
in-memory run serializes as the PostgreSQL one does but stores nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import tempfile
import threading
import time
from typing import Any

from . import all_cases
from ._harness import Case, _Side, load_libs

DEFAULT_CASES = (
    "checkpoint_long_thread_200_postgres",
    "checkpoint_long_thread_200_postgres_async",
)
_COLUMNS = (
    "case", "LangGraph ms", "graphrun ms", "ratio", "caller CPU", "writer CPU", "waiting",
    "ceiling", "in-memory ms",
)


def _loop_thread_clock() -> int:
    """The CPU clock of the newest saver loop thread (the one the case just opened)."""
    threads = [t for t in threading.enumerate() if t.name == "graphrun-postgres"]
    ident = threads[-1].ident
    assert ident is not None
    return time.pthread_getcpuclockid(ident)


def _timed_rep(side: _Side, clock: int) -> tuple[float, float, float]:
    """One recorded repetition: (wall, caller CPU, writer CPU) in seconds."""
    caller, writer = time.thread_time(), time.clock_gettime(clock)
    wall = side.rep()
    return wall, time.thread_time() - caller, time.clock_gettime(clock) - writer


def _sides(case: Case, memory: Case, tmpdir: str, loop: Any) -> tuple[_Side, _Side, _Side]:
    graphrun, langgraph = load_libs()
    sides = (
        _Side(case, langgraph, case.size, tmpdir, loop),
        _Side(case, graphrun, case.size, tmpdir, loop),
        _Side(memory, graphrun, memory.size, tmpdir, loop),
    )
    for side in sides:
        side.open()
    return sides


def measure(case: Case, memory: Case, rounds: int) -> dict[str, float]:
    """Medians over `rounds` interleaved rounds, in milliseconds."""
    loop = asyncio.new_event_loop() if case.is_async else None
    samples: list[tuple[float, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="graphrun-pg-bound-") as tmpdir:
        sides = _sides(case, memory, tmpdir, loop)
        langgraph, postgres, in_memory = sides
        clock = _loop_thread_clock()
        gc.collect()
        gc.freeze()
        try:
            for side in sides * 2:  # warm-up
                side.rep(record=False)
            for index in range(rounds):
                langgraph.rep()
                for side in (postgres, in_memory) if index % 2 else (in_memory, postgres):
                    if side is postgres:
                        samples.append(_timed_rep(side, clock))
                    else:
                        side.rep()
        finally:
            gc.unfreeze()
            for side in sides:
                side.close()
            if loop is not None:
                loop.close()
    return _summary(langgraph.times, samples, in_memory.times)


def _summary(
    langgraph: list[float], samples: list[tuple[float, float, float]], memory: list[float]
) -> dict[str, float]:
    def ms(values: Any) -> float:
        return statistics.median(values) * 1000.0

    wall, caller, writer = (ms(column) for column in zip(*samples))
    waiting = ms(w - c - t for w, c, t in samples)
    other = ms(langgraph)
    return {
        "langgraph": other, "graphrun": wall, "ratio": other / wall, "caller": caller,
        "writer": writer, "waiting": waiting, "ceiling": other / (caller + writer),
        "memory": ms(memory),
    }


def _row(name: str, r: dict[str, float]) -> str:
    return (
        f"{name:44s} {r['langgraph']:7.1f} {r['graphrun']:7.2f} {r['ratio']:5.1f}x "
        f"{r['caller']:6.2f} {r['writer']:6.2f} {r['waiting']:6.2f} {r['ceiling']:5.1f}x "
        f"{r['memory']:6.2f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pg_bound", description=__doc__)
    parser.add_argument("cases", nargs="*", default=list(DEFAULT_CASES))
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(argv)
    cases = {case.name: case for case in all_cases()}
    unknown = [n for n in args.cases if cases.get(n) is None or cases[n].saver != "postgres"]
    if unknown:
        print(f"not a PostgreSQL case: {', '.join(unknown)}", file=sys.stderr)
        return 2
    print(" | ".join(_COLUMNS) + "  (medians, ms)")
    for name in args.cases:
        memory = cases[name.replace("_postgres", "_checkpoint")]
        print(_row(name, measure(cases[name], memory, args.rounds)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
