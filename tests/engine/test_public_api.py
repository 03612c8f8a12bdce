"""The `engine` import surface (SPEC §1) and its error tree (STYLE 4, 5)."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

import pytest

import engine
from checkpoints import InMemorySaver
from engine import (
    END,
    START,
    Command,
    GraphInterrupt,
    GraphRecursionError,
    Interrupt,
    InvalidUpdateError,
    RetryPolicy,
    Send,
    StateGraph,
    get_config,
    get_store,
    get_stream_writer,
    interrupt,
)

LANGGRAPH_NAMES = [
    "StateGraph", "START", "END", "Send", "Command", "interrupt", "get_stream_writer",
    "RetryPolicy", "GraphRecursionError", "InvalidUpdateError", "Interrupt", "add_messages",
    "MessagesState", "get_config", "get_store", "Runtime", "CachePolicy", "entrypoint", "task",
    "Overwrite", "StateUpdate", "RemainingSteps", "IsLastStep",  # issue 17
]


class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def test_all_is_sorted() -> None:
    assert engine.__all__ == sorted(engine.__all__)


@pytest.mark.parametrize("module", ["engine.managed", "engine.prebuilt", "engine.remote", "engine.stream"])
def test_submodule_all_is_sorted_and_importable(module: str) -> None:
    import importlib

    mod = importlib.import_module(module)
    assert mod.__all__ == sorted(mod.__all__)
    assert all(hasattr(mod, name) for name in mod.__all__)


def test_all_has_no_duplicates() -> None:
    assert len(set(engine.__all__)) == len(engine.__all__)


@pytest.mark.parametrize("name", engine.__all__)
def test_every_exported_name_imports(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from engine import {name}", namespace)
    assert namespace[name] is getattr(engine, name)


@pytest.mark.parametrize("name", LANGGRAPH_NAMES)
def test_langgraph_surface_is_exported(name: str) -> None:
    assert name in engine.__all__


def test_start_and_end_constants() -> None:
    assert START == "__start__"
    assert END == "__end__"


# -- error tree -------------------------------------------------------------------------------


def test_graph_recursion_error_is_a_recursion_error() -> None:
    assert issubclass(GraphRecursionError, RecursionError)
    assert issubclass(GraphRecursionError, RuntimeError)
    assert issubclass(GraphRecursionError, Exception)


def test_invalid_update_error_is_an_exception() -> None:
    assert issubclass(InvalidUpdateError, Exception)
    assert not issubclass(InvalidUpdateError, (ValueError, TypeError, RuntimeError))


def test_graph_errors_share_one_root() -> None:
    assert issubclass(GraphRecursionError, engine.GraphrunError)
    assert issubclass(InvalidUpdateError, engine.GraphrunError)
    assert issubclass(engine.EmptyInputError, engine.GraphrunError)


def test_graph_interrupt_is_not_an_exception() -> None:
    assert issubclass(GraphInterrupt, BaseException)
    assert not issubclass(GraphInterrupt, Exception)
    with pytest.raises(GraphInterrupt):
        try:
            raise GraphInterrupt((Interrupt("v"),))
        except Exception:  # noqa: BLE001 - the point: this must not catch it
            pytest.fail("except Exception caught GraphInterrupt")


def test_parent_command_is_not_an_exception() -> None:
    assert not issubclass(engine.ParentCommand, Exception)


def test_interrupt_survives_a_users_except_exception() -> None:
    caught: list[BaseException] = []

    def ask(s: S) -> dict:
        try:
            answer = interrupt("q")
        except Exception as error:  # noqa: BLE001 - user code doing the wrong thing
            caught.append(error)
            return {"log": ["swallowed"]}
        return {"log": [f"got:{answer}"]}

    g = StateGraph(S)
    g.add_node(ask)
    g.add_edge(START, "ask")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    out = app.invoke({"x": 1}, cfg)
    assert caught == []
    assert out["log"] == []
    assert [i.value for i in out["__interrupt__"]] == ["q"]
    assert app.invoke(Command(resume="yes"), cfg) == {"x": 1, "log": ["got:yes"]}


# -- value types ------------------------------------------------------------------------------


def test_interrupt_fields_repr_and_equality() -> None:
    assert Interrupt(value=1) == Interrupt(value=1, id="placeholder-id", response_schema=None)
    assert repr(Interrupt(value=1)) == (
        "Interrupt(value=1, id='placeholder-id', response_schema=None)"
    )
    assert Interrupt(value=1, id="a") != Interrupt(value=1, id="b")


def test_send_repr_and_equality() -> None:
    assert repr(Send("work", {"item": 1})) == "Send(node='work', arg={'item': 1})"
    assert Send("work", {"item": 1}) == Send("work", {"item": 1})
    assert Send("work", {"item": 1}) != Send("work", {"item": 2})


def test_command_repr_and_parent() -> None:
    assert repr(Command(update={"x": 1}, goto="a")) == "Command(update={'x': 1}, goto='a')"
    assert repr(Command(resume=1)) == "Command(resume=1)"
    assert Command.PARENT == "__parent__"


def test_retry_policy_defaults() -> None:
    policy = RetryPolicy()
    assert isinstance(policy, tuple)  # a NamedTuple, as LangGraph's
    assert policy[:5] == (0.5, 2.0, 128.0, 3, True)
    assert policy.initial_interval == 0.5
    assert policy.backoff_factor == 2.0
    assert policy.max_interval == 128.0
    assert policy.max_attempts == 3
    assert policy.jitter is True
    assert repr(policy).startswith(
        "RetryPolicy(initial_interval=0.5, backoff_factor=2.0, max_interval=128.0, "
        "max_attempts=3, jitter=True, retry_on=<function default_retry_on at 0x"
    )


@pytest.mark.parametrize(
    "fn", [get_stream_writer, get_config, get_store, lambda: interrupt("v")],
    ids=["get_stream_writer", "get_config", "get_store", "interrupt"],
)
def test_context_helpers_outside_a_graph(fn) -> None:
    with pytest.raises(RuntimeError) as info:
        fn()
    assert str(info.value) == "Called get_config outside of a runnable context"
