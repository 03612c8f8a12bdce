"""Functional API scenarios (issue 17): `@entrypoint` and `@task`, same program on both libraries.

Registered into `scenarios.SCENARIOS`. Called tasks of one entrypoint run in parallel, so a
scenario that streams them makes each task sleep a different time (`LAG` apart): every call
starts before any finishes, and they finish in a fixed order.
"""

from __future__ import annotations

import asyncio
import importlib
import operator
import time
from typing import Annotated, Any, TypedDict

from .harness import Transcript
from .scenarios import LAG, cfg, scenario

MODES = ["updates", "values", "tasks", "checkpoints", "debug"]


class LogState(TypedDict):
    log: Annotated[list, operator.add]

# messages metadata keys that belong to this feature (the rest is the chat model's own)
_META = ("langgraph_step", "langgraph_node", "langgraph_triggers", "langgraph_path",
         "langgraph_checkpoint_ns", "checkpoint_ns", "graph_node")


def _extra(lib: Any, name: str) -> Any:
    """A name the shared `load_lib` does not carry: LangGraph's or ours."""
    where = {
        "CachePolicy": ("langgraph.types", "engine"),
        "InMemoryCache": ("langgraph.cache.memory", "checkpoints"),
        "InMemoryStore": ("langgraph.store.memory", "checkpoints.store"),
        "get_config": ("langgraph.config", "engine"),
    }[name]
    module = where[0] if lib.name == "lg" else where[1]
    return getattr(importlib.import_module(module), name)


def _fanout(lib: Any, checkpointer: Any = None) -> Any:
    @lib.task
    def square(x: int) -> int:
        time.sleep(LAG * (x + 1))  # square(0) finishes first, then square(1), ...
        return x * x

    @lib.task
    def total(values: list[int]) -> int:
        return sum(values)

    @lib.entrypoint(checkpointer=checkpointer)
    def fan(n: int) -> dict[str, Any]:
        futures = [square(i) for i in range(n)]
        squares = [f.result() for f in futures]
        return {"squares": squares, "total": total(squares).result()}

    return fan


@scenario
def func_fanout_modes(lib: Any) -> list[Any]:
    """An entrypoint fanning out tasks: every structural mode, state and history."""
    t = Transcript()
    fan = _fanout(lib, lib.InMemorySaver())
    t.stream("stream", fan, 3, cfg("t1"), stream_mode=MODES)
    t.state("state", fan, cfg("t1"))
    t.add("history", list(fan.get_state_history(cfg("t1"))))
    t.call("invoke", fan.invoke, 2, cfg("t1"))
    t.state("state_again", fan, cfg("t1"))
    t.stream("default_mode", fan, 1, cfg("t2"))
    t.call("invoke_updates", fan.invoke, 1, cfg("t3"), stream_mode="updates")
    return t.items


@scenario
def func_no_checkpointer(lib: Any) -> list[Any]:
    """Without a checkpointer: debug has no checkpoints; values; batch; empty returns."""
    t = Transcript()
    fan = _fanout(lib)
    t.stream("debug", fan, 2, stream_mode="debug")
    t.stream("values", fan, 2, stream_mode="values")
    t.call("invoke", fan.invoke, 2)
    t.call("batch", fan.batch, [1, 2])

    @lib.entrypoint()
    def nothing(x: Any) -> None:
        return None

    t.stream("none_return", nothing, {"a": 1}, stream_mode=["updates", "values", "tasks"])
    t.call("none_invoke", nothing.invoke, 1)
    return t.items


