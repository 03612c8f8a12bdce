"""config.py: langgraph.json projects load as LangGraph users write them; errors name file and key."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import CompiledStateGraph, StateGraph
from http_adapter.config import ConfigError, find_config, load_settings, parse_dotenv

GRAPH_FILE = """
import operator
from typing import Annotated, TypedDict

from engine import START, StateGraph


class State(TypedDict, total=False):
    log: Annotated[list, operator.add]


builder = StateGraph(State)
builder.add_node("one", lambda s: {"log": ["one"]})
builder.add_edge(START, "one")
graph = builder.compile()


def make_graph(config):
    return builder.compile()


not_a_graph = 42
"""


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Loading a config edits os.environ, sys.path and sys.modules: undo all three."""
    environ = dict(os.environ)
    monkeypatch.setattr(sys, "path", list(sys.path))
    modules = set(sys.modules)
    monkeypatch.delenv("GRAPHRUN_API_KEYS", raising=False)
    yield
    os.environ.clear()
    os.environ.update(environ)
    for name in set(sys.modules) - modules:
        if name.startswith(("_graphrun_user_", "sibling")):
            del sys.modules[name]


def project(root: Path, config: dict[str, Any] | str, files: dict[str, str] | None = None,
            name: str = "langgraph.json") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in {"agent.py": GRAPH_FILE, **(files or {})}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    path = root / name
    path.write_text(config if isinstance(config, str) else json.dumps(config))
    return path


# -- graphs ------------------------------------------------------------------------------------


def test_file_variable_loads_the_compiled_graph(tmp_path: Path) -> None:
    path = project(tmp_path, {"dependencies": ["."], "graphs": {"agent": "./agent.py:graph"}})
    settings = load_settings(path)
    graph = settings.graphs["agent"]
    assert isinstance(graph, CompiledStateGraph)
    assert graph.invoke({})["log"] == ["one"]
    assert settings.config_path == path.resolve()
    assert settings.data_dir == tmp_path.resolve() / ".graphrun"
    assert not settings.data_dir.exists()  # created by the server, not by loading


def test_uncompiled_state_graph_and_factory_are_kept_as_they_are(tmp_path: Path) -> None:
    path = project(tmp_path, {"graphs": {
        "builder": "./agent.py:builder", "factory": "./agent.py:make_graph",
    }})
    graphs = load_settings(path).graphs
    assert isinstance(graphs["builder"], StateGraph)
    assert callable(graphs["factory"]) and graphs["factory"].__name__ == "make_graph"


def test_two_graphs_of_one_file_share_one_import(tmp_path: Path) -> None:
    path = project(tmp_path, {"graphs": {"a": "./agent.py:graph", "b": "./agent.py:make_graph"}})
    graphs = load_settings(path).graphs
    assert graphs["b"].__globals__["graph"] is graphs["a"]  # one module object behind both
    modules = [m for m in sys.modules if m.startswith("_graphrun_user_agent_")]
    assert len(modules) == 1


def test_dict_form_keeps_the_description(tmp_path: Path) -> None:
    path = project(tmp_path, {"graphs": {
        "agent": {"path": "./agent.py:graph", "description": "one node"},
    }})
    settings = load_settings(path)
    assert isinstance(settings.graphs["agent"], CompiledStateGraph)
    assert settings.extra["graph_descriptions"] == {"agent": "one node"}


def test_module_path_form_imports_from_dependencies(tmp_path: Path) -> None:
    files = {"src/sibling_pkg/__init__.py": "", "src/sibling_pkg/graphs.py": GRAPH_FILE}
    path = project(tmp_path, {"dependencies": ["./src"],
                              "graphs": {"agent": "sibling_pkg.graphs:graph"}}, files)
    settings = load_settings(path)
    assert isinstance(settings.graphs["agent"], CompiledStateGraph)
    assert str((tmp_path / "src").resolve()) in sys.path


