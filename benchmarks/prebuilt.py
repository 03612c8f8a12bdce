"""A ReAct agent built by each library's own prebuilt `create_react_agent` and `ToolNode`
(issue 17), driven by a scripted chat model: `prebuilt_react_agent_Nx` makes N tool rounds.

Both sides get the same model, tool and input; only the agent graph and the tool node are the
library's own. A LangChain chat model call and a LangChain tool call happen in every round on
both sides, so this case measures the engine with LangChain's own per-call cost included.
Needs langchain-core.
"""

from __future__ import annotations

import warnings
from typing import Any

from ._harness import Case, Lib, variants

__all__ = ["cases"]


def _prebuilt(lib: Lib) -> Any:
    if lib.name == "graphrun":
        import engine.prebuilt as prebuilt
    else:
        import langgraph.prebuilt as prebuilt
    return prebuilt


def _model(size: int) -> Any:
    """A chat model that calls the `search` tool `size` times, then answers."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class ScriptedModel(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "scripted"

        def _generate(self, messages: list[Any], stop: Any = None, run_manager: Any = None,
                      **kwargs: Any) -> ChatResult:
            turn = (len(messages) - 1) // 2  # human, then (ai, tool) per round
            if turn < size:
                call = {"id": f"call_{turn}", "name": "search", "args": {"query": f"q{turn}"}}
                message = AIMessage(content="", tool_calls=[call], id=f"ai_{turn}")
            else:
                message = AIMessage(content="answer " * 100, id="final")
            return ChatResult(generations=[ChatGeneration(message=message)])

        async def _agenerate(self, messages: list[Any], stop: Any = None, run_manager: Any = None,
                             **kwargs: Any) -> ChatResult:
            return self._generate(messages, stop, **kwargs)

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    return ScriptedModel()


def _tool(is_async: bool) -> Any:
    from langchain_core.tools import tool

    if is_async:

        @tool
        async def search(query: str) -> str:
            """Search for `query`."""
            return f"result for {query} " * 10

        return search

    @tool
    def search(query: str) -> str:  # type: ignore[no-redef]
        """Search for `query`."""
        return f"result for {query} " * 10

    return search


class _AgentBuilder:
    """What the harness compiles: `compile(checkpointer=...)` builds the library's agent."""

    def __init__(self, lib: Lib, size: int, is_async: bool) -> None:
        self.lib, self.size, self.is_async = lib, size, is_async

    def compile(self, checkpointer: Any = None) -> Any:
        prebuilt = _prebuilt(self.lib)
        with warnings.catch_warnings():  # LangGraph 1.x marks its create_react_agent deprecated
            warnings.simplefilter("ignore", DeprecationWarning)
            return prebuilt.create_react_agent(
                _model(self.size), prebuilt.ToolNode([_tool(self.is_async)]),
                checkpointer=checkpointer,
            )


def prebuilt_react_agent(lib: Lib, size: int, is_async: bool) -> Any:
    return _AgentBuilder(lib, size, is_async)


def _input(size: int) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": "hi?"}]}


def _summary(output: Any) -> dict[str, Any]:
    messages = output["messages"]
    return {"messages": len(messages), "last": len(messages[-1].content)}


def cases() -> list[Case]:
    out: list[Case] = []
    for name, size, quick in (("prebuilt_react_agent_10x", 10, 10),
                              ("prebuilt_react_agent_100x", 100, 20)):
        out += variants(
            name, "graphs", prebuilt_react_agent, _input, size, quick,
            savers=(None, "memory"), summarize=_summary, requires=("langchain_core",),
            note="each library's own create_react_agent + ToolNode",
        )
    return out
