"""A supervisor (langgraph-supervisor) handing a question to a weather expert.

A graph factory: each run gets fresh scripted models, as a project would build its clients.
"""

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langchain.agents import create_agent
from langgraph_supervisor import create_supervisor

from scripted_model import calls, says, scripted


@tool
def forecast(city: str) -> str:
    """Tomorrow's weather in a city."""
    return f"Rain in {city} tomorrow."


async def make_graph(config: RunnableConfig):
    expert = create_agent(
        scripted(calls("forecast", city="Bergen"), says("Bergen will be rainy.")),
        tools=[forecast], name="weather_expert", system_prompt="You forecast the weather.",
    )
    return create_supervisor(
        [expert],
        model=scripted(calls("transfer_to_weather_expert"), says("The expert says: rain.")),
        prompt="You route weather questions to the weather expert.",
    ).compile(name="Supervisor")
