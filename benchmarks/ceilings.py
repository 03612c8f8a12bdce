"""What bounds the cases that miss 10x: the work outside the engine, timed directly.

`python -m benchmarks.ceilings [CASE ...] [--reps N]`. Some cases spend much of their time in
work both libraries do the same way: the benchmark's own graph code (nodes, routers, the fake
model and tool), the state objects both engines build from the graph's schema (a dataclass, a
pydantic model and its validators), LangChain message objects, a chat model's token loop, a
thread round trip per step of a live sync stream. That work bounds the ratio: an engine that
cost nothing would still take that long, so the ratio cannot pass LangGraph's time divided by
it (the "ceiling" column). "engine" is the ratio of what is left on each side.

How each is timed:
- graph code and objects: the case runs as in the suite, with every node and router of its
  builder and the `__init__` of its state class and LangChain's message classes wrapped in a
  timer (nested timed calls count once; the timer adds ~0.1 µs per call, about 8 µs per
  `wide_*` run); sync cases without a saver only, where those calls run in the calling
  thread;
- `stream_messages*`: the case's chat model streaming its answer to a handler that does
  nothing, outside any graph;
- `stream_multi`: one bare thread round trip (a `SimpleQueue` ping-pong) per super-step;
- `prebuilt_react_agent*` (issue 17): the case runs as in the suite, once per library, with
  LangChain's chat model and tool invocations (`BaseChatModel.invoke`/`ainvoke`,
  `BaseTool.invoke`/`ainvoke`: callbacks, message normalization, the scripted model, the
  tool's argument validation and signature checks) and LangChain's message `__init__` wrapped
  in a timer; each library's share of its own run, times its median in the suite, and the
  smaller of the two is the work both pay. Every variant (async, with a saver) can be timed
  this way: the calls run one at a time.
The two libraries' times come from the suite's own `run_case` (`--reps` repetitions each).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import functools
import queue
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from . import all_cases, streaming
from ._harness import Case, Lib, Settings, _Side, load_libs, run_case

DEFAULT_CASES = (
    "wide_dict",
    "wide_state",
    "pydantic_state",
    "react_agent_10x",
    "react_agent_100x",
    "stream_multi",
    "stream_messages",
    "stream_messages_async",
    "prebuilt_react_agent_10x",
    "prebuilt_react_agent_10x_async",
    "prebuilt_react_agent_100x",
    "prebuilt_react_agent_100x_async",
)


class _Clock:
    """Time spent inside wrapped callables; a timed call inside another counts once."""

    def __init__(self) -> None:
        self.spans: list[float] = []
        self._inside = threading.local()

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if getattr(self._inside, "on", False):
                return fn(*args, **kwargs)
            self._inside.on = True
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spans.append(time.perf_counter() - start)
                self._inside.on = False

        return timed

    def wrap_async(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`wrap` for a coroutine function; the span includes what it awaits (LangChain's
        callbacks), which is right while nothing else runs on the loop meanwhile."""

        @functools.wraps(fn)
        async def timed(*args: Any, **kwargs: Any) -> Any:
            if getattr(self._inside, "on", False):
                return await fn(*args, **kwargs)
            self._inside.on = True
            start = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                self.spans.append(time.perf_counter() - start)
                self._inside.on = False

        return timed

    def take(self) -> float:
        total, self.spans = sum(self.spans), []
        return total


def _object_classes(schema: Any) -> list[type]:
    """Classes whose instances both engines build for the graph: the state, messages."""
    classes = []
    if dataclasses.is_dataclass(schema) or hasattr(schema, "model_fields"):
        classes.append(schema)
    try:
        from langchain_core import messages
    except ImportError:
        return classes
    return [*classes, messages.HumanMessage, messages.AIMessage, messages.ToolMessage]


@contextlib.contextmanager
def _timed_inits(classes: list[type], clock: _Clock) -> Iterator[None]:
    saved = [(cls, cls.__dict__.get("__init__")) for cls in classes]
    for cls in classes:
        cls.__init__ = clock.wrap(cls.__init__)  # type: ignore[misc]
    try:
        yield
    finally:
        for cls, own in saved:
            if own is None:
                del cls.__init__  # type: ignore[misc]
            else:
                cls.__init__ = own  # type: ignore[misc]


