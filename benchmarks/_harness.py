"""The measuring machinery: library namespaces, cases, interleaved timing, the table and JSON.

Method (see README.md): each case is built once per library from the same builder function;
both libraries run one warm-up, then repetitions alternate between them (graphrun, LangGraph,
LangGraph, graphrun, ...) so machine drift lands on both; `gc.collect()` runs before every
repetition and only the graph call itself is timed. We report the median and the inter-quartile
range (and keep min/max in the JSON).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import importlib
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from . import _postgres

__all__ = [
    "Case",
    "Lib",
    "Settings",
    "available",
    "format_table",
    "load_libs",
    "run_cases",
]


# --------------------------------------------------------------------------------------------
# library namespaces


@dataclasses.dataclass(frozen=True)
class Lib:
    """What a case builder may use: the same names under both libraries.

    `savers` maps "memory" / "sqlite" to a factory `(path, is_async) -> context manager` (sync
    or async as `is_async` says) that yields a checkpointer; a kind missing here is unsupported.
    """

    name: str
    version: str
    StateGraph: Any
    START: str
    END: str
    Send: Any
    Command: Any
    MessagesState: Any
    add_messages: Any
    get_stream_writer: Any
    savers: dict[str, Callable[[str, bool], Any]]
    entrypoint: Any = None  # the functional API (issue 17)
    task: Any = None


def _graphrun() -> Lib:
    import engine
    from checkpoints import InMemorySaver

    savers: dict[str, Callable[[str, bool], Any]] = {
        "memory": lambda path, is_async: _as_cm(InMemorySaver(), is_async),
    }
    try:  # the SQLite saver lands separately; run without it until it does
        from checkpoints import SqliteSaver
    except Exception:  # noqa: BLE001, S110 - any import failure means "no SQLite column"
        pass
    else:
        savers["sqlite"] = lambda path, is_async: SqliteSaver(path)  # sync + async CM itself
    if _postgres.available():
        from checkpoints import PostgresSaver

        savers["postgres"] = lambda path, is_async: PostgresSaver(_postgres.new_database())

    return Lib(
        name="graphrun",
        version=_git_describe(),
        StateGraph=engine.StateGraph,
        START=engine.START,
        END=engine.END,
        Send=engine.Send,
        Command=engine.Command,
        MessagesState=engine.MessagesState,
        add_messages=engine.add_messages,
        get_stream_writer=engine.get_stream_writer,
        savers=savers,
        entrypoint=engine.entrypoint,
        task=engine.task,
    )


def _langgraph() -> Lib:
    from importlib.metadata import version

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.config import get_stream_writer
    from langgraph.func import entrypoint, task
    from langgraph.graph import END, START, MessagesState, StateGraph, add_messages
    from langgraph.types import Command, Send

    savers: dict[str, Callable[[str, bool], Any]] = {
        "memory": lambda path, is_async: _as_cm(InMemorySaver(), is_async),
    }
    try:
        from langgraph.checkpoint.sqlite import SqliteSaver
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    except Exception:  # noqa: BLE001, S110 - langgraph-checkpoint-sqlite is optional
        pass
    else:
        savers["sqlite"] = lambda path, is_async: (
            AsyncSqliteSaver.from_conn_string(path)
            if is_async
            else SqliteSaver.from_conn_string(path)
        )
    if _postgres.available() and available("langgraph.checkpoint.postgres"):
        savers["postgres"] = lambda path, is_async: _langgraph_postgres(is_async)

    return Lib(
        name="langgraph",
        version=version("langgraph"),
        StateGraph=StateGraph,
        START=START,
        END=END,
        Send=Send,
        Command=Command,
        MessagesState=MessagesState,
        add_messages=add_messages,
        get_stream_writer=get_stream_writer,
        savers=savers,
        entrypoint=entrypoint,
        task=task,
    )


def _langgraph_postgres(is_async: bool) -> Any:
    """LangGraph's `langgraph-checkpoint-postgres` saver (psycopg 3) on a fresh database, set up
    (its tables created) before the case runs."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    url = _postgres.new_database()
    if is_async:

        @contextlib.asynccontextmanager
        async def acm() -> Any:
            async with AsyncPostgresSaver.from_conn_string(url) as saver:
                await saver.setup()
                yield saver

        return acm()

    @contextlib.contextmanager
    def cm() -> Any:
        with PostgresSaver.from_conn_string(url) as saver:
            saver.setup()
            yield saver

    return cm()


