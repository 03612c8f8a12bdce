"""`python -m benchmarks.long_thread`: one long chat thread (issue 32), graphrun vs LangGraph.

`long_thread_chat`: one node over `MessagesState`; each turn invokes the thread with a 1 KB human
message and the node answers with a 1 KB AI message (random text, so nothing compresses). With
`--tools`, every 10th turn the node also returns a 100 KB tool result. Reported per saver
(memory, SQLite, PostgreSQL) and library:

- bytes stored: the SQLite file with its WAL, the PostgreSQL tables with their indexes and
  TOAST, the process's resident memory growth for the in-memory savers;
- the distinct content (the message texts' bytes), for the ratio;
- time per turn: the median of turns 10-30 and of the last 20 turns, and their ratio;
- `get_state` at the end: warm (the same saver) and cold (a new saver on the same database).

`--http` runs the same turns against a `graphrun serve` subprocess (the real CLI) with
`POST /threads/{id}/runs/wait`, and times `GET /threads/{id}/state`; `--http-backends` picks
its back ends: `sqlite` (the default) and/or `postgres` (PostgreSQL + Redis).

    python -m benchmarks.long_thread [--turns 1000] [--savers memory,sqlite,postgres]
                                     [--libs graphrun,langgraph] [--tools] [--http]
                                     [--http-backends sqlite,postgres] [--json PATH]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from . import _postgres
from ._harness import Lib, load_libs

__all__ = ["main", "run_http", "run_in_process"]

_KB = 1024
_TOOL_EVERY = 10


def _text(size: int) -> str:
    return os.urandom(size // 2).hex()  # random, so neither side can compress it


def build(lib: Lib, tools: bool) -> Any:
    """START -> chat -> END over MessagesState; `chat` answers each turn with 1 KB (plus a
    100 KB tool result every 10th turn with `tools`)."""

    def chat(state: Any) -> dict[str, Any]:
        turn = len(state["messages"])
        reply: list[dict[str, Any]] = []
        if tools and turn % (_TOOL_EVERY * 2) == 1:
            call = {"name": "search", "args": {"q": "x"}, "id": f"call_{turn}"}
            reply.append({"type": "ai", "content": "", "tool_calls": [call]})
            reply.append(
                {"type": "tool", "content": _text(100 * _KB), "tool_call_id": f"call_{turn}"}
            )
        reply.append({"type": "ai", "content": _text(_KB)})
        return {"messages": reply}

    builder = lib.StateGraph(lib.MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(lib.START, "chat")
    builder.add_edge("chat", lib.END)
    return builder


def _rss() -> int:
    gc.collect()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _pg_bytes(url: str) -> int:
    import asyncio

    import asyncpg

    async def size() -> int:
        conn = await asyncpg.connect(url)
        try:
            return int(await conn.fetchval(
                "SELECT coalesce(sum(pg_total_relation_size(relid)), 0) FROM pg_stat_user_tables"
            ))
        finally:
            await conn.close()

    return asyncio.run(size())


def _sqlite_bytes(path: str) -> int:
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


def _content(messages: list[Any]) -> int:
    return sum(
        len(m.get("content") or "") if isinstance(m, dict) else len(m.content or "")
        for m in messages
    )


def _open(lib: Lib, saver: str, work: str) -> tuple[Any, Any]:
    """(context manager, where): a fresh saver for `lib` and what its bytes are measured on."""
    if saver == "sqlite":
        path = os.path.join(work, f"{lib.name}.sqlite")
        return lib.savers["sqlite"](path, False), path
    if saver == "postgres":
        url = _postgres.new_database()
        if lib.name == "graphrun":
            from checkpoints import PostgresSaver

            return PostgresSaver(url), url
        from langgraph.checkpoint.postgres import PostgresSaver as LgPostgres

        return _lg_postgres(LgPostgres, url), url
    return lib.savers["memory"]("", False), None


def _lg_postgres(cls: Any, url: str) -> Any:
    import contextlib

    @contextlib.contextmanager
    def cm() -> Any:
        with cls.from_conn_string(url) as saver:
            saver.setup()
            yield saver

    return cm()


def _stored(saver: str, where: Any, rss_before: int) -> int:
    if saver == "sqlite":
        return _sqlite_bytes(where)
    if saver == "postgres":
        return _pg_bytes(where)
    return _rss() - rss_before


def _median_ms(times: list[float]) -> float:
    return statistics.median(times) * 1000 if times else float("nan")


def _get_state_ms(graph: Any, config: dict[str, Any], reps: int = 20) -> float:
    times = []
    for _ in range(reps):
        started = time.perf_counter()
        graph.get_state(config)
        times.append(time.perf_counter() - started)
    return _median_ms(times)


def run_in_process(lib: Lib, saver: str, turns: int, tools: bool) -> dict[str, Any]:
    """One thread of `turns` turns on a fresh saver; the figures the module docstring lists."""
    config = {"configurable": {"thread_id": "long"}}
    times: list[float] = []
    with tempfile.TemporaryDirectory() as work:
        rss_before = _rss()
        cm, where = _open(lib, saver, work)
        with cm as checkpointer:
            graph = build(lib, tools).compile(checkpointer=checkpointer)
            for _ in range(turns):
                body = {"messages": [{"type": "human", "content": _text(_KB)}]}
                started = time.perf_counter()
                graph.invoke(body, config)
                times.append(time.perf_counter() - started)
            warm = _get_state_ms(graph, config)
            messages = graph.get_state(config).values["messages"]
            stored = _stored(saver, where, rss_before)
        cold = float("nan")
        if where is not None:
            cm, _ = _reopen(lib, saver, where)
            with cm as checkpointer:
                graph = build(lib, tools).compile(checkpointer=checkpointer)
                cold = _get_state_ms(graph, config, reps=1)
    return _figures(times, stored, _content(messages), len(messages), warm, cold)


def _reopen(lib: Lib, saver: str, where: Any) -> tuple[Any, Any]:
    if saver == "sqlite":
        return lib.savers["sqlite"](where, False), where
    if lib.name == "graphrun":
        from checkpoints import PostgresSaver

        return PostgresSaver(where), where
    from langgraph.checkpoint.postgres import PostgresSaver as LgPostgres

    return _lg_postgres(LgPostgres, where), where


def _figures(
    times: list[float], stored: int, content: int, messages: int, warm: float, cold: float
) -> dict[str, Any]:
    start = _median_ms(times[10:30])
    end = _median_ms(times[-20:])
    return {
        "turns": len(times), "messages": messages, "content_bytes": content,
        "stored_bytes": stored, "stored_over_content": stored / content if content else None,
        "turn_start_ms": start, "turn_end_ms": end, "end_over_start": end / start,
        "get_state_ms": warm, "get_state_cold_ms": cold, "total_s": sum(times),
    }


_SERVED = """
import os
from typing import Any
from engine import StateGraph, START, END, MessagesState

