"""The engine cases of LangGraph's own benchmark suite (issue 7), written once for both libraries.

The graph shapes follow LangGraph's `libs/langgraph/bench` (read for the shapes; this code is
ours): a no-op sequence, a Send fan-out into a looping subgraph, a wide state as dataclass /
TypedDict / pydantic model, and a ReAct agent/tool loop driven by a fake model. Each builder takes
the `lib` namespace, so the graphrun and LangGraph graphs come from the same lines.

No `from __future__ import annotations` here on purpose: both libraries read the state schemas'
type hints, and real annotation objects keep that independent of where a class is defined.
"""

import operator
import random
import string
import uuid
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from ._harness import Case, Lib, variants

__all__ = ["cases"]


def _get(obj: Any, key: str) -> Any:
    """A field of a state or message, whether it is a dict or an object."""
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


def _text(length: int) -> str:
    return "".join(random.choices(string.ascii_lowercase, k=length))


# ---------------------------------------------------------------------------------------------
# sequential_N: N no-op nodes over MessagesState


def sequential(lib: Lib, size: int, is_async: bool) -> Any:
    if is_async:

        async def noop(state: Any) -> None:
            return None

    else:

        def noop(state: Any) -> None:  # type: ignore[misc]
            return None

    builder = lib.StateGraph(lib.MessagesState)
    previous = lib.START
    for index in range(size):
        builder.add_node(f"step_{index}", noop)
        builder.add_edge(previous, f"step_{index}")
        previous = f"step_{index}"
    builder.add_edge(previous, lib.END)
    return builder


# ---------------------------------------------------------------------------------------------
# fanout_to_subgraph_Nx: one Send per subject into a compiled subgraph that loops


class FanoutState(TypedDict):
    subjects: list[str]
    jokes: Annotated[list[str], operator.add]


class JokeIn(TypedDict):
    subject: str


class JokeOut(TypedDict):
    jokes: list[str]


class JokeState(JokeIn, JokeOut):
    pass


BUMPS = 10


def fanout_to_subgraph(lib: Lib, size: int, is_async: bool) -> Any:
    """START =Send per subject=> joke subgraph (edit -> write -> bump, bump x10) -> END."""

    def fan_out(state: FanoutState) -> list[Any]:
        return [lib.Send("joke", {"subject": subject}) for subject in state["subjects"]]

    def edit(state: JokeIn) -> dict:
        return {"subject": state["subject"] + " (edited)"}

    def write(state: JokeIn) -> dict:
        return {"jokes": [f"a joke on {state['subject'][:20]}"]}

    def bump(state: JokeOut) -> dict:
        return {"jokes": [state["jokes"][0] + " +"]}

    def again(state: JokeOut) -> str:
        return lib.END if state["jokes"][0].endswith(" +" * BUMPS) else "bump"

    if is_async:
        fan_out, edit, write, bump, again = (_async(f) for f in (fan_out, edit, write, bump, again))

    sub = lib.StateGraph(JokeState, input_schema=JokeIn, output_schema=JokeOut)
    sub.add_node("edit", edit)
    sub.add_node("write", write)
    sub.add_node("bump", bump)
    sub.set_entry_point("edit")
    sub.add_edge("edit", "write")
    sub.add_edge("write", "bump")
    sub.add_conditional_edges("bump", again)
    sub.set_finish_point("write")

    builder = lib.StateGraph(FanoutState)
    builder.add_node("joke", sub.compile())
    builder.add_conditional_edges(lib.START, fan_out)
    builder.add_edge("joke", lib.END)
    return builder


def _async(func: Any) -> Any:
    async def wrapper(state: Any) -> Any:
        return func(state)

    wrapper.__name__ = func.__name__
    return wrapper


def _fanout_input(size: int) -> dict:
    rng = random.Random(size)
    return {"subjects": ["".join(rng.choices(string.ascii_lowercase, k=1000)) for _ in range(size)]}


def _fanout_summary(output: Any) -> dict:
    jokes = _get(output, "jokes")
    return {"jokes": len(jokes), "chars": sum(map(len, jokes))}


# ---------------------------------------------------------------------------------------------
# wide_state / wide_dict / pydantic_state: 16 fields, most with reducers, a 6-node loop with a
# parallel pair and a join, until `messages` is longer than the size


LIST_FIELDS = frozenset(
    {"messages", "trigger_events", "categorizations", "responses", "memory_docs", "relevant_rules"}
)
DICT_FIELDS = frozenset(
    {"user_info", "crm_info", "slack_participants", "notified_assignees", "autoresponse", "issue"}
)


def _newer(old: Any, new: Any) -> Any:
    return new if new is not None else old


def _truthy(old: Any, new: Any) -> Any:
    return new or old


def _replace(old: Any, new: Any) -> Any:
    return new


