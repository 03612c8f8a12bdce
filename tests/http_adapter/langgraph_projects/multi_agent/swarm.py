"""A swarm (langgraph-swarm): Alice hands the user over to Bob, who stays active after."""

from langchain.agents import create_agent
from langgraph_swarm import create_handoff_tool, create_swarm

from scripted_model import calls, says, scripted

alice = create_agent(
    scripted(calls("transfer_to_bob")),
    tools=[create_handoff_tool(agent_name="bob", description="Bob knows about boats.")],
    name="alice", system_prompt="You are Alice.",
)
bob = create_agent(
    scripted(says("Bob here: boats float."), says("Bob again: still floating.")),
    tools=[], name="bob", system_prompt="You are Bob.",
)

# served as the builder, uncompiled: the server compiles it
workflow = create_swarm([alice, bob], default_active_agent="alice")