def _text(size): return os.urandom(size // 2).hex()

def chat(state):
    turn = len(state["messages"])
    reply = []
    if TOOLS and turn % 20 == 1:
        call = {{"name": "search", "args": {{"q": "x"}}, "id": f"call_{{turn}}"}}
        reply.append({{"type": "ai", "content": "", "tool_calls": [call]}})
        reply.append({{"type": "tool", "content": _text(102400), "tool_call_id": f"call_{{turn}}"}})
    reply.append({{"type": "ai", "content": _text(1024)}})
    return {{"messages": reply}}

TOOLS = {tools}
chat_graph = StateGraph(MessagesState)
chat_graph.add_node("chat", chat)
chat_graph.add_edge(START, "chat")
chat_graph.add_edge("chat", END)
chat_graph = chat_graph.compile()
"""


def run_http(turns: int, tools: bool, backend: str = "sqlite") -> dict[str, Any]:
    """The same thread over HTTP against `graphrun serve`: SQLite under a temporary dir, or
    (`backend="postgres"`) a fresh PostgreSQL database with Redis, whose tables are measured."""
    import contextlib

    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        extra: list[str] = []
        url = None
        if backend == "postgres":
            from tests.services import RedisServer

            url = _postgres.new_database()
            extra = ["--database-url", url, "--redis-url", stack.enter_context(RedisServer()).url]
        return _served(Path(tmp), turns, tools, extra, url)


def _served(work: Path, turns: int, tools: bool, extra: list[str], pg_url: str | None
            ) -> dict[str, Any]:
    import httpx

    from .http import Server, free_port

    (work / "graphs.py").write_text(textwrap.dedent(_SERVED.format(tools=tools)))
    config = {"dependencies": ["."], "graphs": {"chat": "./graphs.py:chat_graph"}, "env": {}}
    (work / "langgraph.json").write_text(json.dumps(config))
    port = free_port()
    argv = [sys.executable, "-m", "http_adapter.cli", "serve", "--config",
            str(work / "langgraph.json"), "--port", str(port), "--log-level", "warning",
            "--data-dir", str(work / "data"), *extra]
    server = Server("graphrun", argv, port, work)
    try:
        client = httpx.Client(base_url=server.url, timeout=120)
        return _http_turns(client, work, turns, pg_url, server.proc.pid)
    finally:
        server.stop()


def _cpu_s(pid: int) -> float:
    """The CPU time all of a process's threads ran, in s (Linux `schedstat`, ns resolution;
    nan elsewhere): the server's own work a turn, apart from the client's and the wait."""
    try:
        tasks = Path(f"/proc/{pid}/task").iterdir()
        return sum(int((t / "schedstat").read_text().split()[0]) for t in tasks) / 1e9
    except (OSError, ValueError, IndexError):
        return float("nan")


def _http_turns(client: Any, work: Path, turns: int, pg_url: str | None, pid: int
                ) -> dict[str, Any]:
    """The thread's turns, then its `/state` timed. The last 20 turns alternate with turns 10-30
    of a new thread, which time the start again under the same machine load as the end."""
    with client:
        thread = client.post("/threads", json={}).json()["thread_id"]
        times, cpu, fresh_times = [], [], []
        fresh = None
        for turn in range(turns):
            if turn == turns - 20 and turns > 60:
                fresh = client.post("/threads", json={}).json()["thread_id"]
                for _ in range(10):
                    _wait_turn(client, fresh)
            if fresh is not None:
                fresh_times.append(_wait_turn(client, fresh))
            before = _cpu_s(pid)
            times.append(_wait_turn(client, thread))
            cpu.append(_cpu_s(pid) - before)
        state_times = []
        for _ in range(10):
            started = time.perf_counter()
            state = client.get(f"/threads/{thread}/state")
            state.raise_for_status()
            state_times.append(time.perf_counter() - started)
        messages = state.json()["values"]["messages"]
    stored = (_pg_bytes(pg_url) if pg_url else
              sum(p.stat().st_size for p in (work / "data").rglob("*") if p.is_file()))
    figures = _figures(times, stored, _content(messages), len(messages),
                       _median_ms(state_times), float("nan"))
    # the server's CPU while it answered a turn: turns 10-30, and the last 20
    figures["server_cpu_start_ms"] = statistics.mean(cpu[10:30]) * 1000 if turns > 30 else None
    figures["server_cpu_end_ms"] = statistics.mean(cpu[-20:]) * 1000 if turns > 30 else None
    if fresh_times:
        figures["turn_start_alongside_ms"] = _median_ms(fresh_times)
        figures["end_over_start_alongside"] = figures["turn_end_ms"] / _median_ms(fresh_times)
    return figures


def _wait_turn(client: Any, thread: str) -> float:
    """One `/runs/wait` turn of `thread` with a new 1 KB message; its time in s."""
    body = {"assistant_id": "chat",
            "input": {"messages": [{"type": "human", "content": _text(_KB)}]}}
    started = time.perf_counter()
    client.post(f"/threads/{thread}/runs/wait", json=body).raise_for_status()
    return time.perf_counter() - started


def _row(name: str, r: dict[str, Any]) -> str:
    return (
        f"| {name} | {r['stored_bytes'] / 1e6:,.1f} MB | {r['stored_over_content']:,.1f}x | "
        f"{r['turn_start_ms']:.2f} -> {r['turn_end_ms']:.2f} ms ({r['end_over_start']:.1f}x) | "
        f"{r['get_state_ms']:.2f} ms | {r['get_state_cold_ms']:.1f} ms | {r['total_s']:.1f} s |"
    )


def _print_http_extras(r: dict[str, Any]) -> None:
    if r["server_cpu_end_ms"] is not None:
        print(f"  server CPU a turn: {r['server_cpu_start_ms']:.2f} -> "
              f"{r['server_cpu_end_ms']:.2f} ms", flush=True)
    if "turn_start_alongside_ms" in r:
        print(f"  a new thread's turns 10-30 alongside the last 20: "
              f"{r['turn_start_alongside_ms']:.2f} -> {r['turn_end_ms']:.2f} ms "
              f"({r['end_over_start_alongside']:.1f}x)", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.long_thread")
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--savers", default="memory,sqlite,postgres")
    parser.add_argument("--libs", default="graphrun,langgraph")
    parser.add_argument("--tools", action="store_true", help="a 100 KB tool result every 10 turns")
    parser.add_argument("--http", action="store_true", help="also over HTTP (graphrun serve)")
    parser.add_argument("--http-backends", default="sqlite",
                        help="the servers' back ends over HTTP: sqlite,postgres (+ Redis)")
    parser.add_argument("--no-in-process", action="store_true")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    wanted = args.libs.split(",")
    libs = [lib for lib in load_libs("langgraph" in wanted) if lib.name in wanted]
    case = "long_thread_chat" + ("_tools" if args.tools else "")
    results: dict[str, Any] = {}
    print(f"{case}, {args.turns} turns")
    print("| saver / library | stored | / content | turn 10-30 -> last 20 | get_state | cold "
          "| all |")
    print("|---|---|---|---|---|---|---|")
    for saver in [] if args.no_in_process else args.savers.split(","):
        if saver == "postgres" and not _postgres.available():
            continue
        for lib in libs:
            name = f"{saver} / {lib.name}"
            results[name] = run_in_process(lib, saver, args.turns, args.tools)
            print(_row(name, results[name]), flush=True)
    for backend in args.http_backends.split(",") if args.http else []:
        name = f"http {backend} / graphrun"
        results[name] = run_http(args.turns, args.tools, backend)
        print(_row(name, results[name]), flush=True)
        _print_http_extras(results[name])
    if args.json:
        Path(args.json).write_text(json.dumps({"case": case, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
