"""Loading a `langgraph.json` (or `graphrun.json`) project the way LangGraph users write it.

```json
{
  "dependencies": ["."],
  "graphs": {"agent": "./agent.py:graph", "other": {"path": "pkg.mod:make", "description": "..."}},
  "env": ".env",
  "auth": {"path": "./auth.py:auth"},
  "api_keys": ["..."]
}
```

- `graphs`: graph id -> `"./file.py:variable"` (relative to the config file), `"module.path:variable"`,
  or `{"path": ..., "description": ...}`. The variable may be a compiled graph, a `StateGraph`
  or a factory; the object itself goes into `Settings.graphs` (the server compiles or calls it).
- `env`: a `.env` file (relative to the config) or an inline object; its values are put into
  `os.environ` before any graph module is imported, overriding the process environment as
  `langgraph dev` does. A missing file is a warning (`extra["start_warnings"]`), not an error.
- `dependencies`: directories (relative to the config) appended to `sys.path` so graph modules
  import their siblings; other entries (pip requirements for image builds) are skipped, as
  `langgraph dev` skips them. The config's own directory is always importable. A module there
  named like one of graphrun's packages (`engine.py`, `checkpoints.py`) is refused.
- `auth`: its `path` is imported and the object kept in `Settings.auth`.
- `http`, `store`, `checkpointer` (issue 18; see `_config_sections.py`): validated and kept in
  `Settings.extra`; `http.app` is imported (`extra["custom_app"]`) and a `store.index.embed`
  path too. Keys graphrun does not act on are listed in `extra["config_warnings"]`, which
  `graphrun dev|serve` prints at start-up; other top-level keys are kept in `Settings.extra`.
- `engine` (issue 28): "auto" (default: each graph on the runtime of the package that built it,
  LangGraph's for a graph built with `langgraph`) or "graphrun" (the project's `langgraph.*`
  imports served by graphrun's objects, `_langgraph_imports.py`); `--engine` overrides it.
- `webhooks` (issue 26; see `_config_webhooks.py`): the webhook URL policy and headers, their
  `${{ env.NAME }}` templates resolved, kept in `Settings.extra["webhooks"]`.
- API keys: `GRAPHRUN_API_KEYS` (comma-separated; read after `env` is applied) replaces the
  config's `api_keys` list when set.

Every problem is a `ConfigError` naming the file and the key.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from ._config_sections import check_checkpointer, check_http, check_store, unsupported_keys
from ._config_webhooks import check_webhooks
from ._langgraph_imports import ENGINES, graphrun_imports
from ._tracebacks import user_location
from .agent_server.settings import Settings

__all__ = ["CONFIG_NAMES", "ConfigError", "find_config", "load_settings"]

CONFIG_NAMES = ("langgraph.json", "graphrun.json")
API_KEYS_ENV = "GRAPHRUN_API_KEYS"
_OWN_KEYS = frozenset(("graphs", "env", "dependencies", "auth", "api_keys", "http", "store",
                       "checkpointer", "engine"))


class ConfigError(ValueError):
    """A project config that cannot be loaded: the message names the file and the key."""

    def __init__(self, message: str, *, path: Path | str | None = None, key: str | None = None):
        self.path = str(path) if path is not None else None
        self.key = key
        where = ": ".join(p for p in (self.path, key) if p)
        super().__init__(f"{where}: {message}" if where else message)


def find_config(given: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Path:
    """The config to load: `given` (a file, or a directory holding one), else ./langgraph.json,
    else ./graphrun.json."""
    base = Path(cwd or Path.cwd())
    if given is not None:
        path = base / given
        if path.is_dir():
            return _first_existing(path) or path / CONFIG_NAMES[0]
        return path
    found = _first_existing(base)
    if found is None:
        names = " or ".join(CONFIG_NAMES)
        raise ConfigError(f"no {names} in {base}; pass --config PATH")
    return found


def _first_existing(directory: Path) -> Path | None:
    for name in CONFIG_NAMES:
        if (directory / name).is_file():
            return directory / name
    return None


def load_settings(
    config_path: str | os.PathLike[str],
    *,
    data_dir: str | os.PathLike[str] | None = None,
    in_memory: bool = False,
    api_keys: Iterable[str] | None = None,
    workers: int | None = None,
    engine: str | None = None,
) -> Settings:
    """Read the config, apply its env and dependencies, import its graphs: the server's Settings.

    `data_dir` defaults to `.graphrun/` next to the config; `in_memory` keeps nothing on disk.
    `api_keys`, when given, replaces the env variable and the config's list. `engine`
    ("auto" | "graphrun", else the config's `engine` key, else "auto"): with "graphrun" the
    project's `langgraph.*` imports are served by graphrun's objects (issue 28 item 2).
    """
    path = Path(config_path).resolve()
    raw = _read_json(path)
    root = path.parent
    warnings: list[str] = []  # problems the server starts despite (issue 31 item 14)
    env = _load_env(raw.get("env"), root, path, warnings)
    os.environ.update(env)
    _extend_sys_path(raw.get("dependencies", []), root, path)
    engine = _engine(engine if engine is not None else raw.get("engine", "auto"), path)
    with graphrun_imports() if engine == "graphrun" else contextlib.nullcontext():
        graphs, descriptions = _load_graphs(raw.get("graphs"), root, path)
    if engine == "graphrun":
        _refuse_langgraph_built(graphs, path)
    extra = {k: v for k, v in raw.items() if k not in _OWN_KEYS}
    if descriptions:
        extra["graph_descriptions"] = descriptions
    if raw.get("auth") is not None:
        extra["auth"] = raw["auth"]
    extra.update(_sections(raw, root, path))
    if warnings:
        extra["start_warnings"] = warnings
    extra["engine"] = engine
    settings = Settings(
        graphs=graphs,
        data_dir=None if in_memory else Path(data_dir).resolve() if data_dir else root / ".graphrun",
        api_keys=frozenset(api_keys if api_keys is not None else _api_keys(raw, path)),
        auth=_load_auth(raw.get("auth"), root, path),
        config_path=path,
        env=env,
        extra=extra,
    )
    if workers is not None:
        settings.workers = workers
    return settings


def _engine(value: Any, path: Path) -> str:
    if value not in ENGINES:
        raise ConfigError(f"must be one of {', '.join(map(repr, ENGINES))}, not {value!r}",
                          path=path, key="engine")
    return str(value)


def _refuse_langgraph_built(graphs: Mapping[str, Any], path: Path) -> None:
    """`--engine graphrun` promises graphrun's engine: a graph the installed LangGraph built
    anyway (through a module imported before the project loaded) fails start-up."""
    from .agent_server.langgraph_graph import is_langgraph

    for graph_id, spec in graphs.items():
        if is_langgraph(spec):
            raise ConfigError(
                f"{type(spec).__name__} was built by the installed langgraph package (through "
                "a module imported before the project loaded), not by graphrun's engine",
                path=path, key=f"graphs.{graph_id}",
            )


def _sections(raw: Mapping[str, Any], root: Path, path: Path) -> dict[str, Any]:
    """`http`, `store`, `checkpointer` and `webhooks`, validated, and the warnings for ignored
    keys."""
    def error(message: str, key: str) -> ConfigError:
        return ConfigError(message, path=path, key=key)

    def resolve(source: str, key: str) -> Any:
        return _import_object(source, root, path, key, want_graph=False)

    found: dict[str, Any] = {
        "http": check_http(raw.get("http"), error),
        "store": check_store(raw.get("store"), error, resolve),
        "checkpointer": check_checkpointer(raw.get("checkpointer"), error),
        "webhooks": check_webhooks(raw.get("webhooks"), error),  # issue 26 §5
        "config_warnings": unsupported_keys(raw),
    }
    if "app" in found["http"]:
        found["custom_app"] = _custom_app(found["http"]["app"], root, path)
    return found


def _custom_app(source: str, root: Path, path: Path) -> Any:
    """`http.app`: a Starlette (or FastAPI) application object."""
    from starlette.applications import Starlette

    app = _import_object(source, root, path, "http.app", want_graph=False)
    if not isinstance(app, Starlette):
        raise ConfigError(f"{source!r}: {type(app).__name__} is not a Starlette or FastAPI app",
                          path=path, key="http.app")
    return app


# -- the file ----------------------------------------------------------------------------------


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ConfigError("config file not found", path=path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ConfigError(
            f"invalid JSON at line {error.lineno} column {error.colno}: {error.msg}", path=path
        ) from None
    except UnicodeDecodeError:
        raise ConfigError("the config file is not UTF-8 text", path=path) from None
    if not isinstance(raw, dict):
        raise ConfigError("the config must be a JSON object", path=path)
    return raw


def _api_keys(raw: Mapping[str, Any], path: Path) -> list[str]:
    from_env = os.environ.get(API_KEYS_ENV, "")
    if from_env.strip():
        return [k.strip() for k in from_env.split(",") if k.strip()]
    keys = raw.get("api_keys", [])
    if not isinstance(keys, list) or not all(isinstance(k, str) and k for k in keys):
        raise ConfigError("must be a list of non-empty strings", path=path, key="api_keys")
    return keys


# -- env and dependencies ----------------------------------------------------------------------


def _load_env(spec: Any, root: Path, path: Path, warnings: list[str]) -> dict[str, str]:
    if spec is None:
        return {}
    if isinstance(spec, dict):
        bad = [k for k, v in spec.items() if not isinstance(v, (str, int, float, bool))]
        if bad:
            raise ConfigError(f"values must be strings (bad: {', '.join(bad)})", path=path, key="env")
        return {str(k): _env_value(v) for k, v in spec.items()}
    if isinstance(spec, str):
        env_file = root / spec
        if not env_file.is_file():  # a fresh clone of a template: start, as `langgraph dev`
            warnings.append(f"{path}: env: env file not found: {env_file}; starting without it")
            return {}
        return parse_dotenv(env_file.read_text(encoding="utf-8"))
    raise ConfigError("must be a path to a .env file or an object", path=path, key="env")


def _env_value(value: str | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


_DOTENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*)$")


def parse_dotenv(text: str) -> dict[str, str]:
    """`KEY=value` lines as python-dotenv reads them: comments, `export`, quotes, `\\n` in
    double quotes, ` #` comments after unquoted values."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        match = _DOTENV_LINE.match(line)
        if match is None:
            continue  # blank, comment or malformed: python-dotenv skips these too
        key, value = match.group(1), match.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            quote, value = value[0], value[1:-1]
            if quote == '"':
                value = value.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")
        else:
            value = re.split(r"\s+#", value, maxsplit=1)[0].strip()
        values[key] = value
    return values


def _extend_sys_path(dependencies: Any, root: Path, path: Path) -> None:
    if not isinstance(dependencies, list) or not all(isinstance(d, str) for d in dependencies):
        raise ConfigError("must be a list of strings", path=path, key="dependencies")
    for directory in [root, *(root / d for d in dependencies)]:
        if not directory.is_dir():
            continue
        _refuse_shadowing(directory.resolve(), path)
        resolved = str(directory.resolve())
        if resolved not in sys.path:
            sys.path.append(resolved)


_OWN_PACKAGES = ("engine", "checkpoints", "http_adapter")  # graphrun's top-level packages


def _refuse_shadowing(directory: Path, path: Path) -> None:
    """A project module named like one of graphrun's packages (issue 30 item 10): `import
    engine` finds graphrun's (imported first) or, earlier on sys.path, breaks graphrun's own
    imports; either way an ImportError that names neither. Refused at start-up instead."""
    for name in _OWN_PACKAGES:
        own = Path(importlib.import_module(name).__file__ or "").resolve()
        for candidate in (directory / f"{name}.py", directory / name / "__init__.py"):
            if candidate.is_file() and candidate.resolve() != own:
                raise ConfigError(
                    f"{candidate} has the name of graphrun's `{name}` package, so `import "
                    f"{name}` cannot reach it; rename it (e.g. to my_{name}), or move it out of "
                    "the directories `dependencies` puts on sys.path",
                    path=path, key="dependencies",
                )


# -- graphs and auth ---------------------------------------------------------------------------


def _load_graphs(spec: Any, root: Path, path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    if not isinstance(spec, dict) or not spec:
        raise ConfigError("must be an object of graph id -> path", path=path, key="graphs")
    graphs: dict[str, Any] = {}
    descriptions: dict[str, str] = {}
    for graph_id, value in spec.items():
        key = f"graphs.{graph_id}"
        if isinstance(value, dict) and isinstance(value.get("path"), str):
            source = value["path"]
            if isinstance(value.get("description"), str):
                descriptions[graph_id] = value["description"]
        elif isinstance(value, str):
            source = value
        else:
            raise ConfigError(
                'expected "./file.py:variable", "module.path:variable" or {"path": ...}',
                path=path, key=key,
            )
        graphs[graph_id] = _import_object(source, root, path, key, want_graph=True)
    return graphs, descriptions


def _load_auth(spec: Any, root: Path, path: Path) -> Any:
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise ConfigError('expected {"path": "./auth.py:auth"}', path=path, key="auth")
    source = spec.get("path")
    if source is None:
        return None
    if not isinstance(source, str):
        raise ConfigError("must be a string", path=path, key="auth.path")
    return _import_object(source, root, path, "auth.path", want_graph=False)


def _import_object(source: str, root: Path, path: Path, key: str, *, want_graph: bool) -> Any:
    """The object a `"./file.py:variable"` or `"module.path:variable"` reference names."""
    target, _, variable = source.rpartition(":") if ":" in source else (source, "", "")
    if "/" in target or "\\" in target or target.endswith(".py"):
        if not target.endswith(".py"):
            raise ConfigError(f"{source!r}: only Python files can be served", path=path, key=key)
        module = _import_file(root / target, path, key)
    else:
        module = _import_module(target, path, key)
    if not variable:
        if not want_graph:
            raise ConfigError(f"{source!r}: missing ':variable'", path=path, key=key)
        return _find_graph(module, source, path, key)
    if variable not in vars(module):
        raise ConfigError(
            f"{source!r}: no variable {variable!r} in the module{_suggest(module)}",
            path=path, key=key,
        )
    value = vars(module)[variable]
    if want_graph and not (_is_graph(value) or callable(value)):
        raise ConfigError(
            f"{source!r}: {type(value).__name__} is not a graph, a StateGraph or a graph factory",
            path=path, key=key,
        )
    return value


def _import_file(file: Path, path: Path, key: str) -> ModuleType:
    file = file.resolve()
    if not file.is_file():
        raise ConfigError(f"graph file not found: {file}", path=path, key=key)
    # A unique, stable module name per file: two graphs of one file share one import, and
    # modules that use `from __future__ import annotations` resolve hints via sys.modules.
    digest = hashlib.sha1(str(file).encode()).hexdigest()[:10]
    stem = re.sub(r"\W", "_", file.stem)
    name = f"_graphrun_user_{stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ConfigError(f"cannot import {file}", path=path, key=key)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[name]
        raise ConfigError(
            f"importing {file} failed: {type(error).__name__}: {error}{_where(error, path)}"
            f"{_install_hint(error)}",
            path=path, key=key,
        ) from error
    return module


_PROJECT_LIBRARIES = ("langgraph", "langchain", "langchain_core", "langgraph_supervisor",
                      "langgraph_swarm")


def _install_hint(error: BaseException) -> str:
    """How to get LangGraph (or LangChain) when a project needs it (issue 28): graphrun serves
    LangGraph-built graphs on LangGraph's runtime but does not depend on it."""
    name = getattr(error, "name", None) if isinstance(error, ModuleNotFoundError) else None
    root = (name or "").split(".")[0]
    if root not in _PROJECT_LIBRARIES:
        return ""
    package = root.replace("_", "-")
    return (f"; this project's graphs use {package}, which graphrun does not install: install "
            f"it in this environment (pip install {package}, or the project's own requirements)")


def _import_module(name: str, path: Path, key: str) -> ModuleType:
    if not name:
        raise ConfigError("empty module path", path=path, key=key)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name is not None and name.startswith(error.name):
            raise ConfigError(f"module {name!r} not found", path=path, key=key) from error
        raise ConfigError(
            f"importing {name} failed: {error}{_where(error, path)}{_install_hint(error)}",
            path=path, key=key,
        ) from error
    except Exception as error:
        raise ConfigError(
            f"importing {name} failed: {type(error).__name__}: {error}{_where(error, path)}",
            path=path, key=key,
        ) from error


def _where(error: BaseException, path: Path) -> str:
    """` (at helpers.py, line 3, in build)`: the innermost frame of the user's code the import
    failed in (issue 30: the one-line message named no file or line)."""
    location = user_location(error, root=path.parent)
    return f" (at {location})" if location else ""


def _is_graph(value: Any) -> bool:
    from engine import CompiledStateGraph, StateGraph

    from .agent_server.langgraph_graph import is_langgraph

    return isinstance(value, (CompiledStateGraph, StateGraph)) or is_langgraph(value)


def _graphs_in(module: ModuleType) -> list[str]:
    return [k for k, v in vars(module).items() if not k.startswith("_") and _is_graph(v)]


def _find_graph(module: ModuleType, source: str, path: Path, key: str) -> Any:
    """No variable named: the module's first compiled graph, else its first StateGraph."""
    from engine import CompiledStateGraph

    found = _graphs_in(module)
    found.sort(key=lambda k: not (isinstance(vars(module)[k], CompiledStateGraph)
                                  or hasattr(vars(module)[k], "astream")))  # LangGraph's too
    if not found:
        raise ConfigError(f"{source!r}: no graph in the module; name one as ':variable'",
                          path=path, key=key)
    return vars(module)[found[0]]


def _suggest(module: ModuleType) -> str:
    graphs = _graphs_in(module)
    return f" (graphs it defines: {', '.join(graphs)})" if graphs else ""
