"""What bounds the PostgreSQL saver's ratio (issue 19): CPU against waiting, per run.

`python -m benchmarks.pg_bound [CASE ...] [--rounds N]` (default: the two
`checkpoint_long_thread_200_postgres` cases). Each round runs LangGraph's saver, graphrun's
`PostgresSaver` and graphrun's in-memory saver on the same graph, in alternating order, and
splits graphrun's PostgreSQL run (its timed window only) into:

- "graph CPU": the CPU time of the thread that runs the graph (engine, nodes, serialization,
  handing rows to the writer);
- "writer CPU": the CPU time of the saver's loop thread ("graphrun-postgres": encoding and
  sending batches, reading replies). Both threads need the GIL, so the two add up;
- "queued": how long the graph's thread was ready to run but had no CPU (Linux schedstat),
  i.e. the machine's other work, our own PostgreSQL server processes included;
- "server CPU": the CPU time of the database's server processes (the saver's connections);
  they run beside the graph when a CPU is free, and take one from it when none is;
- "other waits": the rest of the wall time: the run's first read, hand-overs to the writer,
  the final flush, the GIL.

"ceiling" is LangGraph's time over graph + writer CPU: the ratio with no waiting at all. The
in-memory run serializes as the PostgreSQL one does but stores nothing. Linux only.
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
_HEADER = (
    f"{'case (medians, ms)':44s} {'LangGr':>7s} {'graphrun':>8s} {'ratio':>6s} {'graph':>6s} "
    f"{'writer':>6s} {'queued':>6s} {'waits':>6s} {'server':>6s} {'ceiling':>7s} {'memory':>6s}"
)


def _loop_thread_clock() -> int:
    """The CPU clock of the newest saver loop thread (the one the case just opened)."""
    threads = [t for t in threading.enumerate() if t.name == "graphrun-postgres"]
    ident = threads[-1].ident
    assert ident is not None
    return time.pthread_getcpuclockid(ident)


def _schedstat(path: str) -> tuple[float, float]:
    """(seconds on a CPU, seconds ready but waiting for one) of a task, from Linux schedstat."""
    with open(path) as file:
        on_cpu, queued = file.read().split()[:2]
    return int(on_cpu) / 1e9, int(queued) / 1e9


async def _server_pids(url: str) -> list[int]:
    """The server processes of the saver's connections (every other session on its database)."""
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT pid FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    finally:
        await conn.close()
    return [row["pid"] for row in rows]


class _Clocks:
    """CPU and queueing of the graph's thread, the writer thread and the server processes, over
    the harness's timed window (its `hooks`: the `gc.collect()` before each run is outside)."""

    def __init__(self, writer_clock: int, server_pids: list[int]) -> None:
        self.writer_clock = writer_clock
        self.server_paths = [f"/proc/{pid}/schedstat" for pid in server_pids]
        self.spent = (0.0, 0.0, 0.0, 0.0)
        self._start = self.spent

    def _now(self) -> tuple[float, float, float, float]:
        queued = _schedstat("/proc/thread-self/schedstat")[1]
        server = sum(_schedstat(path)[0] for path in self.server_paths)
        return time.thread_time(), time.clock_gettime(self.writer_clock), queued, server

    def start(self) -> None:
        self._start = self._now()

    def stop(self) -> None:
        now = self._now()
        self.spent = tuple(b - a for a, b in zip(self._start, now))  # type: ignore[assignment]


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


def _clocks_for(postgres: _Side) -> _Clocks:
    pids = asyncio.run(_server_pids(postgres.saver.url))
    clocks = _Clocks(_loop_thread_clock(), pids)
    assert postgres.bound is not None
    postgres.bound.hooks = (clocks.start, clocks.stop)
    return clocks


def measure(case: Case, memory: Case, rounds: int) -> dict[str, float]:
    """Medians over `rounds` interleaved rounds, in milliseconds."""
    loop = asyncio.new_event_loop() if case.is_async else None
    samples: list[tuple[float, ...]] = []
    with tempfile.TemporaryDirectory(prefix="graphrun-pg-bound-") as tmpdir:
        sides = _sides(case, memory, tmpdir, loop)
        langgraph, postgres, in_memory = sides
        try:
            for side in sides * 2:  # warm-up; the read pool opens its connections
                side.rep(record=False)
            clocks = _clocks_for(postgres)
            gc.collect()
            gc.freeze()
            for index in range(rounds):
                langgraph.rep()
                for side in (postgres, in_memory) if index % 2 else (in_memory, postgres):
                    wall = side.rep()
                    if side is postgres:
                        samples.append((wall, *clocks.spent))
        finally:
            gc.unfreeze()
            for side in sides:
                side.close()
            if loop is not None:
                loop.close()
    return _summary(langgraph.times, samples, in_memory.times)


def _summary(
    langgraph: list[float], samples: list[tuple[float, ...]], memory: list[float]
) -> dict[str, float]:
    def ms(values: Any) -> float:
        return statistics.median(values) * 1000.0

    wall, graph, writer, queued, server = (ms(column) for column in zip(*samples))
    waits = ms(s[0] - s[1] - s[2] - s[3] for s in samples)
    other = ms(langgraph)
    return {
        "langgraph": other, "graphrun": wall, "ratio": other / wall, "graph": graph,
        "writer": writer, "queued": queued, "waits": waits, "server": server,
        "ceiling": other / (graph + writer), "memory": ms(memory),
    }


def _row(name: str, r: dict[str, float]) -> str:
    return (
        f"{name:44s} {r['langgraph']:7.1f} {r['graphrun']:8.2f} {r['ratio']:5.1f}x "
        f"{r['graph']:6.2f} {r['writer']:6.2f} {r['queued']:6.2f} {r['waits']:6.2f} "
        f"{r['server']:6.2f} {r['ceiling']:6.1f}x {r['memory']:6.2f}"
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
    print(_HEADER)
    for name in args.cases:
        memory = cases[name.replace("_postgres", "_checkpoint")]
        print(_row(name, measure(cases[name], memory, args.rounds)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
