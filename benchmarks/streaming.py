"""Streaming throughput: chunks per second for `updates`, `values`, `custom`, `messages` and
several modes at once, sync `stream` and async `astream`, no checkpointer.

- `stream_updates` / `stream_values`: a one-node loop that runs N super-steps (one chunk each);
- `stream_custom`: one node writing N chunks through `get_stream_writer()`;
- `stream_multi`: the loop with a custom chunk per step, streamed as updates + values + custom;
- `stream_messages`: one node invoking a LangChain fake chat model that streams N tokens
  (needs langchain-core; graphrun's LangChain token bridge is optional, see the table).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

from ._harness import Case, Lib

__all__ = ["cases"]


class Counter(TypedDict):
    n: int


def ticker(lib: Lib, size: int, is_async: bool, *, emit: bool = False) -> Any:
    """START -> tick -> tick -> ... (size times) -> END."""

    def step(state: Counter) -> dict:
        if emit:
            lib.get_stream_writer()({"tick": state["n"]})
        return {"n": state["n"] + 1}

    if is_async:

        async def tick(state: Counter) -> dict:
            return step(state)

    else:
        tick = step  # type: ignore[assignment]

    def more(state: Counter) -> str:
        return "tick" if state["n"] < size else lib.END

    builder = lib.StateGraph(Counter)
    builder.add_node("tick", tick)
    builder.add_edge(lib.START, "tick")
    builder.add_conditional_edges("tick", more, ["tick", lib.END])
    return builder


def ticker_emitting(lib: Lib, size: int, is_async: bool) -> Any:
    return ticker(lib, size, is_async, emit=True)


def emitter(lib: Lib, size: int, is_async: bool) -> Any:
    """One node writing `size` custom chunks."""

    def emit_all(state: Counter) -> dict:
        writer = lib.get_stream_writer()
        for index in range(size):
            writer({"i": index})
        return {"n": size}

    if is_async:

        async def emit(state: Counter) -> dict:
            return emit_all(state)

    else:
        emit = emit_all  # type: ignore[assignment]

    builder = lib.StateGraph(Counter)
    builder.add_node("emit", emit)
    builder.add_edge(lib.START, "emit")
    builder.add_edge("emit", lib.END)
    return builder


def fake_chat_models(size: int) -> Callable[[], Any]:
    """A factory of LangChain fake chat models whose one answer streams as `size` tokens."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    text = " ".join(f"t{index}" for index in range(size))
    return lambda: GenericFakeChatModel(messages=iter([AIMessage(content=text)]))


def talker(lib: Lib, size: int, is_async: bool) -> Any:
    """One node invoking a fake LangChain chat model that streams `size` tokens."""
    model = fake_chat_models(size)

    if is_async:

        async def talk(state: Any) -> dict:
            return {"messages": [await model().ainvoke(state["messages"])]}

    else:

        def talk(state: Any) -> dict:  # type: ignore[misc]
            return {"messages": [model().invoke(state["messages"])]}

    builder = lib.StateGraph(lib.MessagesState)
    builder.add_node("talk", talk)
    builder.add_edge(lib.START, "talk")
    builder.add_edge("talk", lib.END)
    return builder


def cases() -> list[Case]:
    specs: list[tuple[str, Any, Any, Any, int, int, tuple[str, ...]]] = [
        ("stream_updates", ticker, lambda n: {"n": 0}, "updates", 1000, 200, ()),
        ("stream_values", ticker, lambda n: {"n": 0}, "values", 1000, 200, ()),
        ("stream_custom", emitter, lambda n: {"n": 0}, "custom", 1000, 1000, ()),
        (
            "stream_multi",
            ticker_emitting,
            lambda n: {"n": 0},
            ["updates", "values", "custom"],
            1000,
            200,
            (),
        ),
        (
            "stream_messages",
            talker,
            lambda n: {"messages": [{"role": "user", "content": "hi?"}]},
            "messages",
            1000,
            200,
            ("langchain_core",),
        ),
    ]
    out = []
    for name, build, make_input, mode, size, quick_size, requires in specs:
        for is_async in (False, True):
            out.append(
                Case(
                    name=f"{name}{'_async' if is_async else ''}",
                    group="streaming",
                    build=build,
                    make_input=make_input,
                    size=size,
                    quick_size=quick_size,
                    is_async=is_async,
                    stream_mode=mode,
                    unit="chunk",
                    requires=requires,
                )
            )
    return out