def _outside_graph_code(case: Case, lib: Lib, reps: int) -> float:
    """Median seconds per run in graph code and state/message objects (see the docstring)."""
    if case.is_async or case.saver is not None:
        raise ValueError(f"{case.name}: only sync cases without a saver can be instrumented")
    clock = _Clock()
    schemas: list[Any] = []

    def build(lib: Lib, size: int, is_async: bool) -> Any:
        builder = case.build(lib, size, is_async)
        for spec in builder.nodes.values():
            spec.action = clock.wrap(spec.action)
        for branches in builder.branches.values():
            for branch in branches.values():
                branch.path = clock.wrap(branch.path)
        schemas.append(builder.state_schema)
        return builder

    with tempfile.TemporaryDirectory(prefix="graphrun-ceilings-") as tmpdir:
        side = _Side(dataclasses.replace(case, build=build), lib, case.size, tmpdir, None)
        side.open()
        try:
            with _timed_inits(_object_classes(schemas[0]), clock):
                for _ in range(2):
                    side.rep(record=False)
                clock.take()
                spans = []
                for _ in range(reps):
                    side.rep(record=False)
                    spans.append(clock.take())
        finally:
            side.close()
    return statistics.median(spans)


@contextlib.contextmanager
def _timed_langchain_calls(clock: _Clock) -> Iterator[None]:
    """Time every chat model and tool invocation (class level, so both libraries' calls)."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool, StructuredTool, Tool

    classes = (BaseChatModel, BaseTool, StructuredTool, Tool)  # the last two own an ainvoke
    saved = [(cls, name, cls.__dict__[name]) for cls in classes
             for name in ("invoke", "ainvoke") if name in cls.__dict__]
    for cls, name, fn in saved:
        setattr(cls, name, (clock.wrap_async if name == "ainvoke" else clock.wrap)(fn))
    try:
        yield
    finally:
        for cls, name, fn in saved:
            setattr(cls, name, fn)


def _langchain_share(case: Case, lib: Lib, reps: int) -> float:
    """Median share of `lib`'s run spent in LangChain's model and tool calls and message
    objects (see the docstring). A share of the same run, not seconds: on a loaded machine
    the suite's timing and this one drift apart, a run's own proportions much less."""
    clock = _Clock()
    loop = asyncio.new_event_loop() if case.is_async else None
    with tempfile.TemporaryDirectory(prefix="graphrun-ceilings-") as tmpdir:
        side = _Side(case, lib, case.size, tmpdir, loop)
        side.open()
        try:
            with _timed_langchain_calls(clock), _timed_inits(_object_classes(None), clock):
                for _ in range(2):
                    side.rep(record=False)
                clock.take()
                shares = []
                for _ in range(reps):
                    elapsed = side.rep(record=False)
                    shares.append(clock.take() / elapsed)
        finally:
            side.close()
            if loop is not None:
                loop.close()
    return statistics.median(shares)


def _outside_langchain(
    case: Case, libs: list[Lib], reps: int, result: dict[str, Any]
) -> tuple[float, str]:
    """The LangChain work both libraries pay: each side's share of its own run times its
    median in the suite, the smaller of the two (each library passes its own config and
    callbacks, so LangChain's work differs a little)."""
    spans, shown = [], []
    for lib in libs:
        if not result.get(lib.name):
            continue
        share = _langchain_share(case, lib, reps)
        spans.append(share * result[lib.name]["median_ms"] / 1e3)
        shown.append(f"{share:.0%} of {lib.name}'s run")
    what = "LangChain model and tool calls, messages: " + ", ".join(shown)
    return min(spans), what


def _outside_chat_model(case: Case, reps: int) -> float:
    """Median seconds for the case's chat model to stream its answer to a no-op handler."""
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.tracers._streaming import _StreamingCallbackHandler

    class Handler(BaseCallbackHandler, _StreamingCallbackHandler):  # as a messages stream's
        run_inline = True

        def tap_output_iter(self, run_id: Any, output: Any) -> Any:
            return output

        def tap_output_aiter(self, run_id: Any, output: Any) -> Any:
            return output

    models = streaming.fake_chat_models(case.size)

    def once() -> float:
        start = time.perf_counter()
        models().invoke("hi?", {"callbacks": [Handler()]})
        return time.perf_counter() - start

    async def once_async() -> float:
        start = time.perf_counter()
        await models().ainvoke("hi?", {"callbacks": [Handler()]})
        return time.perf_counter() - start

    async def all_async() -> list[float]:
        await once_async()
        return [await once_async() for _ in range(reps)]

    if case.is_async:
        return statistics.median(asyncio.run(all_async()))
    once()
    return statistics.median(once() for _ in range(reps))


def _thread_round_trip(count: int = 2000) -> float:
    """Median seconds of a bare hand-off to another thread and back."""
    there: queue.SimpleQueue[Any] = queue.SimpleQueue()
    back: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def echo() -> None:
        while (item := there.get()) is not None:
            back.put(item)

    thread = threading.Thread(target=echo, daemon=True)
    thread.start()
    spans = []
    for index in range(count):
        start = time.perf_counter()
        there.put(index)
        back.get()
        spans.append(time.perf_counter() - start)
    there.put(None)
    thread.join()
    return statistics.median(spans)


def _supported(case: Case) -> bool:
    if case.name.startswith(("stream_messages", "prebuilt_react_agent")):
        return True
    if case.name == "stream_multi":
        return True
    return not case.is_async and case.saver is None and case.stream_mode is None


def _outside(
    case: Case, libs: list[Lib], reps: int, result: dict[str, Any]
) -> tuple[float, str]:
    lib = libs[0]
    if case.name.startswith("prebuilt_react_agent"):
        return _outside_langchain(case, libs, reps, result)
    if case.name.startswith("stream_messages"):
        return _outside_chat_model(case, reps), "the chat model's token loop"
    if case.name == "stream_multi":
        return case.size * _thread_round_trip(), f"{case.size} thread round trips"
    return _outside_graph_code(case, lib, reps), "graph code and objects"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ceilings")
    parser.add_argument("cases", nargs="*", default=list(DEFAULT_CASES))
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args(argv)
    by_name = {case.name: case for case in all_cases()}
    unknown = [name for name in args.cases if name not in by_name]
    if unknown:
        print(f"unknown case(s) {unknown}; see python -m benchmarks --list", file=sys.stderr)
        return 2
    unsupported = [name for name in args.cases if not _supported(by_name[name])]
    if unsupported:
        print(
            f"cannot time the work outside the engine of {unsupported}: only sync cases without "
            "a saver, stream_multi, stream_messages* and prebuilt_react_agent*",
            file=sys.stderr,
        )
        return 2
    libs = load_libs(True)
    print("| case | graphrun ms | LangGraph ms | ratio | outside the engine | ceiling | engine |")
    print("|---|---:|---:|---:|---|---:|---:|")
    for name in args.cases:
        case = by_name[name]
        result = run_case(case, libs, Settings.make(False, args.reps))  # as the suite times it
        if "graphrun" not in result:
            print(f"{name}: {result.get('error', 'not measured')}", file=sys.stderr)
            continue
        outside, what = _outside(case, libs, args.reps, result)
        ours = result["graphrun"]["median_ms"] / 1e3
        theirs = result["langgraph"]["median_ms"] / 1e3 if result.get("langgraph") else None
        row = [name, f"{ours * 1e3:.3g}", "", "", f"{outside * 1e3:.3g} ms ({what})", "", ""]
        if theirs is not None:
            row[2:4] = [f"{theirs * 1e3:.3g}", f"{theirs / ours:.1f}x"]
            row[5] = f"{theirs / outside:.1f}x"
            # within 5% of the outside work the difference is noise, not engine time
            left = ours - outside
            row[6] = f"{(theirs - outside) / left:.1f}x" if left > 0.05 * ours else "at the floor"
        print("| " + " | ".join(row) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
