"""`engine.prebuilt` (issue 17): ToolNode, create_react_agent, and `engine` without LangChain.

LangGraph parity of the same programs is in `parity/scenarios_prebuilt.py`; these tests cover
what a transcript cannot show: concurrency, the async path, interrupts inside tools, and the
import boundary (a subprocess where langchain-core cannot be imported).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool

from checkpoints import InMemorySaver
from engine import END, START, Command, MessagesState, StateGraph
from engine.prebuilt import ToolNode, create_react_agent, tools_condition
from tests.engine.fake_chat import FakeToolModel, ai

ROOT = Path(__file__).resolve().parents[2]
PAUSE = 0.2


@tool
def nap(n: int) -> str:
    """Sleep a while."""
    time.sleep(PAUSE)
    return f"slept {n}"


def tool_graph(node: ToolNode, **compile_kw: Any) -> Any:
    g = StateGraph(MessagesState)
    g.add_node("tools", node)
    g.add_edge(START, "tools")
    return g.compile(**compile_kw)


def test_tool_calls_of_one_message_run_in_parallel_and_keep_call_order() -> None:
    together = threading.Barrier(4, timeout=10)  # passed only when the four calls run at once

    @tool
    def meet(n: int) -> str:
        """Wait for the other calls."""
        together.wait()
        return f"met {n}"

    calls = ai("", *[("meet", {"n": i}, f"c{i}") for i in range(4)], id="a")
    out = tool_graph(ToolNode([meet])).invoke({"messages": [calls]})
    assert [m.content for m in out["messages"][1:]] == [f"met {i}" for i in range(4)]
    assert [m.tool_call_id for m in out["messages"][1:]] == ["c0", "c1", "c2", "c3"]


def test_async_run_awaits_async_tools_concurrently() -> None:
    together = asyncio.Barrier(3)

    @tool
    async def anap(n: int) -> str:
        """Wait for the other calls."""
        async with asyncio.timeout(10):
            await together.wait()
        return f"async {n}"

    calls = ai("", *[("anap", {"n": i}, f"c{i}") for i in range(3)], id="a")
    graph = tool_graph(ToolNode([anap]))
    out = asyncio.run(graph.ainvoke({"messages": [calls]}))
    assert [m.content for m in out["messages"][1:]] == ["async 0", "async 1", "async 2"]
    with pytest.raises(NotImplementedError):  # as LangGraph: no sync form to call
        graph.invoke({"messages": [calls]})


def test_interrupt_inside_a_tool_pauses_and_resumes() -> None:
    from engine import interrupt

    @tool
    def ask(question: str) -> str:
        """Ask a human."""
        return f"human says {interrupt(question)}"

    graph = tool_graph(ToolNode([ask]), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    first = graph.invoke({"messages": [ai("", ("ask", {"question": "ok?"}, "c1"), id="a")]}, config)
    assert first["__interrupt__"][0].value == "ok?"
    done = graph.invoke(Command(resume="yes"), config)
    assert done["messages"][-1].content == "human says yes"


def test_command_from_a_tool_updates_other_keys() -> None:
    class State(MessagesState):
        city: str

    @tool
    def move(city: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
        """Move to a city."""
        return Command(update={
            "city": city, "messages": [ToolMessage("moved", tool_call_id=tool_call_id)],
        })

    g = StateGraph(State)
    g.add_node("tools", ToolNode([move]))
    g.add_edge(START, "tools")
    out = g.compile().invoke({"messages": [ai("", ("move", {"city": "Oslo"}, "c1"), id="a")]})
    assert out["city"] == "Oslo"
    assert (out["messages"][-1].content, out["messages"][-1].name) == ("moved", "move")


def test_command_without_its_tool_message_is_an_error() -> None:
    @tool
    def silent() -> Command:
        """Return a bare Command."""
        return Command(update={"messages": []})

    graph = tool_graph(ToolNode([silent], handle_tool_errors=False))
    with pytest.raises(ValueError, match="Expected to have a matching ToolMessage"):
        graph.invoke({"messages": [ai("", ("silent", {}, "c1"), id="a")]})


def test_tools_condition_routes_on_the_last_message() -> None:
    assert tools_condition({"messages": [ai("", ("nap", {"n": 1}, "c"), id="a")]}) == "tools"
    assert tools_condition({"messages": [AIMessage("done")]}) == END


def test_react_agent_stops_with_need_more_steps() -> None:
    model = FakeToolModel(script=[
        ai("", ("nap", {"n": 0}, "c1"), id="first"), ai("", ("nap", {"n": 1}, "c2"), id="second"),
    ])
    agent = create_react_agent(model, [nap])
    out = agent.invoke({"messages": [HumanMessage("go")]}, {"recursion_limit": 4})
    # agent (3 steps left), tools, agent (1 left: no room for another tool round)
    assert [m.content for m in out["messages"][1:]] == [
        "", "slept 0", "Sorry, need more steps to process this request."
    ]
    assert out["messages"][-1].id == "second"
    assert "remaining_steps" not in out


def test_react_agent_graph_shape() -> None:
    model = FakeToolModel(script=[AIMessage("hi")])
    agent = create_react_agent(model, [nap])
    assert set(agent.nodes) == {"agent", "tools"}
    structured = create_react_agent(model, [nap], response_format=dict)
    assert set(structured.nodes) == {"agent", "tools", "generate_structured_response"}


def test_engine_imports_without_langchain_core(tmp_path: Path) -> None:
    """`engine` works with langchain-core unimportable; `engine.prebuilt` names the extra."""
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text(textwrap.dedent("""
        import sys

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("langchain_core", "langchain"):
                    raise ImportError(f"blocked {name}")
                return None

        sys.meta_path.insert(0, Block())
    """))
    program = textwrap.dedent("""
        import operator, sys
        from typing import Annotated, TypedDict
        import engine
        from engine import START, StateGraph, Overwrite
        from engine.managed import RemainingSteps

        class S(TypedDict):
            log: Annotated[list, operator.add]
            left: RemainingSteps

        g = StateGraph(S)
        g.add_node("a", lambda s: {"log": Overwrite([s["left"]])})
        g.add_edge(START, "a")
        assert g.compile().invoke({"log": [1]}, {"recursion_limit": 5}) == {"log": [4]}
        drawn = g.compile().get_graph()  # issue 29: the bare flowchart, other forms name the extra
        assert drawn.draw_mermaid().startswith("graph TD;")
        try:
            drawn.draw_mermaid(with_styles=False)
        except ImportError as error:
            assert "graphrun[langchain]" in str(error)
        else:
            raise AssertionError("draw_mermaid(with_styles=...) without langchain-core")
        assert "langchain_core" not in sys.modules
        try:
            import engine.prebuilt
        except ImportError as error:
            print("IMPORT-ERROR:", error)
        else:
            print("imported")
    """)
    env = {"PYTHONPATH": f"{tmp_path}:{ROOT}", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=30,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "IMPORT-ERROR: engine.prebuilt needs langchain-core" in done.stdout
    assert "graphrun[langchain]" in done.stdout


def test_react_agent_resumes_from_sqlite_before_tools(tmp_path: Path) -> None:
    """The pending per-call Sends (with the state they carry) survive a real SQLite file."""
    from checkpoints import SqliteSaver

    def model(index: int = 0) -> FakeToolModel:  # a new process: the script goes on at `index`
        return FakeToolModel(index=index, script=[
            ai("", ("nap", {"n": 1}, "c1"), ("nap", {"n": 2}, "c2"), id="a1"),
            AIMessage("rested", id="a2"),
        ])

    path = str(tmp_path / "agent.sqlite")
    config = {"configurable": {"thread_id": "t"}}
    with SqliteSaver(path) as saver:
        agent = create_react_agent(model(), [nap], checkpointer=saver, interrupt_before=["tools"])
        agent.invoke({"messages": [HumanMessage("sleep", id="h")]}, config)
        assert agent.get_state(config).next == ("tools", "tools")
    with SqliteSaver(path) as saver:
        agent = create_react_agent(model(1), [nap], checkpointer=saver, interrupt_before=["tools"])
        out = agent.invoke(None, config)
    assert [m.content for m in out["messages"]] == ["sleep", "", "slept 1", "slept 2", "rested"]


@pytest.mark.parametrize("is_async", [False, True])
def test_parallel_calls_raise_interrupts_and_errors_as_themselves(is_async: bool) -> None:
    """One of several calls interrupting (or failing) surfaces as that interrupt (or error),
    never wrapped in an exception group, in sync and async runs."""
    from engine import interrupt

    @tool
    def ask(q: str) -> str:
        """Ask a human."""
        return "got " + interrupt(q)

    @tool
    def fail(q: str) -> str:
        """Fail."""
        raise ValueError("nope")

    graph = tool_graph(ToolNode([ask, fail, nap]), checkpointer=InMemorySaver())

    def run(message: AIMessage, thread: str) -> Any:
        config = {"configurable": {"thread_id": thread}}
        if is_async:
            return asyncio.run(graph.ainvoke({"messages": [message]}, config))
        return graph.invoke({"messages": [message]}, config)

    # the interrupting call second: in a sync run it is the one a pool thread runs
    out = run(ai("", ("nap", {"n": 1}, "c1"), ("ask", {"q": "ok?"}, "c2"), id="a"), "i")
    assert [i.value for i in out["__interrupt__"]] == ["ok?"]
    with pytest.raises(ValueError, match="nope"):
        run(ai("", ("nap", {"n": 1}, "c1"), ("fail", {"q": "x"}, "c2"), id="b"), "e")


class _MyAI(AIMessage):
    pass


class _MyTool(ToolMessage):
    pass


@pytest.mark.parametrize("ai_class", [AIMessage, _MyAI, AIMessageChunk])
def test_react_agent_checks_history_of_message_subclasses(ai_class: type) -> None:
    """The history check looks message classes up once (issue 17 benchmark): subclasses and
    chunks still count as AI and tool messages, as LangGraph 1.2.22's isinstance checks."""
    call = {"name": "nap", "args": {"n": 1}, "id": "c1"}
    unanswered = [HumanMessage("go", id="h"), ai_class(content="", tool_calls=[call], id="a")]
    agent = create_react_agent(FakeToolModel(script=[ai("done", id="z")]), [nap])
    with pytest.raises(ValueError, match="do not have a corresponding ToolMessage"):
        agent.invoke({"messages": unanswered})
    for tool_class in (ToolMessage, _MyTool):
        answered = [*unanswered, tool_class(content="ok", tool_call_id="c1", id="t")]
        agent = create_react_agent(FakeToolModel(script=[ai("done", id="z")]), [nap])
        assert agent.invoke({"messages": answered})["messages"][-1].content == "done"