def test_graph_file_imports_its_sibling_module(tmp_path: Path) -> None:
    files = {
        "lib/sibling_nodes.py": "def node(state):\n    return {'log': ['sibling']}\n",
        "graphs/agent2.py": """
            import operator
            from typing import Annotated, TypedDict
            from engine import START, StateGraph
            from sibling_nodes import node

            class State(TypedDict, total=False):
                log: Annotated[list, operator.add]

            g = StateGraph(State)
            g.add_node("n", node)
            g.add_edge(START, "n")
            graph = g.compile()
        """,
    }
    path = project(tmp_path, {"dependencies": [".", "./lib", "langchain-openai"],
                              "graphs": {"agent": "./graphs/agent2.py:graph"}}, files)
    graph = load_settings(path).graphs["agent"]
    assert graph.invoke({})["log"] == ["sibling"]


def test_a_file_without_a_variable_serves_its_first_graph(tmp_path: Path) -> None:
    path = project(tmp_path, {"graphs": {"agent": "./agent.py"}})
    assert isinstance(load_settings(path).graphs["agent"], CompiledStateGraph)


def test_graphrun_json_is_accepted_and_found(tmp_path: Path) -> None:
    path = project(tmp_path, {"graphs": {"agent": "./agent.py:graph"}}, name="graphrun.json")
    assert find_config(cwd=tmp_path) == path
    assert find_config(str(tmp_path)) == path
    assert "agent" in load_settings(find_config(cwd=tmp_path)).graphs
    (tmp_path / "langgraph.json").write_text(path.read_text())
    assert find_config(cwd=tmp_path) == tmp_path / "langgraph.json"  # langgraph.json first


# -- env ---------------------------------------------------------------------------------------


def test_env_file_is_applied_before_graphs_import(tmp_path: Path) -> None:
    files = {
        ".env": "# comment\nexport GR_TEST_A=one\nGR_TEST_B=\"two words\"\n"
                "GR_TEST_C='single' \nGR_TEST_D=plain # trailing comment\n",
        "envgraph.py": GRAPH_FILE + "\nimport os\nSEEN = os.environ['GR_TEST_A']\n",
    }
    path = project(tmp_path, {"env": ".env", "graphs": {"agent": "./envgraph.py:graph"}}, files)
    settings = load_settings(path)
    assert settings.env == {"GR_TEST_A": "one", "GR_TEST_B": "two words", "GR_TEST_C": "single",
                            "GR_TEST_D": "plain"}
    assert os.environ["GR_TEST_B"] == "two words"
    module = next(m for n, m in sys.modules.items() if n.startswith("_graphrun_user_envgraph"))
    assert module.SEEN == "one"