def _as_cm(value: Any, is_async: bool) -> Any:
    if is_async:

        @contextlib.asynccontextmanager
        async def acm() -> Any:
            yield value

        return acm()
    return contextlib.nullcontext(value)


def load_libs(with_langgraph: bool = True) -> list[Lib]:
    """graphrun always; LangGraph when importable (else its column stays empty)."""
    libs = [_graphrun()]
    if with_langgraph:
        try:
            libs.append(_langgraph())
        except Exception as error:  # noqa: BLE001 - not installed, or broken: report, go on
            print(
                f"[benchmarks] LangGraph not available ({error!r}); graphrun only", file=sys.stderr
            )
    return libs


def available(module: str) -> bool:
    try:
        importlib.import_module(module)
    except Exception:  # noqa: BLE001
        return False
    return True


def _git_describe() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        sha = out.stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "engine", "checkpoints"],
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.strip()
        if sha and dirty:
            sha += ".dirty"
    except Exception:  # noqa: BLE001 - no git, no sha
        sha = ""
    try:
        from importlib.metadata import version

        base = version("graphrun")
    except Exception:  # noqa: BLE001
        base = "dev"
    return f"{base}+{sha}" if sha else base


# --------------------------------------------------------------------------------------------
# cases


@dataclasses.dataclass(frozen=True)
class Case:
    """One measured scenario, built the same way for every library.

    `build(lib, size, is_async)` returns an uncompiled StateGraph; `make_input(size)` the input
    of one run. With `stream_mode` None the run is `invoke`/`ainvoke`; otherwise the run drains
    `stream`/`astream` in that mode and counts the chunks. `units(size)` is the number of units
    one run does (super-steps for the engine cases) for the derived per-unit figure; for stream
    cases the unit is a chunk and the count is measured. `summarize(output)` reduces an invoke
    output to something comparable across libraries, to catch a case doing different work.
    """

    name: str
    group: str
    build: Callable[[Lib, int, bool], Any]
    make_input: Callable[[int], Any]
    size: int
    quick_size: int
    is_async: bool = False
    saver: str | None = None
    stream_mode: str | Sequence[str] | None = None
    unit: str | None = None  # "step" -> µs/step; "chunk" -> chunks/s
    units: Callable[[int], int] | None = None
    summarize: Callable[[Any], Any] | None = None
    requires: tuple[str, ...] = ()
    note: str = ""


def variants(
    name: str,
    group: str,
    build: Callable[[Lib, int, bool], Any],
    make_input: Callable[[int], Any],
    size: int,
    quick_size: int,
    *,
    savers: Iterable[str | None] = (None, "memory", "sqlite"),
    modes: Iterable[bool] = (False, True),
    **extra: Any,
) -> list[Case]:
    """The sync/async x no saver/in-memory/SQLite family of one graph.

    Names follow LangGraph's suite: `<graph>`, `<graph>_checkpoint` (in-memory saver),
    `<graph>_sqlite`, each with an `_async` suffix for the ainvoke version.
    """
    out = []
    for saver in savers:
        for is_async in modes:
            suffix = {
                None: "", "memory": "_checkpoint", "sqlite": "_sqlite", "postgres": "_postgres"
            }[saver]
            out.append(
                Case(
                    name=f"{name}{suffix}{'_async' if is_async else ''}",
                    group=group,
                    build=build,
                    make_input=make_input,
                    size=size,
                    quick_size=quick_size,
                    is_async=is_async,
                    saver=saver,
                    **extra,
                )
            )
    return out


# --------------------------------------------------------------------------------------------
# running one library's side of a case


