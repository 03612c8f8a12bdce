"""Parity graphs for issue 31: a context schema, graph factories of every form (with
`ServerRuntime`), a factory that fails, and a run that waits until it is cancelled. Served by
`langgraph dev` (PARITY_LIB=langgraph) and by `graphrun dev` from the same text."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from typing import Any, TypedDict

import anyio
from langgraph_sdk.runtime import ServerRuntime

if os.environ.get("PARITY_LIB") == "langgraph":
    from langgraph.config import get_config
    from langgraph.graph import START, StateGraph
    from langgraph.runtime import Runtime
else:
    from engine import START, Runtime, StateGraph, get_config

__all__ = ["broken", "ctx", "hold", "managed", "with_both", "with_config", "with_runtime"]


class Seen(TypedDict, total=False):
    seen: list
    wait: Any  # True: until cancelled; a number: that many seconds


@dataclasses.dataclass
class Ctx:
    model: str = "default"


def _look(state: Seen, runtime: Runtime) -> dict[str, Any]:
    return {"seen": [repr(runtime.context), get_config()["configurable"].get("model")]}


def _ctx() -> Any:
    builder = StateGraph(Seen, context_schema=Ctx)
    builder.add_node("look", _look)
    builder.add_edge(START, "look")
    return builder.compile()


def _tagged(tag: str) -> Any:
    builder = StateGraph(Seen)
    builder.add_node("tag", lambda state: {"seen": [tag]})
    builder.add_edge(START, "tag")
    return builder


def with_config(config: dict[str, Any]) -> Any:
    return _tagged(f"config:{config['configurable'].get('model')}").compile()


def with_runtime(runtime: ServerRuntime) -> Any:
    return _tagged(f"runtime:{runtime.access_context}")


def with_both(config: dict[str, Any], runtime: ServerRuntime) -> Any:
    execution = runtime.execution_runtime
    context = execution.context if execution is not None else None
    return _tagged(f"both:{context}:{config['configurable'].get('model')}")


@contextlib.asynccontextmanager
async def managed(runtime: ServerRuntime) -> Any:
    yield _tagged(f"managed:{runtime.store is not None}")


def broken(config: dict[str, Any]) -> Any:
    raise RuntimeError("the model key is missing")


async def _hold(state: Seen) -> dict[str, Any]:
    wait = state.get("wait")
    if wait:
        await anyio.sleep(60 if wait is True else float(wait))
    return {"seen": ["held"]}


def _hold_graph() -> Any:
    builder = StateGraph(Seen)
    builder.add_node("hold", _hold)
    builder.add_edge(START, "hold")
    return builder.compile()


ctx = _ctx()
hold = _hold_graph()