def test_inline_env_overrides_the_process_environment(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GR_TEST_X", "from shell")
    path = project(tmp_path, {"env": {"GR_TEST_X": "from config", "GR_TEST_N": 3},
                              "graphs": {"agent": "./agent.py:graph"}})
    settings = load_settings(path)
    assert os.environ["GR_TEST_X"] == "from config"
    assert settings.env["GR_TEST_N"] == "3"


def test_parse_dotenv_escapes() -> None:
    assert parse_dotenv('A="x\\ny"\nnot a line\n=bad\nB=\n') == {"A": "x\ny", "B": ""}


# -- api keys, auth, other sections ------------------------------------------------------------


def test_api_keys_from_config_and_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = project(tmp_path, {"graphs": {"agent": "./agent.py:graph"}, "api_keys": ["k1", "k2"]})
    assert load_settings(path).api_keys == {"k1", "k2"}
    monkeypatch.setenv("GRAPHRUN_API_KEYS", " k3 , k4,")
    assert load_settings(path).api_keys == {"k3", "k4"}
    assert load_settings(path, api_keys=["k5"]).api_keys == {"k5"}


def test_auth_object_and_extra_sections_are_kept(tmp_path: Path) -> None:
    files = {"auth.py": "class Auth:\n    pass\n\nauth = Auth()\n"}
    path = project(tmp_path, {
        "graphs": {"agent": "./agent.py:graph"},
        "auth": {"path": "./auth.py:auth"},
        "http": {"cors": {"allow_origins": ["*"]}},
        "store": {"ttl": {"default_ttl": 10}},
    }, files)
    settings = load_settings(path)
    assert type(settings.auth).__name__ == "Auth"
    assert settings.extra["http"] == {"cors": {"allow_origins": ["*"]}}
    assert settings.extra["store"] == {"ttl": {"default_ttl": 10}}
    assert settings.extra["auth"] == {"path": "./auth.py:auth"}


def test_in_memory_data_dir_and_workers(tmp_path: Path) -> None:
    path = project(tmp_path, {"graphs": {"agent": "./agent.py:graph"}})
    assert load_settings(path, in_memory=True).data_dir is None
    assert load_settings(path, in_memory=True).db_path is None
    custom = load_settings(path, data_dir=tmp_path / "data", workers=3)
    assert custom.data_dir == (tmp_path / "data").resolve() and custom.workers == 3


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("config", "files", "key", "message"), [
    ('{"graphs": ', {}, None, "invalid JSON at line 1"),
    ("[1, 2]", {}, None, "must be a JSON object"),
    ({}, {}, "graphs", "must be an object"),
    ({"graphs": {}}, {}, "graphs", "must be an object"),
    ({"graphs": {"agent": 3}}, {}, "graphs.agent", "expected"),
    ({"graphs": {"agent": {"description": "no path"}}}, {}, "graphs.agent", "expected"),
    ({"graphs": {"agent": "./missing.py:graph"}}, {}, "graphs.agent", "graph file not found"),
    ({"graphs": {"agent": "./agent.py:nope"}}, {}, "graphs.agent",
     "no variable 'nope' in the module (graphs it defines: builder, graph)"),
    ({"graphs": {"agent": "./agent.py:not_a_graph"}}, {}, "graphs.agent", "int is not a graph"),
    ({"graphs": {"agent": "./agent.ts:graph"}}, {}, "graphs.agent", "only Python files"),
    ({"graphs": {"agent": "no_such_module_xyz:graph"}}, {}, "graphs.agent",
     "module 'no_such_module_xyz' not found"),
    ({"graphs": {"agent": "./broken.py:graph"}}, {"broken.py": "raise RuntimeError('bad')\n"},
     "graphs.agent", "RuntimeError: bad"),
    ({"graphs": {"agent": "./empty.py"}}, {"empty.py": "x = 1\n"}, "graphs.agent", "no graph"),
    ({"graphs": {"agent": "./fails.py:graph"}},  # issue 30: the user's file and line
     {"fails.py": "from helpers_30 import build\ngraph = build({})\n",
      "helpers_30.py": "def build(config):\n    return config['model']\n"},
     "graphs.agent", "failed: KeyError: 'model' (at helpers_30.py, line 2, in build)"),
    ({"graphs": {"agent": "./agent.py:graph"}, "dependencies": ["./lib"]},  # issue 30 item 10
     {"lib/checkpoints.py": "x = 1\n"}, "dependencies",
     "checkpoints.py has the name of graphrun's `checkpoints` package"),
    ({"graphs": {"agent": "./agent.py:graph"}}, {"engine/__init__.py": ""}, "dependencies",
     "engine/__init__.py has the name of graphrun's `engine` package"),  # the config's own dir
    ({"graphs": {"agent": "./agent.py:graph"}, "env": 5}, {}, "env", "must be a path"),
    ({"graphs": {"agent": "./agent.py:graph"}, "env": {"A": [1]}}, {}, "env", "bad: A"),
    ({"graphs": {"agent": "./agent.py:graph"}, "dependencies": "."}, {}, "dependencies",
     "list of strings"),
    ({"graphs": {"agent": "./agent.py:graph"}, "api_keys": "k"}, {}, "api_keys", "list"),
    ({"graphs": {"agent": "./agent.py:graph"}, "auth": "./auth.py:auth"}, {}, "auth", "expected"),
    ({"graphs": {"agent": "./agent.py:graph"}, "auth": {"path": "./auth.py"}}, {"auth.py": ""},
     "auth.path", "missing ':variable'"),
    ({"graphs": {"agent": "./agent.py:graph"}, "auth": {"path": "./nope.py:auth"}}, {},
     "auth.path", "not found"),
])
def test_config_errors_name_the_file_and_key(
    tmp_path: Path, config: Any, files: dict[str, str], key: str | None, message: str
) -> None:
    path = project(tmp_path, config, files)
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    error = caught.value
    assert isinstance(error, ValueError)
    assert error.path == str(path.resolve()) and error.key == key
    assert str(error).startswith(f"{path.resolve()}: " + (f"{key}: " if key else ""))
    assert message in str(error)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings(tmp_path / "langgraph.json")
    with pytest.raises(ConfigError, match="no langgraph.json or graphrun.json"):
        find_config(cwd=tmp_path)