@scenario
def func_interrupt_resume(lib: Any) -> list[Any]:
    """interrupt() in the entrypoint and in a task; a finished task never runs twice;
    `previous` on the thread's next run; state and history throughout."""
    t = Transcript()
    calls: list[Any] = []

    @lib.task
    def draft(topic: str) -> str:
        calls.append(("draft", topic))
        return topic + " essay"

    @lib.task
    def review(text: str) -> Any:
        calls.append(("review", text))
        return lib.interrupt({"review": text})

    @lib.entrypoint(checkpointer=lib.InMemorySaver())
    def flow(topic: str, previous: Any = None) -> dict[str, Any]:
        text = draft(topic).result()
        approved = lib.interrupt("approve?")
        verdict = review(text).result()
        return {"text": text, "approved": approved, "verdict": verdict, "previous": previous}

    modes = ["updates", "values", "tasks", "checkpoints"]
    t.stream("leg1", flow, "cats", cfg("1"), stream_mode=modes)
    t.state("state1", flow, cfg("1"))
    t.stream("leg2", flow, lib.Command(resume="yes"), cfg("1"), stream_mode=modes)
    t.state("state2", flow, cfg("1"))
    t.stream("leg3", flow, lib.Command(resume="good"), cfg("1"), stream_mode=modes)
    t.state("state3", flow, cfg("1"))
    t.add("calls", list(calls))
    t.call("again1", flow.invoke, "dogs", cfg("1"))
    t.call("again2", flow.invoke, lib.Command(resume="y2"), cfg("1"))
    t.call("again3", flow.invoke, lib.Command(resume="g2"), cfg("1"))
    t.add("history", list(flow.get_state_history(cfg("1"))))
    t.call("resume_nothing_pending", flow.invoke, lib.Command(resume="x"), cfg("1"))
    return t.items


@scenario
def func_interrupt_non_dict_state(lib: Any) -> list[Any]:
    """invoke while interrupted returns `{"__interrupt__": [...]}`, merged into a dict state."""
    t = Transcript()

    @lib.entrypoint(checkpointer=lib.InMemorySaver())
    def ask(x: Any) -> Any:
        answer = lib.interrupt(f"q{x}")
        return {"x": x, "answer": answer} if x == "dict" else f"{x}={answer}"

    t.call("first", ask.invoke, "s", cfg("1"))
    t.stream("resume", ask, lib.Command(resume=1), cfg("1"), stream_mode="values")
    t.call("second", ask.invoke, "s2", cfg("1"))
    t.call("resume2", ask.invoke, lib.Command(resume=2), cfg("1"))
    t.call("dict_first", ask.invoke, "dict", cfg("2"))
    t.call("dict_done", ask.invoke, lib.Command(resume=3), cfg("2"))
    t.stream("dict_again", ask, "dict", cfg("2"), stream_mode=["values", "updates"])
    return t.items


def good_and_flaky(lib: Any) -> tuple[Any, Any, list[str], dict[str, bool]]:
    """Two tasks for the failure scenarios: `good` finishes first; `flaky` raises while
    `broken["on"]`; `calls` records each run, so a re-run of a finished call shows."""
    calls: list[str] = []
    broken = {"on": True}

    @lib.task
    def good(x: int) -> int:
        time.sleep(LAG)
        calls.append("good")
        return x + 1

    @lib.task
    def flaky(x: int) -> int:
        time.sleep(2 * LAG)
        calls.append("flaky")
        if broken["on"]:
            raise ValueError("flaky broke")
        return x * 100

    return good, flaky, calls, broken


@scenario
def func_failure_resume(lib: Any) -> list[Any]:
    """A failing task fails the entrypoint; the sibling that finished is not run again."""
    t = Transcript()
    good, flaky, calls, broken = good_and_flaky(lib)

    @lib.entrypoint(checkpointer=lib.InMemorySaver())
    def both(x: int) -> list[int]:
        a, b = good(x), flaky(x)
        return [a.result(), b.result()]

    modes = ["updates", "tasks", "values", "checkpoints"]
    t.stream("fail", both, 1, cfg("1"), stream_mode=modes)
    t.state("failed_state", both, cfg("1"))
    broken["on"] = False
    t.stream("resume", both, None, cfg("1"), stream_mode=modes)
    t.add("calls", list(calls))
    t.add("history", list(both.get_state_history(cfg("1"))))
    return t.items


@scenario
def func_final_previous(lib: Any) -> list[Any]:
    """entrypoint.final: return one value, save another for the next run's `previous`."""
    t = Transcript()

    @lib.entrypoint(checkpointer=lib.InMemorySaver())
    def counter(step: int, *, previous: Any = None) -> Any:
        total = (previous or 0) + step
        return lib.entrypoint.final(value={"step": step, "seen": previous}, save=total)

    t.stream("run1", counter, 1, cfg("1"), stream_mode=["updates", "values", "tasks"])
    t.call("run2", counter.invoke, 2, cfg("1"))
    t.call("run3", counter.invoke, 3, cfg("1"))
    t.state("state", counter, cfg("1"))
    t.call("other_thread", counter.invoke, 5, cfg("2"))
    t.add("final_repr", repr(lib.entrypoint.final(value=1, save=2)))
    return t.items


