"""A compiled graph is a LangChain `Runnable` once langchain-core is loaded (issue 29).

LangChain's composition (`|`, `pipe`, `assign`), wrappers (`with_retry`, `bind`,
`with_listeners`) and `as_tool` accept the graph as any runnable, while `import engine` itself
still never imports langchain-core.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typing_extensions import TypedDict

pytest.importorskip("langchain_core")

from langchain_core.runnables import Runnable, RunnableLambda  # noqa: E402

from engine import END, START, StateGraph  # noqa: E402
from engine._pregel import CompiledStateGraph  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


class Count(TypedDict):
    n: int


def counter(calls: list[int] | None = None, fail_first: int = 0) -> CompiledStateGraph:
    """A one-node graph adding one to `n`; its first `fail_first` calls raise."""
    seen = calls if calls is not None else []

    def add_one(state: Count) -> dict[str, int]:
        seen.append(state["n"])
        if len(seen) <= fail_first:
            raise ValueError("flaky")
        return {"n": state["n"] + 1}

    g = StateGraph(Count)
    g.add_node("add_one", add_one)
    g.add_edge(START, "add_one")
    g.add_edge("add_one", END)
    return g.compile(name="counter")


def test_graph_is_a_runnable() -> None:
    graph = counter()
    assert isinstance(graph, Runnable)
    assert issubclass(CompiledStateGraph, Runnable)
    assert graph.get_name() == "counter"
    assert (graph.InputType, graph.OutputType) == (Count, None)


def test_graph_composes_on_both_sides_of_pipe() -> None:
    chain = RunnableLambda(lambda v: {"n": v}) | counter() | RunnableLambda(lambda s: s["n"] * 10)
    assert chain.invoke(4) == 50
    assert (counter() | (lambda s: s["n"])).invoke({"n": 1}) == 2
    assert counter().pipe(lambda s: s["n"], str).invoke({"n": 8}) == "9"
    assert ((lambda v: {"n": v}) | counter()).invoke(0) == {"n": 1}
    assert chain.batch([1, 2]) == [20, 30]


@pytest.mark.anyio
async def test_composed_graph_runs_async() -> None:
    chain = RunnableLambda(lambda v: {"n": v}) | counter()
    assert await chain.ainvoke(2) == {"n": 3}
    assert await chain.abatch([5, 6]) == [{"n": 6}, {"n": 7}]


def test_with_retry_reruns_the_graph() -> None:
    calls: list[int] = []
    retrying = counter(calls, fail_first=2).with_retry(
        stop_after_attempt=3, wait_exponential_jitter=False,
        retry_if_exception_type=(ValueError,),
    )
    assert retrying.invoke({"n": 1}) == {"n": 2}
    assert calls == [1, 1, 1]
    with pytest.raises(ValueError, match="flaky"):
        counter([], fail_first=5).with_retry(stop_after_attempt=2).invoke({"n": 1})


@pytest.mark.filterwarnings("ignore::langchain_core._api.beta_decorator.LangChainBetaWarning")
def test_graph_as_a_tool() -> None:
    tool = counter().as_tool(name="increment", description="Adds one to n.")
    assert (tool.name, tool.description) == ("increment", "Adds one to n.")
    assert set(tool.args) == {"n"}
    assert tool.invoke({"n": 41}) == {"n": 42}


def test_bind_assign_and_listeners() -> None:
    events: list[str] = []
    listened = counter().with_listeners(
        on_start=lambda run: events.append(f"start {run.inputs}"),
        on_end=lambda run: events.append(f"end {run.outputs}"),
    )
    assert listened.invoke({"n": 1}) == {"n": 2}
    assert events == ["start {'n': 1}", "end {'n': 2}"]
    assert counter().bind().invoke({"n": 3}) == {"n": 4}
    assert counter().assign(twice=lambda s: s["n"] * 2).invoke({"n": 1}) == {"n": 2, "twice": 4}


def test_own_run_methods_stay() -> None:
    """LangChain's generic methods never replace graphrun's own run API."""
    graph = counter()
    for name in ("invoke", "ainvoke", "stream", "astream", "batch", "abatch", "with_config",
                 "get_graph", "astream_events", "get_input_jsonschema"):
        assert getattr(type(graph), name) is getattr(CompiledStateGraph, name), name
    assert list(graph.stream({"n": 1})) == [{"add_one": {"n": 2}}]
    with pytest.raises(AttributeError):
        graph.no_such_attribute  # noqa: B018


def run_program(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
        timeout=60, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


GRAPH = """
    import sys
    from typing_extensions import TypedDict
    import engine
    class S(TypedDict):
        n: int
    g = engine.StateGraph(S)
    g.add_node("a", lambda s: {"n": 1})
    g.add_edge(engine.START, "a")
    graph = g.compile()
"""


def test_langchain_loaded_after_the_graph_is_built() -> None:
    """`import engine` and compiling leave langchain-core alone; importing it later still makes
    the existing graph a runnable, as LangChain's own `|` checks."""
    out = run_program(GRAPH + """
    assert not [m for m in sys.modules if m.startswith("langchain_core")]
    assert graph.invoke({"n": 0}) == {"n": 1}
    assert not [m for m in sys.modules if m.startswith("langchain_core")]
    from langchain_core.runnables import Runnable, RunnableLambda
    assert isinstance(graph, Runnable)
    print((RunnableLambda(lambda v: v) | graph).invoke({"n": 0}))
    """)
    assert out.strip() == "{'n': 1}"


def test_without_langchain_the_runnable_names_explain() -> None:
    out = run_program("""
    class Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "langchain_core":
                raise ModuleNotFoundError(name)
    import sys
    sys.meta_path.insert(0, Block())
    """ + GRAPH + """
    assert graph.invoke({"n": 0}) == {"n": 1}
    assert not hasattr(graph, "pipe")
    try:
        graph.with_retry()
    except AttributeError as error:
        print(error)
    try:
        graph | (lambda s: s)
    except ImportError as error:
        print(error)
    """)
    assert out.count("graphrun[langchain]") == 2, out
