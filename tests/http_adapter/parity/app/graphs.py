"""The parity app: graphs written once, served by `langgraph dev` and by `graphrun dev` (issue 18).

`PARITY_LIB=langgraph` imports LangGraph 1.2.22, anything else imports graphrun's `engine`, so
both servers run the same program text. Every graph is sequential (one task per step) so the
event order of a stream does not depend on thread scheduling.
"""

from __future__ import annotations

import operator
import os
import time
from typing import Annotated, Any, TypedDict

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from typing_extensions import TypedDict as TypingExtensionsTypedDict

if os.environ.get("PARITY_LIB") == "langgraph":
    from langgraph.config import get_stream_writer
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.types import Command, interrupt
else:
    from engine import END, START, Command, MessagesState, StateGraph, get_stream_writer, interrupt

__all__ = ["agent", "answer", "chat", "chat_bound", "chat_bound_async", "chat_bound_config", "nested",
           "router"]


class State(TypedDict, total=False):
    x: int
    log: Annotated[list, operator.add]
    ask: bool
    fail: bool
    sleep: float
    answer: str


# The schemas of `answer` (issue 31 item 12): typing_extensions' TypedDict, which the reference's
# pydantic needs for /schemas on Python < 3.12; no docstrings (they become descriptions).
class AnswerState(TypingExtensionsTypedDict, total=False):
    x: int
    log: Annotated[list, operator.add]
    answer: str


class Answer(TypingExtensionsTypedDict, total=False):
    answer: str


class AnswerContext(TypingExtensionsTypedDict, total=False):
    model: str


class Inner(TypedDict, total=False):
    x: int
    log: Annotated[list, operator.add]


def _a(state: State) -> dict[str, Any]:
    get_stream_writer()({"progress": "a"})
    if state.get("sleep"):
        time.sleep(state["sleep"])
    return {"x": state.get("x", 0) + 1, "log": ["a"]}


def _b(state: State) -> dict[str, Any]:
    if state.get("ask"):
        answer = interrupt({"question": "continue?"})
        return {"log": [f"b:{answer}"], "answer": answer}
    return {"log": ["b"]}


def _c(state: State) -> dict[str, Any]:
    if state.get("fail"):
        raise ValueError("boom from c")
    return {"log": ["c"]}


def _sub1(state: Inner) -> dict[str, Any]:
    get_stream_writer()({"progress": "sub1"})
    return {"log": ["sub1"]}


def _inner() -> Any:
    graph = StateGraph(Inner)
    graph.add_node("sub1", _sub1)
    graph.add_node("sub2", lambda state: {"log": ["sub2"]})
    graph.add_edge(START, "sub1")
    graph.add_edge("sub1", "sub2")
    graph.add_edge("sub2", END)
    return graph.compile()


def _agent() -> Any:
    graph = StateGraph(State)
    graph.add_node("a", _a)
    graph.add_node("b", _b)
    graph.add_node("c", _c)
    graph.add_node("sub", _inner())
    graph.add_edge(START, "a")
    graph.add_edge("a", "b")
    graph.add_edge("b", "c")
    graph.add_edge("c", "sub")
    graph.add_edge("sub", END)
    return graph.compile()


def _route(state: State) -> str:
    return "left" if state.get("x", 0) % 2 else "right"


def _router() -> Any:
    graph = StateGraph(State)
    graph.add_node("start", lambda state: {"log": ["start"]})
    graph.add_node("left", lambda state: {"log": ["left"]})
    graph.add_node("right", lambda state: {"log": ["right"]})
    graph.add_edge(START, "start")
    graph.add_conditional_edges("start", _route, ["left", "right"])
    graph.add_edge("left", END)
    graph.add_edge("right", END)
    return graph.compile()


def _model() -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage("hello there friend", id="reply-1")]))


def _call(state: MessagesState) -> dict[str, Any]:
    return {"messages": [_model().invoke(state["messages"])]}


def _call_bound(state: MessagesState) -> dict[str, Any]:
    model = _model().with_config(tags=["bound"])
    return {"messages": [model.invoke(state["messages"])]}


def _call_bound_config(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
    """A bound model called with the node's config (the case issue 17 lists)."""
    model = _model().with_config(tags=["bound"])
    return {"messages": [model.invoke(state["messages"], config)]}


async def _acall_bound_config(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
    model = _model().with_config(tags=["bound"])
    return {"messages": [await model.ainvoke(state["messages"], config)]}


def _chat(call: Any) -> Any:
    graph = StateGraph(MessagesState)
    graph.add_node("call", call)
    graph.add_edge(START, "call")
    graph.add_edge("call", END)
    return graph.compile()


def _answer_node(state: AnswerState) -> dict[str, Any]:
    return {"answer": f"x={state.get('x', 0)}", "log": ["answer"], "x": state.get("x", 0) + 1}


def _answer() -> Any:
    """Output schema, context schema and a compiled name (issue 31 item 12)."""
    graph = StateGraph(AnswerState, context_schema=AnswerContext, output_schema=Answer)
    graph.add_node("answer", _answer_node)
    graph.add_edge(START, "answer")
    graph.add_edge("answer", END)
    return graph.compile(name="Answer Agent")


def _nested() -> Any:
    """A parent whose node is the agent graph: two levels of subgraphs for xray and namespaces."""
    graph = StateGraph(State)
    graph.add_node("outer", _agent())
    graph.add_node("done", lambda state: Command(update={"log": ["done"]}))
    graph.add_edge(START, "outer")
    graph.add_edge("outer", "done")
    graph.add_edge("done", END)
    return graph.compile()


agent = _agent()
router = _router()
chat = _chat(_call)
chat_bound = _chat(_call_bound)
chat_bound_config = _chat(_call_bound_config)
chat_bound_async = _chat(_acall_bound_config)
nested = _nested()
answer = _answer()
