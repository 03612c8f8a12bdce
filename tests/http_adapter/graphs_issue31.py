"""Graphs for the issue 31 tests: a context schema, every graph factory form the reference
accepts, a factory that fails, and a run that waits until it is cancelled."""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, TypedDict

import anyio
from langgraph_sdk.runtime import ServerRuntime

from engine import START, Runtime, StateGraph, get_config


class Seen(TypedDict, total=False):
    seen: list
    wait: bool


@dataclasses.dataclass
class Ctx:
    model: str = "default"


def _look(state: Seen, runtime: Runtime) -> dict[str, Any]:
    conf = get_config()["configurable"]
    return {"seen": [repr(runtime.context), conf.get("model")]}


_ctx = StateGraph(Seen, context_schema=Ctx)
_ctx.add_node("look", _look)
_ctx.add_edge(START, "look")
context_graph = _ctx.compile()


def _tagged(tag: str) -> StateGraph:
    builder = StateGraph(Seen)
    builder.add_node("tag", lambda state: {"seen": [tag]})
    builder.add_edge(START, "tag")
    return builder


def no_args() -> Any:
    return _tagged("no_args")


def with_config(config: dict[str, Any]) -> Any:
    return _tagged(f"config:{config['configurable'].get('model')}").compile()


def with_runtime(runtime: ServerRuntime) -> Any:
    return _tagged(f"runtime:{runtime.access_context}")


def with_both(config: dict[str, Any], runtime: ServerRuntime) -> Any:
    execution = runtime.execution_runtime
    context = execution.context if execution is not None else None
    return _tagged(f"both:{runtime.access_context}:{context}:{config['configurable'].get('model')}")


async def async_factory(config: dict[str, Any]) -> Any:
    await anyio.sleep(0)
    return _tagged("async")


EXITED: list[str] = []


@contextlib.asynccontextmanager
async def managed(runtime: ServerRuntime) -> Any:
    yield _tagged(f"managed:{runtime.access_context}:{runtime.store is not None}")
    EXITED.append(runtime.access_context)


def broken(config: dict[str, Any]) -> Any:
    raise RuntimeError("the model key is missing")


async def _hold(state: Seen) -> dict[str, Any]:
    if state.get("wait"):
        await anyio.sleep(60)  # until cancelled
    return {"seen": ["held"]}


_hold_builder = StateGraph(Seen)
_hold_builder.add_node("hold", _hold)
_hold_builder.add_edge(START, "hold")
hold = _hold_builder.compile()

FACTORIES = {
    "no_args": no_args, "with_config": with_config, "with_runtime": with_runtime,
    "with_both": with_both, "async_factory": async_factory, "managed": managed,
}
GRAPHS = {"ctx": context_graph, "broken": broken, "hold": hold, **FACTORIES}