class _Bound:
    """A compiled graph plus everything one timed repetition needs.

    `hooks`, when set, is a (start, stop) pair called just outside the timed window (the
    profiler uses it to sample only the graph call).
    """

    hooks: tuple[Callable[[], Any], Callable[[], Any]] | None = None

    def __init__(self, case: Case, lib: Lib, graph: Any, size: int) -> None:
        self.case = case
        self.lib = lib
        self.graph = graph
        self.size = size

    def _config(self) -> dict[str, Any]:
        config: dict[str, Any] = {"recursion_limit": 10**9}
        if self.case.saver is not None:
            config["configurable"] = {"thread_id": uuid.uuid4().hex}
        return config

    def once(self) -> tuple[float, int, Any]:
        """One sync repetition: (seconds, chunk count, output)."""
        value = self.case.make_input(self.size)
        config = self._config()
        mode = self.case.stream_mode
        gc.collect()
        if self.hooks:
            self.hooks[0]()
        count, output = 0, None
        start = time.perf_counter()
        if mode is None:
            output = self.graph.invoke(value, config)
        else:
            for _ in self.graph.stream(value, config, stream_mode=mode):
                count += 1
        elapsed = time.perf_counter() - start
        if self.hooks:
            self.hooks[1]()
        return elapsed, count, output

    async def aonce(self) -> tuple[float, int, Any]:
        """One async repetition: (seconds, chunk count, output)."""
        value = self.case.make_input(self.size)
        config = self._config()
        mode = self.case.stream_mode
        gc.collect()
        if self.hooks:
            self.hooks[0]()
        count, output = 0, None
        start = time.perf_counter()
        if mode is None:
            output = await self.graph.ainvoke(value, config)
        else:
            async for _ in self.graph.astream(value, config, stream_mode=mode):
                count += 1
        elapsed = time.perf_counter() - start
        if self.hooks:
            self.hooks[1]()
        return elapsed, count, output


class _Side:
    """One library's side of a case: opens the saver, compiles, runs repetitions, closes."""

    def __init__(self, case: Case, lib: Lib, size: int, tmpdir: str, loop: Any) -> None:
        self.case, self.lib, self.size, self.loop = case, lib, size, loop
        self.path = os.path.join(tmpdir, f"{lib.name}-{case.name}.sqlite")
        self.times: list[float] = []
        self.counts: list[int] = []
        self.summary: Any = None
        self._sync_stack = contextlib.ExitStack()
        self._async_stack = contextlib.AsyncExitStack()
        self.bound: _Bound | None = None
        self.saver: Any = None

    def open(self) -> None:
        if self.case.is_async:
            self.bound = self.loop.run_until_complete(self._aopen())
        else:
            saver = None
            if self.case.saver is not None:
                cm = self.lib.savers[self.case.saver](self.path, False)
                saver = self._sync_stack.enter_context(cm)
            self.saver = saver
            self.bound = self._compile(saver)

    async def _aopen(self) -> _Bound:
        saver = None
        if self.case.saver is not None:
            cm = self.lib.savers[self.case.saver](self.path, True)
            saver = await self._async_stack.enter_async_context(cm)
        self.saver = saver
        return self._compile(saver)

    def _compile(self, saver: Any) -> _Bound:
        builder = self.case.build(self.lib, self.size, self.case.is_async)
        return _Bound(self.case, self.lib, builder.compile(checkpointer=saver), self.size)

    def rep(self, record: bool = True) -> float:
        assert self.bound is not None
        if self.case.is_async:
            elapsed, count, output = self.loop.run_until_complete(self.bound.aonce())
        else:
            elapsed, count, output = self.bound.once()
        # graphrun's SqliteSaver copies its WAL into the file after a run returns; wait for it
        # (untimed) so it cannot slow the next measurement, which may be the other library's.
        wait_idle = getattr(self.saver, "wait_idle", None)
        if wait_idle is not None:
            wait_idle()
        if record:
            self.times.append(elapsed)
            self.counts.append(count)
        elif self.summary is None:
            if self.case.stream_mode is not None:
                self.summary = {"chunks": count}
            elif self.case.summarize is not None:
                self.summary = self.case.summarize(output)
        return elapsed

    def close(self) -> None:
        if self.case.is_async:
            self.loop.run_until_complete(self._async_stack.aclose())
        self._sync_stack.close()

    def stats(self) -> dict[str, Any]:
        ms = sorted(t * 1000.0 for t in self.times)
        q1, _, q3 = (
            statistics.quantiles(ms, n=4, method="inclusive") if len(ms) > 1 else (ms[0],) * 3
        )
        out: dict[str, Any] = {
            "median_ms": statistics.median(ms),
            "q1_ms": q1,
            "q3_ms": q3,
            "min_ms": ms[0],
            "max_ms": ms[-1],
            "reps": len(ms),
        }
        unit = self.case.unit
        if unit == "step" and self.case.units is not None:
            steps = self.case.units(self.size)
            out["steps"] = steps
            out["us_per_step"] = out["median_ms"] * 1000.0 / steps
        elif unit == "chunk":
            chunks = int(statistics.median(self.counts))
            out["chunks"] = chunks
            out["chunks_per_s"] = chunks / (out["median_ms"] / 1000.0) if out["median_ms"] else 0.0
        return out