@dataclass(kw_only=True)
class WideState:
    messages: Annotated[list, operator.add] = field(default_factory=list)
    trigger_events: Annotated[list, operator.add] = field(default_factory=list)
    primary_issue_medium: Annotated[str, _truthy] = "email"
    autoresponse: Annotated[dict | None, _replace] = None
    issue: Annotated[dict | None, _truthy] = None
    relevant_rules: list | None = None
    memory_docs: list | None = None
    categorizations: Annotated[list, operator.add] = field(default_factory=list)
    responses: Annotated[list, operator.add] = field(default_factory=list)
    user_info: Annotated[dict | None, _newer] = None
    crm_info: Annotated[dict | None, _newer] = None
    email_thread_id: Annotated[str | None, _newer] = None
    slack_participants: Annotated[dict, operator.or_] = field(default_factory=dict)
    bot_id: str | None = None
    notified_assignees: Annotated[dict, operator.or_] = field(default_factory=dict)


class WideDict(TypedDict):
    messages: Annotated[list, operator.add]
    trigger_events: Annotated[list, operator.add]
    primary_issue_medium: Annotated[str, _truthy]
    autoresponse: Annotated[dict | None, _replace]
    issue: Annotated[dict | None, _truthy]
    relevant_rules: list | None
    memory_docs: list | None
    categorizations: Annotated[list, operator.add]
    responses: Annotated[list, operator.add]
    user_info: Annotated[dict | None, _newer]
    crm_info: Annotated[dict | None, _newer]
    email_thread_id: Annotated[str | None, _newer]
    slack_participants: Annotated[dict, operator.or_]
    bot_id: str | None
    notified_assignees: Annotated[dict, operator.or_]


def _pydantic_model() -> Any:
    from pydantic import BaseModel, Field, field_validator

    def _checked(kind: type, optional: bool) -> Any:
        def check(cls: Any, value: Any) -> Any:
            if value is None and optional:
                return value
            if not isinstance(value, kind):
                raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
            if isinstance(value, list) and not all(isinstance(item, dict) for item in value):
                raise TypeError("expected a list of dicts")
            if isinstance(value, dict) and not all(isinstance(key, str) for key in value):
                raise TypeError("expected str keys")
            return value

        return check

    class WideModel(BaseModel):
        messages: Annotated[list, operator.add] = Field(default_factory=list)
        trigger_events: Annotated[list, operator.add] = Field(default_factory=list)
        primary_issue_medium: Annotated[str, _truthy] = "email"
        autoresponse: Annotated[dict | None, _replace] = None
        issue: Annotated[dict | None, _truthy] = None
        relevant_rules: list | None = None
        memory_docs: list | None = None
        categorizations: Annotated[list, operator.add] = Field(default_factory=list)
        responses: Annotated[list, operator.add] = Field(default_factory=list)
        user_info: Annotated[dict | None, _newer] = None
        crm_info: Annotated[dict | None, _newer] = None
        email_thread_id: Annotated[str | None, _newer] = None
        slack_participants: Annotated[dict, operator.or_] = Field(default_factory=dict)
        bot_id: str | None = None
        notified_assignees: Annotated[dict, operator.or_] = Field(default_factory=dict)

        _v_lists: Any = field_validator(
            "messages", "trigger_events", "categorizations", "responses", mode="after"
        )(classmethod(_checked(list, False)))
        _v_opt_lists: Any = field_validator("relevant_rules", "memory_docs", mode="after")(
            classmethod(_checked(list, True))
        )
        _v_dicts: Any = field_validator("slack_participants", "notified_assignees", mode="after")(
            classmethod(_checked(dict, False))
        )
        _v_opt_dicts: Any = field_validator(
            "autoresponse", "issue", "user_info", "crm_info", mode="after"
        )(classmethod(_checked(dict, True)))
        _v_strs: Any = field_validator("primary_issue_medium", mode="after")(
            classmethod(_checked(str, False))
        )
        _v_opt_strs: Any = field_validator("email_thread_id", "bot_id", mode="after")(
            classmethod(_checked(str, True))
        )

    return WideModel


_WIDE_NODES: list[tuple[str, str, tuple[str, ...]]] = [
    ("one", "messages", ("trigger_events", "primary_issue_medium")),
    ("two", "trigger_events", ("autoresponse", "issue")),
    ("three", "autoresponse", ("relevant_rules",)),
    ("four", "trigger_events", ("categorizations", "responses", "memory_docs")),
    (
        "five",
        "categorizations",
        (
            "user_info",
            "crm_info",
            "email_thread_id",
            "slack_participants",
            "bot_id",
            "notified_assignees",
        ),
    ),
    ("six", "responses", ("messages",)),
]


def _wide_node(read: str, writes: tuple[str, ...], size: int, is_async: bool) -> Any:
    def node(state: Any) -> dict:
        value = _get(state, read)
        if isinstance(value, str):
            value = {value: value}
        one = value[-1] if isinstance(value, list) else value
        many = value if isinstance(value, list) else [value]
        out: dict[str, Any] = {}
        for key in writes:
            if key in LIST_FIELDS:
                out[key] = many
            elif key in DICT_FIELDS:
                out[key] = one
            else:
                out[key] = _text(size)
        return out

    return _async(node) if is_async else node