@scenario
def func_retry_cache_name(lib: Any) -> list[Any]:
    """retry_policy and cache_policy on tasks, a task renamed with name=, a nested call."""
    t = Transcript()
    attempts = {"n": 0}
    runs = {"n": 0}

    @lib.task(retry_policy=lib.RetryPolicy(max_attempts=3, initial_interval=0.01,
                                           jitter=False, retry_on=ValueError))
    def flaky(x: int) -> int:
        attempts["n"] += 1
        if attempts["n"] < 3:
            raise ValueError("again")
        return x

    @lib.task(cache_policy=_extra(lib, "CachePolicy")())
    def expensive(x: int) -> int:
        runs["n"] += 1
        return x * 2

    @lib.task(name="renamed")
    def original(x: int) -> int:
        return expensive(x).result() + 1

    @lib.entrypoint(cache=_extra(lib, "InMemoryCache")())
    def flow(x: int) -> list[int]:
        return [flaky(x).result(), expensive(x).result(), expensive(x).result(),
                original(x).result()]

    t.stream("first", flow, 3, stream_mode=["updates", "tasks"])
    t.stream("second", flow, 3, stream_mode="updates")
    t.add("counts", (attempts["n"], runs["n"]))

    @lib.task(retry_policy=lib.RetryPolicy(max_attempts=2, initial_interval=0.01, jitter=False))
    def always(x: int) -> int:
        raise KeyError("never")

    @lib.entrypoint()
    def failing(x: int) -> int:
        return always(x).result()

    t.stream("not_retried", failing, 1, stream_mode=["updates", "tasks"])
    return t.items


@scenario
def func_injection_custom(lib: Any) -> list[Any]:
    """writer/config/store/runtime/previous injection; get_stream_writer and get_config."""
    t = Transcript()
    store = _extra(lib, "InMemoryStore")()
    get_config = _extra(lib, "get_config")

    @lib.task
    def shout(word: str, writer=None, config=None) -> str:  # type: ignore[no-untyped-def]
        writer({"task": word})
        lib.get_stream_writer()("plain")
        meta = config["metadata"]
        return f"{word.upper()} {meta['langgraph_node']} {meta['langgraph_triggers']}"

    @lib.task
    def keep(word: str, *, store, runtime) -> str:  # type: ignore[no-untyped-def]
        store.put(("words",), word, {"w": word})
        return f"{type(runtime).__name__} {runtime.store is store}"

    @lib.entrypoint(store=store, checkpointer=lib.InMemorySaver())
    def flow(word: str, *, config, writer, previous, runtime) -> Any:  # type: ignore[no-untyped-def]
        writer("start")
        seen = get_config()["configurable"]["thread_id"]
        return [shout(word).result(), keep(word).result(), config["configurable"]["thread_id"],
                seen, previous, runtime.previous, runtime.store is store]

    t.stream("run", flow, "hey", cfg("1"), stream_mode=["custom", "updates"])
    t.stream("again", flow, "ho", cfg("1"), stream_mode=["custom", "values"])
    t.add("stored", sorted(i.key for i in store.search(("words",))))
    return t.items


@scenario
def func_errors(lib: Any) -> list[Any]:
    """A task called outside an entrypoint; an async task from a sync entrypoint."""
    t = Transcript()

    @lib.task
    def plain(x: int) -> int:
        return x

    @lib.task
    async def coro(x: int) -> int:
        return x

    @lib.entrypoint()
    def sync_flow(x: int) -> int:
        return coro(x).result()

    t.call("outside", plain, 1)
    t.stream("async_in_sync", sync_flow, 1, stream_mode="updates")
    try:
        @lib.entrypoint()
        def gen(x: int) -> Any:
            yield x
    except Exception as error:  # noqa: BLE001
        t.add("generator", error)
    return t.items


