"""`timeout=` (TimeoutPolicy, issue 17) beyond the parity scenario: LangChain callback events and
`@task` calls as progress, and trio."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any, TypedDict

import anyio
import pytest

from engine import START, NodeTimeoutError, StateGraph, TimeoutPolicy, task


class _Log(TypedDict):
    log: Annotated[list, operator.add]


def _slow_model() -> Any:
    """A chat model streaming five tokens 0.1 s apart (0.5 s in all)."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class Slow(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "slow"

        def _generate(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

        async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                             **kwargs: Any) -> Any:
            for token in ("a", "b", "c", "d", "e"):
                await asyncio.sleep(0.1)
                if run_manager is not None:
                    await run_manager.on_llm_new_token(token)
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content="abcde"))])

    return Slow()


def _graph(node: Any, policy: TimeoutPolicy) -> Any:
    builder = StateGraph(_Log)
    builder.add_node("node", node, timeout=policy)
    builder.add_edge(START, "node")
    return builder.compile()


@pytest.mark.parametrize("refresh_on", ["auto", "heartbeat"])
def test_model_tokens_are_progress_only_with_auto(refresh_on: str) -> None:
    """Tokens 0.1 s apart keep a 0.3 s idle timeout alive under "auto" (0.5 s in all), called
    with or without the node's config; under "heartbeat" they do not."""
    pytest.importorskip("langchain_core")
    model = _slow_model()

    async def node(state: _Log) -> dict[str, Any]:
        message = await model.ainvoke("hi")  # no config passed: inherited
        return {"log": [message.content]}

    graph = _graph(node, TimeoutPolicy(idle_timeout=0.3, refresh_on=refresh_on))  # type: ignore[arg-type]
    if refresh_on == "auto":
        assert asyncio.run(graph.ainvoke({"log": []})) == {"log": ["abcde"]}
    else:
        with pytest.raises(NodeTimeoutError) as caught:
            asyncio.run(graph.ainvoke({"log": []}))
        assert caught.value.kind == "idle" and caught.value.node == "node"


def test_task_calls_are_progress() -> None:
    """A timed node that keeps calling tasks (each 0.1 s) outlives its 0.25 s idle timeout."""

    @task
    async def step(i: int) -> int:
        await asyncio.sleep(0.1)
        return i

    async def node(state: _Log) -> dict[str, Any]:
        return {"log": [await step(i) for i in range(5)]}

    graph = _graph(node, TimeoutPolicy(idle_timeout=0.25))
    assert asyncio.run(graph.ainvoke({"log": []})) == {"log": [0, 1, 2, 3, 4]}


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_run_timeout_on_trio(anyio_backend: str) -> None:
    pytest.importorskip("trio")

    async def node(state: _Log) -> dict[str, Any]:
        await anyio.sleep(5)
        return {"log": ["never"]}

    with anyio.fail_after(2):
        with pytest.raises(NodeTimeoutError, match="run timeout of 0.100s"):
            await _graph(node, TimeoutPolicy(run_timeout=0.1)).ainvoke({"log": []})