def _wide(schema: Any, lib: Lib, size: int, is_async: bool) -> Any:
    builder = lib.StateGraph(schema)
    for name, read, writes in _WIDE_NODES:
        builder.add_node(name, _wide_node(read, writes, size, is_async))
    builder.add_edge(lib.START, "one")
    builder.add_edge("one", "two")
    builder.add_edge("two", "three")
    builder.add_edge("two", "four")
    builder.add_edge(["three", "four"], "five")
    builder.add_edge("five", "six")

    def done(state: Any) -> str:
        return lib.END if len(_get(state, "messages")) > size else "one"

    builder.add_conditional_edges("six", done)
    return builder


def wide_state(lib: Lib, size: int, is_async: bool) -> Any:
    return _wide(WideState, lib, size, is_async)


def wide_dict(lib: Lib, size: int, is_async: bool) -> Any:
    return _wide(WideDict, lib, size, is_async)


_MODEL: Any = None


def pydantic_state(lib: Lib, size: int, is_async: bool) -> Any:
    global _MODEL
    if _MODEL is None:
        _MODEL = _pydantic_model()
    return _wide(_MODEL, lib, size, is_async)


def _wide_input(size: int) -> dict:
    record = ["hi?" * 10, True, 1, 6327816386138, None] * 5
    return {
        "messages": [{str(i) * 10: {str(j) * 10: list(record) for j in range(5)} for i in range(5)}]
    }


def _wide_summary(output: Any) -> dict:
    return {
        key: len(_get(output, key) or ()) for key in ("messages", "trigger_events", "responses")
    }


# ---------------------------------------------------------------------------------------------
# react_agent_Nx: model -> tools -> model ... with a fake model calling a tool N times


def react_agent(lib: Lib, size: int, is_async: bool) -> Any:
    """A hand-written ReAct loop over MessagesState; the model is a plain function."""

    def fake_model(messages: list) -> dict:
        turn = (len(messages) - 1) // 2  # human, then (ai, tool) per turn
        if turn < size:
            call = {"id": f"call_{turn}", "name": "search", "args": {"query": f"q{turn} " * 100}}
            return {
                "role": "assistant",
                "content": "",
                "tool_calls": [call],
                "id": uuid.uuid4().hex,
            }
        return {"role": "assistant", "content": "answer " * 100, "id": uuid.uuid4().hex}

    def search(query: str) -> str:
        return f"result for {query}" * 10

    def agent(state: Any) -> dict:
        return {"messages": [fake_model(state["messages"])]}

    def tools(state: Any) -> dict:
        calls = _get(state["messages"][-1], "tool_calls") or []
        return {
            "messages": [
                {
                    "role": "tool",
                    "content": search(**call["args"]),
                    "tool_call_id": call["id"],
                    "id": uuid.uuid4().hex,
                }
                for call in calls
            ]
        }

    def route(state: Any) -> str:
        return "tools" if _get(state["messages"][-1], "tool_calls") else lib.END

    if is_async:
        agent, tools = _async(agent), _async(tools)

    builder = lib.StateGraph(lib.MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    builder.add_edge(lib.START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", lib.END])
    builder.add_edge("tools", "agent")
    return builder


def _react_input(size: int) -> dict:
    return {"messages": [{"role": "user", "content": "hi?"}]}


def _react_summary(output: Any) -> dict:
    messages = _get(output, "messages")
    return {"messages": len(messages), "last": len(_get(messages[-1], "content"))}


# ---------------------------------------------------------------------------------------------


def cases() -> list[Case]:
    out: list[Case] = []
    seq_summary = lambda output: {"messages": len(_get(output, "messages"))}
    out += variants(
        "sequential_10",
        "graphs",
        sequential,
        lambda n: {"messages": []},
        10,
        10,
        unit="step",
        units=lambda n: n,
        summarize=seq_summary,
    )
    out += variants(
        "sequential_1000",
        "graphs",
        sequential,
        lambda n: {"messages": []},
        1000,
        100,
        unit="step",
        units=lambda n: n,
        summarize=seq_summary,
    )
    out += variants(
        "fanout_to_subgraph_10x",
        "graphs",
        fanout_to_subgraph,
        _fanout_input,
        10,
        10,
        summarize=_fanout_summary,
    )
    out += variants(
        "fanout_to_subgraph_100x",
        "graphs",
        fanout_to_subgraph,
        _fanout_input,
        100,
        20,
        summarize=_fanout_summary,
    )
    out += variants(
        "wide_state",
        "graphs",
        wide_state,
        _wide_input,
        300,
        30,
        summarize=_wide_summary,
        note="dataclass state, 15 fields",
    )
    out += variants(
        "wide_dict",
        "graphs",
        wide_dict,
        _wide_input,
        300,
        30,
        summarize=_wide_summary,
        note="TypedDict state, 15 fields",
    )
    out += variants(
        "pydantic_state",
        "graphs",
        pydantic_state,
        _wide_input,
        300,
        30,
        summarize=_wide_summary,
        requires=("pydantic",),
        note="pydantic model with validators",
    )
    out += variants(
        "react_agent_10x", "graphs", react_agent, _react_input, 10, 10, summarize=_react_summary
    )
    out += variants(
        "react_agent_100x", "graphs", react_agent, _react_input, 100, 20, summarize=_react_summary
    )
    return out
