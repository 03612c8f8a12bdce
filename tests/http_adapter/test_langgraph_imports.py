"""`--engine graphrun` (issue 28 item 2): a project's unchanged `langgraph.*` imports served by
graphrun's objects; a name graphrun does not provide fails at start-up, naming the name and the
file that used it. The serving itself is in test_langgraph_projects.py (its `engine` cases)."""

from __future__ import annotations

import importlib.abc
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import engine
from http_adapter.config import ConfigError, load_settings

PROJECTS = Path(__file__).parent / "langgraph_projects"

PUBLIC = """\
from typing import TypedDict
from langgraph.graph import START, StateGraph
from langgraph.types import Command, interrupt


class State(TypedDict):
    n: int


def step(state: State) -> Command:
    return Command(update={"n": state["n"] + 1})


graph = StateGraph(State).add_node(step).add_edge(START, "step").compile()
"""


def write(root: Path, source: str, **config: object) -> Path:
    root.mkdir(exist_ok=True)
    (root / "graph.py").write_text(textwrap.dedent(source))
    path = root / "langgraph.json"
    path.write_text(json.dumps({"graphs": {"g": "./graph.py:graph"}, **config}))
    return path


def test_public_imports_build_graphrun_graphs(tmp_path: Path) -> None:
    import langgraph.graph  # the process's own, imported before the project loads

    settings = load_settings(write(tmp_path, PUBLIC), in_memory=True, engine="graphrun")
    graph = settings.graphs["g"]
    assert isinstance(graph, engine.CompiledStateGraph)
    assert graph.invoke({"n": 1}) == {"n": 2}
    assert settings.extra["engine"] == "graphrun"
    # the process's own langgraph is back for everything else
    assert sys.modules["langgraph.graph"] is langgraph.graph


def test_the_config_key_chooses_the_engine(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, PUBLIC, engine="graphrun"), in_memory=True)
    assert isinstance(settings.graphs["g"], engine.CompiledStateGraph)
    auto = load_settings(write(tmp_path / "auto", PUBLIC, engine="graphrun"), in_memory=True,
                         engine="auto")  # the flag wins
    assert type(auto.graphs["g"]).__module__.startswith("langgraph.")
    assert "engine" not in auto.extra.get("config_warnings", [])
    with pytest.raises(ConfigError, match=r"langgraph.json: engine: must be one of 'auto', "
                                          r"'graphrun', not 'fast'"):
        load_settings(write(tmp_path / "bad", PUBLIC, engine="fast"), in_memory=True)


def test_a_remote_graph_node_maps_to_graphrun(tmp_path: Path) -> None:
    """Issue 29: `langgraph.pregel.remote.RemoteGraph` is public API; graphrun's serves it."""
    from engine.remote import RemoteGraph

    source = """\
    from typing import TypedDict
    from langgraph.graph import START, StateGraph
    from langgraph.pregel.remote import RemoteGraph


    class State(TypedDict):
        n: int


    remote = RemoteGraph("other", client=object(), sync_client=object())
    graph = StateGraph(State).add_node("r", remote).add_edge(START, "r").compile()
    """
    settings = load_settings(write(tmp_path, source), in_memory=True, engine="graphrun")
    assert isinstance(settings.graphs["g"].get_graph().nodes["r"].data, RemoteGraph)


@pytest.mark.parametrize(("line", "named"), [
    ("from langgraph.pregel import Pregel", "`langgraph.pregel.Pregel`"),  # only .remote maps
    ("from langgraph.channels import LastValue", "module `langgraph.channels`"),
    ("from langgraph.types import omit_payload", "`langgraph.types.omit_payload`"),
])
def test_an_unsupported_name_fails_at_start_up(tmp_path: Path, line: str, named: str) -> None:
    source = f"import os\n{line}\n{PUBLIC}"
    path = write(tmp_path, source)
    assert load_settings(path, in_memory=True).graphs["g"] is not None  # LangGraph's: fine
    with pytest.raises(ConfigError) as raised:
        load_settings(write(tmp_path / "fast", source), in_memory=True, engine="graphrun")
    message = str(raised.value)
    assert named in message
    assert f"{tmp_path / 'fast' / 'graph.py'}, line 2" in message
    assert "without `--engine graphrun`" in message


def test_a_library_past_the_public_api_is_named(tmp_path: Path) -> None:
    """LangChain's `create_agent` imports LangGraph internals: refused at start-up, naming
    LangChain's file (the project's own import of it is fine)."""
    shutil.copytree(PROJECTS / "create_agent", tmp_path / "p")
    config = tmp_path / "p" / "langgraph.json"
    # as in a fresh `graphrun dev` process: LangChain not imported yet
    imported = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "langchain"}
    for name in imported:
        del sys.modules[name]
    try:
        with pytest.raises(ConfigError) as raised:
            load_settings(config, in_memory=True, engine="graphrun")
    finally:
        sys.modules.update(imported)
    message = str(raised.value)
    assert "module `langgraph._internal`" in message
    assert f"langchain{'/'}agents{'/'}factory.py, line" in message
    from langchain.agents import factory  # nothing half-imported on graphrun's objects stays

    assert factory.StateGraph.__module__ == "langgraph.graph.state"
    # LangChain imported already (with the real LangGraph): its graph is refused all the same
    with pytest.raises(ConfigError, match=r"graphs\.agent: CompiledStateGraph was built by the "
                                          r"installed langgraph package"):
        load_settings(config, in_memory=True, engine="graphrun")


def test_graphrun_never_imports_langgraph_itself() -> None:
    """LangGraph is a project's dependency, not graphrun's: the server, its config loading and
    the LangGraph adapters import nothing of it until a project's graph is LangGraph's."""
    code = ("import sys, http_adapter.cli, http_adapter.config, http_adapter.agent_server.app, "
            "http_adapter.agent_server.langgraph_graph, "
            "http_adapter.agent_server.langgraph_storage, http_adapter._langgraph_imports; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('langgraph', 'langchain', 'langchain_core')))")
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True)
    assert found.stdout.strip() == "[]"


class _Uninstalled(importlib.abc.MetaPathFinder):
    """`langgraph` as on a machine without it."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name == "langgraph" or name.startswith("langgraph."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def test_a_missing_langgraph_says_how_to_install_it(tmp_path: Path) -> None:
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "langgraph"}
    for name in saved:
        del sys.modules[name]
    blocker = _Uninstalled()
    sys.meta_path.insert(0, blocker)
    try:
        with pytest.raises(ConfigError) as raised:
            load_settings(write(tmp_path, PUBLIC), in_memory=True)
    finally:
        sys.meta_path.remove(blocker)
        sys.modules.update(saved)
    message = str(raised.value)
    assert "ModuleNotFoundError: No module named 'langgraph'" in message
    assert "graphrun does not install: install it in this environment (pip install langgraph" in (
        message)
