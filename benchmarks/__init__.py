"""graphrun vs LangGraph, side by side: `python -m benchmarks [--quick] [--json PATH] [--filter S]`.

Cases are written once as builder functions over a `lib` namespace (see `_harness.Lib`), so the
graphrun graph and the LangGraph graph come from the same code. Groups:

- `engine`: per-step overhead of a 100-node no-op chain (issue 2);
- `checkpoints`: per-step cost of the savers, in-memory and SQLite (issue 3);
- `graphs`: the graphs of LangGraph's own benchmark suite, sync/async, with and without savers,
  and a ReAct agent from each library's own prebuilt `create_react_agent` (`prebuilt.py`);
- `streaming`: chunks per second per stream mode;
- `func`: the functional API, an entrypoint fanning out tasks (issue 17).
"""

from ._harness import Case, Lib, Settings, format_table, load_libs, run_cases

__all__ = ["Case", "Lib", "Settings", "all_cases", "format_table", "load_libs", "run_cases"]


def all_cases() -> list[Case]:
    """Every case, in table order."""
    from . import checkpoints, engine, func, graphs, prebuilt, streaming

    return [
        *engine.cases(), *checkpoints.cases(), *graphs.cases(), *prebuilt.cases(),
        *streaming.cases(), *func.cases(),
    ]
