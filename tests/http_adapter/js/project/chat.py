"""The chat graph the JS client tests serve: a `messages` key and a fake LangChain chat model
that streams its reply word by word (no network, no API key).

`ask ...` interrupts for an answer first; `slow ...` waits a second first (join tests).
"""

import asyncio

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from engine import START, MessagesState, StateGraph, interrupt


async def respond(state: MessagesState) -> dict:
    humans = [m for m in state["messages"] if m.type == "human"]
    text = str(humans[-1].content)
    if text.startswith("ask"):
        text = f"{text} -> {interrupt({'question': 'go on?'})}"
    if text.startswith("slow"):
        await asyncio.sleep(1)
    model = GenericFakeChatModel(messages=iter([AIMessage(content=f"You said: {text} (turn {len(humans)})")]))
    return {"messages": [await model.ainvoke(state["messages"])]}


graph = StateGraph(MessagesState).add_node("respond", respond).add_edge(START, "respond").compile()