@scenario
def func_update_state(lib: Any) -> list[Any]:
    """update_state writes the entrypoint's value (and what the next run sees as previous)."""
    t = Transcript()

    @lib.entrypoint(checkpointer=lib.InMemorySaver())
    def echo(x: Any, previous: Any = None) -> Any:
        return {"x": x, "previous": previous}

    echo.invoke(1, cfg("1"))
    t.call("update", lambda: echo.update_state(cfg("1"), {"patched": True}) and None)
    t.state("state", echo, cfg("1"))
    t.call("next_run", echo.invoke, 2, cfg("1"))
    return t.items


@scenario
def func_async(lib: Any) -> list[Any]:
    """Async entrypoint: awaited and gathered async tasks, a sync task, interrupt and resume."""
    t = Transcript()

    @lib.task
    async def slow_double(x: int) -> int:
        await asyncio.sleep(LAG * (x + 1))
        return x * 2

    @lib.task
    def sync_inc(x: int) -> int:
        return x + 1

    @lib.entrypoint(checkpointer=lib.InMemorySaver())
    async def flow(n: int) -> dict[str, Any]:
        doubled = await asyncio.gather(*[slow_double(i) for i in range(n)])
        bumped = await sync_inc(sum(doubled))
        answer = lib.interrupt({"bumped": bumped})
        return {"doubled": list(doubled), "bumped": bumped, "answer": answer}

    async def main() -> None:
        async for item in flow.astream(2, cfg("1"), stream_mode=["updates", "values", "tasks"]):
            t.add("astream", item)
        t.add("state", await flow.aget_state(cfg("1")))
        async for item in flow.astream(lib.Command(resume="ok"), cfg("1"),
                                       stream_mode=["updates", "values"]):
            t.add("resume", item)
        t.add("ainvoke", await flow.ainvoke(1, cfg("2")))
        t.add("ainvoke_resume", await flow.ainvoke(lib.Command(resume="fine"), cfg("2")))

    asyncio.run(main())
    return t.items


def _fake_model() -> Any:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    return GenericFakeChatModel(messages=iter([AIMessage(content="hello big world", id="m1")]))


def _message_item(t: Transcript, label: str, pair: Any) -> None:
    chunk, meta = pair
    t.add(label, (chunk, {k: meta[k] for k in _META if k in meta}))


@scenario
def func_messages(lib: Any) -> list[Any]:
    """messages mode: tokens of a chat model called inside a task (sync and async)."""
    t = Transcript()

    @lib.task
    def write(topic: str) -> Any:
        return _fake_model().invoke(f"write about {topic}")

    @lib.entrypoint(checkpointer=lib.InMemorySaver())
    def flow(topic: str) -> str:
        return write(topic).result().content

    for item in flow.stream("x", cfg("1"), stream_mode="messages"):
        _message_item(t, "sync", item)

    @lib.task
    async def awrite(topic: str) -> Any:
        return await _fake_model().ainvoke(f"write about {topic}")

    @lib.entrypoint()
    async def aflow(topic: str) -> str:
        return (await awrite(topic)).content

    async def main() -> None:
        async for item in aflow.astream("x", stream_mode=["messages", "updates"]):
            if item[0] == "messages":
                _message_item(t, "async", item[1])
            else:
                t.add("async_updates", item)

    asyncio.run(main())
    return t.items


@scenario
def func_entrypoint_as_node(lib: Any) -> list[Any]:
    """An entrypoint used as a StateGraph node runs as its subgraph (namespaces, updates)."""
    @lib.task
    def tag(items: list) -> list:
        return [*items, "tagged"]

    @lib.entrypoint()
    def inner(state: dict) -> dict:
        return {"log": tag(state["log"]).result()}

    builder = lib.StateGraph(LogState)
    builder.add_node("inner", inner)
    builder.add_edge(lib.START, "inner")
    graph = builder.compile()
    t = Transcript()
    t.call("invoke", graph.invoke, {"log": ["a"]})
    t.stream("subgraphs", graph, {"log": ["a"]}, subgraphs=True,
             stream_mode=["updates", "values"])
    return t.items
