"""Parity scenarios for the behaviour LangGraph's own pregel tests check (issues 27, 29):
answers validated by `interrupt(response_schema=...)`, the JSON Schemas of a compiled graph and
an `@entrypoint`. Registered into `scenarios.SCENARIOS`.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Annotated, Any, TypedDict

import pydantic

from .harness import Transcript
from .scenarios import cfg, scenario


class Decision(pydantic.BaseModel):
    approved: bool


class Answer(TypedDict):
    answer: Any


class Ctx(TypedDict):
    model: str


@dataclasses.dataclass
class Record:
    name: str
    note: str | None
    count: int = 3
    log: Annotated[list[str], operator.add] = dataclasses.field(default_factory=list)


@scenario
def interrupt_response_schema(lib: Any) -> list[Any]:
    """The schema surfaces as JSON Schema; a bad answer fails and can be given again."""
    t = Transcript()

    def node(state: Answer) -> dict[str, Any]:
        return {"answer": lib.interrupt("approve?", response_schema=Decision)}

    g = lib.StateGraph(Answer).add_node("node", node).add_edge(lib.START, "node")
    g = g.compile(checkpointer=lib.InMemorySaver())
    t.call("ask", g.invoke, {"answer": None}, cfg("1"))
    t.state("state", g, cfg("1"))
    t.call("bad", g.invoke, lib.Command(resume={"approved": "nope"}), cfg("1"))
    t.call("good", g.invoke, lib.Command(resume={"approved": False}), cfg("1"))
    return t.items


@scenario
def graph_json_schemas(lib: Any) -> list[Any]:
    """get_input/output/context_jsonschema of a StateGraph (TypedDict, dataclass) and of an
    @entrypoint (its parameter and return types, `entrypoint.final`)."""
    t = Transcript()
    typed = lib.StateGraph(Answer, context_schema=Ctx).add_node("n", lambda s: s)
    typed = typed.add_edge(lib.START, "n").compile()
    data = lib.StateGraph(Record).add_node("n", lambda s: {}).add_edge(lib.START, "n").compile()
    for label, g in (("typed", typed), ("dataclass", data)):
        t.call(f"{label}_in", g.get_input_jsonschema)
        t.call(f"{label}_out", g.get_output_jsonschema)
        t.call(f"{label}_ctx", g.get_context_jsonschema)

    @lib.entrypoint(context_schema=Ctx)
    def listed(numbers: list[int]) -> list[str]:
        return [str(n) for n in numbers]

    def returns_final(value: Any, *, previous: Any) -> Any:
        return lib.entrypoint.final(value="x", save=1)

    # set, not written: this module's annotations are strings LangGraph does not resolve
    returns_final.__annotations__["return"] = lib.entrypoint.final[str, int]
    final = lib.entrypoint()(returns_final)

    for label, g in (("listed", listed), ("final", final)):
        t.call(f"{label}_in", g.get_input_jsonschema)
        t.call(f"{label}_out", g.get_output_jsonschema)
        t.call(f"{label}_ctx", g.get_context_jsonschema)
    return t.items