# --------------------------------------------------------------------------------------------
# the run


@dataclasses.dataclass(frozen=True)
class Settings:
    quick: bool
    warmup: int
    reps: int
    min_reps: int
    budget_s: float  # per case: stop adding repetitions past this (after min_reps)

    @classmethod
    def make(cls, quick: bool, reps: int | None = None) -> Settings:
        if quick:
            return cls(
                quick=True, warmup=1, reps=reps or 3, min_reps=min(3, reps or 3), budget_s=0.6
            )
        return cls(
            quick=False, warmup=2, reps=reps or 15, min_reps=min(5, reps or 15), budget_s=12.0
        )


def _missing(case: Case, libs: Sequence[Lib]) -> str | None:
    for module in case.requires:
        if not available(module):
            return f"needs {module}"
    if case.saver is not None:
        for lib in libs:
            if case.saver not in lib.savers:
                return f"{lib.name} has no {case.saver} saver"
    return None


def _failure(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def run_case(case: Case, libs: Sequence[Lib], settings: Settings) -> dict[str, Any]:
    size = case.quick_size if settings.quick else case.size
    result: dict[str, Any] = {
        "case": case.name,
        "group": case.group,
        "size": size,
        "mode": "async" if case.is_async else "sync",
        "saver": case.saver,
        "stream_mode": case.stream_mode,
        "note": case.note,
    }
    wall = time.perf_counter()
    loop = asyncio.new_event_loop() if case.is_async else None
    opened: list[_Side] = []
    failed: dict[str, str] = {}  # library -> error; the other library still gets measured
    with tempfile.TemporaryDirectory(prefix="graphrun-bench-") as tmpdir:
        try:
            for lib in libs:
                side = _Side(case, lib, size, tmpdir, loop)
                opened.append(side)
                try:
                    side.open()
                except Exception as error:  # noqa: BLE001
                    failed[lib.name] = _failure(error)
            # Park everything alive now (libraries, compiled graphs) in the permanent GC
            # generation: the per-repetition gc.collect() then costs microseconds, not tens of
            # milliseconds, and collections inside timed runs walk only the run's own objects.
            gc.collect()
            gc.freeze()
            for _ in range(settings.warmup):
                for side in opened:
                    if side.lib.name not in failed:
                        try:
                            side.rep(record=False)
                        except Exception as error:  # noqa: BLE001
                            failed[side.lib.name] = _failure(error)
            sides = [side for side in opened if side.lib.name not in failed]
            started = time.perf_counter()
            for index in range(settings.reps if sides else 0):
                order = sides if index % 2 == 0 else sides[::-1]
                for side in order:
                    side.rep()
                if (
                    index + 1 >= settings.min_reps
                    and time.perf_counter() - started > settings.budget_s
                ):
                    break
            for side in sides:
                result[side.lib.name] = side.stats()
        finally:
            gc.unfreeze()
            for side in opened:
                try:
                    side.close()
                except Exception as error:  # noqa: BLE001
                    print(f"[benchmarks] closing {side.lib.name} saver: {error!r}", file=sys.stderr)
            if loop is not None:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()
    result["wall_s"] = round(time.perf_counter() - wall, 2)
    if failed:
        result["errors"] = failed
        result["error"] = "; ".join(f"{name}: {text}" for name, text in failed.items())
    summaries = {side.lib.name: side.summary for side in sides}
    result["summary"] = summaries.get("graphrun")
    if len({repr(s) for s in summaries.values()}) > 1:
        result["mismatch"] = summaries
    g, lg = result.get("graphrun"), result.get("langgraph")
    if g and lg:
        result["ratio"] = lg["median_ms"] / g["median_ms"]
    return result


def run_cases(
    cases: Sequence[Case],
    libs: Sequence[Lib],
    settings: Settings,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    results = []
    for case in cases:
        why = _missing(case, libs)
        if why is not None:
            result = {"case": case.name, "group": case.group, "skipped": why}
        else:
            try:
                result = run_case(case, libs, settings)
            except Exception as error:  # noqa: BLE001 - one broken case must not sink the suite
                result = {"case": case.name, "group": case.group, "error": _failure(error)}
        results.append(result)
        if progress is not None:
            progress(result)
    return {"meta": _meta(libs, settings), "cases": results}


def _meta(libs: Sequence[Lib], settings: Settings) -> dict[str, Any]:
    return {
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "libraries": {lib.name: lib.version for lib in libs},
        "settings": dataclasses.asdict(settings),
    }


# --------------------------------------------------------------------------------------------
# the table


def _ms(value: float) -> str:
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def _cell(stats: dict[str, Any] | None, spread: bool) -> str:
    if not stats:
        return ""
    text = _ms(stats["median_ms"])
    if spread:
        text += f" ±{_ms((stats['q3_ms'] - stats['q1_ms']) / 2)}"
    return text


def _per_unit(result: dict[str, Any]) -> str:
    if result.get("group") == "http":  # runs/s, events/s or MiB, worded by benchmarks.http
        return result.get("note", "")
    parts = []
    for name in ("graphrun", "langgraph"):
        stats = result.get(name)
        if not stats:
            continue
        if "us_per_step" in stats:
            parts.append(f"{stats['us_per_step']:.1f}")
        elif "chunks_per_s" in stats:
            parts.append(f"{stats['chunks_per_s']:,.0f}")
    if not parts:
        return ""
    measured = result.get("graphrun") or result.get("langgraph") or {}
    unit = "µs/step" if "us_per_step" in measured else "chunks/s"
    return " vs ".join(parts) + f" {unit}"


def format_table(report: dict[str, Any], markdown: bool = False) -> str:
    header = [
        "case",
        "graphrun ms (median ±IQR/2)",
        "LangGraph ms",
        "ratio",
        "per unit (graphrun vs LangGraph)",
    ]
    rows = []
    for result in report["cases"]:
        name = result["case"]
        if "skipped" in result:
            rows.append([name, "", "", "", f"skipped: {result['skipped']}"])
            continue
        if "error" in result and not (result.get("graphrun") or result.get("langgraph")):
            rows.append([name, "", "", "", f"error: {result['error'][:90]}"])
            continue
        ratio = result.get("ratio")
        ratio_text = f"{ratio:.1f}x" if ratio is not None else ""
        per_unit = _per_unit(result)
        if "error" in result:
            per_unit = (per_unit + " " if per_unit else "") + f"error: {result['error'][:90]}"
        if "mismatch" in result:
            per_unit = (per_unit + " " if per_unit else "") + f"MISMATCH {result['mismatch']}"
        rows.append(
            [
                name,
                _cell(result.get("graphrun"), True),
                _cell(result.get("langgraph"), False),
                ratio_text,
                per_unit,
            ]
        )
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|---|---:|---:|---:|---|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [
        max(len(header[i]), *(len(row[i]) for row in rows)) if rows else len(header[i])
        for i in range(5)
    ]
    widths[4] = len(header[4])
    fmt = lambda row: "  ".join(
        cell.ljust(widths[i]) if i in (0, 4) else cell.rjust(widths[i])
        for i, cell in enumerate(row)
    ).rstrip()
    return "\n".join([fmt(header), fmt(["-" * w for w in widths]), *map(fmt, rows)])
