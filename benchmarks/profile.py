"""Profile one case's graphrun side: `python -m benchmarks.profile CASE [--size N] [--reps N]`.

Builds the case exactly as the suite does (same builder, saver, input), warms up, then samples
`--reps` repetitions with pyinstrument (`pip install pyinstrument`) and prints the hottest
functions by self time (function, file:line, % of sampled time) and, with `--tree`, pyinstrument's
call tree. Falls back to cProfile when pyinstrument is missing. `--lib langgraph` profiles the
LangGraph side instead.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import os
import sys
import tempfile
from typing import Any

from . import all_cases
from ._harness import Lib, _Side, load_libs


def _flat(root: Any) -> list[tuple[float, str, str]]:
    """Self time per function over a pyinstrument frame tree."""
    totals: dict[tuple[str, str], float] = collections.defaultdict(float)
    stack = [root]
    while stack:
        frame = stack.pop()
        stack.extend(frame.children)
        if frame.is_synthetic:
            continue
        # self time = own time minus real callees (pyinstrument may keep it in a "[self]" child)
        callees = sum(child.time for child in frame.children if not child.is_synthetic)
        where = f"{_short(frame.file_path or '?')}:{frame.line_no}"
        totals[(frame.function or "?", where)] += frame.time - callees
    return sorted(((t, f, w) for (f, w), t in totals.items()), reverse=True)


def _short(path: str) -> str:
    for marker in ("site-packages/", "/work/main/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return os.path.relpath(path) if path.startswith(os.getcwd()) else path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile")
    parser.add_argument("case")
    parser.add_argument("--size", type=int, help="override the case size")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--tree", action="store_true", help="also print pyinstrument's call tree")
    parser.add_argument("--lib", default="graphrun", choices=["graphrun", "langgraph"])
    args = parser.parse_args(argv)

    matches = [case for case in all_cases() if case.name == args.case]
    if not matches:
        print(f"unknown case {args.case!r}; see python -m benchmarks --list", file=sys.stderr)
        return 2
    case = matches[0]
    libs: list[Lib] = [lib for lib in load_libs(args.lib == "langgraph") if lib.name == args.lib]
    loop = asyncio.new_event_loop() if case.is_async else None
    with tempfile.TemporaryDirectory(prefix="graphrun-profile-") as tmpdir:
        side = _Side(case, libs[0], args.size or case.size, tmpdir, loop)
        side.open()
        gc.collect()
        gc.freeze()  # as the suite does: keeps the per-repetition gc.collect() out of the profile
        try:
            for _ in range(3):
                side.rep(record=False)
            try:
                from pyinstrument import Profiler
            except ImportError:
                import cProfile
                import pstats

                profile = cProfile.Profile()
                assert side.bound is not None
                side.bound.hooks = (profile.enable, profile.disable)
                for _ in range(args.reps):
                    side.rep()
                pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)
                return 0
            profiler = Profiler(interval=0.0002, async_mode="disabled")
            assert side.bound is not None
            # sample only the timed graph call; pyinstrument merges the sessions
            side.bound.hooks = (profiler.start, profiler.stop)
            for _ in range(args.reps):
                side.rep()
        finally:
            side.close()
    session = profiler.last_session
    root = session.root_frame() if session is not None else None
    if root is None:
        print("no samples", file=sys.stderr)
        return 1
    total = root.time or 1e-9
    stats = side.stats()
    print(
        f"{case.name} [{args.lib}, size {side.size}]: median {stats['median_ms']:.3f} ms over {stats['reps']} reps"
    )
    print(f"{'self %':>7}  {'self ms':>9}  function  (file:line)")
    for seconds, function, where in _flat(root)[: args.top]:
        print(
            f"{100 * seconds / total:6.1f}%  {1000 * seconds / args.reps:9.3f}  {function}  ({where})"
        )
    if args.tree:
        print(profiler.output_text(unicode=True, color=False, show_all=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
