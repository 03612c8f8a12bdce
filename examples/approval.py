"""A human-in-the-loop graph: draft a reply, pause for a person's approval, then send or revise.

`review` calls `interrupt(...)`: the run stops and the thread waits (status `interrupted`)
with the draft as the interrupt's value. Resume it with `{"command": {"resume": "approve"}}`
(or from the studio's Threads view); any other answer is taken as feedback for a new draft.

Served by `graphrun dev --config examples/langgraph.json` as the assistant `approval`.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from engine import END, START, StateGraph, interrupt


class State(TypedDict, total=False):
    request: str
    draft: str
    feedback: str
    revisions: int
    sent: str


def draft(state: State) -> dict[str, Any]:
    revisions = state.get("revisions", 0)
    text = f"Re: {state.get('request') or 'your request'}. We will get back to you within a day."
    if state.get("feedback"):
        text += f" ({state['feedback']})"
    return {"draft": text, "revisions": revisions + 1}


def review(state: State) -> dict[str, Any]:
    answer = interrupt({"question": "Send this draft? Answer 'approve' or give feedback.",
                        "draft": state["draft"]})
    return {"feedback": "" if answer == "approve" else str(answer)}


def after_review(state: State) -> Literal["send", "draft"]:
    return "draft" if state.get("feedback") else "send"


def send(state: State) -> dict[str, Any]:
    return {"sent": state["draft"]}


builder = StateGraph(State)
builder.add_node("draft", draft)
builder.add_node("review", review)
builder.add_node("send", send)
builder.add_edge(START, "draft")
builder.add_edge("draft", "review")
builder.add_conditional_edges("review", after_review, ["send", "draft"])
builder.add_edge("send", END)
graph = builder.compile()
